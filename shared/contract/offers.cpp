#include "shared/contract/offers.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"

#include <QRegularExpression>

namespace coreflow::contract {

std::optional<Release> Release::parse(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("^(0|[1-9][0-9]{0,5})\\.(0|[1-9][0-9]{0,5})\\.(0|[1-9][0-9]{0,5})$"));
    const auto m = re.match(text);
    if (!m.hasMatch())
        return std::nullopt;
    return Release{m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3).toInt()};
}

QString Release::toString() const { return QStringLiteral("%1.%2.%3").arg(major).arg(minor).arg(patch); }

QJsonObject ProtocolOffer::toJson() const
{
    return QJsonObject{{QStringLiteral("sessionKind"), sessionKind}, {QStringLiteral("release"), release}};
}

Result<ProtocolOffer> ProtocolOffer::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    ProtocolOffer offer;
    offer.sessionKind = r.requiredString(QStringLiteral("sessionKind"));
    offer.release = r.requiredString(QStringLiteral("release"));
    if (!r.failed() && offer.sessionKind != sessionKind::cloudlyClient && offer.sessionKind != sessionKind::palletRuntime
        && offer.sessionKind != sessionKind::clusterIngress)
        r.fail(QStringLiteral("sessionKind"), QStringLiteral("is not cloudlyClient, palletRuntime or clusterIngress"));
    if (!r.failed() && !Release::parse(offer.release))
        r.fail(QStringLiteral("release"), QStringLiteral("is not a MAJOR.MINOR.PATCH release"));
    if (auto refusal = r.finish())
        return *refusal;
    return offer;
}

QString contractRelease() { return QStringLiteral(COREFLOW_CONTRACT_RELEASE); }

ProtocolOffer offerForCloudlySession() { return ProtocolOffer{QString(sessionKind::cloudlyClient), contractRelease()}; }
ProtocolOffer offerForPalletRuntime() { return ProtocolOffer{QString(sessionKind::palletRuntime), contractRelease()}; }
ProtocolOffer offerForClusterIngress() { return ProtocolOffer{QString(sessionKind::clusterIngress), contractRelease()}; }
Release oldestAcceptedPalletRuntime() { return Release{32, 10, 1}; }
Release oldestAcceptedClusterIngress() { return Release{32, 0, 0}; }

std::optional<Refusal> judgePeerOffer(const QJsonValue &offerValue, QLatin1StringView kind)
{
    const bool pallet = kind == sessionKind::palletRuntime;
    const ProtocolOffer own = pallet ? offerForPalletRuntime() : offerForClusterIngress();
    const Release oldest = pallet ? oldestAcceptedPalletRuntime() : oldestAcceptedClusterIngress();
    const Release mine = *Release::parse(own.release);
    std::optional<ProtocolOffer> peer;
    if (offerValue.isObject()) {
        auto read = ProtocolOffer::read(offerValue.toObject(), QStringLiteral("request.offer"));
        if (read)
            peer = read.value();
    }
    if (peer && peer->sessionKind == kind) {
        const Release theirs = *Release::parse(peer->release);
        if (!(theirs < oldest) && theirs.major <= mine.major)
            return std::nullopt;
    }
    Refusal refusal;
    refusal.name = QString(refusal::protocolOfferRefused);
    refusal.reason = QStringLiteral("this relay serves %1 from %2 (it speaks %3); the peer offered %4")
                         .arg(QString(kind), oldest.toString(), own.release,
                              peer ? peer->describe() : QStringLiteral("no readable offer"));
    refusal.data = QJsonObject{{QStringLiteral("peerOffer"), peer ? QJsonValue(peer->toJson()) : QJsonValue(QJsonValue::Null)},
                               {QStringLiteral("ownOffer"), own.toJson()}};
    return refusal;
}

QString cloudlyOfferInRefusal(const Refusal &protocolOfferRefused)
{
    auto theirs = ProtocolOffer::read(protocolOfferRefused.data.value(QStringLiteral("ownOffer")).toObject(),
                                      QStringLiteral("error.data.ownOffer"));
    return theirs ? theirs->describe() : QStringLiteral("an unreadable offer");
}

QString peerOfferInRefusal(const Refusal &protocolOfferRefused)
{
    const QJsonObject peer = protocolOfferRefused.data.value(QStringLiteral("peerOffer")).toObject();
    if (peer.isEmpty())
        return QString();
    return peer.value(QStringLiteral("sessionKind")).toString() + QLatin1Char('@') + peer.value(QStringLiteral("release")).toString();
}

bool answerNamesServableOffer(const QJsonObject &response)
{
    auto offer = ProtocolOffer::read(response.value(QStringLiteral("offer")).toObject(), QStringLiteral("response.offer"));
    return offer && servesCloudlyOffer(offer.value());
}

AnsweredOffer judgeAnsweredOffer(const QJsonObject *response, const QJsonObject &offerJson, std::optional<Refusal> problem)
{
    AnsweredOffer judged;
    if (!problem) {
        auto offer = ProtocolOffer::read(offerJson, QStringLiteral("response.offer"));
        if (offer) {
            judged.offer = offer.value();
            judged.verdict = servesCloudlyOffer(*judged.offer) ? AnsweredOffer::Verdict::Served : AnsweredOffer::Verdict::NotServable;
            return judged;
        }
        problem = offer.refusal();
    }
    judged.problem = std::move(problem);
    judged.namesServableOffer = response && answerNamesServableOffer(*response);
    return judged;
}

bool servesCloudlyOffer(const ProtocolOffer &answered)
{
    const auto theirs = Release::parse(answered.release);
    const auto mine = Release::parse(contractRelease());
    return answered.sessionKind == sessionKind::cloudlyClient && theirs && mine && theirs->major == mine->major;
}

} // namespace coreflow::contract
