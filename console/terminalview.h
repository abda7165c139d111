#pragma once
// TerminalView: the console's plain-text and JSON renderings of a RelayStatus (--text, --watch, --json).
//
// renderText() has a stable layout, so scripts and tests can rely on it: sections in this order,
// each a heading line followed by two-space-indented lines, one blank line between sections:
//   OVERVIEW, RELAY, READINESS, CLOUDLY SESSION, REGISTRATION, LISTENER, NODES (n), ESCROW (n), INGRESS,
//   BINDINGS (n), VPN HUB, COUNTERS.
// A line that shows a problem (an OVERVIEW problem, the certificate warning, a failed escrow or binding
// row, a node not answering its keepalive) starts with "!" instead of the first blank.
// Key/value lines pad the key to 20 columns. Tables (NODES, ESCROW, BINDINGS) have an upper-case header
// row, columns separated by two spaces and padded to their widest cell, no trailing blanks; rows are
// sorted by node id (bindings by name). Times are ISO-8601 UTC with seconds ("2023-11-14T22:13:20Z");
// 0 is "-". Booleans are "yes"/"no"; empty strings and nulls are "-". The text ends with a newline.
// READINESS lists each refusal once; a parked relay's park line appears once, as "parked  yes: <line>",
// not also as the registration refusal that repeats it.
//
// renderJson() is the status object (RelayStatus::toJson()) pretty-printed with sorted keys.
#include "console/statusevent.h"
#include "shared/status/relaystatus.h"

#include <QByteArray>
#include <QList>
#include <QSize>
#include <QString>

namespace coreflow::console {

class TerminalView {
public:
    static QString renderText(const status::RelayStatus &status);
    static QByteArray renderJson(const status::RelayStatus &status);
    // --watch: a header line (socket, connection state) then renderText(), then up to `eventTail`
    // recent events. No terminal control codes (the caller clears the screen on a terminal only).
    // terminal (rows, columns) valid: every line is cut to the width, and when the full view has more
    // lines than rows the compact layout is used instead: header, OVERVIEW, the readiness refusals,
    // the nodes table cut to the rows left (problem rows first, then "… n more: coreflow-console
    // --text shows all"), and the newest events that still fit. With a terminal the view holds at most
    // rows - 1 line feeds (the last row ends without one, so the terminal never scrolls); without one
    // every line ends with a line feed.
    static QString renderWatch(const QString &socketPath, const QString &connectionLine,
                               const std::optional<status::RelayStatus> &status, const QList<StatusEvent> &recentEvents,
                               int eventTail = 10, QSize terminal = QSize());

    static QString isoUtc(qint64 unixMs);             // "-" for 0
    static QString yesNo(bool value) { return value ? QStringLiteral("yes") : QStringLiteral("no"); }
    static QString orDash(const QString &value) { return value.isEmpty() ? QStringLiteral("-") : value; }
    // A binding's grant as "<operation> (generation <n>)", "-" without one (never its authority).
    static QString grantText(const status::PlatformBinding &binding);
    // §18.1 backups: "<moved> of <size> B" ("<moved> B" while the size is not stated yet).
    static QString progressText(qint64 bytesMoved, const std::optional<qint64> &sizeBytes);
    // Bytes per second since the transfer started, at the snapshot's time ("-" before a second passed).
    static QString rateText(const status::ClosureTransferStatus &transfer, qint64 generatedAtMs);
    static QString stepsText(const status::BackupOperationStatus &operation); // "2 of 4"; "-" for a backup
    static QString refusalLine(const status::ReadinessRefusal &refusal); // "hop: line [peer offer X; own offer Y]"
    // The Cloudly session's last error class as the text view and the window show it (D-87): "-" before
    // any failure; "<class> (recovered at <connectedSince, ISO 8601 UTC>)" while a session is
    // dispatchable again (the error belongs to an earlier socket); "<class>" while none is.
    static QString cloudlyLastError(const status::RelayStatus &status);
    // The refusals to show: a parked relay's registration entry that is exactly the park line is left out
    // (the park line is shown once, under "parked").
    static QList<status::ReadinessRefusal> shownRefusals(const status::RelayStatus &status);
    // Columns padded to their widest cell, joined by two spaces, trailing blanks trimmed; each line
    // prefixed with `indent`.
    // problemRows[i] true: row i starts with "!" instead of the indent's first character.
    static QStringList formatTable(const QStringList &headers, const QList<QStringList> &rows,
                                   const QString &indent = QStringLiteral("  "), const QList<bool> &problemRows = {});
    // The OVERVIEW section (HealthOverview): health, next action, one line per hop, the counts. A
    // problem line starts with "! " instead of two blanks. `status` must be printable already.
    static QStringList renderOverview(const status::RelayStatus &status);
};

} // namespace coreflow::console
