// coreflow-vpn-bench: relayed packets per second between two members through the managed VPN hub
// (docs/contract.md §11), against a plain UDP forwarder, in the same run on the same machine.
//
// The hub (VpnHub: QUIC + Noise open + policy + Noise seal) runs on the main thread; both members
// (the test peer's ngtcp2 client and Noise initiator) run on a worker thread, so the hub thread's CPU
// time (RUSAGE_THREAD) is the relay's cost per packet. The baseline forwarder on the main thread does
// recvmmsg + sendto of the same-sized UDP payloads between two plain UDP sockets on the worker. Each
// side keeps at most `window` packets in flight. Usage: coreflow-vpn-bench [seconds] [packetBytes]
#include "service/vpn/vpnhub.h"
#include "shared/util/clock.h"
#include "tests/peers/peernoiseinitiator.h"
#include "tests/peers/simulatedvpnmember.h"
#include "tests/peers/testcertificateauthority.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QSocketNotifier>
#include <QThread>
#include <QTimer>
#include <arpa/inet.h>
#include <cstdio>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace coreflow;
using coreflow::peers::SimulatedVpnMember;

namespace {

int kWindow = 256;

double threadCpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_THREAD, &usage);
    return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

int udpSocket(quint16 *port)
{
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr *>(&sin), sizeof(sin));
    socklen_t length = sizeof(sin);
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&sin), &length);
    *port = ntohs(sin.sin_port);
    const int buffer = 4 * 1024 * 1024;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
    return fd;
}

sockaddr_in loopback(quint16 port)
{
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons(port);
    return sin;
}

// Both members on the worker thread; A sends to B, keeping kWindow packets in flight.
class MemberDriver : public QObject {
public:
    SimulatedVpnMember::Options optionsA, optionsB;
    QByteArray packetAB;
    std::unique_ptr<SimulatedVpnMember> a, b;
    std::atomic<qint64> received{0};
    std::atomic<bool> ready{false};
    std::atomic<bool> running{false};
    qint64 sent = 0;

    void start()
    {
        a = std::make_unique<SimulatedVpnMember>(optionsA);
        b = std::make_unique<SimulatedVpnMember>(optionsB);
        QObject::connect(a.get(), &SimulatedVpnMember::connected, a.get(), [this] { a->handshake(); });
        QObject::connect(b.get(), &SimulatedVpnMember::connected, b.get(), [this] { b->handshake(); });
        auto check = [this] {
            if (a->isHandshakeDone() && b->isHandshakeDone())
                ready = true;
        };
        QObject::connect(a.get(), &SimulatedVpnMember::handshakeDone, a.get(), check);
        QObject::connect(b.get(), &SimulatedVpnMember::handshakeDone, b.get(), check);
        QObject::connect(b.get(), &SimulatedVpnMember::packetReceived, b.get(), [this] {
            ++received;
            pump();
        });
        a->dial();
        b->dial();
    }
    void pump()
    {
        if (!running)
            return;
        while (sent - received < kWindow) {
            a->sendPacket(packetAB);
            ++sent;
        }
    }
    void kick()
    {
        running = true;
        pump();
        // Lost datagrams would stall the window: re-open it now and then.
        auto *timer = new QTimer(a.get());
        QObject::connect(timer, &QTimer::timeout, a.get(), [this] {
            if (sent - received >= kWindow)
                sent = received;
            pump();
        });
        timer->start(20);
    }
};

// The plain forwarder's two ends on the worker thread.
class UdpDriver : public QObject {
public:
    int sender = -1, receiver = -1;
    quint16 forwarderPort = 0;
    int packetBytes = 0;
    std::atomic<qint64> received{0};
    std::atomic<bool> running{false};
    qint64 sent = 0;
    std::unique_ptr<QSocketNotifier> notifier;

