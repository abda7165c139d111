#include "registryrefusal.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace coreflow {

QByteArray RegistryRefusal::body(QLatin1StringView code, QLatin1StringView name, const QByteArray &reason,
                                 const QByteArray &failureClass)
{
    QJsonObject detail{{QStringLiteral("name"), QString(name)}};
    if (!failureClass.isEmpty())
        detail.insert(QStringLiteral("class"), QString::fromLatin1(failureClass));
    QString message = QString(name);
    if (!reason.isEmpty())
        message += QStringLiteral(": ") + QString::fromUtf8(reason);
    const QJsonObject error{{QStringLiteral("code"), QString(code)},
                            {QStringLiteral("message"), message},
                            {QStringLiteral("detail"), detail}};
    const QJsonObject root{{QStringLiteral("errors"), QJsonArray{error}}};
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

QByteArray RegistryRefusal::failureClass(QAbstractSocket::SocketError error)
{
    switch (error) {
    case QAbstractSocket::ConnectionRefusedError:
        return "ConnectionRefused";
    case QAbstractSocket::HostNotFoundError:
        return "HostNotFound";
    case QAbstractSocket::SocketTimeoutError:
        return "Timeout";
    case QAbstractSocket::SslHandshakeFailedError:
    case QAbstractSocket::SslInternalError:
    case QAbstractSocket::SslInvalidUserDataError:
        return "TlsHandshake";
    case QAbstractSocket::RemoteHostClosedError:
        return "RemoteClosed";
    case QAbstractSocket::ProxyAuthenticationRequiredError:
    case QAbstractSocket::ProxyConnectionRefusedError:
    case QAbstractSocket::ProxyConnectionClosedError:
    case QAbstractSocket::ProxyConnectionTimeoutError:
    case QAbstractSocket::ProxyNotFoundError:
    case QAbstractSocket::ProxyProtocolError:
        return "Proxy";
    default:
        return "Network";
    }
}

} // namespace coreflow
