#include "service/core/readinessboard.h"

namespace coreflow {

namespace {
const QStringList kHopOrder{QStringLiteral("cloudly"), QStringLiteral("registration"), QStringLiteral("palletRuntime"),
                            QStringLiteral("clusterIngress")};
} // namespace

void ReadinessBoard::setOfferDisagreement(const QString &hop, const QString &peerOffer, const QString &ownOffer,
                                          const QString &line)
{
    if (m_parkedLine && hop == QLatin1String("registration"))
        return;
    // An offer the peer did not state readably is named the same way on every hop.
    status::ReadinessRefusal r{hop, peerOffer.isEmpty() ? QStringLiteral("no readable offer") : peerOffer, ownOffer, line};
    if (m_hops[hop].disagreement == r)
        return;
    m_hops[hop].disagreement = r;
    Q_EMIT changed();
}

void ReadinessBoard::setAnswerNotContract(const QString &hop, const QString &line)
{
    if (m_parkedLine && hop == QLatin1String("registration"))
        return;
    status::ReadinessRefusal r{hop, std::nullopt, std::nullopt, line};
    if (m_hops[hop].answer == r)
        return;
    m_hops[hop].answer = r;
    Q_EMIT changed();
}

void ReadinessBoard::clearOfferDisagreement(const QString &hop)
{
    auto it = m_hops.find(hop);
    if (it == m_hops.end() || !it->disagreement)
        return;
    it->disagreement.reset();
    Q_EMIT changed();
}

void ReadinessBoard::clearAnswerNotContract(const QString &hop)
{
    auto it = m_hops.find(hop);
    if (it == m_hops.end() || !it->answer)
        return;
    it->answer.reset();
    Q_EMIT changed();
}

void ReadinessBoard::clearHop(const QString &hop)
{
    auto it = m_hops.find(hop);
    if (it == m_hops.end() || (!it->answer && !it->disagreement))
        return;
    it->answer.reset();
    it->disagreement.reset();
    Q_EMIT changed();
}

void ReadinessBoard::park(const QString &line)
{
    if (m_parkedLine)
        return;
    m_parkedLine = line;
    // From now on the registration hop says exactly the park line.
    m_hops.remove(QStringLiteral("registration"));
    Q_EMIT changed();
}

bool ReadinessBoard::hopServes(const QString &hop) const
{
    if (hop == QLatin1String("registration") && m_parkedLine)
        return false;
    const auto it = m_hops.constFind(hop);
    return it == m_hops.constEnd() || (!it->disagreement && !it->answer);
}

QList<status::ReadinessRefusal> ReadinessBoard::refusals() const
{
    QList<status::ReadinessRefusal> out;
    QStringList hops = kHopOrder;
    for (const QString &hop : m_hops.keys())
        if (!hops.contains(hop))
            hops << hop;
    for (const QString &hop : hops) {
        if (hop == QLatin1String("registration") && m_parkedLine)
            out.append(status::ReadinessRefusal{hop, std::nullopt, std::nullopt, *m_parkedLine});
        const auto it = m_hops.constFind(hop);
        if (it == m_hops.constEnd())
            continue;
        if (it->disagreement)
            out.append(*it->disagreement);
        if (it->answer)
            out.append(*it->answer);
    }
    return out;
}

} // namespace coreflow
