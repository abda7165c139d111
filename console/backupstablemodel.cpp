#include "console/backupstablemodel.h"

#include "console/healthoverview.h"
#include "console/terminalview.h"

#include <QVariant>

namespace coreflow::console {

namespace {
QString what(const QString &direction)
{
    return direction == QLatin1String("send") ? QStringLiteral("closure send") : QStringLiteral("closure receive");
}
} // namespace

BackupsTableModel::BackupsTableModel(QObject *parent)
    : RowTableModel({tr("What"), tr("Node"), tr("Service"), tr("Backup"), tr("State"), tr("Progress"), tr("Awaiting"), tr("Started (UTC)"),
                     tr("Ended (UTC)")},
                    parent)
{
}

void BackupsTableModel::setLane(const status::BackupLaneStatus &lane)
{
    using TerminalView = console::TerminalView;
    QList<Row> rows;
    for (const auto &op : lane.operations)
        rows.append(Row{{TerminalView::orDash(op.kind), TerminalView::orDash(op.nodeId), TerminalView::orDash(op.serviceId),
                         TerminalView::orDash(op.backupId), TerminalView::orDash(op.step), TerminalView::stepsText(op), QStringLiteral("-"),
                         TerminalView::isoUtc(op.startedAtMs), QStringLiteral("-")},
                        {QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), op.startedAtMs, QVariant()},
                        false});
    for (const auto &t : lane.transfers)
        rows.append(Row{{what(t.direction), TerminalView::orDash(t.nodeId), TerminalView::orDash(t.serviceId), TerminalView::orDash(t.backupId),
                         TerminalView::orDash(t.state), TerminalView::progressText(t.bytesMoved, t.sizeBytes), TerminalView::orDash(t.awaiting),
                         TerminalView::isoUtc(t.startedAtMs), QStringLiteral("-")},
                        {QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), t.bytesMoved, QVariant(), t.startedAtMs, QVariant()},
                        false});
    for (const auto &r : lane.recent)
        rows.append(Row{{what(r.direction), TerminalView::orDash(r.nodeId), TerminalView::orDash(r.serviceId), TerminalView::orDash(r.backupId),
                         TerminalView::orDash(r.outcome), TerminalView::progressText(r.bytesMoved, r.sizeBytes), QStringLiteral("-"),
                         TerminalView::isoUtc(r.startedAtMs), TerminalView::isoUtc(r.endedAtMs)},
                        {QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), r.bytesMoved, QVariant(), r.startedAtMs, r.endedAtMs},
                        HealthOverview::closureOutcomeFailed(r)});
    m_inFlight = int(lane.operations.size() + lane.transfers.size());
    setRows(std::move(rows));
}

} // namespace coreflow::console
