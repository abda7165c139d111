#include "console/readinesscheck.h"

#include "console/consoleexitcodes.h"

#include <QList>

#include <algorithm>

namespace coreflow::console {

namespace {

struct Problem {
    int code;
    QString hop;
    QString line;
};

int codeForHop(const QString &hop, bool parked)
{
    if (hop == QLatin1String("cloudly"))
        return exitcode::notReadyCloudly;
    if (hop == QLatin1String("registration"))
        return parked ? exitcode::notReadyParked : exitcode::notReadyRegistration;
    if (hop == QLatin1String("palletRuntime") || hop == QLatin1String("clusterIngress"))
        return exitcode::notReadyPeerOffer;
    if (hop == QLatin1String("relay"))
        return exitcode::notReadyStarting;
    return exitcode::notReadyOther;
}

} // namespace

ReadinessCheck::Verdict ReadinessCheck::verdict(const status::RelayStatus &s)
{
    QList<Problem> problems;
    for (const auto &r : s.refusals)
        problems.append({codeForHop(r.hop, s.parked), r.hop, r.line});
    if (s.parked && std::none_of(problems.cbegin(), problems.cend(), [](const Problem &p) { return p.code == exitcode::notReadyParked; }))
        problems.append({exitcode::notReadyParked, QStringLiteral("registration"), s.parkedLine});
    if (!s.listener.origin.isEmpty() && !s.listener.listening)
        problems.append({exitcode::notReadyListener, QStringLiteral("listener"),
                         s.listener.note.isEmpty() ? QStringLiteral("no listener is bound for %1").arg(s.listener.origin)
                                                   : s.listener.note});
    if (problems.isEmpty() && !s.ready)
        problems.append({exitcode::notReadyOther, QStringLiteral("relay"), QStringLiteral("the relay reports not ready")});
    if (problems.isEmpty() && s.clockSkew.suspected)
        return {exitcode::readyClockSkew,
                QStringLiteral("CLOCK SKEW SUSPECTED (%1): node %2, %3 ms: check NTP on this host%4")
                    .arg(s.clockSkew.source, s.clockSkew.nodeId.isEmpty() ? QStringLiteral("-") : s.clockSkew.nodeId)
                    .arg(s.clockSkew.skewMs)
                    .arg(s.clockSkew.source == QLatin1String("node-not-yet-valid") ? QStringLiteral(" and on the node")
                                                                                    : QString())};
    if (problems.isEmpty())
        return {exitcode::ok, QStringLiteral("ready: %1 nodes carried").arg(s.nodes.size())};

    std::stable_sort(problems.begin(), problems.end(), [](const Problem &a, const Problem &b) { return a.code < b.code; });
    const Problem &first = problems.first();
    QString line = QStringLiteral("NOT READY (%1): %2").arg(first.hop, first.line.isEmpty() ? QStringLiteral("-") : first.line);
    if (problems.size() > 1)
        line += QStringLiteral(" (+%1 more)").arg(problems.size() - 1);
    return {first.code, line};
}

} // namespace coreflow::console
