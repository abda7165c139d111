#pragma once
// RouteTable: one ClusterRouteTable as the relay holds it — read and validated by read(), the
// project's validateClusterRouteTable (docs/contract.md §10.5; CI-01, CI-02,
// CI-05). Pure: no socket, no clock, no log line.
//
// Wire shape (exact keys at every level):
//   { clusterId: id, revision: integer >= 1, computedAt: integer Unix ms >= 0,
//     routes: [ { hostname: lowercase DNS name, certificateId: id,
//                 targets: [ { nodeId: id, address: IPv4 literal, port: integer 1..65535 } ] (>= 1) } ],
//     certificates: [ { id: id, hostnames: DNS name[] (>= 1), certificatePem: string (non-empty),
//                       privateKeyPem: string (non-empty, Secret) } ] }
// "id": non-empty, at most 256 characters, no control characters (docs/contract.md §1).
//
// read() refuses with route-table-invalid and the FIRST failure, checked in this order: exact keys and
// types at every level (document order); revision >= 1 and computedAt >= 0; route hostnames well-formed
// and unique, certificate hostnames well-formed; every certificateId names a certificate whose hostnames
// contain the route's hostname; every route has >= 1 target, each with an IPv4 address and a port in
// range; certificate ids unique. A reason names paths and indices only ("field
// request.routeTable.routes[3].certificateId names no certificate"), never a value it found — the table
// carries the private key of every hostname the ingress terminates. For the same reason an unknown
// member is reported as "field <path> has a member the contract does not name", without its name.
//
// Custody: the table is kept as one Secret (its compact JSON, re-serialised from the validated object;
// the relay serves the table it validated, it does not forward bytes). What may be said about it is
// revision(), routeCount() and hostnameCount() (distinct hostnames named by routes and certificates).
// It is never written, journaled, logged or put into an error. The relay's lanes read a table from a
// body whose keys were taken out first (restoreKeys()), so no QJsonDocument ever holds a key (§19.4).
#include "shared/contract/result.h"
#include "shared/secret.h"

#include <QJsonObject>
#include <QString>
#include <optional>

namespace coreflow {

class RouteTable {
public:
    // path: where the table sits in its frame ("request.routeTable", "response.routeTable").
    static contract::Result<RouteTable> read(const QJsonObject &table, const QString &path);
    // Reads the body that carries a table, exactly { routeTable: ClusterRouteTable } (a push) or
    // { routeTable: ClusterRouteTable | null } (nullable: getClusterRouteTable's answer). The table
    // object is returned unread (nullopt for null); refusals are route-table-invalid like read()'s.
    static contract::Result<std::optional<QJsonObject>> readCarrier(const QJsonObject &body, const QString &path, bool nullable);

    qint64 revision() const { return m_revision; }
    int routeCount() const { return m_routeCount; }
    int hostnameCount() const { return m_hostnameCount; }
    // "revision 7 (3 routes, 4 hostnames)" — value-free, for log lines.
    QString describe() const;
    // The table's compact JSON, for the one place it travels: the bound ingress' pull answer.
    const Secret &material() const { return m_material; }
    // Reading a table without a QJsonDocument copy of its keys (docs/contract.md §19.4): the caller
    // took every certificate's privateKeyPem out of the frame's bytes into Secrets
    // (contract::takeSecretStrings, which blanks them) and read the blanked text; this puts the keys,
    // in certificate order, back into the material, composed in guarded memory. False (material
    // unchanged) when the count does not match the table's certificates.
    bool restoreKeys(const QList<Secret> &keys);

    // Well-formed lowercase DNS name (labels 1..63 of [a-z0-9-], no leading/trailing '-', total <= 253,
    // at least two labels, no wildcard). Exposed for tests.
    static bool isHostname(const QString &text);
    // Dotted-quad IPv4 literal, each octet 0..255 without leading zeros.
    static bool isIpv4Literal(const QString &text);

private:
    RouteTable() = default;

    qint64 m_revision = 0;
    int m_routeCount = 0;
    int m_hostnameCount = 0;
    Secret m_material;
};

} // namespace coreflow
