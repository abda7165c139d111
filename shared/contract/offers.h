#pragma once
// Protocol offers (docs/contract.md §2). The protocol version is the contract release; there is no
// other number beside it. One offer per session kind:
//   cloudlyClient  - the relay's own Cloudly session (both carriers use offerForCloudlySession())
//   palletRuntime  - nodes on the listener, oldest accepted peer release 32.10.1
//   clusterIngress - the ingress on the listener, oldest accepted peer release 32.0.0
// Wire shape: { "sessionKind": string, "release": "MAJOR.MINOR.PATCH" }.
#include "shared/contract/result.h"

#include <QJsonObject>
#include <QJsonValue>
#include <optional>
#include <QString>

namespace coreflow::contract {

struct Release {
    int major = 0, minor = 0, patch = 0;
    static std::optional<Release> parse(const QString &text);
    QString toString() const;
    auto operator<=>(const Release &) const = default;
};

struct ProtocolOffer {
    QString sessionKind;
    QString release;
    QJsonObject toJson() const;
    static Result<ProtocolOffer> read(const QJsonObject &object, const QString &path);
    QString describe() const { return sessionKind + QLatin1Char('@') + release; }
    bool operator==(const ProtocolOffer &) const = default;
};

namespace sessionKind {
inline constexpr QLatin1StringView cloudlyClient{"cloudlyClient"};
inline constexpr QLatin1StringView palletRuntime{"palletRuntime"};
inline constexpr QLatin1StringView clusterIngress{"clusterIngress"};
} // namespace sessionKind

// The release this build speaks (compiled in from CMake's COREFLOW_CONTRACT_RELEASE).
QString contractRelease();
// The single source of the Cloudly-hop offer: registerCloudlyClientSession and registerClusterRelay
// both carry exactly this value.
ProtocolOffer offerForCloudlySession();
ProtocolOffer offerForPalletRuntime();
ProtocolOffer offerForClusterIngress();
Release oldestAcceptedPalletRuntime();   // 32.10.1
Release oldestAcceptedClusterIngress();  // 32.0.0

// Judges a cluster-hop peer's request.offer (docs/contract.md §2.2) for a session kind this relay serves
// (palletRuntime or clusterIngress): servable when it reads exactly, names that kind, is at least the
// kind's oldest accepted release and not of a newer major than this build. Otherwise the refusal
// protocol-offer-refused with error.data { peerOffer: ProtocolOffer | null, ownOffer: ProtocolOffer }.
// offerValue is request.offer as found (undefined when absent).
std::optional<Refusal> judgePeerOffer(const QJsonValue &offerValue, QLatin1StringView kind);
// Whether Cloudly's answered offer is one this build serves (cloudlyClient, same major).
bool servesCloudlyOffer(const ProtocolOffer &answered);
// Cloudly's own offer as its protocol-offer-refused names it (error.data.ownOffer), "kind@release", or
// "an unreadable offer".
QString cloudlyOfferInRefusal(const Refusal &protocolOfferRefused);
// Whether an answer names, as response.offer, an offer this build serves — whatever else it holds.
bool answerNamesServableOffer(const QJsonObject &response);

} // namespace coreflow::contract
