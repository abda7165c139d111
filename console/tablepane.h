#pragma once
// TablePane: one console table — a filter line (case-insensitive substring over every column), a
// sortable QTableView (click a header; numbers and times sort numerically via RowTableModel::sortRole)
// and a "shown of total" count.
//
// Object names, for tests and style sheets: "<name>Filter" (QLineEdit), "<name>Table" (QTableView),
// "<name>Count" (QLabel), and with addColumnChoice() "<name>Choice" (QComboBox: "all" and the values
// given; choosing one shows only rows whose cell in that column equals it).
#include <QWidget>

class QComboBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTableView;

namespace coreflow::console {

class RowFilterProxy;
class RowTableModel;

class TablePane : public QWidget {
    Q_OBJECT
public:
    TablePane(const QString &name, RowTableModel *model, QWidget *parent = nullptr);

    void addColumnChoice(int column, const QString &allLabel, const QStringList &values);

    QLineEdit *filterEdit() const { return m_filter; }
    QComboBox *choice() const { return m_choice; }
    QTableView *view() const { return m_view; }
    QSortFilterProxyModel *proxy() const;
    RowTableModel *model() const { return m_model; }

private:
    void updateCount();

    RowTableModel *m_model;
    RowFilterProxy *m_proxy;
    QLineEdit *m_filter;
    QComboBox *m_choice = nullptr;
    QHBoxLayout *m_top = nullptr;
    QTableView *m_view;
    QLabel *m_count;
};

} // namespace coreflow::console
