#include "service/app/normalizedpath.h"

#include <QStringList>

namespace coreflow {

bool NormalizedPath::isAbsoluteNormalized(const QString &path)
{
    if (!path.startsWith(QLatin1Char('/')) || path == QLatin1String("/"))
        return path == QLatin1String("/");
    if (path.endsWith(QLatin1Char('/')) || path.contains(QChar(0)))
        return false;
    const QStringList segments = path.mid(1).split(QLatin1Char('/'));
    for (const QString &segment : segments)
        if (segment.isEmpty() || segment == QLatin1String(".") || segment == QLatin1String(".."))
            return false;
    return true;
}

} // namespace coreflow
