#include "console/terminalview.h"

#include "console/terminaltext.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QTimeZone>
#include <algorithm>

namespace coreflow::console {

namespace {

constexpr int keyWidth = 20;

void kv(QStringList &out, const QString &key, const QString &value)
{
    out << (QStringLiteral("  ") + key.leftJustified(keyWidth) + value);
}

QString optNumber(const std::optional<qint64> &v) { return v ? QString::number(*v) : QStringLiteral("-"); }

QString window(qint64 startMs, qint64 endMs)
{
    if (startMs == 0 && endMs == 0)
        return QStringLiteral("-");
    return TerminalView::isoUtc(startMs) + QStringLiteral("..") + TerminalView::isoUtc(endMs);
}

} // namespace

QString TerminalView::isoUtc(qint64 unixMs)
{
    if (unixMs == 0)
        return QStringLiteral("-");
    return QDateTime::fromMSecsSinceEpoch(unixMs, QTimeZone::utc()).toString(QStringLiteral("yyyy-MM-ddTHH:mm:ss'Z'"));
}

QString TerminalView::refusalLine(const status::ReadinessRefusal &r)
{
    QString text = orDash(r.hop) + QStringLiteral(": ") + orDash(r.line);
    if (r.peerOffer || r.ownOffer)
        text += QStringLiteral(" [peer offer %1; own offer %2]")
                    .arg(r.peerOffer ? orDash(*r.peerOffer) : QStringLiteral("-"),
                         r.ownOffer ? orDash(*r.ownOffer) : QStringLiteral("-"));
    return text;
}

QList<status::ReadinessRefusal> TerminalView::shownRefusals(const status::RelayStatus &s)
{
    QList<status::ReadinessRefusal> out;
    for (const auto &r : s.refusals)
        if (!(s.parked && !s.parkedLine.isEmpty() && r.line == s.parkedLine && !r.peerOffer && !r.ownOffer))
            out.append(r);
    return out;
}

QStringList TerminalView::formatTable(const QStringList &headers, const QList<QStringList> &rows, const QString &indent)
{
    QList<int> widths;
    for (const QString &h : headers)
        widths << int(h.size());
    for (const QStringList &row : rows)
        for (int c = 0; c < row.size() && c < widths.size(); ++c)
            widths[c] = std::max(widths[c], int(row[c].size()));
    auto line = [&](const QStringList &cells) {
        QString text = indent;
        for (int c = 0; c < cells.size(); ++c) {
            text += c + 1 < cells.size() ? cells[c].leftJustified(widths[c]) + QStringLiteral("  ") : cells[c];
        }
        while (text.endsWith(QLatin1Char(' ')))
            text.chop(1);
        return text;
    };
    QStringList out;
    out << line(headers);
    for (const QStringList &row : rows)
        out << line(row);
    return out;
}

QString TerminalView::renderText(const status::RelayStatus &unfiltered)
{
    // Every string the relay sent is shown without its control characters (TerminalText).
    const status::RelayStatus s = TerminalText::printableStatus(unfiltered);
    QStringList out;
    out << QStringLiteral("RELAY");
    kv(out, QStringLiteral("build"), orDash(s.build));
    kv(out, QStringLiteral("contract release"), orDash(s.contractRelease));
    kv(out, QStringLiteral("node"), orDash(s.nodeId));
    kv(out, QStringLiteral("started"), isoUtc(s.startedAtMs));
    kv(out, QStringLiteral("generated"), isoUtc(s.generatedAtMs));
    out << QString();

    out << QStringLiteral("READINESS");
    kv(out, QStringLiteral("ready"), yesNo(s.ready));
    for (const auto &r : shownRefusals(s))
        kv(out, QStringLiteral("refusal"), refusalLine(r));
    kv(out, QStringLiteral("parked"), s.parked ? QStringLiteral("yes: ") + orDash(s.parkedLine) : QStringLiteral("no"));
    out << QString();

    out << QStringLiteral("CLOUDLY SESSION");
    kv(out, QStringLiteral("connected"), yesNo(s.cloudly.connected));
    kv(out, QStringLiteral("dispatchable"), yesNo(s.cloudly.dispatchable));
    kv(out, QStringLiteral("carrier count"), QString::number(s.cloudly.carrierCount));
    kv(out, QStringLiteral("identity renewal"), isoUtc(s.cloudly.identityRenewalDueMs));
    kv(out, QStringLiteral("credential"),
       s.cloudly.credentialId.isEmpty()
           ? QStringLiteral("-")
           : QStringLiteral("%1 (generation %2)").arg(s.cloudly.credentialId).arg(s.cloudly.credentialGeneration));
    kv(out, QStringLiteral("url"), orDash(s.cloudly.url));
    kv(out, QStringLiteral("last frame"), isoUtc(s.cloudly.lastFrameAtMs));
    kv(out, QStringLiteral("keepalive"), orDash(s.cloudly.keepalive));
    out << QString();

    out << QStringLiteral("LISTENER");
    kv(out, QStringLiteral("listening"), yesNo(s.listener.listening));
    kv(out, QStringLiteral("address"),
       s.listener.address.isEmpty() ? QStringLiteral("-") : QStringLiteral("%1:%2").arg(s.listener.address).arg(s.listener.port));
    kv(out, QStringLiteral("origin"), orDash(s.listener.origin));
    kv(out, QStringLiteral("note"), orDash(s.listener.note));
    out << QString();

    QList<status::CarriedNode> nodes = s.nodes;
    std::stable_sort(nodes.begin(), nodes.end(), [](const auto &a, const auto &b) { return a.nodeId < b.nodeId; });
    out << QStringLiteral("NODES (%1)").arg(nodes.size());
    if (nodes.isEmpty()) {
        out << QStringLiteral("  (none)");
    } else {
        QList<QStringList> rows;
        for (const auto &n : nodes)
            rows << QStringList{orDash(n.nodeId), isoUtc(n.sinceMs), QString::number(n.carrierCount), orDash(n.lastMethod),
                                isoUtc(n.lastForwardAtMs), QString::number(n.forwardsInFlight), isoUtc(n.lastFrameAtMs),
                                orDash(n.keepalive)};
        out << formatTable({QStringLiteral("NODE"), QStringLiteral("SINCE"), QStringLiteral("CARRIERS"),
                            QStringLiteral("LAST METHOD"), QStringLiteral("LAST FORWARD"), QStringLiteral("IN FLIGHT"),
                            QStringLiteral("LAST FRAME"), QStringLiteral("KEEPALIVE")},
                           rows);
    }
    out << QString();

    QList<status::EscrowRun> escrow = s.escrow;
    std::stable_sort(escrow.begin(), escrow.end(), [](const auto &a, const auto &b) { return a.nodeId < b.nodeId; });
    out << QStringLiteral("ESCROW (%1)").arg(escrow.size());
    if (escrow.isEmpty()) {
        out << QStringLiteral("  (none)");
    } else {
        QList<QStringList> rows;
        for (const auto &e : escrow)
            rows << QStringList{orDash(e.nodeId),
                                orDash(e.projectionId),
                                QString::number(e.projectionGeneration),
                                QString::number(e.renewalCount),
                                window(e.currentWindowStartMs, e.currentWindowEndMs),
                                isoUtc(e.nextWindowStartMs),
                                orDash(e.lastOfferResult)};
        out << formatTable({QStringLiteral("NODE"), QStringLiteral("PROJECTION"), QStringLiteral("GEN"),
                            QStringLiteral("RENEWALS"), QStringLiteral("CURRENT WINDOW"), QStringLiteral("NEXT WINDOW"),
                            QStringLiteral("LAST OFFER")},
                           rows);
    }
    out << QString();

    out << QStringLiteral("INGRESS");
    kv(out, QStringLiteral("bound"), yesNo(s.ingress.bound));
    kv(out, QStringLiteral("route table rev"), optNumber(s.ingress.routeTableRevision));
    kv(out, QStringLiteral("routes"), QString::number(s.ingress.routeCount));
    kv(out, QStringLiteral("hostnames"), QString::number(s.ingress.hostnameCount));
    out << QString();

    QList<status::PlatformBinding> bindings = s.bindings;
    std::stable_sort(bindings.begin(), bindings.end(), [](const auto &a, const auto &b) { return a.name < b.name; });
    out << QStringLiteral("BINDINGS (%1)").arg(bindings.size());
    if (bindings.isEmpty()) {
        out << QStringLiteral("  (none)");
    } else {
        QList<QStringList> rows;
        for (const auto &b : bindings)
            rows << QStringList{orDash(b.name), orDash(b.capability), orDash(b.nodeId), orDash(b.status), orDash(b.reason)};
        out << formatTable({QStringLiteral("NAME"), QStringLiteral("CAPABILITY"), QStringLiteral("NODE"),
                            QStringLiteral("STATUS"), QStringLiteral("REASON")},
                           rows);
    }
    out << QString();

    out << QStringLiteral("VPN HUB");
    kv(out, QStringLiteral("bound"), yesNo(s.vpn.bound));
    kv(out, QStringLiteral("address"),
       s.vpn.address.isEmpty() ? QStringLiteral("-") : QStringLiteral("%1:%2").arg(s.vpn.address).arg(s.vpn.quicPort));
    kv(out, QStringLiteral("network revision"), optNumber(s.vpn.networkRevision));
    kv(out, QStringLiteral("members"), QString::number(s.vpn.memberCount));
    out << QString();

    // The Corestore lane (docs/contract.md §12.1, §18.1 corestore): value-free facts only.
    out << QStringLiteral("CORESTORE");
    kv(out, QStringLiteral("credential"),
       s.corestore.failureCode.isEmpty() ? orDash(s.corestore.credential)
                                         : QStringLiteral("%1 (%2)").arg(orDash(s.corestore.credential), orDash(s.corestore.failureCode)));
    kv(out, QStringLiteral("recipient"), s.corestore.recipientKeyId.isEmpty()
                                             ? QStringLiteral("-")
                                             : QStringLiteral("%1 gen %2").arg(orDash(s.corestore.recipientKeyId)).arg(s.corestore.recipientGeneration));
    kv(out, QStringLiteral("enrolled at"), isoUtc(s.corestore.enrolledAtMs));
    if (s.corestore.nodes.isEmpty()) {
        out << QStringLiteral("  (no nodes)");
    } else {
        QList<QStringList> rows;
        for (const auto &n : s.corestore.nodes)
            rows << QStringList{orDash(n.nodeId), yesNo(n.endpointPublished), orDash(n.lastCallOutcome), isoUtc(n.lastCallAtMs)};
        out << formatTable({QStringLiteral("NODE"), QStringLiteral("ENDPOINT"), QStringLiteral("LAST CALL"), QStringLiteral("AT")}, rows);
    }
    out << QString();

    out << QStringLiteral("COUNTERS");
    kv(out, QStringLiteral("forwards"), QString::number(s.counters.forwards));
    kv(out, QStringLiteral("pushes"), QString::number(s.counters.pushes));
    kv(out, QStringLiteral("reconnects"), QString::number(s.counters.reconnects));
    if (s.counters.refusalsByName.isEmpty())
        kv(out, QStringLiteral("refusals"), QStringLiteral("0"));
    for (auto it = s.counters.refusalsByName.constBegin(); it != s.counters.refusalsByName.constEnd(); ++it)
        kv(out, QStringLiteral("refusals"), QStringLiteral("%1 %2").arg(it.key()).arg(it.value()));

    return out.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QByteArray TerminalView::renderJson(const status::RelayStatus &status)
{
    return QJsonDocument(status.toJson()).toJson(QJsonDocument::Indented);
}

QString TerminalView::renderWatch(const QString &socketPath, const QString &connectionLine,
                                  const std::optional<status::RelayStatus> &status, const QList<StatusEvent> &recentEvents,
                                  int eventTail)
{
    QString text = QStringLiteral("coreflow-console --watch  %1  %2\n\n")
                       .arg(TerminalText::printable(socketPath), TerminalText::printable(connectionLine));
    if (status)
        text += renderText(*status);
    else
        text += QStringLiteral("(no snapshot yet)\n");
    if (!recentEvents.isEmpty() && eventTail > 0) {
        text += QStringLiteral("\nRECENT EVENTS\n");
        const qsizetype from = std::max<qsizetype>(0, recentEvents.size() - eventTail);
        for (qsizetype i = from; i < recentEvents.size(); ++i)
            text += QStringLiteral("  %1  %2  %3\n").arg(isoUtc(recentEvents[i].atMs), TerminalText::printable(recentEvents[i].kind),
                                                              TerminalText::printable(recentEvents[i].line));
    }
    return text;
}

} // namespace coreflow::console
