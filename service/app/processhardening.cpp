#include "service/app/processhardening.h"

#include "shared/secret.h"

#include <cerrno>
#include <cstring>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace coreflow {

QString ProcessHardening::apply()
{
    if (!Secret::initialiseSodium())
        return QStringLiteral("libsodium cannot start (sodium_init)");
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return QStringLiteral("prctl(PR_SET_DUMPABLE, 0) failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
    const struct rlimit none{0, 0};
    if (::setrlimit(RLIMIT_CORE, &none) != 0)
        return QStringLiteral("setrlimit(RLIMIT_CORE, 0) failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
    return QString();
}

} // namespace coreflow
