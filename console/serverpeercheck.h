#pragma once
// ServerPeerCheck: whether the process on the other end of a connected status socket may be believed
// (docs/contract.md §18 "Socket place"). The console asks the kernel for the server's credentials
// (SO_PEERCRED, recorded when the server called listen(), so a server cannot lie about them) and
// accepts only the uids StatusSocketPlace::trustedServerUids() names for the socket's path: root, the
// console's own uid, and the owner of a directory no one else may write. Anyone else could have put a
// socket there first (a squatted /tmp path): the console then says status-server-untrusted and reads
// nothing from it.
#include <QString>
#include <optional>

namespace coreflow::console {

class ServerPeerCheck {
public:
    // nullopt when the server behind socketDescriptor is trusted for socketPath; else the one-line
    // reason ("status-server-untrusted: ..."). Fails closed when the kernel gives no credentials.
    static std::optional<QString> problem(qintptr socketDescriptor, const QString &socketPath);
};

} // namespace coreflow::console
