#pragma once
// TablePane: one console table — a filter line (case-insensitive substring over every column), a
// sortable QTableView (click a header; numbers and times sort numerically via RowTableModel::sortRole)
// and a "shown of total" count.
//
// Object names, for tests and style sheets: "<name>Filter" (QLineEdit), "<name>Table" (QTableView),
// "<name>Count" (QLabel).
#include <QWidget>

class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace coreflow::console {

class RowTableModel;

class TablePane : public QWidget {
    Q_OBJECT
public:
    TablePane(const QString &name, RowTableModel *model, QWidget *parent = nullptr);

    QLineEdit *filterEdit() const { return m_filter; }
    QTableView *view() const { return m_view; }
    QSortFilterProxyModel *proxy() const { return m_proxy; }
    RowTableModel *model() const { return m_model; }

private:
    void updateCount();

    RowTableModel *m_model;
    QSortFilterProxyModel *m_proxy;
    QLineEdit *m_filter;
    QTableView *m_view;
    QLabel *m_count;
};

} // namespace coreflow::console
