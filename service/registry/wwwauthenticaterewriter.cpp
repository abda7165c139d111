#include "service/registry/wwwauthenticaterewriter.h"

namespace coreflow {

namespace {

bool isOws(char c) { return c == ' ' || c == '\t'; }

bool isTokenChar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-': case '.':
    case '^': case '_': case '`': case '|': case '~':
        return true;
    default:
        return false;
    }
}

struct Span {
    qsizetype begin = 0;
    qsizetype end = 0; // exclusive
};

// Top-level comma-separated items of `v` in [from, to), each trimmed of OWS; empty items dropped.
QList<Span> topLevelItems(const QByteArray &v, qsizetype from, qsizetype to)
{
    QList<Span> items;
    qsizetype start = from;
    bool inQuotes = false;
    auto push = [&](qsizetype b, qsizetype e) {
        while (b < e && isOws(v.at(b)))
            ++b;
        while (e > b && isOws(v.at(e - 1)))
            --e;
        if (e > b)
            items.append({b, e});
    };
    for (qsizetype i = from; i < to; ++i) {
        const char c = v.at(i);
        if (inQuotes) {
            if (c == '\\')
                ++i; // quoted-pair: skip the escaped byte
            else if (c == '"')
                inQuotes = false;
        } else if (c == '"') {
            inQuotes = true;
        } else if (c == ',') {
            push(start, i);
            start = i + 1;
        }
    }
    push(start, to);
    return items;
}

// Length of the token starting at `at` (0 when none).
qsizetype tokenLength(const QByteArray &v, qsizetype at, qsizetype end)
{
    qsizetype i = at;
    while (i < end && isTokenChar(v.at(i)))
        ++i;
    return i - at;
}

// An item begins a new challenge when it is `token` alone or `token 1*SP x` with x not '='.
bool beginsChallenge(const QByteArray &v, const Span &item)
{
    const qsizetype tl = tokenLength(v, item.begin, item.end);
    if (tl == 0)
        return false;
    qsizetype i = item.begin + tl;
    if (i == item.end)
        return true;
    if (!isOws(v.at(i)))
        return false; // e.g. "realm=..." or "abc==" (token68 continuation)
    while (i < item.end && isOws(v.at(i)))
        ++i;
    return i < item.end && v.at(i) != '=';
}

int effectivePort(const QUrl &u)
{
    if (u.port() != -1)
        return u.port();
    return u.scheme().compare(QLatin1String("https"), Qt::CaseInsensitive) == 0 ? 443 : 80;
}

bool isHttpUrl(const QUrl &u)
{
    const QString s = u.scheme().toLower();
    return u.isValid() && (s == QLatin1String("https") || s == QLatin1String("http")) && !u.host().isEmpty();
}

} // namespace

WwwAuthenticateRewriter::WwwAuthenticateRewriter(const QUrl &cloudlyOrigin, const QUrl &relayOrigin)
    : m_cloudly(cloudlyOrigin), m_relayOrigin(originString(relayOrigin).toUtf8())
{
}

QString WwwAuthenticateRewriter::originString(const QUrl &url)
{
    if (!isHttpUrl(url))
        return {};
    const QString scheme = url.scheme().toLower();
    QString host = url.host(QUrl::FullyEncoded).toLower();
    if (host.contains(QLatin1Char(':')))
        host = QLatin1Char('[') + host + QLatin1Char(']');
    QString origin = scheme + QLatin1String("://") + host;
    const int defaultPort = scheme == QLatin1String("https") ? 443 : 80;
    if (url.port() != -1 && url.port() != defaultPort)
        origin += QLatin1Char(':') + QString::number(url.port());
    return origin;
}

bool WwwAuthenticateRewriter::sameOrigin(const QUrl &a, const QUrl &b)
{
    if (!isHttpUrl(a) || !isHttpUrl(b))
        return false;
    return a.scheme().compare(b.scheme(), Qt::CaseInsensitive) == 0
        && a.host().compare(b.host(), Qt::CaseInsensitive) == 0 && effectivePort(a) == effectivePort(b);
}

QList<QByteArray> WwwAuthenticateRewriter::splitChallenges(const QByteArray &value)
{
    QList<QByteArray> out;
    const QList<Span> items = topLevelItems(value, 0, value.size());
    qsizetype chBegin = -1;
    qsizetype chEnd = -1;
    for (const Span &item : items) {
        if (beginsChallenge(value, item) || chBegin < 0) {
            if (chBegin >= 0)
                out.append(value.mid(chBegin, chEnd - chBegin));
            chBegin = item.begin;
        }
        chEnd = item.end;
    }
    if (chBegin >= 0)
        out.append(value.mid(chBegin, chEnd - chBegin));
    return out;
}

QByteArray WwwAuthenticateRewriter::rewriteChallenge(const QByteArray &ch, WwwAuthenticateRewrite &out) const
{
    // Skip the scheme; the rest is token68 or auth-params.
    const qsizetype schemeLen = tokenLength(ch, 0, ch.size());
    qsizetype paramsFrom = schemeLen;
    while (paramsFrom < ch.size() && isOws(ch.at(paramsFrom)))
        ++paramsFrom;

    for (const Span &p : topLevelItems(ch, paramsFrom, ch.size())) {
        const qsizetype nameLen = tokenLength(ch, p.begin, p.end);
        if (nameLen == 0)
            continue;
        qsizetype i = p.begin + nameLen;
        while (i < p.end && isOws(ch.at(i)))
            ++i;
        if (i >= p.end || ch.at(i) != '=')
            continue;
        if (ch.mid(p.begin, nameLen).compare("realm", Qt::CaseInsensitive) != 0)
            continue;
        ++i;
        while (i < p.end && isOws(ch.at(i)))
            ++i;
        qsizetype vBegin = i;
        qsizetype vEnd = p.end;
        if (vBegin < vEnd && ch.at(vBegin) == '"') {
            if (vEnd - vBegin < 2 || ch.at(vEnd - 1) != '"')
                return ch; // malformed quoting: leave untouched
            ++vBegin;
            --vEnd;
        }
        const QByteArray realm = ch.mid(vBegin, vEnd - vBegin);
        if (realm.contains('\\'))
            return ch;
        const QUrl url(QString::fromUtf8(realm), QUrl::StrictMode);
        if (!isHttpUrl(url))
            return ch;
        if (!sameOrigin(url, m_cloudly) || m_relayOrigin.isEmpty()) {
            const QString origin = originString(url);
            if (!out.foreignRealmOrigins.contains(origin))
                out.foreignRealmOrigins.append(origin);
            return ch;
        }
        const qsizetype schemeSep = realm.indexOf("://");
        qsizetype authorityEnd = schemeSep + 3;
        while (authorityEnd < realm.size()) {
            const char c = realm.at(authorityEnd);
            if (c == '/' || c == '?' || c == '#')
                break;
            ++authorityEnd;
        }
        QString path = url.path(QUrl::FullyEncoded);
        if (path.isEmpty())
            path = QStringLiteral("/");
        if (!out.rewrittenRealmPaths.contains(path))
            out.rewrittenRealmPaths.append(path);
        return ch.left(vBegin) + m_relayOrigin + realm.mid(authorityEnd) + ch.mid(vEnd);
    }
    return ch;
}

WwwAuthenticateRewrite WwwAuthenticateRewriter::rewrite(const QList<QByteArray> &headerValues) const
{
    WwwAuthenticateRewrite out;
    for (const QByteArray &value : headerValues) {
        for (const QByteArray &challenge : splitChallenges(value))
            out.values.append(rewriteChallenge(challenge, out));
    }
    return out;
}

} // namespace coreflow