    void start()
    {
        quint16 port = 0;
        sender = udpSocket(&port);
        receiver = udpSocket(&port);
        notifier = std::make_unique<QSocketNotifier>(receiver, QSocketNotifier::Read);
        QObject::connect(notifier.get(), &QSocketNotifier::activated, notifier.get(), [this] {
            char buf[2048];
            while (::recv(receiver, buf, sizeof(buf), MSG_DONTWAIT) > 0)
                ++received;
            pump();
        });
    }
    quint16 receiverPort() const
    {
        sockaddr_in sin{};
        socklen_t length = sizeof(sin);
        ::getsockname(receiver, reinterpret_cast<sockaddr *>(&sin), &length);
        return ntohs(sin.sin_port);
    }
    void pump()
    {
        if (!running)
            return;
        const QByteArray payload(packetBytes, 'u');
        const sockaddr_in to = loopback(forwarderPort);
        while (sent - received < kWindow) {
            ::sendto(sender, payload.constData(), size_t(payload.size()), 0, reinterpret_cast<const sockaddr *>(&to), sizeof(to));
            ++sent;
        }
    }
    void kick()
    {
        running = true;
        pump();
        auto *timer = new QTimer(notifier.get());
        QObject::connect(timer, &QTimer::timeout, notifier.get(), [this] {
            if (sent - received >= kWindow)
                sent = received;
            pump();
        });
        timer->start(20);
    }
};

// recvmmsg + sendto to one fixed receiver: the cheapest relay of a UDP payload.
class PlainForwarder : public QObject {
public:
    int fd = -1;
    quint16 port = 0;
    sockaddr_in target{};
    std::unique_ptr<QSocketNotifier> notifier;
    qint64 forwarded = 0;
    void start(quint16 receiverPort)
    {
        fd = udpSocket(&port);
        target = loopback(receiverPort);
        notifier = std::make_unique<QSocketNotifier>(fd, QSocketNotifier::Read);
        QObject::connect(notifier.get(), &QSocketNotifier::activated, notifier.get(), [this] {
            static char buffers[64][2048];
            mmsghdr messages[64];
            iovec vectors[64];
            for (int round = 0; round < 16; ++round) {
                for (int i = 0; i < 64; ++i) {
                    vectors[i] = iovec{buffers[i], sizeof(buffers[i])};
                    messages[i] = mmsghdr{};
                    messages[i].msg_hdr.msg_iov = &vectors[i];
                    messages[i].msg_hdr.msg_iovlen = 1;
                }
                const int n = ::recvmmsg(fd, messages, 64, MSG_DONTWAIT, nullptr);
                if (n <= 0)
                    break;
                for (int i = 0; i < n; ++i) {
                    ::sendto(fd, buffers[i], messages[i].msg_len, 0, reinterpret_cast<const sockaddr *>(&target), sizeof(target));
                    ++forwarded;
                }
            }
        });
    }
};

struct Measured {
    double packetsPerSecond = 0;
    double cpuMicrosPerPacket = 0;
};

