#include "console/nodestablemodel.h"

#include "console/healthoverview.h"
#include "console/terminalview.h"

namespace coreflow::console {

NodesTableModel::NodesTableModel(QObject *parent)
    : RowTableModel({tr("Node"), tr("Address"), tr("Release"), tr("Connected (UTC)"), tr("Registered (UTC)"),
                     tr("Last seen (UTC)"), tr("In flight"), tr("Bytes in"), tr("Bytes out"), tr("Carrier"), tr("Last method"),
                     tr("Last forward (UTC)"), tr("Keepalive")},
                    parent)
{
}

void NodesTableModel::setNodes(const QList<status::CarriedNode> &nodes)
{
    QList<Row> rows;
    rows.reserve(nodes.size());
    for (const auto &n : nodes)
        rows.append(Row{{n.nodeId, TerminalView::orDash(n.remoteAddress), TerminalView::orDash(n.offeredRelease),
                         TerminalView::isoUtc(n.connectedAtMs), TerminalView::isoUtc(n.sinceMs), TerminalView::isoUtc(n.lastFrameAtMs),
                         QString::number(n.forwardsInFlight), QString::number(n.bytesReceived), QString::number(n.bytesSent),
                         QString::number(n.carrierCount), TerminalView::orDash(n.lastMethod), TerminalView::isoUtc(n.lastForwardAtMs),
                         TerminalView::orDash(n.keepalive)},
                        {QVariant(), QVariant(), QVariant(), n.connectedAtMs, n.sinceMs, n.lastFrameAtMs, n.forwardsInFlight,
                         n.bytesReceived, n.bytesSent, n.carrierCount, QVariant(), n.lastForwardAtMs, QVariant()},
                        HealthOverview::nodeRowTroubled(n)});
    setRows(std::move(rows));
}

} // namespace coreflow::console
