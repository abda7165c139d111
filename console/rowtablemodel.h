#pragma once
// RowTableModel: a read-only table of display strings plus one sort key per cell. The console's
// concrete tables (nodes, escrow, bindings, events, key/value panes) derive from it and only turn
// status values into rows.
//
// Roles: Qt::DisplayRole and Qt::ToolTipRole give the display string; sortRole (Qt::UserRole) gives
// the sort key (numbers and times sort numerically, text case-insensitively), for a
// QSortFilterProxyModel with setSortRole(RowTableModel::sortRole). A row marked problem answers
// Qt::BackgroundRole/Qt::ForegroundRole with the problem colours (light red, dark red text).
#include <QAbstractTableModel>
#include <QColor>
#include <QStringList>
#include <QVariantList>

namespace coreflow::console {

class RowTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    static constexpr int sortRole = Qt::UserRole;

    struct Row {
        QStringList display;
        QVariantList sortKeys; // same length as display; a missing key sorts by the display string
        bool problem = false;  // a failed or refused row: shown in problemBackground/problemForeground
    };
    static QColor problemBackground();
    static QColor problemForeground();
    int problemCount() const;

    explicit RowTableModel(QStringList headers, QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // Replaces all rows. Same row count: cells update in place (selection and scroll survive a live
    // update); otherwise the model resets.
    void setRows(QList<Row> rows);
    void appendRow(Row row);
    void removeFirstRows(int count);
    void clear() { setRows({}); }
    const QList<Row> &rows() const { return m_rows; }
    // Every display string of every row (tests and the secret canary check read this).
    QStringList allText() const;

private:
    QStringList m_headers;
    QList<Row> m_rows;
};

} // namespace coreflow::console