template <typename Driver>
Measured measure(Driver &driver, QThread &worker, double seconds)
{
    QMetaObject::invokeMethod(&driver, [&driver] { driver.kick(); }, Qt::QueuedConnection);
    (void)worker;
    // Warm up one second, then measure.
    auto runFor = [](int ms) {
        QEventLoop loop;
        QTimer::singleShot(ms, &loop, &QEventLoop::quit);
        loop.exec();
    };
    runFor(1000);
    const qint64 startCount = driver.received;
    const double startCpu = threadCpuSeconds();
    QElapsedTimer clock;
    clock.start();
    runFor(int(seconds * 1000));
    const double elapsed = double(clock.nsecsElapsed()) / 1e9;
    const qint64 packets = driver.received - startCount;
    const double cpu = threadCpuSeconds() - startCpu;
    QMetaObject::invokeMethod(&driver, [&driver] { driver.running = false; }, Qt::BlockingQueuedConnection);
    Measured m;
    m.packetsPerSecond = double(packets) / elapsed;
    m.cpuMicrosPerPacket = packets > 0 ? cpu * 1e6 / double(packets) : 0;
    return m;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const double seconds = argc > 1 ? QByteArray(argv[1]).toDouble() : 5.0;
    const int packetBytes = argc > 2 ? QByteArray(argv[2]).toInt() : 1376;
    if (argc > 3)
        kWindow = QByteArray(argv[3]).toInt();
    if (!Secret::initialiseSodium())
        return 1;

    SystemClock clock;
    peers::TestCertificateAuthority ca;
    const auto leaf = ca.issueLocalhost();
    quint16 hubPort = 0;
    ::close(udpSocket(&hubPort));
    vpn::VpnHub::Settings settings;
    settings.address = QHostAddress::LocalHost;
    settings.port = hubPort;
    vpn::VpnHub hub(settings, clock);
    hub.setCredentials(leaf.certPem, Secret(leaf.keyPem));

    const QByteArray keyA = peers::PeerNoiseInitiator::newPrivateKey();
    const QByteArray keyB = peers::PeerNoiseInitiator::newPrivateKey();
    const qint64 until = clock.nowMs() + 3600000;
    auto memberJson = [&](const QString &id, const QByteArray &key, const QString &address) {
        return QJsonObject{{QStringLiteral("nodeId"), id},
                           {QStringLiteral("publicKey"), QString::fromLatin1(peers::PeerNoiseInitiator::publicKeyOf(key).toBase64())},
                           {QStringLiteral("address"), address},
                           {QStringLiteral("expiresAt"), double(until)}};
    };
    const QJsonObject network{{QStringLiteral("authority"), QJsonObject{{QStringLiteral("id"), QStringLiteral("bench")},
                                                                        {QStringLiteral("publicKey"), QStringLiteral("AAAA")}}},
                              {QStringLiteral("revision"), 1},
                              {QStringLiteral("controlPrefix"), QStringLiteral("100.96.0.0/16")},
                              {QStringLiteral("expiresAt"), double(until)},
                              {QStringLiteral("members"), QJsonArray{memberJson(QStringLiteral("a"), keyA, QStringLiteral("100.96.0.1")),
                                                                      memberJson(QStringLiteral("b"), keyB, QStringLiteral("100.96.0.2"))}},
                              {QStringLiteral("grants"), QJsonArray{QJsonObject{{QStringLiteral("from"), QStringLiteral("a")},
                                                                                {QStringLiteral("to"), QStringLiteral("b")}}}}};
    const auto admitted = hub.admit(network, QStringLiteral("network"));
    if (!admitted || admitted->state != QStringLiteral("applied")) {
        std::fprintf(stderr, "network not applied: %s\n", admitted ? qPrintable(admitted->reason) : qPrintable(admitted.refusal().text()));
        return 1;
    }

    QThread worker;
    worker.start();
    MemberDriver members;
    members.optionsA.hubPort = hubPort;
    members.optionsA.staticPrivateKey = keyA;
    members.optionsA.hubPublicKey = hub.publicKey();
    members.optionsB = members.optionsA;
    members.optionsB.staticPrivateKey = keyB;
    members.packetAB = SimulatedVpnMember::ipv4Packet(QHostAddress(QStringLiteral("100.96.0.1")), QHostAddress(QStringLiteral("100.96.0.2")),
                                                      packetBytes, 'v');
    members.moveToThread(&worker);
    QMetaObject::invokeMethod(&members, [&members] { members.start(); }, Qt::QueuedConnection);
    QElapsedTimer wait;
    wait.start();
    while (!members.ready && wait.elapsed() < 10000) {
        QEventLoop loop;
        QTimer::singleShot(20, &loop, &QEventLoop::quit);
        loop.exec();
    }
    if (!members.ready) {
        std::fprintf(stderr, "members did not complete their handshakes\n");
        return 1;
    }
    const Measured viaHub = measure(members, worker, seconds);
    const auto status = hub.status();

    UdpDriver plain;
    plain.packetBytes = packetBytes + 24; // the same bytes on the wire as a sealed datagram's payload
    plain.moveToThread(&worker);
    QMetaObject::invokeMethod(&plain, [&plain] { plain.start(); }, Qt::BlockingQueuedConnection);
    PlainForwarder forwarder;
    forwarder.start(plain.receiverPort());
    plain.forwarderPort = forwarder.port;
    const Measured viaUdp = measure(plain, worker, seconds);

    std::printf("vpn hub:        %.0f packets/s (%d-byte IPv4 packets, %.3f Gbit/s), hub thread %.2f us CPU per packet\n",
                viaHub.packetsPerSecond, packetBytes, viaHub.packetsPerSecond * packetBytes * 8 / 1e9, viaHub.cpuMicrosPerPacket);
    std::printf("udp forwarder:  %.0f packets/s (%d-byte UDP payloads), forwarder thread %.2f us CPU per packet\n", viaUdp.packetsPerSecond,
                packetBytes + 24, viaUdp.cpuMicrosPerPacket);
    std::printf("hub drops: ");
    for (auto it = status.drops.constBegin(); it != status.drops.constEnd(); ++it)
        std::printf("%s=%lld ", qPrintable(it.key()), qlonglong(it.value()));
    std::printf("\n");
    QMetaObject::invokeMethod(&members, [&members] { members.a.reset(); members.b.reset(); }, Qt::BlockingQueuedConnection);
    QMetaObject::invokeMethod(&plain, [&plain] { plain.notifier.reset(); }, Qt::BlockingQueuedConnection);
    worker.quit();
    worker.wait();
    return 0;
}
