// The managed VPN hub through a running relay (docs/contract.md §6.6 vpnHub, §6.8, §11, §18.1 vpn):
// simulated members (their own QUIC client and Noise IK initiator, tests/peers) exchange IPv4 packets
// through the relay's hub; what the policy refuses is dropped and counted by cause; a withdrawn member
// is cut; admission rules; lazy bind, bind failure then success; key canaries. Rule ids in the names
// and comments: VH-03, VH-05..VH-16, VH-18, RR-12..RR-14, CF-13, CF-15, CF-19, CF-20.
#include "tests/integration/logcapture.h"
#include "tests/integration/relayfixture.h"
#include "tests/integration/vpnhubscenario.h"
#include "tests/peers/peernoiseinitiator.h"
#include "tests/peers/simulatedvpnmember.h"
#include "tests/support/epolltestmain.h"

#include "service/vpn/vpnhub.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <QUdpSocket>
#include <functional>

using namespace coreflow;
using namespace coreflow::testing;
using coreflow::peers::SimulatedVpnMember;

class TestVpnHub : public QObject, private VpnHubScenario {
    Q_OBJECT

    LogCapture m_log;

private slots:
    void initTestCase() { m_log.install(); }

    // VH-05, VH-16, RR-12, RR-14, CF-13: advertised from the first registration; nothing bound until
    // a network is admitted (a pulled null binds nothing); then bound on the configured UDP port.
    void advertisedFromTheFirstRegistrationBoundOnTheFirstNetwork()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const auto request = f.cloudly->lastRequest(QStringLiteral("registerClusterRelay"));
        const QJsonObject hub = QJsonDocument::fromJson(request->rawRequest).object()[QStringLiteral("relay")][QStringLiteral("vpnHub")].toObject();
        QCOMPARE(hub.keys(), (QStringList{QStringLiteral("address"), QStringLiteral("publicKey"), QStringLiteral("quicPort")}));
        QCOMPARE(hub[QStringLiteral("address")].toString(), QStringLiteral("127.0.0.1"));
        QCOMPARE(hub[QStringLiteral("quicPort")].toInt(), int(m_vpnPort));
        QCOMPARE(QByteArray::fromBase64(hub[QStringLiteral("publicKey")].toString().toLatin1()).size(), 32);
        // VH-15/VH-16: pulled after the accepted registration; null binds nothing.
        QTRY_VERIFY(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")) >= 1);
        QVERIFY(f.settleCloudlyHop());
        QVERIFY(!f.relay->statusSnapshot().vpn.bound);
        QUdpSocket probe;
        QVERIFY2(probe.bind(QHostAddress::LocalHost, m_vpnPort), "the hub's port is free until a network is admitted");
        probe.close();
        const QJsonObject answer = apply(f, networkJson(1, {member(1)}, {}, f.clock.nowMs()));
        QCOMPARE(answer[QStringLiteral("state")].toString(), QStringLiteral("applied"));
        QCOMPARE(answer[QStringLiteral("revision")].toInt(), 1);
        const auto vpn = f.relay->statusSnapshot().vpn;
        QVERIFY(vpn.bound);
        QCOMPARE(vpn.quicPort, int(m_vpnPort));
        QCOMPARE(vpn.networkRevision, std::optional<qint64>(1));
        QCOMPARE(vpn.memberCount, 1);
        QVERIFY(!probe.bind(QHostAddress::LocalHost, m_vpnPort));
    }

    // VH-15: a pulled network is admitted like a push.
    void pulledNetworkBinds()
    {
        RelayFixture f;
        const qint64 now = f.clock.nowMs();
        QVERIFY(startRelayWithHub(f, networkJson(3, {member(1), member(2)}, {}, now)));
        QTRY_VERIFY(f.relay->statusSnapshot().vpn.bound);
        QCOMPARE(f.relay->statusSnapshot().vpn.networkRevision, std::optional<qint64>(3));
    }

