#pragma once
// PushRouter: Cloudly -> node (docs/contract.md §8.3). It serves the four pushes on the Cloudly
// session's method table while the listener runs (attach/detach). Each push is routed by
// request.session.nodeId to the connection carrying that node in the NodeRegistry, sent with the
// request bytes untouched and bounded at pushTimeoutMs (8000); the node's answer, or its error, goes
// back verbatim. Refusals: request-invalid (request.session missing or unreadable),
// "node-not-connected: node <id> is not connected to this relay", and ConnectionRequests'
// node-push-timeout and node-connection-lost. Log lines name a method and a node, never a body.
#include "service/core/methodtable.h"
#include "service/core/relaycounters.h"
#include "shared/contract/timing.h"

#include <QObject>

namespace coreflow {

class ConnectionRequests;
class NodeRegistry;

class PushRouter : public QObject {
    Q_OBJECT
public:
    PushRouter(MethodTable &cloudlyMethods, const NodeRegistry &registry, ConnectionRequests &requests, RelayCounters &counters,
               const contract::RelayTiming &timing, QObject *parent = nullptr);
    ~PushRouter() override;

    void attach();
    void detach();

Q_SIGNALS:
    // A node acknowledged (or refused) a push; answer is its response-phase frame. Value-free facts such
    // as an acknowledged projection are read from it by whoever needs them (the escrow, §9.5).
    void pushAnswered(const QString &nodeId, const coreflow::contract::Frame &push, const coreflow::contract::Frame &answer);

private:
    void push(const contract::Frame &frame, const MethodTable::Reply &reply);
    void refuse(const MethodTable::Reply &reply, const contract::Frame &frame, const contract::Refusal &refusal);

    MethodTable &m_cloudlyMethods;
    const NodeRegistry &m_registry;
    ConnectionRequests &m_requests;
    RelayCounters &m_counters;
    contract::RelayTiming m_timing;
};

} // namespace coreflow
