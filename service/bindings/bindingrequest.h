#pragma once
// BindingRequest: the value-free request the relay builds for one binding and the canonical form its
// grant's requestDigest covers (docs/contract.md §12.2; rules CS-15, CS-30).
//
//   database:      { capability: "database", serviceId, bindingName, endpoint: { host, port } }
//   objectstorage: { capability: "objectstorage", serviceId, bindingName, retention: { mode, days } | null }
//
// canonical(): UTF-8 JSON, object keys sorted by code point, no whitespace, integers without fraction;
// strings escape '"', '\\' and the C0 controls (\b \f \n \r \t, else \u00XX), every other character is
// written as its UTF-8. digestHex(): lowercase hex SHA-256 of canonical(). The request carries no
// secret: the grant's authority travels beside it in the Corestore body, never inside it.
#include "service/bindings/platformdesiredstate.h"

#include <QByteArray>
#include <QString>
#include <optional>

namespace coreflow {

struct DatabaseEndpoint {
    QString host;
    int port = 0;
    bool operator==(const DatabaseEndpoint &) const = default;
};

class BindingRequest {
public:
    static BindingRequest database(const QString &serviceId, const QString &bindingName, const DatabaseEndpoint &endpoint);
    static BindingRequest objectStorage(const QString &serviceId, const QString &bindingName,
                                        const std::optional<BindingRetention> &retention);

    const QString &capability() const { return m_capability; }
    const QString &serviceId() const { return m_serviceId; }
    const QString &bindingName() const { return m_bindingName; }
    const std::optional<DatabaseEndpoint> &endpoint() const { return m_endpoint; }
    const std::optional<BindingRetention> &retention() const { return m_retention; }

    QByteArray canonical() const;
    QString digestHex() const;

    // A JSON string literal in the canonical escaping (exposed for the report writer and tests).
    static QByteArray quoted(const QString &text);

private:
    QString m_capability;
    QString m_serviceId;
    QString m_bindingName;
    std::optional<DatabaseEndpoint> m_endpoint;
    std::optional<BindingRetention> m_retention;
};

} // namespace coreflow
