#include "console/bindingstablemodel.h"

#include "console/healthoverview.h"
#include "console/terminalview.h"

namespace coreflow::console {

BindingsTableModel::BindingsTableModel(QObject *parent)
    : RowTableModel({tr("Name"), tr("Capability"), tr("Node"), tr("Status"), tr("Reason")}, parent)
{
}

void BindingsTableModel::setBindings(const QList<status::PlatformBinding> &bindings)
{
    QList<Row> rows;
    rows.reserve(bindings.size());
    for (const auto &b : bindings)
        rows.append(Row{{b.name, TerminalView::orDash(b.capability), TerminalView::orDash(b.nodeId),
                         TerminalView::orDash(b.status), TerminalView::orDash(b.reason)},
                        {},
                        HealthOverview::bindingRowFailed(b)});
    setRows(std::move(rows));
}

} // namespace coreflow::console
