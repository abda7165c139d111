#pragma once
// NodesTableModel: carried nodes. Columns: Node, Since (UTC), Carriers, Last method, Last forward
// (UTC), In flight. Times and counts sort numerically.
#include "console/rowtablemodel.h"
#include "shared/status/relaystatus.h"

namespace coreflow::console {

class NodesTableModel : public RowTableModel {
    Q_OBJECT
public:
    explicit NodesTableModel(QObject *parent = nullptr);
    void setNodes(const QList<status::CarriedNode> &nodes);
};

} // namespace coreflow::console
