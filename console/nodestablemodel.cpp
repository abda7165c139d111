#include "console/nodestablemodel.h"

#include "console/terminalview.h"

namespace coreflow::console {

NodesTableModel::NodesTableModel(QObject *parent)
    : RowTableModel({tr("Node"), tr("Since (UTC)"), tr("Carriers"), tr("Last method"), tr("Last forward (UTC)"), tr("In flight"),
                     tr("Last frame (UTC)"), tr("Keepalive")},
                    parent)
{
}

void NodesTableModel::setNodes(const QList<status::CarriedNode> &nodes)
{
    QList<Row> rows;
    rows.reserve(nodes.size());
    for (const auto &n : nodes)
        rows.append(Row{{n.nodeId, TerminalView::isoUtc(n.sinceMs), QString::number(n.carrierCount),
                         TerminalView::orDash(n.lastMethod), TerminalView::isoUtc(n.lastForwardAtMs),
                         QString::number(n.forwardsInFlight), TerminalView::isoUtc(n.lastFrameAtMs), TerminalView::orDash(n.keepalive)},
                        {QVariant(), n.sinceMs, n.carrierCount, QVariant(), n.lastForwardAtMs, n.forwardsInFlight, n.lastFrameAtMs,
                         QVariant()}});
    setRows(std::move(rows));
}

} // namespace coreflow::console
