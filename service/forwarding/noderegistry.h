#pragma once
// NodeRegistry: every connection on the relay listener, and which of them carries which node
// (docs/contract.md §8.1, §8.4). A node is carried by the connection whose registration Cloudly answered
// last with that node's binding; a newer registration of the same node supersedes the older
// connection, which stays open but carries nothing. A connection's close drops its entry.
//
// The registry holds pointers only: connections are owned (parented) by the SessionForwarder.
// Log lines name a node or a connection, never a binding's values.
#include "shared/contract/types.h"
#include "shared/status/relaystatus.h"

#include <QHash>
#include <QList>
#include <QObject>

namespace coreflow {

class NodeConnection;

class NodeRegistry : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    // A connection the listener accepted.
    void add(NodeConnection *connection);
    // A closed connection leaves; when it carried its node, the node is no longer carried (logged,
    // nodeGone). False when the connection was not held (already removed).
    bool remove(NodeConnection *connection);
    // Cloudly answered a registration on connection with binding, under the Cloudly session's
    // carrierCount, at atMs (clock ms): connection now carries binding.nodeId (§8.1), superseding any
    // older connection of that node and releasing a different node it carried before. Emits
    // nodeRegistered.
    void bind(NodeConnection *connection, const contract::SessionBinding &binding, qint64 carrierCount, qint64 atMs);

    // The connection carrying nodeId, or nullptr.
    NodeConnection *carried(const QString &nodeId) const { return m_carried.value(nodeId); }
    // Whether connection is bound and carries the node its binding names (not superseded).
    bool carries(const NodeConnection *connection) const;
    QList<NodeConnection *> carriedConnections() const { return m_carried.values(); }
    QList<NodeConnection *> connections() const { return m_connections.values(); }
    int connectionCount() const { return int(m_connections.size()); }
    // The status model's nodes (§18), in node-id order.
    QList<status::CarriedNode> carriedNodes() const;

Q_SIGNALS:
    void nodeRegistered(const coreflow::contract::SessionBinding &binding);
    void nodeGone(const QString &nodeId);

private:
    QHash<quint64, NodeConnection *> m_connections; // connection id -> connection
    QHash<QString, NodeConnection *> m_carried;     // node id -> connection that registered it last
};

} // namespace coreflow
