#include "console/tablepane.h"

#include "console/rowtablemodel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace coreflow::console {

TablePane::TablePane(const QString &name, RowTableModel *model, QWidget *parent)
    : QWidget(parent), m_model(model), m_proxy(new QSortFilterProxyModel(this)), m_filter(new QLineEdit(this)),
      m_view(new QTableView(this)), m_count(new QLabel(this))
{
    setObjectName(name + QStringLiteral("Pane"));
    m_model->setParent(this);
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(RowTableModel::sortRole);
    m_proxy->setFilterKeyColumn(-1);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setSortCaseSensitivity(Qt::CaseInsensitive);
    m_proxy->setDynamicSortFilter(true);

    m_filter->setObjectName(name + QStringLiteral("Filter"));
    m_filter->setPlaceholderText(tr("Filter…"));
    m_filter->setClearButtonEnabled(true);
    m_view->setObjectName(name + QStringLiteral("Table"));
    m_view->setModel(m_proxy);
    m_view->setSortingEnabled(true);
    m_view->sortByColumn(0, Qt::AscendingOrder);
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_view->setAlternatingRowColors(true);
    m_view->verticalHeader()->setVisible(false);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    m_count->setObjectName(name + QStringLiteral("Count"));

    auto *top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addWidget(m_count);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_view, 1);

    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_proxy, &QAbstractItemModel::rowsInserted, this, &TablePane::updateCount);
    connect(m_proxy, &QAbstractItemModel::rowsRemoved, this, &TablePane::updateCount);
    connect(m_proxy, &QAbstractItemModel::modelReset, this, &TablePane::updateCount);
    connect(m_proxy, &QAbstractItemModel::layoutChanged, this, &TablePane::updateCount);
    // Columns fit their contents (full timestamps, never "2026-12-01T…"), also as rows arrive one by
    // one (events) or change in place (live snapshots); the last column stretches.
    connect(m_model, &QAbstractItemModel::modelReset, this, [this] { m_view->resizeColumnsToContents(); });
    connect(m_model, &QAbstractItemModel::rowsInserted, this, [this] { m_view->resizeColumnsToContents(); });
    connect(m_model, &QAbstractItemModel::dataChanged, this, [this] { m_view->resizeColumnsToContents(); });
    updateCount();
}

void TablePane::updateCount()
{
    m_count->setText(tr("%1 of %2").arg(m_proxy->rowCount()).arg(m_model->rowCount()));
}

} // namespace coreflow::console
