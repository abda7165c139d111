#include "console/terminaltext.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QJsonValue>

namespace coreflow::console {

namespace {
bool unsafe(QChar ch)
{
    const auto category = ch.category();
    return category == QChar::Other_Control || category == QChar::Other_Format;
}

QJsonValue cleaned(const QJsonValue &value)
{
    if (value.isString())
        return TerminalText::printable(value.toString());
    if (value.isArray()) {
        QJsonArray out;
        for (const QJsonValue &item : value.toArray())
            out.append(cleaned(item));
        return out;
    }
    if (value.isObject()) {
        QJsonObject out;
        const QJsonObject in = value.toObject();
        for (auto it = in.constBegin(); it != in.constEnd(); ++it)
            out.insert(TerminalText::printable(it.key()), cleaned(it.value()));
        return out;
    }
    return value;
}
} // namespace

QString TerminalText::printable(const QString &text)
{
    qsizetype first = 0;
    while (first < text.size() && !unsafe(text.at(first)))
        ++first;
    if (first == text.size())
        return text;
    QString out = text;
    for (qsizetype i = first; i < out.size(); ++i)
        if (unsafe(out.at(i)))
            out[i] = QChar(replacement);
    return out;
}

status::RelayStatus TerminalText::printableStatus(const status::RelayStatus &status)
{
    return status::RelayStatus::fromJson(cleaned(status.toJson()).toObject());
}

} // namespace coreflow::console
