#include "shared/contract/ids.h"

namespace coreflow::contract {

bool isId(const QString &text)
{
    if (text.isEmpty() || text.size() > 256)
        return false;
    for (const QChar c : text)
        if (c.category() == QChar::Other_Control)
            return false;
    return true;
}

QString notAnIdReason() { return QStringLiteral("is not an id (non-empty, at most 256 characters, no control characters)"); }

} // namespace coreflow::contract
