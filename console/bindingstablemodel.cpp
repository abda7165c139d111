#include "console/bindingstablemodel.h"

#include "console/healthoverview.h"
#include "console/terminalview.h"

#include <QVariant>

namespace coreflow::console {

BindingsTableModel::BindingsTableModel(QObject *parent)
    : RowTableModel({tr("Name"), tr("Service"), tr("Capability"), tr("Node"), tr("Status"), tr("Reason"), tr("Grant"), tr("Attempts"),
                     tr("Next retry (UTC)")},
                    parent)
{
}

void BindingsTableModel::setBindings(const QList<status::PlatformBinding> &bindings)
{
    QList<Row> rows;
    rows.reserve(bindings.size());
    for (const auto &b : bindings)
        rows.append(Row{{b.name, TerminalView::orDash(b.serviceId), TerminalView::orDash(b.capability), TerminalView::orDash(b.nodeId),
                         TerminalView::orDash(b.status), TerminalView::orDash(b.reason), TerminalView::grantText(b),
                         QString::number(b.attempts), TerminalView::isoUtc(b.nextRetryAtMs)},
                        {QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), QVariant(), b.attempts, b.nextRetryAtMs},
                        HealthOverview::bindingRowFailed(b)});
    setRows(std::move(rows));
}

} // namespace coreflow::console
