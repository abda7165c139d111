#pragma once
// BindingsTableModel: platform bindings. Columns: Name, Capability, Node, Status, Reason.
#include "console/rowtablemodel.h"
#include "shared/status/relaystatus.h"

namespace coreflow::console {

class BindingsTableModel : public RowTableModel {
    Q_OBJECT
public:
    explicit BindingsTableModel(QObject *parent = nullptr);
    void setBindings(const QList<status::PlatformBinding> &bindings);
};

} // namespace coreflow::console
