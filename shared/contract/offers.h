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
// The peer's offer as judgePeerOffer's protocol-offer-refused names it (error.data.peerOffer),
// "kind@release" as sent; empty when the peer sent no readable offer (peerOffer null).
QString peerOfferInRefusal(const Refusal &protocolOfferRefused);
// Whether Cloudly's answered offer is one this build serves (cloudlyClient, same major).
bool servesCloudlyOffer(const ProtocolOffer &answered);
// Cloudly's own offer as its protocol-offer-refused names it (error.data.ownOffer), "kind@release", or
// "an unreadable offer".
QString cloudlyOfferInRefusal(const Refusal &protocolOfferRefused);
// Whether an answer names, as response.offer, an offer this build serves — whatever else it holds.
bool answerNamesServableOffer(const QJsonObject &response);

// The offer of Cloudly's answer to a Cloudly-hop registration (registerCloudlyClientSession §6.2,
// registerClusterRelay §6.6), judged by the rules of docs/contract.md §2.3 in one place for both.
struct AnsweredOffer {
    enum class Verdict {
        Served,      // response.offer reads exactly and this build serves it
        NotServable, // response.offer reads exactly but names another kind or major (a disagreement)
        NotContract, // the answer is not the contract's (problem says why)
    };
    Verdict verdict = Verdict::NotContract;
    std::optional<ProtocolOffer> offer;  // Served, NotServable
    std::optional<Refusal> problem;      // NotContract: the answer's first problem
    // NotContract: response.offer alone is one this build serves — which ends a standing offer
    // disagreement, and nothing more.
    bool namesServableOffer = false;
};
// response: the answer's response member, or nullptr when it was unreadable (problem then says why).
// offerJson: response.offer as the caller's exact-key reader took it; problem: that reader's first
// problem (the answer's other members included), which wins over the offer's own.
AnsweredOffer judgeAnsweredOffer(const QJsonObject *response, const QJsonObject &offerJson, std::optional<Refusal> problem);

} // namespace coreflow::contract
