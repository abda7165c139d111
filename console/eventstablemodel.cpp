#include "console/eventstablemodel.h"

#include "console/terminalview.h"

namespace coreflow::console {

EventsTableModel::EventsTableModel(int capacity, QObject *parent)
    : RowTableModel({tr("Time (UTC)"), tr("Kind"), tr("Line")}, parent), m_capacity(qMax(1, capacity))
{
}

void EventsTableModel::addEvent(const StatusEvent &event)
{
    if (rowCount() >= m_capacity)
        removeFirstRows(rowCount() - m_capacity + 1);
    appendRow(Row{{TerminalView::isoUtc(event.atMs), event.kind, event.line}, {event.atMs, QVariant(), QVariant()}});
}

} // namespace coreflow::console
