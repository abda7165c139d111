// The VPN hub's bounds come from the relay's cgroup memory limit, never the host's RAM
// (docs/contract.md §11.8 Bounds, issue 21): VpnQueueBudget reads cgroup v2's memory.max of the
// process's own cgroup, then the mount point's, then v1's memory.limit_in_bytes, from files laid out
// in a temporary directory (CgroupPaths), and the budget follows the contract's formula: one
// sixteenth of the limit for the hub, half of that in connections of 64 KiB (16..4096), the other
// half in 1500-byte queued datagrams over those connections (16..1024 each). "max", a missing file,
// garbage and v1's "no limit" count as 1 GiB. Rule ids: VH-17 (nothing persisted: only reads), and
// issue 21's "Queues are bounded, sized from the cgroup's memory limit".
#include "service/vpn/vpnqueuebudget.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace coreflow;
using namespace coreflow::vpn;

namespace {

constexpr qint64 kMiB = 1024 * 1024;
constexpr qint64 kGiB = 1024 * kMiB;

// The contract's formula, restated from docs/contract.md §11.8 (not from the product's code).
struct Expected {
    int connections;
    int queued;
};
Expected contractBudget(qint64 limitBytes)
{
    const qint64 share = limitBytes / 16;
    const qint64 connections = qBound<qint64>(qint64(16), share / 2 / (64 * 1024), qint64(4096));
    const qint64 queued = qBound<qint64>(qint64(16), share / 2 / (connections * 1500), qint64(1024));
    return {int(connections), int(queued)};
}

class CgroupTree {
public:
    explicit CgroupTree(const QByteArray &ownCgroupList = "0::/system.slice/coreflow.service\n")
    {
        write(QStringLiteral("proc-self-cgroup"), ownCgroupList);
    }
    void write(const QString &relative, const QByteArray &bytes) const
    {
        const QString path = m_dir.filePath(relative);
        QDir().mkpath(QFileInfo(path).path());
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(bytes);
    }
    VpnQueueBudget::CgroupPaths paths() const
    {
        return {m_dir.filePath(QStringLiteral("sys-fs-cgroup")), m_dir.filePath(QStringLiteral("proc-self-cgroup"))};
    }
    qint64 limit() const { return VpnQueueBudget::memoryLimitBytes(paths()); }

private:
    QTemporaryDir m_dir;
};

const QString kOwnV2 = QStringLiteral("sys-fs-cgroup/system.slice/coreflow.service/memory.max");
const QString kRootV2 = QStringLiteral("sys-fs-cgroup/memory.max");
const QString kV1 = QStringLiteral("sys-fs-cgroup/memory/memory.limit_in_bytes");

} // namespace

class TestVpnQueueBudget : public QObject {
    Q_OBJECT

private slots:
    // cgroup v2: the process's own cgroup (named by /proc/self/cgroup's 0:: line) sets the limit, even
    // when the mount point's own file says otherwise.
    void ownCgroupV2LimitIsRead()
    {
        CgroupTree tree;
        tree.write(kOwnV2, "536870912\n");
        tree.write(kRootV2, "max\n");
        QCOMPARE(tree.limit(), 512 * kMiB);
        const auto limits = VpnQueueBudget::limitsFor(tree.limit());
        QCOMPARE(limits.maxConnections, contractBudget(512 * kMiB).connections);
        QCOMPARE(limits.maxQueuedDatagrams, contractBudget(512 * kMiB).queued);
        QCOMPARE(limits.maxConnections, 256);
        QCOMPARE(limits.maxQueuedDatagrams, 43);
    }

    // "max" in the own cgroup: the mount point's memory.max (a container's namespace root) is next.
    void ownMaxFallsToTheMountPointsLimit()
    {
        CgroupTree tree;
        tree.write(kOwnV2, "max\n");
        tree.write(kRootV2, "268435456\n");
        QCOMPARE(tree.limit(), 256 * kMiB);
        QCOMPARE(VpnQueueBudget::limitsFor(tree.limit()).maxConnections, 128);
    }

    // A container whose /proc/self/cgroup names "/" reads the mount point's memory.max.
    void rootCgroupOfANamespace()
    {
        CgroupTree tree("0::/\n");
        tree.write(kRootV2, "2147483648");
        QCOMPARE(tree.limit(), 2 * kGiB);
        const auto limits = VpnQueueBudget::limitsFor(tree.limit());
        QCOMPARE(limits.maxConnections, 1024);
        QCOMPARE(limits.maxQueuedDatagrams, 43);
    }

