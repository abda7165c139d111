#include "console/displayprobe.h"

#include <QGuiApplication>

#include <cerrno>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace coreflow::console {

namespace {
bool envSet(const char *name)
{
    const char *v = std::getenv(name);
    return v && *v;
}
} // namespace

QString DisplayProbe::unavailableReason(int argc, char **argv)
{
    const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
    const bool needsDisplay = platform.isEmpty() || platform.startsWith("xcb") || platform.startsWith("wayland");
    if (needsDisplay && !envSet("DISPLAY") && !envSet("WAYLAND_DISPLAY"))
        return QStringLiteral("no display (DISPLAY and WAYLAND_DISPLAY are unset)");

    const pid_t child = ::fork();
    if (child < 0)
        return QString(); // cannot probe: let QApplication decide
    if (child == 0) {
        const int devNull = ::open("/dev/null", O_WRONLY);
        if (devNull >= 0) {
            ::dup2(devNull, 1);
            ::dup2(devNull, 2);
        }
        {
            QGuiApplication probe(argc, argv);
        }
        ::_exit(0);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return QString();
    return QStringLiteral("the Qt platform plugin could not start (%1)")
        .arg(platform.isEmpty() ? QStringLiteral("default") : QString::fromLocal8Bit(platform));
}

} // namespace coreflow::console
