#include "console/rowtablemodel.h"

namespace coreflow::console {

RowTableModel::RowTableModel(QStringList headers, QObject *parent) : QAbstractTableModel(parent), m_headers(std::move(headers)) {}

int RowTableModel::rowCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_rows.size()); }

int RowTableModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : int(m_headers.size()); }

QVariant RowTableModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.size() || index.column() >= m_headers.size())
        return {};
    const Row &row = m_rows[index.row()];
    const QString text = row.display.value(index.column());
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        return text;
    case Qt::BackgroundRole:
        return row.problem ? QVariant(problemBackground()) : QVariant();
    case Qt::ForegroundRole:
        return row.problem ? QVariant(problemForeground()) : QVariant();
    case sortRole: {
        const QVariant key = row.sortKeys.value(index.column());
        return key.isValid() ? key : QVariant(text.toCaseFolded());
    }
    default:
        return {};
    }
}

QColor RowTableModel::problemBackground() { return QColor(0xf8, 0xd7, 0xda); }
QColor RowTableModel::problemForeground() { return QColor(0x84, 0x20, 0x29); }

int RowTableModel::problemCount() const
{
    int n = 0;
    for (const Row &r : m_rows)
        n += r.problem ? 1 : 0;
    return n;
}

QVariant RowTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 && section < m_headers.size())
        return m_headers[section];
    return QAbstractTableModel::headerData(section, orientation, role);
}

void RowTableModel::setRows(QList<Row> rows)
{
    if (rows.size() == m_rows.size() && !rows.isEmpty()) {
        m_rows = std::move(rows);
        Q_EMIT dataChanged(index(0, 0), index(int(m_rows.size()) - 1, int(m_headers.size()) - 1));
        return;
    }
    beginResetModel();
    m_rows = std::move(rows);
    endResetModel();
}

void RowTableModel::appendRow(Row row)
{
    const int at = int(m_rows.size());
    beginInsertRows({}, at, at);
    m_rows.append(std::move(row));
    endInsertRows();
}

void RowTableModel::removeFirstRows(int count)
{
    count = qMin(count, int(m_rows.size()));
    if (count <= 0)
        return;
    beginRemoveRows({}, 0, count - 1);
    m_rows.remove(0, count);
    endRemoveRows();
}

QStringList RowTableModel::allText() const
{
    QStringList out = m_headers;
    for (const Row &r : m_rows)
        out += r.display;
    return out;
}

} // namespace coreflow::console
