#include "service/forwarding/pushrouter.h"

#include "service/core/logging.h"
#include "service/forwarding/connectionrequests.h"
#include "service/forwarding/nodeconnection.h"
#include "service/forwarding/noderegistry.h"
#include "service/forwarding/requestsession.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

PushRouter::PushRouter(MethodTable &cloudlyMethods, const NodeRegistry &registry, ConnectionRequests &requests,
                       RelayCounters &counters, const RelayTiming &timing, QObject *parent)
    : QObject(parent), m_cloudlyMethods(cloudlyMethods), m_registry(registry), m_requests(requests), m_counters(counters),
      m_timing(timing)
{
}

PushRouter::~PushRouter() { detach(); }

void PushRouter::attach()
{
    for (const auto &name : method::nodePushes) {
        m_cloudlyMethods.add(QString(name), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
            push(frame, reply);
        });
        // A push and its acknowledgement are the node's bytes, never a relay-held secret (§19.4).
        m_cloudlyMethods.markAnswersNodeDataOnly(QString(name));
    }
}

void PushRouter::detach()
{
    for (const auto &name : method::nodePushes)
        m_cloudlyMethods.remove(QString(name));
}

void PushRouter::refuse(const MethodTable::Reply &reply, const Frame &frame, const Refusal &refusal)
{
    m_counters.countRefusal(refusal.name);
    reply(MethodTable::refusalFor(frame, refusal));
}

void PushRouter::push(const Frame &frame, const MethodTable::Reply &reply)
{
    bool readable = false;
    const std::optional<QByteArrayView> member = frame.requestMember("session", &readable);
    auto binding = readRequestSession(frame, readable, member);
    if (!binding)
        return refuse(reply, frame, binding.refusal());
    const QString nodeId = binding->nodeId;
    NodeConnection *connection = m_registry.carried(nodeId);
    if (!connection || !connection->isOpen()) {
        qCInfo(logForwarder).noquote() << frame.method << "for node" << nodeId << "refused: not connected";
        return refuse(reply, frame, Refusal{QString(refusal::nodeNotConnected), QStringLiteral("node %1 is not connected to this relay").arg(nodeId)});
    }
    m_counters.countPush();
    qCDebug(logForwarder).noquote() << "pushing" << frame.method << "to node" << nodeId;
    // The request frame is Cloudly's; it is kept (not copied) until the node answers.
    m_requests.send(connection, frame.method, frame.request, m_timing.pushTimeoutMs,
                    [this, frame, reply, nodeId](const Frame *answer, const Refusal *refusal) {
                        if (refusal) {
                            qCInfo(logForwarder).noquote() << frame.method << "to node" << nodeId << "ended:" << refusal->name;
                            return refuse(reply, frame, *refusal);
                        }
                        if (answer->hasError())
                            reply(Envelope::relayedError(frame.method, frame.correlationId, frame.request, answer->error, answer->retry));
                        else
                            reply(Envelope::response(frame.method, frame.correlationId, frame.request, answer->response));
                        Q_EMIT pushAnswered(nodeId, frame, *answer);
                    });
}

} // namespace coreflow
