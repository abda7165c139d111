#pragma once
// BindingReport: one reportClusterPlatformBindingStatus request (docs/contract.md §12.5; rules CS-47..CS-53).
//
//   { nodeId: string | null, serviceId, bindingName, capability: "database" | "objectstorage",
//     status: "provisioning" | "ready" | "failed", statusReason: string | null,
//     endpoints: [ { name, capability, protocol: "mongodb" | "s3", networkAlias, port? } ] }
//
// Endpoints are value-free by construction: a name, a capability, a protocol word, a host and a port;
// there is no member for a URL, a user name or a secret (CS-49). Equality is what CS-53 compares: a
// report equal to the last one Cloudly accepted is not sent again.
#include <QByteArray>
#include <QList>
#include <QString>
#include <optional>

namespace coreflow {

struct BindingReportEndpoint {
    QString name;
    QString capability;
    QString protocol;      // "mongodb" | "s3"
    QString networkAlias;  // database: corestoreDatabase.host; object storage: the node's Corestore host
    std::optional<int> port; // database only
    bool operator==(const BindingReportEndpoint &) const = default;
};

struct BindingReport {
    std::optional<QString> nodeId; // null for a binding Cloudly placed nowhere (binding-not-placed)
    QString serviceId;
    QString bindingName;
    QString capability;
    QString status;                // "provisioning" | "ready" | "failed"
    std::optional<QString> statusReason;
    QList<BindingReportEndpoint> endpoints;
    bool operator==(const BindingReport &) const = default;

    QByteArray toJson() const;
};

} // namespace coreflow
