#include "console/serverpeercheck.h"

#include "shared/contract/refusalnames.h"
#include "shared/status/statussocketplace.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow::console {

std::optional<QString> ServerPeerCheck::problem(qintptr socketDescriptor, const QString &socketPath)
{
    const QString name = QLatin1String(contract::refusal::statusServerUntrusted);
    struct ucred cred{};
    socklen_t len = sizeof(cred);
    if (socketDescriptor < 0 || ::getsockopt(int(socketDescriptor), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0
        || len != sizeof(cred))
        return QStringLiteral("%1: the kernel gives no credentials for the server at %2 (%3)")
            .arg(name, socketPath, QString::fromLocal8Bit(std::strerror(errno)));
    const auto facts = status::StatusSocketPlace::inspect(socketPath);
    const QList<uid_t> trusted = status::StatusSocketPlace::trustedServerUids(facts, ::geteuid());
    if (trusted.contains(cred.uid))
        return std::nullopt;
    QStringList names;
    for (uid_t uid : trusted)
        names << QString::number(uid);
    return QStringLiteral("%1: the server at %2 runs as uid %3, not one of the trusted uids %4 (root, this user, the "
                          "owner of a private socket directory)")
        .arg(name, socketPath)
        .arg(cred.uid)
        .arg(names.join(QLatin1Char(',')));
}

} // namespace coreflow::console
