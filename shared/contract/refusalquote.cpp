#include "shared/contract/refusalquote.h"

namespace coreflow::contract {

bool RefusalQuote::isPlain(QStringView name)
{
    if (name.isEmpty() || name.size() > maxQuotedChars)
        return false;
    for (const QChar ch : name) {
        const char16_t u = ch.unicode();
        const bool plain = (u >= u'a' && u <= u'z') || (u >= u'A' && u <= u'Z') || (u >= u'0' && u <= u'9') || u == u'_'
                           || u == u'-' || u == u'.';
        if (!plain)
            return false;
    }
    return true;
}

QString RefusalQuote::nameOrLength(QStringView name)
{
    return isPlain(name) ? name.toString() : QStringLiteral("a name of %1 characters").arg(name.size());
}

QString RefusalQuote::unknownMember(const QString &path, QStringView key)
{
    if (!isPlain(key))
        return unnamedMember(path);
    return QStringLiteral("field %1 is unknown").arg(path.isEmpty() ? key.toString() : path + QLatin1Char('.') + key.toString());
}

QString RefusalQuote::unnamedMember(const QString &path)
{
    return QStringLiteral("field %1 has a member the contract does not name").arg(path);
}

} // namespace coreflow::contract
