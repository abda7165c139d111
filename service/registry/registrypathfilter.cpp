#include "service/registry/registrypathfilter.h"

#include <QByteArray>
#include <QList>
#include <QStringView>

namespace coreflow {

bool RegistryPathFilter::isUnderV2(const QString &encodedPath)
{
    return encodedPath == QLatin1String("/v2") || encodedPath.startsWith(QLatin1String("/v2/"));
}

bool RegistryPathFilter::isServed(const QString &encodedPath, bool isTokenPath)
{
    return (isUnderV2(encodedPath) || isTokenPath) && !hasDotSegment(encodedPath) && !hasRefusedEncoding(encodedPath);
}

bool RegistryPathFilter::hasDotSegment(const QString &encodedPath)
{
    const QList<QStringView> segments = QStringView(encodedPath).split(QLatin1Char('/'));
    for (QStringView segment : segments) {
        const QByteArray decoded = QByteArray::fromPercentEncoding(segment.toUtf8());
        if (decoded == "." || decoded == "..")
            return true;
    }
    return false;
}

// %2F and %5C would let a segment decode into a path separator upstream ("/v2/..%2F..%2Fadmin"), %00
// and the other encoded control characters (%00-%1F, %7F) have no place in a registry path; a raw
// control character or backslash is refused too (QUrl normally encodes them).
bool RegistryPathFilter::hasRefusedEncoding(const QString &encodedPath)
{
    for (qsizetype i = 0; i < encodedPath.size(); ++i) {
        const char16_t c = encodedPath.at(i).unicode();
        if (c < 0x20 || c == 0x7f || c == u'\\')
            return true;
        if (c != u'%')
            continue;
        if (i + 2 >= encodedPath.size())
            return true; // a truncated escape
        const QByteArray hex = encodedPath.mid(i + 1, 2).toLatin1();
        bool ok = false;
        const int byte = hex.toInt(&ok, 16);
        if (!ok)
            return true;
        if (byte == 0x2f || byte == 0x5c || byte < 0x20 || byte == 0x7f)
            return true;
    }
    return false;
}

} // namespace coreflow
