#include "service/corestore/corestoreinventory.h"

#include "service/corestore/corestoreanswerreader.h"
#include "service/corestore/corestoreclient.h"
#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/util/clock.h"

#include <QJsonObject>
#include <QPointer>

namespace coreflow {

using namespace contract;

namespace {

constexpr QByteArrayView kInventoryRoute("/control/inventory");
constexpr QByteArrayView kLegacyRoute("/control/legacy-resources");

QByteArray jsonString(const QString &text)
{
    // A one-member object's compact form is {"k":<string>}: take the string literal out of it.
    const QByteArray object = Envelope::compact(QJsonObject{{QStringLiteral("k"), text}});
    return object.mid(5, object.size() - 6);
}

} // namespace

CorestoreInventory::CorestoreInventory(CorestoreClient &client, MethodTable &cloudlyMethods, Clock &clock, QObject *parent)
    : QObject(parent), m_client(client), m_methods(cloudlyMethods), m_clock(clock)
{
}

CorestoreInventory::~CorestoreInventory() { detach(); }

void CorestoreInventory::attach()
{
    if (m_attached)
        return;
    m_attached = true;
    m_methods.add(QString(method::getClusterCorestoreInventory), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        serve(frame, std::move(reply), false);
    });
    m_methods.add(QString(method::getClusterCorestoreLegacyResources), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        serve(frame, std::move(reply), true);
    });
}

void CorestoreInventory::detach()
{
    if (!m_attached)
        return;
    m_attached = false;
    m_methods.remove(QString(method::getClusterCorestoreInventory));
    m_methods.remove(QString(method::getClusterCorestoreLegacyResources));
}

void CorestoreInventory::serve(const Frame &frame, MethodTable::Reply reply, bool legacy)
{
    auto request = frame.requestObject();
    if (!request)
        return reply(MethodTable::refusalFor(frame, request.refusal()));
    ExactKeyReader r(request.value(), QStringLiteral("request"));
    const QString nodeId = r.requiredString(QStringLiteral("nodeId"));
    if (!r.failed() && nodeId.isEmpty())
        r.fail(QStringLiteral("nodeId"), QStringLiteral("is empty"));
    if (auto refused = r.finish())
        return reply(MethodTable::refusalFor(frame, *refused));
    QPointer<CorestoreInventory> self(this);
    const QByteArray route = (legacy ? kLegacyRoute : kInventoryRoute).toByteArray();
    // The frame's bytes are kept for the answer's envelope.
    m_client.get(nodeId, route, [self, frame, reply = std::move(reply), nodeId, legacy, route](const CorestoreCallOutcome &outcome) {
        if (!self)
            return;
        const QByteArray head = QByteArrayLiteral("{\"nodeId\":") + jsonString(nodeId) + QByteArrayLiteral(",\"checkedAt\":")
            + QByteArray::number(self->m_clock.nowMs());
        Refusal failure = outcome.refusal;
        if (outcome.kind == CorestoreCallOutcome::Kind::Answered) {
            const CorestoreAnswerReader::Read read = legacy ? CorestoreAnswerReader::readLegacyResources(outcome.body)
                                                            : CorestoreAnswerReader::readInventory(outcome.body);
            if (read.ok) {
                const QByteArray body = head + QByteArrayLiteral(",\"reachable\":true,\"services\":") + read.rawServices.toByteArray() + '}';
                return reply(MethodTable::responseFor(frame, body));
            }
            const auto endpoint = self->m_client.endpointOf(nodeId);
            const QString path = endpoint ? QString::fromUtf8(endpoint->targetFor(route)) : QString::fromUtf8(route);
            failure = Refusal{QString(refusal::corestoreUnreachable),
                              QStringLiteral("GET %1 on node %2: unreadable answer (%3)").arg(path, nodeId, read.problem)};
        }
        const QString code = outcome.kind == CorestoreCallOutcome::Kind::EndpointUnknown ? QString(refusal::corestoreEndpointUnknown)
                                                                                          : QString(refusal::corestoreUnreachable);
        const QByteArray body = head + QByteArrayLiteral(",\"reachable\":false,\"code\":") + jsonString(code) + QByteArrayLiteral(",\"reason\":")
            + jsonString(failure.text()) + '}';
        reply(MethodTable::responseFor(frame, body));
    });
}

} // namespace coreflow