    // cgroup v1: memory.limit_in_bytes when no v2 file holds a limit; v1's "no limit" (a page-rounded
    // 2^63 - 1) is no limit.
    void cgroupV1LimitAndItsNoLimitValue()
    {
        CgroupTree v1("12:memory:/docker/abc\n");
        v1.write(kV1, "100663296\n");
        QCOMPARE(v1.limit(), 96 * kMiB);
        const auto limits = VpnQueueBudget::limitsFor(v1.limit());
        QCOMPARE(limits.maxConnections, contractBudget(96 * kMiB).connections);
        QCOMPARE(limits.maxConnections, 48);
        QCOMPARE(limits.maxQueuedDatagrams, contractBudget(96 * kMiB).queued);

        CgroupTree unlimited("12:memory:/docker/abc\n");
        unlimited.write(kV1, "9223372036854771712\n");
        QCOMPARE(unlimited.limit(), kGiB);
    }

    // "max" everywhere, no file at all, garbage, a negative or empty value: 1 GiB, i.e. the contract's
    // 512 connections of 43 queued datagrams, whatever the host's RAM is.
    void noLimitMissingAndGarbageCountAsOneGiB_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("content");
        QTest::newRow("max") << kOwnV2 << QByteArray("max\n");
        QTest::newRow("missing") << QString() << QByteArray();
        QTest::newRow("garbage") << kOwnV2 << QByteArray("12abc\n");
        QTest::newRow("negative") << kOwnV2 << QByteArray("-4096\n");
        QTest::newRow("empty") << kRootV2 << QByteArray("");
        QTest::newRow("zero") << kRootV2 << QByteArray("0\n");
        QTest::newRow("v1-garbage") << kV1 << QByteArray("lots\n");
    }
    void noLimitMissingAndGarbageCountAsOneGiB()
    {
        QFETCH(QString, file);
        QFETCH(QByteArray, content);
        CgroupTree tree;
        if (!file.isEmpty())
            tree.write(file, content);
        QCOMPARE(tree.limit(), kGiB);
        const auto limits = VpnQueueBudget::limitsFor(tree.limit());
        QCOMPARE(limits.maxConnections, 512);
        QCOMPARE(limits.maxQueuedDatagrams, 43);
    }

    // No /proc/self/cgroup readable: the mount point's own file still counts.
    void missingCgroupListReadsTheMountPoint()
    {
        CgroupTree tree;
        QVERIFY(QFile::remove(tree.paths().ownCgroupList));
        tree.write(kRootV2, "1073741824\n");
        QCOMPARE(tree.limit(), kGiB);
        tree.write(kRootV2, "33554432\n");
        QCOMPARE(tree.limit(), 32 * kMiB);
        const auto limits = VpnQueueBudget::limitsFor(tree.limit());
        QCOMPARE(limits.maxConnections, 16); // 2 MiB share / 2 / 64 KiB = 16, the lower bound
        QCOMPARE(limits.maxQueuedDatagrams, contractBudget(32 * kMiB).queued);
        QCOMPARE(limits.maxQueuedDatagrams, 43);
    }

    // The formula at its bounds, against the contract's restatement.
    void budgetFollowsTheContractsFormula_data()
    {
        QTest::addColumn<qint64>("limit");
        for (qint64 limit : {qint64(0), 16 * kMiB, 100 * kMiB, kGiB, 3 * kGiB + 12345, 64 * kGiB, 1024 * kGiB})
            QTest::newRow(qPrintable(QString::number(limit))) << limit;
    }
    void budgetFollowsTheContractsFormula()
    {
        QFETCH(qint64, limit);
        const auto limits = VpnQueueBudget::limitsFor(limit);
        QCOMPARE(limits.maxConnections, contractBudget(limit).connections);
        QCOMPARE(limits.maxQueuedDatagrams, contractBudget(limit).queued);
        // What the hub may hold in queued datagrams stays within its half share (or the lower bounds).
        if (limits.maxConnections > 16 && limits.maxQueuedDatagrams > 16 && limits.maxQueuedDatagrams < 1024)
            QVERIFY(qint64(limits.maxConnections) * limits.maxQueuedDatagrams * 1500 <= limit / 32);
    }
};

QTEST_GUILESS_MAIN(TestVpnQueueBudget)
#include "tst_vpnqueuebudget.moc"
