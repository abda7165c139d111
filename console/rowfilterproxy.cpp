#include "console/rowfilterproxy.h"

namespace coreflow::console {

void RowFilterProxy::setColumnValue(int column, const QString &value)
{
    m_column = column;
    m_value = value;
    invalidateFilter();
}

bool RowFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (m_column >= 0 && !m_value.isEmpty()) {
        const QModelIndex cell = sourceModel()->index(sourceRow, m_column, sourceParent);
        if (sourceModel()->data(cell, Qt::DisplayRole).toString() != m_value)
            return false;
    }
    return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
}

} // namespace coreflow::console
