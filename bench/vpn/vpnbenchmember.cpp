// coreflow-vpn-bench-member: members of the multi-process VPN bench in a process of their own
// (bench/vpn/run-processes.sh). Each hosts COUNT members FIRST, FIRST+2, FIRST+4, ... (keys and addresses
// from bench/vpn/benchmembers.h) and plays one ROLE for all of them:
//   drive  send IPv4 packets of BYTES bytes to the partner (index ^ 1), at most WINDOW unanswered
//   echo   send every packet received back to its source
//   idle   connect and handshake only (for RSS per member)
// Through the hub (QUIC + Noise, the test peer's SimulatedVpnMember) or, with `plain`, as raw UDP to
// a plain forwarder that relays by the packet's destination address. Drivers start DELAY_MS after
// their own handshakes, so the hub can read its RSS with every member connected and idle.
// Usage: coreflow-vpn-bench-member PORT HUBKEY_BASE64 FIRST COUNT ROLE BYTES WINDOW DELAY_MS [plain]
#include "bench/vpn/benchmembers.h"
#include "tests/peers/simulatedvpnmember.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <QTimer>
#include <QtEndian>
#include <arpa/inet.h>
#include <cstdio>
#include <memory>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using namespace coreflow;
using coreflow::peers::SimulatedVpnMember;

