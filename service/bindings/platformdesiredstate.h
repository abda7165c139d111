#pragma once
// PlatformDesiredState: the exact reading of docs/contract.md §12.2/§12.3 (getClusterPlatformDesiredState,
// §6.9, and the desiredState of pushClusterConfig, §7.1).
//
//   { bindings: [ { nodeId: string | null,
//                   binding: { name, capability: "database"|"objectstorage"|"pushnotification", serviceId,
//                              organizationId: string|null, clusterId: string|null,
//                              retention: { mode: "none"|"governance"|"compliance", days: integer >= 0 } | null },
//                   grant: { operation, generation: integer >= 0, serviceId, capability: "database"|"objectstorage",
//                            bindingName, requestDigest, expiresAt: integer, authority: string } | null } ] }
//
// Every level is read with the exact-key reader: a missing, unknown or mistyped member is
// request-invalid naming the field, never the value. `authority` is Secret-like (§12.2): read() takes
// it from the caller, who lifted it out of the JSON text into a Secret before the text was parsed
// (takeSecretStrings with the element path grant.authority), so no QString copy of it is kept; the
// object's own authority member is checked for type only (the blanked text).
#include "shared/contract/result.h"
#include "shared/secret.h"

#include <QJsonObject>
#include <QList>
#include <QString>
#include <optional>

namespace coreflow {

struct BindingRetention {
    QString mode;  // "none" | "governance" | "compliance"
    qint64 days = 0;
    bool operator==(const BindingRetention &) const = default;
};

struct PlatformBindingSpec {
    QString name;
    QString capability;  // "database" | "objectstorage" | "pushnotification"
    QString serviceId;
    std::optional<QString> organizationId;
    std::optional<QString> clusterId;
    std::optional<BindingRetention> retention;
    bool operator==(const PlatformBindingSpec &) const = default;
};

struct PublicationGrant {
    QString operation;
    qint64 generation = 0;
    QString serviceId;
    QString capability;  // "database" | "objectstorage"
    QString bindingName;
    QString requestDigest;  // lowercase hex SHA-256
    qint64 expiresAtMs = 0;
    Secret authority;       // never logged, never in status
    // Same grant: every member but the authority compared, the authority in constant time.
    bool sameAs(const PublicationGrant &other) const;
};

struct DesiredBinding {
    std::optional<QString> nodeId;
    PlatformBindingSpec binding;
    std::optional<PublicationGrant> grant;
};

struct PlatformDesiredState {
    QList<DesiredBinding> bindings;

    // `object` is the PlatformDesiredState object at `path`; authorities[i] is the i-th element's
    // grant.authority (empty when the element has none).
    static contract::Result<PlatformDesiredState> read(const QJsonObject &object, const QString &path,
                                                       const QList<Secret> &authorities);
    // Lifts every desiredState.bindings[i].grant.authority out of `json` (a pushClusterConfig request
    // or a getClusterPlatformDesiredState answer: both hold the state at "desiredState") into Secrets
    // and blanks them there; [] when there is none.
    static QList<Secret> takeAuthorities(QByteArray &json);
};

} // namespace coreflow
