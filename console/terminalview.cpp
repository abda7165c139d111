#include "console/terminalview.h"

#include "console/healthoverview.h"
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

void problem(QStringList &out, const QString &key, const QString &value)
{
    out << (QStringLiteral("! ") + key.leftJustified(keyWidth) + value);
}

template <typename T, typename Pred>
QList<bool> markRows(const QList<T> &rows, Pred failed)
{
    QList<bool> marks;
    for (const T &row : rows)
        marks << failed(row);
    return marks;
}

} // namespace

QStringList TerminalView::renderOverview(const status::RelayStatus &s)
{
    const HealthOverview overview(s);
    QStringList out;
    out << QStringLiteral("OVERVIEW");
    auto line = [&out](const HealthOverview::Line &l) {
        if (l.problem)
            problem(out, l.key, l.value);
        else
            kv(out, l.key, l.value);
    };
    line({QStringLiteral("health"), overview.verdict(), !overview.healthy()});
    line({QStringLiteral("next action"), overview.nextAction(), !overview.healthy()});
    for (const auto &l : overview.hops())
        line(l);
    for (const auto &l : overview.counts())
        line(l);
    return out;
}

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

QString TerminalView::cloudlyLastError(const status::RelayStatus &s)
{
    if (s.cloudly.lastErrorClass.isEmpty())
        return QStringLiteral("-");
    // A dispatchable session means the error ended an earlier socket: it is history, not the state (D-87).
    if (s.cloudly.dispatchable && s.cloudly.connectedSinceMs != 0)
        return QStringLiteral("%1 (recovered at %2)").arg(s.cloudly.lastErrorClass, isoUtc(s.cloudly.connectedSinceMs));
    return s.cloudly.lastErrorClass;
}

QList<status::ReadinessRefusal> TerminalView::shownRefusals(const status::RelayStatus &s)
{
    QList<status::ReadinessRefusal> out;
    for (const auto &r : s.refusals)
        if (!(s.parked && !s.parkedLine.isEmpty() && r.line == s.parkedLine && !r.peerOffer && !r.ownOffer))
            out.append(r);
    return out;
}

QStringList TerminalView::formatTable(const QStringList &headers, const QList<QStringList> &rows, const QString &indent,
                                      const QList<bool> &problemRows)
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
    for (qsizetype i = 0; i < rows.size(); ++i) {
        QString text = line(rows[i]);
        if (i < problemRows.size() && problemRows[i] && !text.isEmpty())
            text[0] = QLatin1Char('!'); // the indent's first column marks a problem row
        out << text;
    }
    return out;
}

