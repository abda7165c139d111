#pragma once
// PeerSessionBinding: the session binding a node registration answers (docs/contract.md §4, §8.1),
// as the loopback peers issue and echo it. Written from the contract; not the relay's types.h.
//   Wire: { nodeId: string (non-empty), clusterId: string, sessionId: string,
//           relayRegistrationGeneration: integer >= 0 }
#include "tests/peers/peerresult.h"

#include <QJsonObject>
#include <QString>
#include <utility>

namespace coreflow::peers {

struct PeerSessionBinding {
    PeerSessionBinding() = default;
    PeerSessionBinding(QString nodeId, QString clusterId, QString sessionId, qint64 relayRegistrationGeneration)
        : nodeId(std::move(nodeId)), clusterId(std::move(clusterId)), sessionId(std::move(sessionId)),
          relayRegistrationGeneration(relayRegistrationGeneration)
    {
    }
    // From any value with the contract's four members (a unit test's binding of the relay's own type,
    // handed to a peer builder): the peer copies the members and knows nothing of that type.
    template <typename Binding, typename = decltype(std::declval<const Binding &>().relayRegistrationGeneration)>
    PeerSessionBinding(const Binding &other)
        : PeerSessionBinding(other.nodeId, other.clusterId, other.sessionId, other.relayRegistrationGeneration)
    {
    }

    QString nodeId;
    QString clusterId;
    QString sessionId;
    qint64 relayRegistrationGeneration = 0;

    // Reads the four members (each required, of its type; nodeId non-empty, generation >= 0); other
    // members are read over. Refusal otherwise: request-invalid naming "<path>.<member>".
    static PeerResult<PeerSessionBinding> read(const QJsonObject &object, const QString &path);
    QJsonObject toJson() const;
    bool operator==(const PeerSessionBinding &) const = default;
};

} // namespace coreflow::peers
