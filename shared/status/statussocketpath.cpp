#include "shared/status/statussocketpath.h"

#include <QDir>
#include <QFileInfo>

#include <unistd.h>

namespace coreflow::status {

namespace {
constexpr auto systemRuntimeDir = "/run/coreflow";
}

QString defaultStatusSocketPath(StatusSocketSide side)
{
    const QString runtimeDirs = qEnvironmentVariable("RUNTIME_DIRECTORY");
    if (!runtimeDirs.isEmpty()) {
        const QString first = runtimeDirs.split(QLatin1Char(':'), Qt::SkipEmptyParts).value(0);
        if (!first.isEmpty())
            return QDir(first).filePath(QStringLiteral("status.sock"));
    }
    const QFileInfo runDir{QString::fromLatin1(systemRuntimeDir)};
    if (runDir.isDir()) {
        const bool usable = side == StatusSocketSide::Server
                                ? ::access(systemRuntimeDir, W_OK | X_OK) == 0
                                : true;
        if (usable)
            return QStringLiteral("/run/coreflow/status.sock");
    }
    const QString xdg = qEnvironmentVariable("XDG_RUNTIME_DIR");
    if (!xdg.isEmpty())
        return QDir(xdg).filePath(QStringLiteral("coreflow-status.sock"));
    return QStringLiteral("/tmp/coreflow-status-%1.sock").arg(::getuid());
}

} // namespace coreflow::status
