#include "service/app/processhardening.h"

#include "service/transport/opensslwipingallocator.h"
#include "shared/secret.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace coreflow {

QString ProcessHardening::apply()
{
    if (!Secret::initialiseSodium())
        return QStringLiteral("libsodium cannot start (sodium_init)");
    // Before OpenSSL's first allocation: its blocks are wiped when freed inside a key-handling scope.
    if (!OpenSslWipingAllocator::install())
        return QStringLiteral("OpenSSL allocated memory before its allocator could be set (CRYPTO_set_mem_functions)");
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return QStringLiteral("prctl(PR_SET_DUMPABLE, 0) failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
    const struct rlimit none{0, 0};
    if (::setrlimit(RLIMIT_CORE, &none) != 0)
        return QStringLiteral("setrlimit(RLIMIT_CORE, 0) failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
    // The relay's own TLS layer writes with write(): a peer that hung up must give EPIPE on that one
    // connection, never a SIGPIPE that ends the process (contract §19.3). Set before any socket exists,
    // whatever disposition the shell or service manager handed over.
    if (std::signal(SIGPIPE, SIG_IGN) == SIG_ERR)
        return QStringLiteral("signal(SIGPIPE, SIG_IGN) failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
    return QString();
}

} // namespace coreflow
