// coreflow-vpn-bench-hub: the hub of the multi-process VPN bench in a process of its own
// (bench/vpn/run-processes.sh): a VpnHub (QUIC on ngtcp2 + GnuTLS, Noise, policy) on the system
// clock, or with `plain` a plain UDP forwarder (recvmmsg, then sendto by the packet's destination
// address) for the same-run comparison. It prints `port <p> key <base64>`, waits for MEMBERS members
// (bench/vpn/benchmembers.h; pairs (2k, 2k+1) granted both ways), reads its RSS with all of them
// connected and idle, lets traffic warm up for 1 s, then measures SECONDS: relayed packets/s and the
// process's CPU per relayed packet (the process is single-threaded). One `result ...` line.
// Usage: coreflow-vpn-bench-hub MEMBERS SECONDS [plain|memory]
#include "bench/vpn/benchmembers.h"
#include "service/vpn/vpnhub.h"
#include "shared/util/clock.h"
#include "tests/peers/testcertificateauthority.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QJsonArray>
#include <QSocketNotifier>
#include <QTimer>
#include <QtEndian>
#include <arpa/inet.h>
#include <cstdio>
#include <malloc.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace coreflow;

namespace {

double processCpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

qint64 rssKiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLongLong();
    return -1;
}

// The heap the allocator hands out now (bytes in use, mmap'd chunks included).
qint64 heapInUseKiB()
{
    const struct mallinfo2 info = mallinfo2();
    return qint64(info.uordblks + info.hblkhd) / 1024;
}

// Mappings of the process (each Secret is one sodium_malloc mapping of its own, shared/secret.h).
qint64 mappingCount()
{
    QFile maps(QStringLiteral("/proc/self/maps"));
    if (!maps.open(QIODevice::ReadOnly))
        return -1;
    return maps.readAll().count('\n');
}

// Relays raw UDP between the plain members by the IPv4 destination inside the payload.
class PlainForwarder {
public:
    int fd = -1;
    quint16 port = 0;
    QHash<quint32, sockaddr_in> learned;
    qint64 forwarded = 0;
    std::unique_ptr<QSocketNotifier> notifier;

    bool start()
    {
        fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        sockaddr_in sin{};
        sin.sin_family = AF_INET;
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(fd, reinterpret_cast<sockaddr *>(&sin), sizeof(sin)) != 0)
            return false;
        socklen_t length = sizeof(sin);
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&sin), &length);
        port = ntohs(sin.sin_port);
        const int buffer = 4 * 1024 * 1024;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
        notifier = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Read);
        QObject::connect(notifier.get(), &QSocketNotifier::activated, notifier.get(), [this] { read(); });
        return true;
    }
    void read()
    {
        static char buffers[64][2048];
        mmsghdr messages[64];
        iovec vectors[64];
        sockaddr_in from[64];
        for (int round = 0; round < 16; ++round) {
            for (int i = 0; i < 64; ++i) {
                vectors[i] = iovec{buffers[i], sizeof(buffers[i])};
                messages[i] = mmsghdr{};
                messages[i].msg_hdr.msg_name = &from[i];
                messages[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
                messages[i].msg_hdr.msg_iov = &vectors[i];
                messages[i].msg_hdr.msg_iovlen = 1;
            }
            const int n = ::recvmmsg(fd, messages, 64, MSG_DONTWAIT, nullptr);
            if (n <= 0)
                break;
            for (int i = 0; i < n; ++i) {
                if (messages[i].msg_len < 20)
                    continue;
                const quint32 source = qFromBigEndian<quint32>(buffers[i] + 12);
                const quint32 destination = qFromBigEndian<quint32>(buffers[i] + 16);
                learned.insert(source, from[i]);
                const auto it = learned.constFind(destination);
                if (it == learned.constEnd())
                    continue;
                ::sendto(fd, buffers[i], messages[i].msg_len, 0, reinterpret_cast<const sockaddr *>(&it.value()), sizeof(sockaddr_in));
                ++forwarded;
            }
            if (n < 64)
                break;
        }
    }
};

