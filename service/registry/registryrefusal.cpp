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

QByteArray RegistryRefusal::failureClass(QNetworkReply::NetworkError error)
{
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
        return "ConnectionRefused";
    case QNetworkReply::HostNotFoundError:
        return "HostNotFound";
    case QNetworkReply::TimeoutError:
        return "Timeout";
    case QNetworkReply::SslHandshakeFailedError:
        return "TlsHandshake";
    case QNetworkReply::RemoteHostClosedError:
        return "RemoteClosed";
    case QNetworkReply::OperationCanceledError:
        return "Aborted";
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyConnectionClosedError:
    case QNetworkReply::ProxyNotFoundError:
    case QNetworkReply::ProxyTimeoutError:
    case QNetworkReply::ProxyAuthenticationRequiredError:
    case QNetworkReply::UnknownProxyError:
        return "Proxy";
    case QNetworkReply::ProtocolUnknownError:
    case QNetworkReply::ProtocolInvalidOperationError:
    case QNetworkReply::ProtocolFailure:
    case QNetworkReply::TooManyRedirectsError:
    case QNetworkReply::InsecureRedirectError:
        return "Protocol";
    default:
        return "Network";
    }
}

bool RegistryRefusal::isTransportFailure(QNetworkReply::NetworkError error)
{
    if (error == QNetworkReply::NoError)
        return false;
    const int e = int(error);
    return (e >= 1 && e < 200) || error == QNetworkReply::ProtocolUnknownError
        || error == QNetworkReply::ProtocolInvalidOperationError || error == QNetworkReply::ProtocolFailure;
}

} // namespace coreflow
