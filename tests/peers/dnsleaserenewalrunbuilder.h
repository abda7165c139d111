#pragma once
// DnsLeaseRenewalRunBuilder: what Cloudly signs ahead for a node, as the loopback peers need it
// (docs/contract.md §9.1, §9.2, §8.3). Written against the contract
// only. Signatures are opaque placeholders: the relay verifies none (ES-02).
//
//   projection("proj-1", 3)         -> { id, generation, digest: sha256-hex of "<id>/<generation>/<salt>" }
//   grid(binding, projection, t0, n)-> n renewals on Cloudly's grid (ES-12): window k is
//                                      [t0 + k*600000, t0 + k*600000 + 900000), sequence firstSequence + k
//   holdRequest(binding, projection, renewals) -> the holdRuntimeNetworkDnsLeaseRenewals request body
//   acknowledge(request, nodeNowMs) -> what a node answers an applyRuntimeNetworkDnsLeaseRenewal with:
//                                      { projection, sequence, state: "admitted" } when the renewal's window
//                                      is current by the node's clock (notBefore <= now < expiresAt); before
//                                      it dns-lease-renewal-not-yet-valid (docs/contract.md §9.6 names the
//                                      "-not-yet-valid" ending), after it dns-lease-window-not-current
#include "tests/peers/answer.h"

#include "tests/peers/peersessionbinding.h"

#include <QJsonArray>
#include <QJsonObject>

namespace coreflow::peers {

class DnsLeaseRenewalRunBuilder {
public:
    static constexpr qint64 windowMs = 900000;
    static constexpr qint64 gridStepMs = 600000;

    static QJsonObject projection(const QString &id, qint64 generation, const QString &salt = {});
    static QJsonObject renewal(const PeerSessionBinding &binding, const QJsonObject &projection, qint64 sequence,
                               qint64 notBeforeMs, qint64 expiresAtMs);
    static QJsonArray grid(const PeerSessionBinding &binding, const QJsonObject &projection, qint64 firstNotBeforeMs,
                           int count, qint64 firstSequence = 1);
    static QJsonObject holdRequest(const PeerSessionBinding &binding, const QJsonObject &projection,
                                   const QJsonArray &renewals);
    static Answer acknowledge(const QJsonObject &applyRequest, qint64 nodeNowMs);
};

} // namespace coreflow::peers