void runFor(int ms)
{
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MEMBERS SECONDS [plain|memory]\n", argv[0]);
        return 2;
    }
    const int members = QByteArray(argv[1]).toInt();
    const double seconds = QByteArray(argv[2]).toDouble();
    const bool plain = argc > 3 && QByteArray(argv[3]) == "plain";
    // `memory`: leave right after the memory line without freeing anything, so a heap profiler's
    // "leaked" list is exactly what the connected, idle members hold (bench/vpn/README.md).
    const bool memoryOnly = argc > 3 && QByteArray(argv[3]) == "memory";
    if (!Secret::initialiseSodium())
        return 1;
    const qint64 rssStart = rssKiB();

    SystemClock clock;
    std::unique_ptr<vpn::VpnHub> hub;
    PlainForwarder forwarder;
    if (!plain) {
        peers::TestCertificateAuthority ca;
        const auto leaf = ca.issueLocalhost();
        vpn::VpnHub::Settings settings;
        settings.address = QHostAddress::LocalHost;
        settings.port = 0;
        hub = std::make_unique<vpn::VpnHub>(settings, clock);
        hub->setCredentials(leaf.certPem, Secret(leaf.keyPem));
        const qint64 until = clock.nowMs() + 3600000;
        QJsonArray memberList, grants;
        for (int i = 0; i < members; ++i) {
            memberList.append(QJsonObject{{QStringLiteral("nodeId"), bench::benchMemberNodeId(i)},
                                          {QStringLiteral("publicKey"), QString::fromLatin1(bench::benchMemberPublicKey(i).toBase64())},
                                          {QStringLiteral("address"), bench::benchMemberAddress(i)},
                                          {QStringLiteral("expiresAt"), double(until)}});
            if (bench::benchMemberPartner(i) < members)
                grants.append(QJsonObject{{QStringLiteral("from"), bench::benchMemberNodeId(i)},
                                          {QStringLiteral("to"), bench::benchMemberNodeId(bench::benchMemberPartner(i))}});
        }
        const QJsonObject network{{QStringLiteral("authority"), QJsonObject{{QStringLiteral("id"), QStringLiteral("bench")},
                                                                            {QStringLiteral("publicKey"), QStringLiteral("AAAA")}}},
                                  {QStringLiteral("revision"), 1},
                                  {QStringLiteral("controlPrefix"), QStringLiteral("100.96.0.0/16")},
                                  {QStringLiteral("expiresAt"), double(until)},
                                  {QStringLiteral("members"), memberList},
                                  {QStringLiteral("grants"), grants}};
        const auto admitted = hub->admit(network, QStringLiteral("network"));
        if (!admitted || admitted->state != QStringLiteral("applied")) {
            std::fprintf(stderr, "network not applied\n");
            return 1;
        }
        std::printf("port %d key %s\n", int(hub->server()->boundPort()), hub->publicKey().toBase64().constData());
    } else {
        if (!forwarder.start())
            return 1;
        std::printf("port %d key -\n", int(forwarder.port));
    }
    std::fflush(stdout);

    auto connected = [&] { return plain ? int(forwarder.learned.size()) : hub->status().membersConnected; };
    auto relayed = [&]() -> qint64 {
        if (plain)
            return forwarder.forwarded;
        qint64 sum = 0;
        for (const auto &m : hub->status().members)
            sum += m.packetsOut;
        return sum;
    };
    const qint64 rssBound = rssKiB();
    const qint64 heapBound = heapInUseKiB();
    const qint64 mapsBound = mappingCount();
    QElapsedTimer wait;
    wait.start();
    while (connected() < members && wait.elapsed() < 120000)
        runFor(50);
    if (connected() < members) {
        std::fprintf(stderr, "only %d of %d members connected\n", connected(), members);
        return 1;
    }
    const qint64 rssConnected = rssKiB();
    // Where a member's memory goes, all members connected and idle: the allocator's bytes in use, the
    // mappings (Secrets), and RSS once the allocator returned what it holds free (malloc_trim).
    const int n = qMax(1, members);
    const double heapPerMember = double(heapInUseKiB() - heapBound) / n;
    const double mapsPerMember = double(mappingCount() - mapsBound) / n;
    malloc_trim(0);
    const double trimmedPerMember = double(rssKiB() - rssBound) / n;
    std::printf("memory members=%d rss_per_member_kib=%.1f heap_in_use_per_member_kib=%.1f mappings_per_member=%.2f "
                "rss_after_trim_per_member_kib=%.1f\n",
                members, double(rssConnected - rssBound) / n, heapPerMember, mapsPerMember, trimmedPerMember);
    std::fflush(stdout);
    if (memoryOnly)
        _exit(0);
    runFor(1000 + 1000); // the drivers' start delay, then warm-up (path MTU discovery, windows)
    const qint64 startPackets = relayed();
    const double startCpu = processCpuSeconds();
    QElapsedTimer measured;
    measured.start();
    runFor(int(seconds * 1000));
    const double elapsed = double(measured.nsecsElapsed()) / 1e9;
    const qint64 packets = relayed() - startPackets;
    const double cpu = processCpuSeconds() - startCpu;
    std::printf("result mode=%s members=%d relayed_pps=%.0f cpu_us_per_packet=%.2f cpu_share=%.2f rss_start_kib=%lld rss_bound_kib=%lld "
                "rss_connected_kib=%lld rss_per_member_kib=%.1f",
                plain ? "plain" : "hub", members, double(packets) / elapsed, packets > 0 ? cpu * 1e6 / double(packets) : 0.0, cpu / elapsed,
                qlonglong(rssStart), qlonglong(rssBound), qlonglong(rssConnected), double(rssConnected - rssBound) / qMax(1, members));
    if (hub) {
        std::printf(" drops:");
        const auto drops = hub->status().drops;
        for (auto it = drops.constBegin(); it != drops.constEnd(); ++it)
            std::printf(" %s=%lld", qPrintable(it.key()), qlonglong(it.value()));
    }
    std::printf("\n");
    std::fflush(stdout);
    return 0;
}
