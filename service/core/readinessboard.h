#pragma once
// ReadinessBoard: what stands between this relay and serving, per hop (docs/contract.md §2.2, §2.3, §6.6.1;
// rules PV-12, PV-17, PV-19..PV-21, PV-24).
//
// Two independent refusals can stand on one hop and are held apart because they end apart:
//  - offer disagreement: the peer's build and this one disagree about the contract (both offers named);
//  - answer not the contract's: the peer's offer was servable, its answer was not (offers null).
// A hop serves again only when neither stands. Parking is terminal: its line stands on hop
// "registration" for the rest of the process.
//
// Hops: "cloudly" (registerCloudlyClientSession), "registration" (registerClusterRelay). A cluster
// peer's refused offer (palletRuntime, clusterIngress) is never posted here: it is that peer's
// problem, answered and counted by its lane (docs/contract.md §2.2, D-62).
#include "shared/status/relaystatus.h"

#include <QMap>
#include <QObject>
#include <optional>

namespace coreflow {

class ReadinessBoard : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    void setOfferDisagreement(const QString &hop, const QString &peerOffer, const QString &ownOffer, const QString &line);
    void setAnswerNotContract(const QString &hop, const QString &line);
    void clearOfferDisagreement(const QString &hop);
    void clearAnswerNotContract(const QString &hop);
    void clearHop(const QString &hop);
    // Terminal. Later calls are ignored (the relay states its park once).
    void park(const QString &line);

    bool isParked() const { return m_parkedLine.has_value(); }
    QString parkedLine() const { return m_parkedLine.value_or(QString()); }
    bool hopServes(const QString &hop) const;
    // Standing refusals in a stable order (hop order above, disagreement before answer).
    QList<status::ReadinessRefusal> refusals() const;

Q_SIGNALS:
    void changed();

private:
    struct Hop {
        std::optional<status::ReadinessRefusal> disagreement;
        std::optional<status::ReadinessRefusal> answer;
    };
    QMap<QString, Hop> m_hops;
    std::optional<QString> m_parkedLine;
};

} // namespace coreflow
