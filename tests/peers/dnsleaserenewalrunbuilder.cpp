#include "tests/peers/dnsleaserenewalrunbuilder.h"

#include <QCryptographicHash>

namespace coreflow::peers {

QJsonObject DnsLeaseRenewalRunBuilder::projection(const QString &id, qint64 generation, const QString &salt)
{
    const QByteArray digest = QCryptographicHash::hash(QStringLiteral("%1/%2/%3").arg(id).arg(generation).arg(salt).toUtf8(),
                                                       QCryptographicHash::Sha256)
                                  .toHex();
    return QJsonObject{{QStringLiteral("id"), id},
                       {QStringLiteral("generation"), double(generation)},
                       {QStringLiteral("digest"), QString::fromLatin1(digest)}};
}

QJsonObject DnsLeaseRenewalRunBuilder::renewal(const PeerSessionBinding &binding, const QJsonObject &projection,
                                               qint64 sequence, qint64 notBeforeMs, qint64 expiresAtMs)
{
    const QByteArray signature = QCryptographicHash::hash(QStringLiteral("%1/%2/%3").arg(binding.sessionId).arg(sequence).arg(notBeforeMs).toUtf8(),
                                                          QCryptographicHash::Sha512)
                                     .toBase64();
    return QJsonObject{{QStringLiteral("nodeId"), binding.nodeId},
                       {QStringLiteral("sessionId"), binding.sessionId},
                       {QStringLiteral("projection"), projection},
                       {QStringLiteral("sequence"), double(sequence)},
                       {QStringLiteral("notBefore"), double(notBeforeMs)},
                       {QStringLiteral("expiresAt"), double(expiresAtMs)},
                       {QStringLiteral("signature"), QString::fromLatin1(signature)}};
}

QJsonArray DnsLeaseRenewalRunBuilder::grid(const PeerSessionBinding &binding, const QJsonObject &projection,
                                           qint64 firstNotBeforeMs, int count, qint64 firstSequence)
{
    QJsonArray renewals;
    for (int k = 0; k < count; ++k) {
        const qint64 notBefore = firstNotBeforeMs + k * gridStepMs;
        renewals.append(renewal(binding, projection, firstSequence + k, notBefore, notBefore + windowMs));
    }
    return renewals;
}

QJsonObject DnsLeaseRenewalRunBuilder::holdRequest(const PeerSessionBinding &binding, const QJsonObject &projection,
                                                   const QJsonArray &renewals)
{
    return QJsonObject{{QStringLiteral("session"), binding.toJson()},
                       {QStringLiteral("projection"), projection},
                       {QStringLiteral("renewals"), renewals}};
}

Answer DnsLeaseRenewalRunBuilder::acknowledge(const QJsonObject &applyRequest, qint64 nodeNowMs)
{
    const QJsonObject renewal = applyRequest.value(QStringLiteral("renewal")).toObject();
    const qint64 notBefore = qint64(renewal.value(QStringLiteral("notBefore")).toDouble());
    const qint64 expiresAt = qint64(renewal.value(QStringLiteral("expiresAt")).toDouble());
    if (nodeNowMs < notBefore)
        return Answer::refuse(QLatin1StringView("dns-lease-renewal-not-yet-valid"),
                              QStringLiteral("the renewal's window has not opened by this node's clock"));
    if (nodeNowMs >= expiresAt)
        return Answer::refuse(QLatin1StringView("dns-lease-window-not-current"),
                              QStringLiteral("the renewal's window is not current by this node's clock"));
    return Answer::respond(QJsonObject{{QStringLiteral("projection"), renewal.value(QStringLiteral("projection"))},
                                       {QStringLiteral("sequence"), renewal.value(QStringLiteral("sequence"))},
                                       {QStringLiteral("state"), QStringLiteral("admitted")}});
}

} // namespace coreflow::peers
