#pragma once
// reservedLoopbackPort(): a free 127.0.0.1 TCP port for a peer or relay that binds it later.
//
// Picked below the kernel's ephemeral range (32768-60999 on Linux), so no port-0 bind of a test running
// in parallel can take it meanwhile. A port handed out is never handed out again while the process that
// took it lives, to this process or to any other test process on the machine (ctest -j runs several):
// the handed-out ports are written, one "port pid" line each, to a ledger file in the temporary directory,
// read and rewritten under an exclusive flock(2); lines of processes that have ended are dropped. Without
// the ledger two tests drew from the same 12000 ports and, holding dozens each, collided now and then
// (a relay refused with listener-bind-failed). Falls back to a kernel-chosen port; 0 when nothing is free.
// No descriptor stays open after a call (tests count descriptors).
#include <QByteArray>
#include <QDir>
#include <QHostAddress>
#include <QList>
#include <QRandomGenerator>
#include <QSet>
#include <QTcpServer>

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace coreflow::test {

inline QByteArray reservedLoopbackPortLedgerPath()
{
    return QDir::tempPath().toLocal8Bit() + "/coreflow-test-ports.ledger";
}

inline quint16 reservedLoopbackPort()
{
    const int fd = ::open(reservedLoopbackPortLedgerPath().constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd >= 0 && ::flock(fd, LOCK_EX) != 0) {
        ::close(fd);
        return 0;
    }
    QByteArray ledger;
    if (fd >= 0) {
        char chunk[4096];
        for (;;) {
            const ssize_t n = ::read(fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            ledger.append(chunk, n);
        }
    }
    QSet<quint16> taken;
    QByteArray kept;
    for (const QByteArray &line : ledger.split('\n')) {
        const QList<QByteArray> fields = line.split(' ');
        if (fields.size() != 2)
            continue;
        bool portOk = false, pidOk = false;
        const uint port = fields[0].toUInt(&portOk);
        const qint64 pid = fields[1].toLongLong(&pidOk);
        if (!portOk || !pidOk || port == 0 || port > 65535 || pid <= 0)
            continue;
        if (::kill(pid_t(pid), 0) != 0 && errno == ESRCH)
            continue; // that process has ended: its ports are free again
        taken.insert(quint16(port));
        kept += line + '\n';
    }
    quint16 chosen = 0;
    for (int attempt = 0; attempt < 400 && chosen == 0; ++attempt) {
        const auto port = quint16(QRandomGenerator::global()->bounded(20000, 32000));
        if (taken.contains(port))
            continue;
        QTcpServer probe;
        if (probe.listen(QHostAddress::LocalHost, port))
            chosen = port;
    }
    if (chosen == 0) {
        QTcpServer probe;
        chosen = probe.listen(QHostAddress::LocalHost, 0) ? probe.serverPort() : 0;
    }
    if (fd >= 0) {
        if (chosen != 0)
            kept += QByteArray::number(chosen) + ' ' + QByteArray::number(qint64(::getpid())) + '\n';
        if (::ftruncate(fd, 0) == 0) {
            qsizetype written = 0;
            while (written < kept.size()) {
                const ssize_t n = ::pwrite(fd, kept.constData() + written, size_t(kept.size() - written), off_t(written));
                if (n < 0 && errno == EINTR)
                    continue;
                if (n <= 0)
                    break;
                written += n;
            }
        }
        ::flock(fd, LOCK_UN);
        ::close(fd);
    }
    return chosen;
}

} // namespace coreflow::test
