#pragma once
// BackupsTableModel: backups, restores and database closure transfers (docs/contract.md §18.1
// backups). One row per operation in flight, per closure transfer in flight and per transfer that
// ended recently. Columns: What ("backup", "restore", "closure send", "closure receive"), Node,
// Service, Backup, State (the step, the transfer's state, or the outcome of one that ended),
// Progress (steps done of total, or bytes moved of the size), Awaiting (the side a transfer waits
// for), Started (UTC), Ended (UTC). A transfer that ended refused is a problem row. Value-free: ids,
// names, counts and times only.
#include "console/rowtablemodel.h"
#include "shared/status/relaystatus.h"

namespace coreflow::console {

class BackupsTableModel : public RowTableModel {
    Q_OBJECT
public:
    explicit BackupsTableModel(QObject *parent = nullptr);
    void setLane(const status::BackupLaneStatus &lane);
    // Rows in flight (operations and transfers), for the tab's title.
    int inFlightCount() const { return m_inFlight; }

private:
    int m_inFlight = 0;
};

} // namespace coreflow::console
