#include "console/escrowtablemodel.h"

#include "console/healthoverview.h"
#include "console/terminalview.h"

namespace coreflow::console {

EscrowTableModel::EscrowTableModel(QObject *parent)
    : RowTableModel({tr("Node"), tr("Projection"), tr("Generation"), tr("Renewals"), tr("Current window (UTC)"),
                     tr("Next window (UTC)"), tr("DNS authority until (UTC)"), tr("Last offer")},
                    parent)
{
}

void EscrowTableModel::setRuns(const QList<status::EscrowRun> &runs)
{
    QList<Row> rows;
    rows.reserve(runs.size());
    for (const auto &e : runs) {
        const QString window = (e.currentWindowStartMs == 0 && e.currentWindowEndMs == 0)
                                   ? QStringLiteral("-")
                                   : TerminalView::isoUtc(e.currentWindowStartMs) + QStringLiteral("..")
                                         + TerminalView::isoUtc(e.currentWindowEndMs);
        rows.append(Row{{e.nodeId, TerminalView::orDash(e.projectionId), QString::number(e.projectionGeneration),
                         QString::number(e.renewalCount), window, TerminalView::isoUtc(e.nextWindowStartMs),
                         TerminalView::isoUtc(e.authorityUntilMs), TerminalView::orDash(e.lastOfferResult)},
                        {QVariant(), QVariant(), e.projectionGeneration, e.renewalCount, e.currentWindowStartMs,
                         e.nextWindowStartMs, e.authorityUntilMs, QVariant()},
                        HealthOverview::escrowRowFailed(e)});
    }
    setRows(std::move(rows));
}

} // namespace coreflow::console
