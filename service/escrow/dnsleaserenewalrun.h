#pragma once
// DnsLeaseRenewalRun: one validated holdRuntimeNetworkDnsLeaseRenewals request — the run of
// IRuntimeNetworkDnsLeaseRenewals Cloudly signed ahead for one node (docs/contract.md §9.1, §9.2; rules
// ES-02, ES-05..07, ES-10, ES-22, ES-30).
//
// read() is validateHoldRuntimeNetworkDnsLeaseRenewalsRequest: exact keys
//   { session: SessionBinding, projection: ProjectionReference, renewals: RuntimeNetworkDnsLeaseRenewal[] }
//   RuntimeNetworkDnsLeaseRenewal = { nodeId, sessionId, projection, sequence: integer >= 0,
//                                     notBefore: Unix ms, expiresAt: Unix ms, signature: string }
// with at most maximumEscrowedRenewals (32) renewals, every renewal naming the request's projection,
// sequence strictly ascending, notBefore < expiresAt, each window <= 900000 ms and every expiresAt
// <= nowMs + maximumEscrowHorizonMs (4 h). The first problem is refused escrow-run-invalid naming the
// field. The scope check (bindApplyRuntimeNetworkDnsLeaseRenewalRequest: every renewal's nodeId and
// sessionId are the session's) is computed by read() but reported separately by scopeProblem(),
// because the contract orders it after the second read of the node's session (§9.2).
//
// Custody is opaque: the relay verifies no signature and holds no key. Each renewal is kept as the
// exact bytes Cloudly sent (one buffer per run, sliced per renewal), plus the three numbers the
// release needs. Renewal bytes are never logged.
#include "shared/contract/envelope.h"
#include "shared/contract/result.h"
#include "shared/contract/timing.h"
#include "shared/contract/types.h"
#include "service/escrow/projectionreference.h"

#include <QByteArray>
#include <QVector>
#include <optional>

namespace coreflow {

class DnsLeaseRenewalRun {
public:
    // One renewal as the release needs it (units: Unix ms). The bytes are body[offset, offset+length).
    struct Renewal {
        qint64 sequence = 0;
        qint64 notBeforeMs = 0;
        qint64 expiresAtMs = 0;
        qint32 offset = 0;
        qint32 length = 0;
    };

    static constexpr qint64 maximumWindowMs = 900000; // a renewal window is at most 15 minutes (ES-12)

    // validateHoldRuntimeNetworkDnsLeaseRenewalsRequest on the raw request bytes, at the relay's nowMs.
    static contract::Result<DnsLeaseRenewalRun> read(QByteArrayView rawRequest, qint64 nowMs,
                                                     qint64 horizonMs = contract::maximumEscrowHorizonMs,
                                                     int maximumRenewals = contract::maximumEscrowedRenewals);

    const contract::SessionBinding &session() const { return m_session; }
    const ProjectionReference &projection() const { return m_projection; }
    const QVector<Renewal> &renewals() const { return m_renewals; }
    bool isEmpty() const { return m_renewals.isEmpty(); }
    int size() const { return int(m_renewals.size()); }
    qint64 lastSequence() const { return m_renewals.isEmpty() ? -1 : m_renewals.constLast().sequence; }
    // The latest expiresAt of the run (0 for an empty run).
    qint64 lastExpiresAtMs() const { return m_lastExpiresAtMs; }
    // escrow-run-foreign-session when a renewal is not in the session's scope, else nullopt (ES-10).
    const std::optional<contract::Refusal> &scopeProblem() const { return m_scopeProblem; }

    // Cloudly's bytes of renewal i, verbatim (ES-30).
    QByteArrayView rawRenewal(int i) const;
    // The applyRuntimeNetworkDnsLeaseRenewal request the relay composes (ES-22):
    //   { "session": <current binding>, "renewal": <renewal i, verbatim> }
    QByteArray offerRequest(int i, const contract::SessionBinding &current) const;
    // bindApplyRuntimeNetworkDnsLeaseRenewalResponse: the ACK
    //   { projection: ProjectionReference, sequence: integer, state: "admitted" | "replayed" }
    // must name this run's projection and renewal i's sequence. Returns the state, or the problem.
    contract::Result<QString> bindAcknowledgement(int i, const QJsonObject &response) const;
    // Bytes this run keeps in memory (for the benchmark and status).
    qsizetype retainedBytes() const;

private:
    contract::SessionBinding m_session;
    ProjectionReference m_projection;
    QByteArray m_body;              // the request body, verbatim; renewals are slices of it
    QVector<Renewal> m_renewals;
    qint64 m_lastExpiresAtMs = 0;
    std::optional<contract::Refusal> m_scopeProblem;
};

} // namespace coreflow
