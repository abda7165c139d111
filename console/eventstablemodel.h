#pragma once
// EventsTableModel: the recent event stream, oldest first, at most `capacity` rows (older rows drop
// off). Columns: Time (UTC, full ISO-8601 with seconds), Kind, Line.
#include "console/rowtablemodel.h"
#include "console/statusevent.h"

namespace coreflow::console {

class EventsTableModel : public RowTableModel {
    Q_OBJECT
public:
    explicit EventsTableModel(int capacity = 1000, QObject *parent = nullptr);
    void addEvent(const StatusEvent &event);
    int capacity() const { return m_capacity; }
    // A line that tells of a failure (refused, failed, lost, parked, did not, silent, not ready): coloured.
    static bool eventIsProblem(const StatusEvent &event);

private:
    int m_capacity;
};

} // namespace coreflow::console
