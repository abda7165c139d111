#pragma once
// StatusSocketPlace: whether a status socket path is a place another local user cannot squat
// (docs/contract.md §18 "Socket place"). Used by the relay before it listens and by coreflow-console
// before it trusts what it connected to.
//
// The facts are the socket's directory (owner uid, mode) and, when something already exists at the
// path, its owner uid and whether it is a socket. Rules:
//   - the directory must be owned by root or by this process' uid;
//   - a directory that others may write (group or other write bit) must carry the sticky bit, so no one
//     else can remove or replace a socket in it;
//   - in such a shared directory an existing socket must belong to this uid (or root): a socket another
//     user created first (a squat of /tmp/coreflow-status-<uid>.sock) is refused, never reused;
//   - a private directory (no group/other write bit) is trusted as its owner's: only the owner could
//     have made the socket, so the client also trusts the owner's uid (the service user of
//     /run/coreflow or $RUNTIME_DIRECTORY).
// Refusal: the name status-socket-unsafe (refusalnames.h) with a one-line reason naming the path and
// the uid or mode at fault. judge() is pure; inspect() is the lstat/stat edge.
#include <QList>
#include <QString>
#include <optional>

#include <sys/types.h>

namespace coreflow::status {

struct PathOwnership {
    uid_t uid = 0;
    mode_t mode = 0;     // st_mode: type and permission bits
};

struct StatusSocketFacts {
    QString path;
    std::optional<PathOwnership> directory; // nullopt: the directory does not exist
    std::optional<PathOwnership> existing;  // nullopt: nothing at the path yet
};

class StatusSocketPlace {
public:
    // Pure: the problem with this place for a process of uid `self`, or nullopt when it is safe.
    static std::optional<QString> judge(const StatusSocketFacts &facts, uid_t self);
    // Pure: the uids a client may accept as the server of a safe place: root, `self`, and the owner
    // of a private directory.
    static QList<uid_t> trustedServerUids(const StatusSocketFacts &facts, uid_t self);
    // The facts for path (stat of its directory, lstat of the path). No side effects.
    static StatusSocketFacts inspect(const QString &path);
};

} // namespace coreflow::status