namespace {

enum class Role { Drive, Echo, Idle };

QByteArray echoed(const QByteArray &packet)
{
    QByteArray back = packet;
    std::memcpy(back.data() + 12, packet.constData() + 16, 4);
    std::memcpy(back.data() + 16, packet.constData() + 12, 4);
    return back;
}

// One member over QUIC + Noise.
struct QuicMember {
    std::unique_ptr<SimulatedVpnMember> peer;
    QByteArray packet;
    qint64 sent = 0, received = 0;
};

// One member as raw UDP to the plain forwarder.
struct PlainMember {
    int fd = -1;
    std::unique_ptr<QSocketNotifier> notifier;
    QByteArray packet, hello;
    qint64 sent = 0, received = 0;
};

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc < 9) {
        std::fprintf(stderr, "usage: %s PORT HUBKEY FIRST COUNT drive|echo|idle BYTES WINDOW DELAY_MS [plain]\n", argv[0]);
        return 2;
    }
    const quint16 port = quint16(QByteArray(argv[1]).toUInt());
    const QByteArray hubKey = QByteArray::fromBase64(argv[2]);
    const int first = QByteArray(argv[3]).toInt();
    const int count = QByteArray(argv[4]).toInt();
    const QByteArray roleName(argv[5]);
    const Role role = roleName == "drive" ? Role::Drive : roleName == "echo" ? Role::Echo : Role::Idle;
    const int bytes = QByteArray(argv[6]).toInt();
    const int window = QByteArray(argv[7]).toInt();
    const int delayMs = QByteArray(argv[8]).toInt();
    const bool plain = argc > 9 && QByteArray(argv[9]) == "plain";
    bool running = false;

    std::vector<std::unique_ptr<QuicMember>> quic;
    std::vector<std::unique_ptr<PlainMember>> udp;
    auto packetOf = [bytes](int i) {
        return SimulatedVpnMember::ipv4Packet(QHostAddress(bench::benchMemberAddress(i)),
                                              QHostAddress(bench::benchMemberAddress(bench::benchMemberPartner(i))), bytes, 'b');
    };

    if (!plain) {
        for (int k = 0; k < count; ++k) {
            const int i = first + 2 * k;
            auto m = std::make_unique<QuicMember>();
            SimulatedVpnMember::Options options;
            options.hubPort = port;
            options.staticPrivateKey = bench::benchMemberPrivateKey(i);
            options.hubPublicKey = hubKey;
            m->peer = std::make_unique<SimulatedVpnMember>(options);
            m->packet = packetOf(i);
            QuicMember *raw = m.get();
            auto pump = [raw, window, &running] {
                if (!running)
                    return;
                while (raw->sent - raw->received < window) {
                    raw->peer->sendPacket(raw->packet);
                    ++raw->sent;
                }
            };
            QObject::connect(raw->peer.get(), &SimulatedVpnMember::connected, raw->peer.get(), [raw] { raw->peer->handshake(); });
            QObject::connect(raw->peer.get(), &SimulatedVpnMember::packetReceived, raw->peer.get(), [raw, role, pump](const QByteArray &p) {
                ++raw->received;
                if (role == Role::Echo)
                    raw->peer->sendPacket(echoed(p));
                else if (role == Role::Drive)
                    pump();
            });
            if (role == Role::Drive) {
                // Lost datagrams would close the window for good: re-open it now and then.
                auto *timer = new QTimer(raw->peer.get());
                QObject::connect(timer, &QTimer::timeout, raw->peer.get(), [raw, window, pump] {
                    if (raw->sent - raw->received >= window)
                        raw->sent = raw->received;
                    pump();
                });
                timer->start(20);
            }
            if (!raw->peer->dial())
                return 1;
            quic.push_back(std::move(m));
        }
    } else {
        for (int k = 0; k < count; ++k) {
            const int i = first + 2 * k;
            auto m = std::make_unique<PlainMember>();
            m->fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            sockaddr_in to{};
            to.sin_family = AF_INET;
            to.sin_port = htons(port);
            to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            if (::connect(m->fd, reinterpret_cast<const sockaddr *>(&to), sizeof(to)) != 0)
                return 1;
            const int buffer = 4 * 1024 * 1024;
            setsockopt(m->fd, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
            m->packet = packetOf(i);
            m->hello = SimulatedVpnMember::ipv4Packet(QHostAddress(bench::benchMemberAddress(i)), QHostAddress(QStringLiteral("0.0.0.0")), 28, 'h');
            PlainMember *raw = m.get();
            auto pump = [raw, window, &running] {
                if (!running)
                    return;
                while (raw->sent - raw->received < window) {
                    (void)::send(raw->fd, raw->packet.constData(), size_t(raw->packet.size()), 0);
                    ++raw->sent;
                }
            };
            m->notifier = std::make_unique<QSocketNotifier>(m->fd, QSocketNotifier::Read);
            QObject::connect(m->notifier.get(), &QSocketNotifier::activated, m->notifier.get(), [raw, role, pump] {
                char buf[2048];
                for (;;) {
                    const ssize_t n = ::recv(raw->fd, buf, sizeof(buf), MSG_DONTWAIT);
                    if (n <= 0)
                        break;
                    ++raw->received;
                    if (role == Role::Echo && n >= 20) {
                        const QByteArray back = echoed(QByteArray(buf, qsizetype(n)));
                        (void)::send(raw->fd, back.constData(), size_t(back.size()), 0);
                    }
                }
                if (role == Role::Drive)
                    pump();
            });
            auto *timer = new QTimer(m->notifier.get());
            QObject::connect(timer, &QTimer::timeout, m->notifier.get(), [raw, role, window, pump, &running] {
                if (!running)
                    (void)::send(raw->fd, raw->hello.constData(), size_t(raw->hello.size()), 0); // the forwarder learns us
                if (role == Role::Drive) {
                    if (raw->sent - raw->received >= window)
                        raw->sent = raw->received;
                    pump();
                }
            });
            timer->start(20);
            udp.push_back(std::move(m));
        }
    }

    // Drivers start DELAY_MS after every member of this process has its session.
    auto *starter = new QTimer(&app);
    QObject::connect(starter, &QTimer::timeout, &app, [&] {
        bool allUp = true;
        for (const auto &m : quic)
            allUp = allUp && m->peer->isHandshakeDone();
        if (!allUp)
            return;
        starter->stop();
        QTimer::singleShot(delayMs, &app, [&] {
            running = true;
            for (auto &m : quic) {
                if (role != Role::Drive)
                    continue;
                while (m->sent - m->received < window) {
                    m->peer->sendPacket(m->packet);
                    ++m->sent;
                }
            }
        });
    });
    starter->start(50);
    return app.exec();
}
