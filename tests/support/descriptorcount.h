#pragma once
// Descriptor counts for the tests that check nothing is left behind (docs/contract.md §3.2: every end
// of a call releases its descriptors; the fault matrix, the silent peers, the closures).
//
// Why a plain count of /proc/self/fd was one off now and then (issue 23, measured: tst_silentpeers
// 1 run in 20, tst_faultmatrix rows every run once the count was compared exactly):
//  - Qt's host lookups (QHostInfo, used by the relay's TcpDialer and by every peer dialling
//    "localhost") run on a thread pool whose threads each hold one eventfd (their event
//    dispatcher's wake-up). A thread starts at a lookup that misses Qt's 60 s lookup cache and ends
//    30 s after its last lookup, so a baseline or an after-count taken on either side of that moment
//    counts one eventfd more or less; neither the relay nor the test decides when.
//  - Parts released with deleteLater() go at a later turn of the loop, and a WebSocket session that
//    sent its Close to a peer that does not answer keeps its socket for
//    WebSocketSession::kCloseGraceMs (2000 ms of real time) before it aborts.
// heldDescriptors() therefore counts the descriptors beyond one per thread of this process (a thread
// that comes or goes takes its wake-up descriptor with it; a descriptor leaked by anyone still shows),
// and settledDescriptors() turns the real loop until that count has not moved for longer than the
// close grace. It is a count, not a timing assertion: the bound only ends a test whose count never
// settles, and the caller then compares exactly.
#include "service/transport/websocketsession.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QEvent>
#include <QFile>
#include <QHash>
#include <QStringList>
#include <QTest>

#include <unistd.h>

namespace coreflow::testing {

// Descriptors this process holds now (/proc/self/fd).
inline int openDescriptors()
{
    return int(QDir(QStringLiteral("/proc/self/fd")).entryList(QDir::NoDotAndDotDot | QDir::System).size());
}

// Threads of this process now (/proc/self/task).
inline int processThreads()
{
    return int(QDir(QStringLiteral("/proc/self/task")).entryList(QDir::NoDotAndDotDot | QDir::Dirs).size());
}

// The descriptors beyond one per thread (see above): what a leak check compares.
inline int heldDescriptors()
{
    return openDescriptors() - processThreads();
}

// Real time the count must stand still before it counts as settled: the longest real-time hold of a
// closing descriptor in the relay, plus a margin for a loaded machine's loop turns.
inline constexpr int kDescriptorSettleMs = WebSocketSession::kCloseGraceMs + 1000;

// heldDescriptors() once it has not changed for kDescriptorSettleMs while the loop ran (posted
// deletions delivered every turn). After boundMs it returns the count as it is then; a caller that
// compares it exactly fails with both numbers.
inline int settledDescriptors(int boundMs = 60000)
{
    QElapsedTimer total;
    total.start();
    QElapsedTimer still;
    still.start();
    int last = heldDescriptors();
    while (total.elapsed() < boundMs) {
        QTest::qWait(20);
        QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
        const int now = heldDescriptors();
        if (now != last) {
            last = now;
            still.restart();
        } else if (still.elapsed() >= kDescriptorSettleMs) {
            break;
        }
    }
    return last;
}

// Every descriptor with what it is, for a failure message: "fd=target", a TCP socket as
// "fd=tcp:<local port>-><remote port> <state>" (from /proc/self/net/tcp and tcp6).
inline QString describeDescriptors()
{
    QHash<QString, QString> tcp; // socket inode -> "local->remote state"
    for (const char *table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
        QFile file(QString::fromLatin1(table));
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const QList<QByteArray> lines = file.readAll().split('\n');
        for (qsizetype i = 1; i < lines.size(); ++i) {
            const QList<QByteArray> f = lines[i].simplified().split(' ');
            if (f.size() < 10)
                continue;
            const auto port = [](const QByteArray &address) { return QString::number(address.mid(address.indexOf(':') + 1).toUInt(nullptr, 16)); };
            tcp.insert(QString::fromLatin1(f[9]), port(f[1]) + QStringLiteral("->") + port(f[2]) + QLatin1Char(' ') + QString::fromLatin1(f[3]));
        }
    }
    QStringList out;
    const QDir fds(QStringLiteral("/proc/self/fd"));
    for (const QString &fd : fds.entryList(QDir::NoDotAndDotDot | QDir::System, QDir::Name)) {
        char target[256] = {};
        const ssize_t n = ::readlink(QFile::encodeName(fds.filePath(fd)).constData(), target, sizeof(target) - 1);
        QString what = QString::fromLocal8Bit(target, n > 0 ? int(n) : 0);
        if (what.startsWith(QLatin1String("socket:["))) {
            const QString inode = what.mid(8).chopped(1);
            if (tcp.contains(inode))
                what = QStringLiteral("tcp:") + tcp.value(inode);
        }
        out << fd + QLatin1Char('=') + what;
    }
    return QStringLiteral("threads %1: ").arg(processThreads()) + out.join(QLatin1Char(' '));
}

} // namespace coreflow::testing
