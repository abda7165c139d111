#include "service/vpn/vpnqueuebudget.h"

#include <QFile>

namespace coreflow::vpn {

namespace {
constexpr qint64 kUnlimited = qint64(1) << 30; // what "no limit" counts as
constexpr qint64 kConnectionState = 64 * 1024;
constexpr qint64 kQueuedDatagram = 1500;

qint64 readLimit(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    const QByteArray text = file.read(64).trimmed();
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    return ok && value > 0 ? value : 0;
}

QString ownCgroup(const QString &listPath)
{
    QFile file(listPath);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    for (const QByteArray &line : file.readAll().split('\n'))
        if (line.startsWith("0::"))
            return QString::fromUtf8(line.mid(3));
    return {};
}
} // namespace

qint64 VpnQueueBudget::memoryLimitBytes() { return memoryLimitBytes(CgroupPaths()); }

qint64 VpnQueueBudget::memoryLimitBytes(const CgroupPaths &paths)
{
    const QString own = ownCgroup(paths.ownCgroupList);
    const QString &mount = paths.mountPoint;
    for (const QString &path : {mount + own + QStringLiteral("/memory.max"), mount + QStringLiteral("/memory.max"),
                                mount + QStringLiteral("/memory/memory.limit_in_bytes")}) {
        const qint64 limit = readLimit(path);
        // cgroup v1 reports "no limit" as a huge number.
        if (limit > 0 && limit < (qint64(1) << 50))
            return limit;
    }
    return kUnlimited;
}

VpnQuicServer::Limits VpnQueueBudget::limitsFor(qint64 memoryBytes)
{
    const qint64 budget = qMax<qint64>(memoryBytes, 0) / 16;
    VpnQuicServer::Limits limits;
    limits.maxConnections = int(qBound<qint64>(qint64(16), budget / (2 * kConnectionState), qint64(4096)));
    limits.maxQueuedDatagrams = int(qBound<qint64>(qint64(16), budget / 2 / (qint64(limits.maxConnections) * kQueuedDatagram), qint64(1024)));
    return limits;
}

} // namespace coreflow::vpn
