#pragma once
// BindingsTableModel: platform bindings (docs/contract.md §18.1 bindings[]). Columns: Name, Service,
// Capability, Node, Status, Reason, Grant (operation and generation, never its authority), Attempts,
// Next retry (UTC). Attempts and the retry time sort numerically. Status is column kStatusColumn (the
// pane's state filter).
#include "console/rowtablemodel.h"
#include "shared/status/relaystatus.h"

namespace coreflow::console {

class BindingsTableModel : public RowTableModel {
    Q_OBJECT
public:
    static constexpr int kStatusColumn = 4;
    explicit BindingsTableModel(QObject *parent = nullptr);
    void setBindings(const QList<status::PlatformBinding> &bindings);
};

} // namespace coreflow::console