QString TerminalView::renderText(const status::RelayStatus &unfiltered)
{
    // Every string the relay sent is shown without its control characters (TerminalText).
    const status::RelayStatus s = TerminalText::printableStatus(unfiltered);
    QStringList out = renderOverview(s);
    out << QString();
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
    kv(out, QStringLiteral("connected since"), isoUtc(s.cloudly.connectedSinceMs));
    kv(out, QStringLiteral("last error"), cloudlyLastError(s));
    kv(out, QStringLiteral("next retry"), isoUtc(s.cloudly.nextRetryAtMs));
    out << QString();

    out << QStringLiteral("REGISTRATION");
    kv(out, QStringLiteral("last sequence"), s.registration.lastSequence < 0 ? QStringLiteral("-") : QString::number(s.registration.lastSequence));
    kv(out, QStringLiteral("last outcome"), orDash(s.registration.lastOutcome));
    kv(out, QStringLiteral("when"), isoUtc(s.registration.lastAtMs));
    out << QString();

    out << QStringLiteral("LISTENER");
    kv(out, QStringLiteral("listening"), yesNo(s.listener.listening));
    kv(out, QStringLiteral("address"),
       s.listener.address.isEmpty() ? QStringLiteral("-") : QStringLiteral("%1:%2").arg(s.listener.address).arg(s.listener.port));
    kv(out, QStringLiteral("origin"), orDash(s.listener.origin));
    kv(out, QStringLiteral("note"), orDash(s.listener.note));
    kv(out, QStringLiteral("certificate"), orDash(s.listener.certificateSubject));
    kv(out, QStringLiteral("not after"), isoUtc(s.listener.certificateNotAfterMs));
    if (HealthOverview(s).certificateWarning())
        problem(out, QStringLiteral("warning"),
                QStringLiteral("the certificate expires within %1 days; the relay does not renew it while running: "
                               "restarting the relay is the operator's job")
                    .arg(HealthOverview::certificateWarningDays));
    out << QString();

    QList<status::CarriedNode> nodes = s.nodes;
    std::stable_sort(nodes.begin(), nodes.end(), [](const auto &a, const auto &b) { return a.nodeId < b.nodeId; });
    out << QStringLiteral("NODES (%1)").arg(nodes.size());
    if (nodes.isEmpty()) {
        out << QStringLiteral("  (none)");
    } else {
        QList<QStringList> rows;
        for (const auto &n : nodes)
            rows << QStringList{orDash(n.nodeId), orDash(n.remoteAddress), orDash(n.offeredRelease), isoUtc(n.connectedAtMs),
                                isoUtc(n.sinceMs), isoUtc(n.lastFrameAtMs), QString::number(n.forwardsInFlight),
                                QString::number(n.bytesReceived), QString::number(n.bytesSent), QString::number(n.carrierCount),
                                orDash(n.lastMethod), isoUtc(n.lastForwardAtMs), orDash(n.keepalive)};
        out << formatTable({QStringLiteral("NODE"), QStringLiteral("ADDRESS"), QStringLiteral("RELEASE"), QStringLiteral("CONNECTED"),
                            QStringLiteral("REGISTERED"), QStringLiteral("LAST SEEN"), QStringLiteral("IN FLIGHT"),
                            QStringLiteral("BYTES IN"), QStringLiteral("BYTES OUT"), QStringLiteral("CARRIER"),
                            QStringLiteral("LAST METHOD"), QStringLiteral("LAST FORWARD"), QStringLiteral("KEEPALIVE")},
                           rows, QStringLiteral("  "), markRows(nodes, HealthOverview::nodeRowTroubled));
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
                                isoUtc(e.authorityUntilMs),
                                orDash(e.lastOfferResult)};
        out << formatTable({QStringLiteral("NODE"), QStringLiteral("PROJECTION"), QStringLiteral("GEN"),
                            QStringLiteral("RENEWALS"), QStringLiteral("CURRENT WINDOW"), QStringLiteral("NEXT WINDOW"),
                            QStringLiteral("DNS AUTHORITY UNTIL"), QStringLiteral("LAST OFFER")},
                           rows, QStringLiteral("  "), markRows(escrow, HealthOverview::escrowRowFailed));
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
            rows << QStringList{orDash(b.name), orDash(b.serviceId), orDash(b.capability), orDash(b.nodeId), orDash(b.status),
                                orDash(b.reason), grantText(b), QString::number(b.attempts), isoUtc(b.nextRetryAtMs)};
        out << formatTable({QStringLiteral("NAME"), QStringLiteral("SERVICE"), QStringLiteral("CAPABILITY"), QStringLiteral("NODE"),
                            QStringLiteral("STATUS"), QStringLiteral("REASON"), QStringLiteral("GRANT"), QStringLiteral("ATTEMPTS"),
                            QStringLiteral("NEXT RETRY (UTC)")},
                           rows, QStringLiteral("  "), markRows(bindings, HealthOverview::bindingRowFailed));
    }
    out << QString();

    out << QStringLiteral("VPN HUB");
    kv(out, QStringLiteral("bound"), yesNo(s.vpn.bound));
    kv(out, QStringLiteral("address"),
       s.vpn.address.isEmpty() ? QStringLiteral("-") : QStringLiteral("%1:%2").arg(s.vpn.address).arg(s.vpn.quicPort));
    kv(out, QStringLiteral("network revision"), optNumber(s.vpn.networkRevision));
    kv(out, QStringLiteral("members"), QString::number(s.vpn.memberCount));
    // docs/contract.md §18.1 vpn: the hub's public key only, never a private one.
    kv(out, QStringLiteral("state"), s.vpn.lastFailure.isEmpty() ? s.vpn.state : QStringLiteral("%1 (%2)").arg(s.vpn.state, s.vpn.lastFailure));
    kv(out, QStringLiteral("public key"), s.vpn.publicKey.isEmpty() ? QStringLiteral("-") : s.vpn.publicKey);
    kv(out, QStringLiteral("connected"), QStringLiteral("%1 of %2").arg(s.vpn.membersConnected).arg(s.vpn.memberCount));
    QStringList drops;
    for (auto it = s.vpn.drops.constBegin(); it != s.vpn.drops.constEnd(); ++it)
        drops << QStringLiteral("%1 %2").arg(it.key()).arg(it.value());
    kv(out, QStringLiteral("drops"), drops.isEmpty() ? QStringLiteral("-") : drops.join(QStringLiteral(", ")));
    for (const auto &m : s.vpn.members)
        kv(out, QStringLiteral("member %1").arg(m.nodeId),
           QStringLiteral("%1 %2, in %3 pkt/%4 B, out %5 pkt/%6 B")
               .arg(m.address, m.connected ? QStringLiteral("connected") : QStringLiteral("not connected"))
               .arg(m.packetsIn)
               .arg(m.bytesIn)
               .arg(m.packetsOut)
               .arg(m.bytesOut));
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

    // Backups, restores and closure transfers (docs/contract.md §18.1 backups): value-free.
    out << QStringLiteral("BACKUPS");
    int backups = 0;
    for (const auto &op : s.backups.operations)
        backups += op.kind == QLatin1String("backup") ? 1 : 0;
    kv(out, QStringLiteral("in flight"), QStringLiteral("%1 backups, %2 restores, %3 closure transfers")
                                             .arg(backups)
                                             .arg(s.backups.operations.size() - backups)
                                             .arg(s.backups.transfers.size()));
    kv(out, QStringLiteral("closure bytes"),
       QStringLiteral("sent %1, received %2").arg(s.backups.closureBytesSent).arg(s.backups.closureBytesReceived));
    QStringList outcomes;
    for (auto it = s.backups.transfersByOutcome.constBegin(); it != s.backups.transfersByOutcome.constEnd(); ++it)
        outcomes << QStringLiteral("%1 %2").arg(it.key()).arg(it.value());
    kv(out, QStringLiteral("transfers ended"), outcomes.isEmpty() ? QStringLiteral("-") : outcomes.join(QStringLiteral(", ")));
    if (!s.backups.operations.isEmpty()) {
        QList<QStringList> rows;
        for (const auto &op : s.backups.operations)
            rows << QStringList{orDash(op.kind), orDash(op.nodeId), orDash(op.serviceId), orDash(op.backupId), orDash(op.step),
                                stepsText(op), isoUtc(op.startedAtMs)};
        out << formatTable({QStringLiteral("KIND"), QStringLiteral("NODE"), QStringLiteral("SERVICE"), QStringLiteral("BACKUP"),
                            QStringLiteral("STEP"), QStringLiteral("STEPS"), QStringLiteral("STARTED (UTC)")},
                           rows);
    }
    if (!s.backups.transfers.isEmpty()) {
        QList<QStringList> rows;
        for (const auto &t : s.backups.transfers)
            rows << QStringList{orDash(t.streamId), orDash(t.direction), orDash(t.nodeId), orDash(t.serviceId), orDash(t.backupId),
                                orDash(t.state), progressText(t.bytesMoved, t.sizeBytes), rateText(t, s.generatedAtMs), orDash(t.awaiting),
                                isoUtc(t.startedAtMs)};
        out << formatTable({QStringLiteral("STREAM"), QStringLiteral("DIRECTION"), QStringLiteral("NODE"), QStringLiteral("SERVICE"),
                            QStringLiteral("BACKUP"), QStringLiteral("STATE"), QStringLiteral("MOVED"), QStringLiteral("RATE"),
                            QStringLiteral("AWAITING"), QStringLiteral("STARTED (UTC)")},
                           rows);
    }
    if (!s.backups.recent.isEmpty()) {
        QList<QStringList> rows;
        QList<bool> marks;
        for (const auto &r : s.backups.recent) {
            rows << QStringList{orDash(r.streamId), orDash(r.direction), orDash(r.nodeId), orDash(r.serviceId), orDash(r.backupId),
                                orDash(r.outcome), progressText(r.bytesMoved, r.sizeBytes), isoUtc(r.endedAtMs)};
            marks << HealthOverview::closureOutcomeFailed(r);
        }
        out << QStringLiteral("  last transfers");
        out << formatTable({QStringLiteral("STREAM"), QStringLiteral("DIRECTION"), QStringLiteral("NODE"), QStringLiteral("SERVICE"),
                            QStringLiteral("BACKUP"), QStringLiteral("OUTCOME"), QStringLiteral("MOVED"), QStringLiteral("ENDED (UTC)")},
                           rows, QStringLiteral("  "), marks);
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
    kv(out, QStringLiteral("re-registrations"), QString::number(s.counters.reregistrationWaves));
    for (const QString &outcome : {QStringLiteral("delivered"), QStringLiteral("failed")})
        kv(out, QStringLiteral("escrow offers"), QStringLiteral("%1 %2").arg(outcome).arg(s.counters.escrowOffersByOutcome.value(outcome)));
    kv(out, QStringLiteral("registry requests"), QString::number(s.counters.registryRequests));
    kv(out, QStringLiteral("registry bytes"), QString::number(s.counters.registryBodyBytes));
    kv(out, QStringLiteral("status clients"), QString::number(s.counters.statusClients));

    return out.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QByteArray TerminalView::renderJson(const status::RelayStatus &status)
{
    return QJsonDocument(status.toJson()).toJson(QJsonDocument::Indented);
}

QString TerminalView::renderWatch(const QString &socketPath, const QString &connectionLine,
                                  const std::optional<status::RelayStatus> &status, const QList<StatusEvent> &recentEvents,
                                  int eventTail, QSize terminal)
{
    QStringList header{QStringLiteral("coreflow-console --watch  %1  %2")
                           .arg(TerminalText::printable(socketPath), TerminalText::printable(connectionLine)),
                       QString()};
    QStringList events;
    if (!recentEvents.isEmpty() && eventTail > 0) {
        const qsizetype from = std::max<qsizetype>(0, recentEvents.size() - eventTail);
        for (qsizetype i = from; i < recentEvents.size(); ++i)
            events << QStringLiteral("  %1  %2  %3").arg(isoUtc(recentEvents[i].atMs), TerminalText::printable(recentEvents[i].kind),
                                                         TerminalText::printable(recentEvents[i].line));
    }
    QStringList full = header;
    if (status)
        full += renderText(*status).split(QLatin1Char('\n'));
    else
        full << QStringLiteral("(no snapshot yet)");
    while (!full.isEmpty() && full.last().isEmpty())
        full.removeLast();
    if (!events.isEmpty())
        full << QString() << QStringLiteral("RECENT EVENTS") << events;

    auto finish = [&terminal](QStringList lines) {
        if (terminal.isValid() && terminal.width() > 0)
            for (QString &l : lines)
                if (l.size() > terminal.width())
                    l = l.left(std::max(1, terminal.width() - 1)) + QChar(0x2026);
        // On a terminal the last row gets no line feed: the rows-th one would scroll the first line
        // (socket and connection state) off the screen. A log of views (no terminal) ends each line.
        const bool bounded = terminal.isValid() && terminal.height() > 0;
        return lines.join(QLatin1Char('\n')) + (bounded ? QString() : QStringLiteral("\n"));
    };
    if (!terminal.isValid() || terminal.height() <= 0 || full.size() <= terminal.height() || !status)
        return finish(full);

    // Compact: what an operator needs first, cut to the terminal's height.
    const status::RelayStatus s = TerminalText::printableStatus(*status);
    QStringList out = header;
    out += renderOverview(s);
    for (const auto &r : shownRefusals(s))
        out << (QStringLiteral("! ") + QStringLiteral("refusal").leftJustified(keyWidth) + refusalLine(r));
    const int rows = terminal.height();
    const int eventRows = events.isEmpty() ? 0 : std::min<int>(int(events.size()), std::max(1, (rows - int(out.size())) / 4));
    int left = rows - int(out.size()) - (eventRows ? eventRows + 2 : 0) - 2; // blank + heading
    if (left >= 2 && !s.nodes.isEmpty()) {
        QList<status::CarriedNode> nodes = s.nodes;
        std::stable_sort(nodes.begin(), nodes.end(), [](const auto &a, const auto &b) {
            const bool ta = HealthOverview::nodeRowTroubled(a), tb = HealthOverview::nodeRowTroubled(b);
            return ta != tb ? ta : a.nodeId < b.nodeId;
        });
        const int shown = std::min<int>(int(nodes.size()), left - 1 - (int(nodes.size()) > left - 1 ? 1 : 0));
        QList<QStringList> cells;
        QList<bool> marks;
        for (int i = 0; i < shown; ++i) {
            const auto &n = nodes[i];
            cells << QStringList{orDash(n.nodeId), orDash(n.remoteAddress), isoUtc(n.lastFrameAtMs), QString::number(n.forwardsInFlight),
                                 orDash(n.keepalive)};
            marks << HealthOverview::nodeRowTroubled(n);
        }
        out << QString() << QStringLiteral("NODES (%1)").arg(nodes.size());
        out += formatTable({QStringLiteral("NODE"), QStringLiteral("ADDRESS"), QStringLiteral("LAST SEEN"), QStringLiteral("IN FLIGHT"),
                            QStringLiteral("KEEPALIVE")},
                           cells, QStringLiteral("  "), marks);
        if (shown < nodes.size())
            out << QStringLiteral("  \u2026 %1 more: coreflow-console --text shows all").arg(nodes.size() - shown);
    }
    if (eventRows) {
        out << QString() << QStringLiteral("RECENT EVENTS");
        out += events.mid(events.size() - eventRows);
    }
    while (out.size() > rows)
        out.removeLast();
    return finish(out);
}

QString TerminalView::progressText(qint64 bytesMoved, const std::optional<qint64> &sizeBytes)
{
    return sizeBytes ? QStringLiteral("%1 of %2 B").arg(bytesMoved).arg(*sizeBytes) : QStringLiteral("%1 B").arg(bytesMoved);
}

QString TerminalView::rateText(const status::ClosureTransferStatus &transfer, qint64 generatedAtMs)
{
    const qint64 elapsedMs = generatedAtMs - transfer.startedAtMs;
    if (transfer.startedAtMs <= 0 || elapsedMs < 1000)
        return QStringLiteral("-");
    return QStringLiteral("%1 B/s").arg(transfer.bytesMoved * 1000 / elapsedMs);
}

QString TerminalView::stepsText(const status::BackupOperationStatus &operation)
{
    return operation.kind == QLatin1String("restore") ? QStringLiteral("%1 of %2").arg(operation.stepsDone).arg(operation.stepsTotal)
                                                      : QStringLiteral("-");
}

QString TerminalView::grantText(const status::PlatformBinding &binding)
{
    return binding.grantOperation.isEmpty() ? QStringLiteral("-")
                                            : QStringLiteral("%1 (generation %2)").arg(binding.grantOperation).arg(binding.grantGeneration);
}

} // namespace coreflow::console
