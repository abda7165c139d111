#include "service/isolatedrestore/isolatedrestorecarrier.h"

#include "service/core/logging.h"
#include "service/corestore/corestoreclient.h"
#include "service/isolatedrestore/isolatedrestorerequest.h"
#include "shared/contract/envelope.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QPointer>

namespace coreflow {

using namespace contract;

namespace {

// What every answer of the five methods carries as its request member (D-79).
constexpr QByteArrayView kWithheldRequest("{}");

QByteArray refusalFrame(const Frame &frame, const Refusal &refusal)
{
    return Envelope::refusal(frame.method, frame.correlationId, kWithheldRequest, refusal);
}

} // namespace

IsolatedRestoreCarrier::IsolatedRestoreCarrier(CorestoreClient &client, MethodTable &cloudlyMethods, MethodTable &nodeMethods,
                                               IsolatedRestoreOutcome::HeldToken isHeldToken, QObject *parent)
    : QObject(parent), m_client(client), m_cloudlyMethods(cloudlyMethods), m_nodeMethods(nodeMethods),
      m_isHeldToken(std::move(isHeldToken))
{
    // Before the relay opens and after it stops the five are not on the Cloudly table: the table's own
    // refusal (relay-starting, method-not-served) must not echo the control either (IR-03, D-79).
    for (const auto &name : method::isolatedRestoreMethods) {
        m_cloudlyMethods.withholdEcho(QString(name));
        m_nodeMethods.withholdEcho(QString(name));
    }
}

IsolatedRestoreCarrier::~IsolatedRestoreCarrier() { detach(); }

void IsolatedRestoreCarrier::attach()
{
    if (m_attached)
        return;
    m_attached = true;
    for (const auto &name : method::isolatedRestoreMethods)
        m_cloudlyMethods.add(QString(name), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
            serve(frame, std::move(reply));
        });
}

void IsolatedRestoreCarrier::detach()
{
    if (!m_attached)
        return;
    m_attached = false;
    for (const auto &name : method::isolatedRestoreMethods)
        m_cloudlyMethods.remove(QString(name));
}

void IsolatedRestoreCarrier::attachListenerRefusals()
{
    // The controls come from Cloudly's session only; a node's socket is never a way to a Corestore.
    for (const auto &name : method::isolatedRestoreMethods)
        m_nodeMethods.add(QString(name), [lane = m_nodeMethods.laneName()](const Frame &frame, const Caller &, MethodTable::Reply reply) {
            reply(refusalFrame(frame, Refusal{QString(refusal::methodNotServed),
                                              QStringLiteral("%1 serves no method %2").arg(lane, RefusalQuote::nameOrLength(frame.method))}));
        });
}

void IsolatedRestoreCarrier::serve(const Frame &frame, MethodTable::Reply reply)
{
    const QString operation = IsolatedRestoreControl::operationOf(frame.method);
    const QByteArrayView body = frame.request.isEmpty() ? QByteArrayView("{}") : frame.request;
    auto request = IsolatedRestoreRequest::read(body, operation);
    if (!request) {
        qCInfo(logIsolatedRestore).noquote() << frame.method << "refused before any dial:" << request.refusal().text();
        return reply(refusalFrame(frame, request.refusal()));
    }
    const QString nodeId = request->nodeId;
    const IsolatedRestoreControl control = request->judged;
    CorestoreClient::Options options;
    options.forbiddenKeepsCredential = true; // a 403 is the grant's refusal, not a verdict on the token (IR-13)
    // A Corestore reflecting the grant in its error code must not put it into a refusal or a log line (IR-03).
    options.withholds = [grant = control.grant](QStringView code) { return IsolatedRestoreOutcome::repeatsGrant(code, grant); };
    const QByteArray route = QByteArrayLiteral("/control/isolated-restore/") + operation.toLatin1();
    ++m_inFlight;
    QPointer<IsolatedRestoreCarrier> self(this);
    m_client.post(nodeId, route, request->control, options,
                  [self, frame, reply = std::move(reply), nodeId, control](const CorestoreCallOutcome &outcome) {
                      if (!self)
                          return;
                      --self->m_inFlight;
                      const auto judged = IsolatedRestoreOutcome::judge(outcome, nodeId, control, self->m_isHeldToken);
                      if (!judged) {
                          qCInfo(logIsolatedRestore).noquote() << frame.method << "for node" << nodeId << "refused:" << judged.refusal().text();
                          return reply(refusalFrame(frame, judged.refusal()));
                      }
                      qCInfo(logIsolatedRestore).noquote() << frame.method << "for node" << nodeId << "answered";
                      reply(Envelope::response(frame.method, frame.correlationId, kWithheldRequest, judged.value()));
                  });
}

} // namespace coreflow
