#include "service/corestore/corestoreendpoint.h"

#include <QHostAddress>

namespace coreflow {

namespace {

bool isLoopbackHost(const QString &host)
{
    if (host.compare(QStringLiteral("localhost"), Qt::CaseInsensitive) == 0)
        return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

} // namespace

std::optional<CorestoreEndpoint> CorestoreEndpoint::from(const QUrl &url, QString *why)
{
    const QString scheme = url.scheme().toLower();
    if (!url.isValid() || url.host().isEmpty()) {
        *why = QStringLiteral("is not a URL with a host");
        return std::nullopt;
    }
    if (scheme != QStringLiteral("https") && !(scheme == QStringLiteral("http") && isLoopbackHost(url.host()))) {
        *why = QStringLiteral("is not an https URL (plain http only for a loopback host)");
        return std::nullopt;
    }
    if (!url.userInfo().isEmpty() || url.hasQuery() || url.hasFragment()) {
        *why = QStringLiteral("carries user info, a query or a fragment");
        return std::nullopt;
    }
    CorestoreEndpoint endpoint;
    endpoint.m_url = url;
    QUrl origin;
    origin.setScheme(scheme);
    origin.setHost(url.host());
    origin.setPort(url.port(scheme == QStringLiteral("https") ? 443 : 80));
    endpoint.m_origin = origin;
    QByteArray path = url.path(QUrl::FullyEncoded).toUtf8();
    while (path.endsWith('/'))
        path.chop(1);
    endpoint.m_pathPrefix = path;
    return endpoint;
}

QByteArray CorestoreEndpoint::targetFor(const QByteArray &route) const
{
    return m_pathPrefix + route;
}

} // namespace coreflow
