#pragma once
// EscrowTableModel: escrow runs per node. Columns: Node, Projection, Generation, Renewals, Current
// window (UTC start..end), Next window (UTC), Last offer.
#include "console/rowtablemodel.h"
#include "shared/status/relaystatus.h"

namespace coreflow::console {

class EscrowTableModel : public RowTableModel {
    Q_OBJECT
public:
    explicit EscrowTableModel(QObject *parent = nullptr);
    void setRuns(const QList<status::EscrowRun> &runs);
};

} // namespace coreflow::console
