#include "console/tablepane.h"

#include "console/rowfilterproxy.h"
#include "console/rowtablemodel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

namespace coreflow::console {

TablePane::TablePane(const QString &name, RowTableModel *model, QWidget *parent)
    : QWidget(parent), m_model(model), m_proxy(new RowFilterProxy(this)), m_filter(new QLineEdit(this)),
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

    m_top = new QHBoxLayout;
    m_top->addWidget(m_filter, 1);
    m_top->addWidget(m_count);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(m_top);
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

QSortFilterProxyModel *TablePane::proxy() const { return m_proxy; }

void TablePane::addColumnChoice(int column, const QString &allLabel, const QStringList &values)
{
    m_choice = new QComboBox(this);
    m_choice->setObjectName(objectName().chopped(4) + QStringLiteral("Choice"));
    m_choice->addItem(allLabel, QString());
    for (const QString &v : values)
        m_choice->addItem(v, v);
    m_top->insertWidget(1, m_choice);
    connect(m_choice, &QComboBox::currentIndexChanged, this, [this, column](int index) {
        m_proxy->setColumnValue(column, m_choice->itemData(index).toString());
        updateCount();
    });
}

void TablePane::updateCount()
{
    m_count->setText(tr("%1 of %2").arg(m_proxy->rowCount()).arg(m_model->rowCount()));
}

} // namespace coreflow::console
