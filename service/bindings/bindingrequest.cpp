#include "service/bindings/bindingrequest.h"

#include <QCryptographicHash>

namespace coreflow {

BindingRequest BindingRequest::database(const QString &serviceId, const QString &bindingName, const DatabaseEndpoint &endpoint)
{
    BindingRequest r;
    r.m_capability = QStringLiteral("database");
    r.m_serviceId = serviceId;
    r.m_bindingName = bindingName;
    r.m_endpoint = endpoint;
    return r;
}

BindingRequest BindingRequest::objectStorage(const QString &serviceId, const QString &bindingName,
                                             const std::optional<BindingRetention> &retention)
{
    BindingRequest r;
    r.m_capability = QStringLiteral("objectstorage");
    r.m_serviceId = serviceId;
    r.m_bindingName = bindingName;
    r.m_retention = retention;
    return r;
}

QByteArray BindingRequest::quoted(const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    QByteArray out;
    out.reserve(utf8.size() + 2);
    out.append('"');
    for (const char c : utf8) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"': out.append("\\\""); break;
        case '\\': out.append("\\\\"); break;
        case '\b': out.append("\\b"); break;
        case '\f': out.append("\\f"); break;
        case '\n': out.append("\\n"); break;
        case '\r': out.append("\\r"); break;
        case '\t': out.append("\\t"); break;
        default:
            if (u < 0x20) {
                static const char hex[] = "0123456789abcdef";
                out.append("\\u00");
                out.append(hex[u >> 4]);
                out.append(hex[u & 0xf]);
            } else {
                out.append(c);
            }
        }
    }
    out.append('"');
    return out;
}

QByteArray BindingRequest::canonical() const
{
    // Keys in code point order: bindingName, capability, endpoint|retention, serviceId; inside the
    // endpoint host, port; inside the retention days, mode.
    QByteArray out = "{\"bindingName\":" + quoted(m_bindingName) + ",\"capability\":" + quoted(m_capability);
    if (m_endpoint)
        out += ",\"endpoint\":{\"host\":" + quoted(m_endpoint->host) + ",\"port\":" + QByteArray::number(m_endpoint->port) + "}";
    if (m_capability == QLatin1String("objectstorage")) {
        out += ",\"retention\":";
        out += m_retention ? "{\"days\":" + QByteArray::number(m_retention->days) + ",\"mode\":" + quoted(m_retention->mode) + "}"
                           : QByteArray("null");
    }
    out += ",\"serviceId\":" + quoted(m_serviceId) + "}";
    return out;
}

QString BindingRequest::digestHex() const
{
    return QString::fromLatin1(QCryptographicHash::hash(canonical(), QCryptographicHash::Sha256).toHex());
}

} // namespace coreflow
