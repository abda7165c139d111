#pragma once
// KeyValueTableModel: a two-column Property/Value table for the single-object panes (Relay overview,
// Ingress, VPN hub).
#include "console/rowtablemodel.h"

#include <utility>

namespace coreflow::console {

class KeyValueTableModel : public RowTableModel {
    Q_OBJECT
public:
    explicit KeyValueTableModel(QObject *parent = nullptr);
    void setPairs(const QList<std::pair<QString, QString>> &pairs);
    // Rows with a problem flag each (coloured, RowTableModel::Row::problem).
    struct Item {
        QString key, value;
        bool problem = false;
    };
    void setItems(const QList<Item> &items);
    // The value shown for a property, or a null QString.
    QString value(const QString &property) const;
};

} // namespace coreflow::console
