#include "console/eventstablemodel.h"

#include "console/terminalview.h"

namespace coreflow::console {

EventsTableModel::EventsTableModel(int capacity, QObject *parent)
    : RowTableModel({tr("Time (UTC)"), tr("Kind"), tr("Line")}, parent), m_capacity(qMax(1, capacity))
{
}

bool EventsTableModel::eventIsProblem(const StatusEvent &event)
{
    for (const char *word : {"refused", "failed", "lost", "parked", "did not", "silent", "not ready"})
        if (event.line.contains(QLatin1StringView(word), Qt::CaseInsensitive))
            return true;
    return false;
}

void EventsTableModel::addEvent(const StatusEvent &event)
{
    if (rowCount() >= m_capacity)
        removeFirstRows(rowCount() - m_capacity + 1);
    appendRow(Row{{TerminalView::isoUtc(event.atMs), event.kind, event.line}, {event.atMs, QVariant(), QVariant()}, eventIsProblem(event)});
}

} // namespace coreflow::console
