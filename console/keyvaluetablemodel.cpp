#include "console/keyvaluetablemodel.h"

namespace coreflow::console {

KeyValueTableModel::KeyValueTableModel(QObject *parent) : RowTableModel({tr("Property"), tr("Value")}, parent) {}

void KeyValueTableModel::setPairs(const QList<std::pair<QString, QString>> &pairs)
{
    QList<Row> rows;
    rows.reserve(pairs.size());
    for (const auto &[k, v] : pairs)
        rows.append(Row{{k, v}, {}});
    setRows(std::move(rows));
}

void KeyValueTableModel::setItems(const QList<Item> &items)
{
    QList<Row> rows;
    rows.reserve(items.size());
    for (const Item &i : items)
        rows.append(Row{{i.key, i.value}, {}, i.problem});
    setRows(std::move(rows));
}

QString KeyValueTableModel::value(const QString &property) const
{
    for (const Row &r : rows())
        if (r.display.value(0) == property)
            return r.display.value(1);
    return QString();
}

} // namespace coreflow::console
