#pragma once
// StatusAccessPolicy: who may read the status socket.
//
// Admitted peers: uid 0 (root), the service's own uid, and members (primary gid or supplementary
// group) of the configured operator group. Everyone else is refused with a one-line, value-free reason
// ("uid 1234 is neither root, the service user nor in group coreflow-operators").
//
// The peer's uid/gid/pid come from getsockopt(SO_PEERCRED) on the accepted socket (the kernel records
// them at connect() time, so a client cannot lie about them). Supplementary groups are not part of
// SO_PEERCRED; they are read from the "Groups:" line of /proc/<pid>/status. When that file cannot be
// read (the process has already exited), only the primary gid counts — the check fails closed.
//
// decide() and parseProcStatusGroups() are pure (no system calls) so they are unit-tested directly;
// readPeerCredentials() and forGroupName() are the thin system-call edges.
#include <QByteArray>
#include <QList>
#include <QString>
#include <optional>

#include <sys/types.h>

namespace coreflow {

struct PeerCredentials {
    uid_t uid = 0;
    gid_t gid = 0;
    pid_t pid = 0;
    QList<gid_t> supplementaryGroups; // SO_PEERGROUPS (else /proc/<pid>/status); may be empty
};

struct AccessDecision {
    bool admitted = false;
    QString reason; // admitted: why (e.g. "root"); refused: the one-line refusal reason
};

class StatusAccessPolicy {
public:
    // serviceUid: the relay's own uid. operatorGroupName: configured group name, empty for none.
    // operatorGid: the group's gid, std::nullopt when no group is configured or it does not resolve.
    StatusAccessPolicy(uid_t serviceUid, QString operatorGroupName, std::optional<gid_t> operatorGid);

    // The policy for this process: serviceUid = getuid(), the group resolved with getgrnam(). An
    // unknown group name is kept (it appears in refusal reasons) but admits nobody.
    static StatusAccessPolicy forCurrentProcess(const QString &operatorGroupName);

    // Pure: the decision for a peer.
    AccessDecision decide(const PeerCredentials &peer) const;

    // Pure: the gids on the "Groups:" line of a /proc/<pid>/status text (empty when absent).
    static QList<gid_t> parseProcStatusGroups(const QByteArray &procStatusText);

    // SO_PEERCRED on a connected AF_UNIX socket descriptor, plus supplementary groups from /proc.
    // Returns std::nullopt and sets *error (when given) if the kernel does not answer.
    static std::optional<PeerCredentials> readPeerCredentials(qintptr socketDescriptor, QString *error = nullptr);

    uid_t serviceUid() const { return m_serviceUid; }
    const QString &operatorGroupName() const { return m_groupName; }
    std::optional<gid_t> operatorGid() const { return m_groupGid; }

private:
    uid_t m_serviceUid;
    QString m_groupName;
    std::optional<gid_t> m_groupGid;
};

} // namespace coreflow
