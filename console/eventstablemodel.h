#pragma once
// EventsTableModel: the recent event stream, oldest first, at most `capacity` rows (older rows drop
// off). Columns: Time (UTC), Kind, Line.
#include "console/rowtablemodel.h"
#include "console/statusevent.h"

namespace coreflow::console {

class EventsTableModel : public RowTableModel {
    Q_OBJECT
public:
    explicit EventsTableModel(int capacity = 1000, QObject *parent = nullptr);
    void addEvent(const StatusEvent &event);
    int capacity() const { return m_capacity; }

private:
    int m_capacity;
};

} // namespace coreflow::console
