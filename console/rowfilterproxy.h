#pragma once
// RowFilterProxy: the console tables' sort/filter proxy. Beside QSortFilterProxyModel's own text filter
// (a case-insensitive substring over every column) it can hold one exact-value filter on one column
// (the bindings pane's state choice): a row is shown when it passes both. An empty value shows all.
#include <QSortFilterProxyModel>

namespace coreflow::console {

class RowFilterProxy : public QSortFilterProxyModel {
    Q_OBJECT
public:
    using QSortFilterProxyModel::QSortFilterProxyModel;
    void setColumnValue(int column, const QString &value);

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    int m_column = -1;
    QString m_value;
};

} // namespace coreflow::console
