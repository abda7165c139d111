#include "service/statussocket/statusaccesspolicy.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <grp.h>
#include <sys/socket.h>
#include <unistd.h>

namespace coreflow {

StatusAccessPolicy::StatusAccessPolicy(uid_t serviceUid, QString operatorGroupName, std::optional<gid_t> operatorGid)
    : m_serviceUid(serviceUid), m_groupName(std::move(operatorGroupName)), m_groupGid(operatorGid)
{
}

StatusAccessPolicy StatusAccessPolicy::forCurrentProcess(const QString &operatorGroupName)
{
    std::optional<gid_t> gid;
    if (!operatorGroupName.isEmpty()) {
        const QByteArray name = operatorGroupName.toLocal8Bit();
        struct group grp{};
        struct group *result = nullptr;
        QByteArray buffer(16384, '\0');
        if (::getgrnam_r(name.constData(), &grp, buffer.data(), size_t(buffer.size()), &result) == 0 && result)
            gid = result->gr_gid;
    }
    return StatusAccessPolicy(::getuid(), operatorGroupName, gid);
}

AccessDecision StatusAccessPolicy::decide(const PeerCredentials &peer) const
{
    if (peer.uid == 0)
        return {true, QStringLiteral("root")};
    if (peer.uid == m_serviceUid)
        return {true, QStringLiteral("service user")};
    if (m_groupGid) {
        if (peer.gid == *m_groupGid)
            return {true, QStringLiteral("primary group %1").arg(m_groupName)};
        if (peer.supplementaryGroups.contains(*m_groupGid))
            return {true, QStringLiteral("member of group %1").arg(m_groupName)};
    }
    if (m_groupName.isEmpty())
        return {false, QStringLiteral("uid %1 is neither root nor the service user (no operator group configured)")
                           .arg(peer.uid)};
    if (!m_groupGid)
        return {false, QStringLiteral("uid %1 is neither root, the service user nor in group %2 (group %2 does not exist on this host)")
                           .arg(peer.uid)
                           .arg(m_groupName)};
    return {false, QStringLiteral("uid %1 is neither root, the service user nor in group %2").arg(peer.uid).arg(m_groupName)};
}

QList<gid_t> StatusAccessPolicy::parseProcStatusGroups(const QByteArray &procStatusText)
{
    QList<gid_t> groups;
    for (const QByteArray &line : procStatusText.split('\n')) {
        if (!line.startsWith("Groups:"))
            continue;
        const QByteArray rest = line.mid(7).simplified();
        for (const QByteArray &field : rest.split(' ')) {
            bool ok = false;
            const qulonglong v = field.toULongLong(&ok);
            if (ok && v <= std::numeric_limits<gid_t>::max())
                groups.append(gid_t(v));
        }
        break;
    }
    return groups;
}

std::optional<PeerCredentials> StatusAccessPolicy::readPeerCredentials(qintptr socketDescriptor, QString *error)
{
    struct ucred cred{};
    socklen_t len = sizeof(cred);
    if (::getsockopt(int(socketDescriptor), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred)) {
        if (error)
            *error = QStringLiteral("SO_PEERCRED failed: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
        return std::nullopt;
    }
    PeerCredentials peer;
    peer.uid = cred.uid;
    peer.gid = cred.gid;
    peer.pid = cred.pid;
    // The peer's groups at connect() from the socket itself (SO_PEERGROUPS, Linux 4.13): no /proc read,
    // so the check works under ProtectProc=invisible (packaging/coreflow.service), where another user's
    // /proc/<pid> is hidden. /proc/<pid>/status only where the kernel lacks it.
    QList<gid_t> groups(64);
    for (int attempt = 0; attempt < 2; ++attempt) {
        socklen_t groupsLen = socklen_t(groups.size() * qsizetype(sizeof(gid_t)));
        if (::getsockopt(int(socketDescriptor), SOL_SOCKET, SO_PEERGROUPS, groups.data(), &groupsLen) == 0) {
            groups.resize(qsizetype(groupsLen / sizeof(gid_t)));
            peer.supplementaryGroups = groups;
            return peer;
        }
        if (errno != ERANGE)
            break;
        groups.resize(qsizetype(groupsLen / sizeof(gid_t)) + 1); // ERANGE: groupsLen holds the size needed
    }
    if (cred.pid > 0) {
        QFile status(QStringLiteral("/proc/%1/status").arg(cred.pid));
        if (status.open(QIODevice::ReadOnly))
            peer.supplementaryGroups = parseProcStatusGroups(status.readAll());
    }
    return peer;
}

} // namespace coreflow