    // The data plane: A -> B relayed (granted); B -> A ungranted; spoofed source; a replayed datagram;
    // an unknown destination; all counted by cause, per member too (§11.5, §18.1).
    void twoMembersExchangePacketsAndRefusedOnesAreCounted()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1), b = member(2);
        QCOMPARE(apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}}, f.clock.nowMs()))[QStringLiteral("state")].toString(),
                 QStringLiteral("applied"));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone());
        QVERIFY(peerB && peerB->isHandshakeDone());
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.membersConnected, 2);

        const QByteArray ab = packet(a, b, 1000, 'a');
        peerA->sendPacket(ab);
        QTRY_COMPARE(peerB->receivedPackets().size(), 1);
        QCOMPARE(peerB->receivedPackets().first(), ab);

        // Replayed: the very datagram again.
        peerA->sendRawDatagram(peerA->lastDatagram());
        // Ungranted: B -> A.
        peerB->sendPacket(packet(b, a));
        // Spoofed: A claims B's address as its source.
        peerA->sendPacket(packet(b, b));
        // Unknown destination.
        Member stranger = member(9);
        peerA->sendPacket(packet(a, stranger));
        // Not IPv4.
        peerA->sendPacket(QByteArray(40, '\x60'));
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("replayed")), 1);
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("ungranted-pair")), 1);
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("spoofed-source")), 1);
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("unknown-destination")), 1);
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("not-ipv4")), 1);
        // One more granted packet still flows after the refused ones.
        peerA->sendPacket(packet(a, b, 300, 'z'));
        QTRY_COMPARE(peerB->receivedPackets().size(), 2);
        QCOMPARE(peerA->receivedPackets().size(), 0);
        const auto statusA = memberStatus(f, a.nodeId);
        const auto statusB = memberStatus(f, b.nodeId);
        QVERIFY(statusA.connected && statusB.connected);
        QVERIFY(statusA.lastHandshakeAtMs > 0);
        QCOMPARE(statusB.packetsOut, 2);
        QCOMPARE(statusB.bytesOut, 1300);
        QCOMPARE(statusA.drops.value(QStringLiteral("spoofed-source")), 1);
        QCOMPARE(statusB.drops.value(QStringLiteral("ungranted-pair")), 1);
    }

    // §11.6: a rekey on a new stream of the same connection; packets flow under the new keys both ways.
    void rekeyOnANewStreamKeepsPacketsFlowing()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1), b = member(2);
        apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}, {b.nodeId, a.nodeId}}, f.clock.nowMs()));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());
        peerA->sendPacket(packet(a, b, 100, '1'));
        QTRY_COMPARE(peerB->receivedPackets().size(), 1);
        f.clock.advance(120000);
        peerA->rekey();
        QTRY_COMPARE(peerA->rekeyCount(), 1);
        peerA->sendPacket(packet(a, b, 100, '2'));
        QTRY_COMPARE(peerB->receivedPackets().size(), 2);
        QCOMPARE(peerB->receivedPackets().last(), packet(a, b, 100, '2'));
        peerB->sendPacket(packet(b, a, 100, '3'));
        QTRY_COMPARE(peerA->receivedPackets().size(), 1);
        QVERIFY(!peerA->isClosed());
        // B never rekeyed: past 180000 ms its keys open nothing and it is told to rekey (0x104).
        f.clock.advance(60000);
        peerB->sendPacket(packet(b, a, 100, '4'));
        QTRY_VERIFY(peerB->isClosed());
        QCOMPARE(peerB->closeCode(), std::optional<quint64>(0x104));
        QCOMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("keys-expired")), 1);
    }

    // §11.4/§11.7: an unknown static key is closed with 0x100 and gets nothing on the stream.
    void unknownMemberIsClosedWith0x100()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        QCOMPARE(apply(f, networkJson(1, {member(1)}, {}, f.clock.nowMs()))[QStringLiteral("state")].toString(), QStringLiteral("applied"));
        auto stranger = connectMember(f, member(7));
        QVERIFY(stranger);
        QTRY_VERIFY(stranger->isClosed());
        QCOMPARE(stranger->closeCode(), std::optional<quint64>(0x100));
        QVERIFY(stranger->rawStreamBytes(0).isEmpty());
        QVERIFY(!stranger->isHandshakeDone());
    }

    std::unique_ptr<SimulatedVpnMember> dialOnly(RelayFixture &f, const Member &m, std::function<QByteArray()> timestamp = {})
    {
        SimulatedVpnMember::Options options;
        options.hubPort = m_vpnPort;
        options.staticPrivateKey = m.privateKey;
        options.hubPublicKey = advertisedHubKey(f);
        options.timestamp = std::move(timestamp);
        auto peer = std::make_unique<SimulatedVpnMember>(options);
        if (!peer->dial() || !QTest::qWaitFor([&] { return peer->isConnected() || peer->isClosed(); }, 10000) || !peer->isConnected())
            return nullptr;
        return peer;
    }

    // §11.4/§11.7 (D-98): message 1 captured from a live member and replayed on another connection
    // authenticates (it is the member's own bytes) but its timestamp does not exceed the greatest the
    // hub accepted for that key: the replaying connection is closed with 0x105 handshake-replayed,
    // counted, and the live member keeps its connection, its keys and its packets.
    void replayedMessage1LeavesTheLiveMemberConnected()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1), b = member(2);
        apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}, {b.nodeId, a.nodeId}}, f.clock.nowMs()));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());
        const QByteArray captured = peerA->lastMessage1Frame();
        QCOMPARE(captured.size(), 2 + 108);
        const qint64 handshakeAt = memberStatus(f, a.nodeId).lastHandshakeAtMs;
        f.clock.advance(1000);

        // The attacker holds no key of A's: it only replays A's bytes, from another UDP port.
        auto attacker = dialOnly(f, member(8));
        QVERIFY(attacker);
        attacker->sendRawStream(0, captured);
        QTRY_VERIFY(attacker->isClosed());
        QCOMPARE(attacker->closeCode(), std::optional<quint64>(0x105));
        QVERIFY(attacker->rawStreamBytes(0).isEmpty());
        QCOMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("handshake-replayed")), 1);
        QCOMPARE(memberStatus(f, a.nodeId).drops.value(QStringLiteral("handshake-replayed")), 1);

        // A is untouched: still connected, same handshake time, packets flow both ways under its keys.
        QVERIFY(!peerA->isClosed());
        QCOMPARE(memberStatus(f, a.nodeId).lastHandshakeAtMs, handshakeAt);
        QVERIFY(memberStatus(f, a.nodeId).connected);
        peerA->sendPacket(packet(a, b, 120, 'r'));
        QTRY_COMPARE(peerB->receivedPackets().size(), 1);
        peerB->sendPacket(packet(b, a, 130, 's'));
        QTRY_COMPARE(peerA->receivedPackets().size(), 1);
        QCOMPARE(f.relay->statusSnapshot().vpn.membersConnected, 2);
    }

    // §11.4 (D-98): the timestamp must exceed the greatest accepted for the key: an equal or older one
    // from the member itself (a clock stepped back) is refused with 0x105 and the live connection stays;
    // a later one replaces the older connection as before; a message 1 without the 12-byte timestamp
    // is a malformed handshake (0x103).
    void handshakeTimestampMustExceedTheGreatestAccepted()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1);
        apply(f, networkJson(1, {a}, {}, f.clock.nowMs()));
        constexpr qint64 base = qint64(1800000000) * 1000000000;
        auto first = dialOnly(f, a, [] { return SimulatedVpnMember::tai64n(base); });
        QVERIFY(first);
        first->handshake();
        QTRY_VERIFY(first->isHandshakeDone());

        for (const qint64 stamp : {base, base - 1}) {
            auto older = dialOnly(f, a, [stamp] { return SimulatedVpnMember::tai64n(stamp); });
            QVERIFY(older);
            older->handshake();
            QTRY_VERIFY(older->isClosed());
            QCOMPARE(older->closeCode(), std::optional<quint64>(0x105));
            QVERIFY(!older->isHandshakeDone());
        }
        QCOMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("handshake-replayed")), 2);
        QVERIFY(!first->isClosed());

        auto bare = dialOnly(f, a, [] { return QByteArray(); });
        QVERIFY(bare);
        bare->handshake();
        QTRY_VERIFY(bare->isClosed());
        QCOMPARE(bare->closeCode(), std::optional<quint64>(0x103));
        QVERIFY(!first->isClosed());

        auto later = dialOnly(f, a, [] { return SimulatedVpnMember::tai64n(base + 1); });
        QVERIFY(later);
        later->handshake();
        QTRY_VERIFY(later->isHandshakeDone());
        QTRY_VERIFY(first->isClosed());
        QCOMPARE(first->closeCode(), std::optional<quint64>(0));
        QVERIFY(!later->isClosed());
    }

    // §11.5, §11.8 (D-77): a packet whose datagram does not fit the destination's path is dropped and
    // counted datagram-too-large, never split. The sender's own path is made wide (1500-byte UDP
    // payloads from the start) so its 1400-byte packet reaches the hub; the hub's path to B is at most
    // 1444 bytes (1400 of datagram, so 1376 of packet, D-100), so 1400 never fits, and 1132 always does.
    void packetBeyondTheDestinationPathIsDroppedAsDatagramTooLarge()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1), b = member(2);
        apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}}, f.clock.nowMs()));
        SimulatedVpnMember::Options options;
        options.hubPort = m_vpnPort;
        options.staticPrivateKey = a.privateKey;
        options.hubPublicKey = advertisedHubKey(f);
        options.fixedUdpPayload = 1500;
        SimulatedVpnMember peerA(options);
        QVERIFY(peerA.dial());
        QTRY_VERIFY_WITH_TIMEOUT(peerA.isConnected(), 10000);
        peerA.handshake();
        QTRY_VERIFY_WITH_TIMEOUT(peerA.isHandshakeDone(), 10000);
        auto peerB = connectMember(f, b);
        QVERIFY(peerB && peerB->isHandshakeDone());

        peerA.sendPacket(packet(a, b, 1400, 'L'));
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("datagram-too-large")), 1);
        QCOMPARE(memberStatus(f, a.nodeId).drops.value(QStringLiteral("datagram-too-large")), 1);
        QCOMPARE(memberStatus(f, a.nodeId).packetsIn, 1); // it was opened: the hub judged it, then dropped it
        peerA.sendPacket(packet(a, b, 1132, 'S'));
        QTRY_COMPARE(peerB->receivedPackets().size(), 1);
        QCOMPARE(peerB->receivedPackets().first(), packet(a, b, 1132, 'S'));
        QCOMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("datagram-too-large")), 1);
    }

    // VH-08, VH-10: a later revision leaving B out withdraws it: cut at once with 0x101, and A's packets
    // to B's address stop (unknown destination).
    void withdrawnMemberIsCut()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1), b = member(2);
        apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}}, f.clock.nowMs()));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());
        QCOMPARE(apply(f, networkJson(2, {a}, {}, f.clock.nowMs()))[QStringLiteral("state")].toString(), QStringLiteral("applied"));
        QTRY_VERIFY(peerB->isClosed());
        QCOMPARE(peerB->closeCode(), std::optional<quint64>(0x101));
        QVERIFY(!peerA->isClosed());
        peerA->sendPacket(packet(a, b));
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("unknown-destination")), 1);
        QCOMPARE(f.relay->statusSnapshot().vpn.membersConnected, 1);
        QCOMPARE(f.relay->statusSnapshot().vpn.memberCount, 1);
    }

    // VH-08, VH-10, issue 21: the packet path keys members by their index in the held network, so a
    // later revision that lists the connected members in another order (a new member first) must be
    // re-indexed when it is applied: the kept connections go on forwarding under the new revision's
    // grants (the grant it leaves out stops at once), each packet counted under its own member.
    void laterRevisionReorderingMembersKeepsForwardingUnderItsGrants_VH08_VH10()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1), b = member(2), c = member(3);
        QCOMPARE(apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}, {b.nodeId, a.nodeId}}, f.clock.nowMs()))[QStringLiteral("state")].toString(),
                 QStringLiteral("applied"));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());
        peerA->sendPacket(packet(a, b, 200, '1'));
        QTRY_COMPARE(peerB->receivedPackets().size(), 1);

        // Revision 2: c first, then b, then a; only b -> a and b -> c granted.
        QCOMPARE(apply(f, networkJson(2, {c, b, a}, {{b.nodeId, a.nodeId}, {b.nodeId, c.nodeId}}, f.clock.nowMs()))[QStringLiteral("state")].toString(),
                 QStringLiteral("applied"));
        QVERIFY(!peerA->isClosed() && !peerB->isClosed());
        const QByteArray ba = packet(b, a, 400, '2');
        peerB->sendPacket(ba);
        QTRY_COMPARE(peerA->receivedPackets().size(), 1);
        QCOMPARE(peerA->receivedPackets().first(), ba);
        peerA->sendPacket(packet(a, b, 200, '3'));   // its grant was left out
        peerB->sendPacket(packet(b, c, 200, '4'));   // granted, but c is not connected
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("ungranted-pair")), 1);
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("destination-not-connected")), 1);
        const auto statusA = memberStatus(f, a.nodeId);
        const auto statusB = memberStatus(f, b.nodeId);
        QCOMPARE(statusA.drops.value(QStringLiteral("ungranted-pair")), 1);
        QCOMPARE(statusA.drops.value(QStringLiteral("spoofed-source")), 0);
        QCOMPARE(statusB.drops.value(QStringLiteral("destination-not-connected")), 1);
        QCOMPARE(statusA.packetsIn, 2);
        QCOMPARE(statusA.packetsOut, 1);
        QCOMPARE(statusA.bytesOut, 400);
        QCOMPARE(statusB.packetsIn, 2);
        QCOMPARE(statusB.packetsOut, 1);
        QCOMPARE(statusB.bytesOut, 200);
        QCOMPARE(peerB->receivedPackets().size(), 1);
        QCOMPARE(f.relay->statusSnapshot().vpn.membersConnected, 2);
    }

    // §11.1/§11.7: a member whose expiresAt passes on the injected clock is cut with 0x102 and its
    // packets stop; the others keep going.
    void expiredMemberIsCutOnTheClock()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const qint64 now = f.clock.nowMs();
        const Member a = member(1), b = member(2);
        apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}, {b.nodeId, a.nodeId}}, now, QStringLiteral("authority-1"),
                             QStringLiteral("100.96.0.0/16"), {{b.nodeId, now + 60000}}));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());
        f.clock.advance(59999);
        QVERIFY(f.settleCloudlyHop());
        QVERIFY(!peerB->isClosed());
        f.clock.advance(1);
        QTRY_VERIFY(peerB->isClosed());
        QCOMPARE(peerB->closeCode(), std::optional<quint64>(0x102));
        peerA->sendPacket(packet(a, b));
        QTRY_COMPARE(f.relay->statusSnapshot().vpn.drops.value(QStringLiteral("unknown-destination")), 1);
        QVERIFY(!peerA->isClosed());
    }

    // VH-09, VH-11, VH-12, VH-13, VH-14: replay, foreign authority, moved prefix, stale revision.
    void admissionRules()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const qint64 now = f.clock.nowMs();
        const Member a = member(1);
        const QJsonObject rev2 = networkJson(2, {a}, {}, now);
        QCOMPARE(apply(f, rev2)[QStringLiteral("state")].toString(), QStringLiteral("applied"));
        const QJsonObject replay = apply(f, rev2);
        QCOMPARE(replay[QStringLiteral("state")].toString(), QStringLiteral("replayed"));
        QCOMPARE(replay[QStringLiteral("revision")].toInt(), 2);
        QCOMPARE(apply(f, networkJson(3, {a}, {}, now, QStringLiteral("authority-2")))[QStringLiteral("refusal")].toString(),
                 QStringLiteral("vpn-network-authority-foreign"));
        QCOMPARE(apply(f, networkJson(3, {a}, {}, now, QStringLiteral("authority-1"), QStringLiteral("100.96.0.0/24")))[QStringLiteral("refusal")].toString(),
                 QStringLiteral("vpn-network-authority-foreign"));
        QCOMPARE(apply(f, networkJson(1, {a}, {}, now))[QStringLiteral("refusal")].toString(), QStringLiteral("vpn-network-revision-stale"));
        QCOMPARE(f.relay->statusSnapshot().vpn.networkRevision, std::optional<qint64>(2));
    }

    // CF-19, CF-20: a taken port answers failed (value-free reason), the relay keeps serving, and the
    // next push binds once the port is free.
    void bindFailureThenSuccess()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        QUdpSocket holder;
        QVERIFY(holder.bind(QHostAddress::LocalHost, m_vpnPort));
        const QJsonObject network = networkJson(1, {member(1)}, {}, f.clock.nowMs());
        const QJsonObject failed = apply(f, network);
        QCOMPARE(failed[QStringLiteral("state")].toString(), QStringLiteral("failed"));
        QCOMPARE(failed[QStringLiteral("reason")].toString(), QStringLiteral("bind failed: AddressInUse"));
        QVERIFY(failed[QStringLiteral("revision")].isNull());
        QVERIFY(m_log.contains(QStringLiteral("VPN hub cannot bind UDP")));
        auto vpn = f.relay->statusSnapshot().vpn;
        QVERIFY(!vpn.bound);
        QCOMPARE(vpn.state, QStringLiteral("failed"));
        QCOMPARE(vpn.lastFailure, QStringLiteral("bind failed: AddressInUse"));
        QVERIFY(f.relay->isOpen());
        holder.close();
        QCOMPARE(apply(f, network)[QStringLiteral("state")].toString(), QStringLiteral("applied"));
        vpn = f.relay->statusSnapshot().vpn;
        QVERIFY(vpn.bound);
        QCOMPARE(vpn.state, QStringLiteral("bound"));
    }

    // RR-13, CF-15: without the VPN pair no vpnHub key, and a push is refused by name.
    void noHubAdvertisesNothingAndRefusesPushes()
    {
        RelayFixture f;
        QVERIFY(f.startRelay());
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const auto request = f.cloudly->lastRequest(QStringLiteral("registerClusterRelay"));
        QVERIFY(!QJsonDocument::fromJson(request->rawRequest).object()[QStringLiteral("relay")].toObject().contains(QStringLiteral("vpnHub")));
        QVERIFY(f.settleCloudlyHop());
        QCOMPARE(f.cloudly->callCount(QStringLiteral("getClusterVpnNetwork")), 0);
        QCOMPARE(apply(f, networkJson(1, {member(1)}, {}, f.clock.nowMs()))[QStringLiteral("refusal")].toString(),
                 QStringLiteral("vpn-hub-not-configured"));
        QCOMPARE(f.relay->statusSnapshot().vpn.state, QStringLiteral("none"));
    }

    // VH-18: every relay start makes a new hub key.
    void restartReKeysTheHub()
    {
        QByteArray first;
        {
            RelayFixture f;
            QVERIFY(startRelayWithHub(f));
            QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
            first = advertisedHubKey(f);
        }
        RelayFixture g;
        QVERIFY(startRelayWithHub(g));
        QTRY_COMPARE(g.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        QCOMPARE(first.size(), 32);
        QVERIFY(advertisedHubKey(g) != first);
    }

    // Ten members in a ring: each reaches the next one.
    void tenMembersInARing()
    {
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        QList<Member> members;
        QList<QPair<QString, QString>> grants;
        for (int i = 0; i < 10; ++i)
            members.append(member(i));
        for (int i = 0; i < 10; ++i)
            grants.append({members[i].nodeId, members[(i + 1) % 10].nodeId});
        QCOMPARE(apply(f, networkJson(1, members, grants, f.clock.nowMs()))[QStringLiteral("state")].toString(), QStringLiteral("applied"));
        std::vector<std::unique_ptr<SimulatedVpnMember>> peers;
        for (const Member &m : members) {
            peers.push_back(connectMember(f, m));
            QVERIFY(peers.back() && peers.back()->isHandshakeDone());
        }
        for (int i = 0; i < 10; ++i)
            peers[size_t(i)]->sendPacket(packet(members[i], members[(i + 1) % 10], 100 + i));
        for (int i = 0; i < 10; ++i) {
            QTRY_COMPARE(peers[size_t((i + 1) % 10)]->receivedPackets().size(), 1);
            QCOMPARE(peers[size_t((i + 1) % 10)]->receivedPackets().first(), packet(members[i], members[(i + 1) % 10], 100 + i));
        }
        QCOMPARE(f.relay->statusSnapshot().vpn.membersConnected, 10);
    }

    // VH-03 and §19.4: no key material in the log or the status — the members' private keys (which
    // the relay never sees), the listener's TLS key, and no more than the hub's 32-byte public key.
    void keyCanariesNeverInLogsOrStatus()
    {
        m_log.clear();
        RelayFixture f;
        QVERIFY(startRelayWithHub(f));
        QTRY_COMPARE(f.cloudly->callCount(QStringLiteral("registerClusterRelay")), 1);
        const Member a = member(1), b = member(2);
        apply(f, networkJson(1, {a, b}, {{a.nodeId, b.nodeId}}, f.clock.nowMs()));
        auto peerA = connectMember(f, a);
        auto peerB = connectMember(f, b);
        QVERIFY(peerA && peerA->isHandshakeDone() && peerB && peerB->isHandshakeDone());
        peerA->sendPacket(packet(a, b));
        QTRY_COMPARE(peerB->receivedPackets().size(), 1);
        const QByteArray statusJson = QJsonDocument(f.relay->statusSnapshot().toJson()).toJson(QJsonDocument::Compact);
        const QString logText = m_log.lines().join(QLatin1Char('\n'));
        for (const QByteArray &secret : {a.privateKey, b.privateKey}) {
            QVERIFY(!statusJson.contains(secret.toBase64()));
            QVERIFY(!statusJson.contains(secret.toHex()));
            QVERIFY(!logText.contains(QString::fromLatin1(secret.toBase64())));
        }
        const auto vpn = f.relay->statusSnapshot().vpn;
        QCOMPARE(QByteArray::fromBase64(vpn.publicKey.toLatin1()), advertisedHubKey(f));
        QVERIFY(!statusJson.contains("PRIVATE KEY"));
        QVERIFY(!logText.contains(QStringLiteral("PRIVATE KEY")));
    }
};

COREFLOW_EPOLL_TEST_MAIN(TestVpnHub)
#include "tst_vpnhub.moc"
