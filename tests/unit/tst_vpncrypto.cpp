// The managed VPN hub's cryptography (docs/contract.md §11.4..§11.6): Noise IK replayed byte for byte
// against the published cacophony vectors, the handshake's named failures, the datagram format, the
// replay window and the key age rules on the injected clock. Rule ids: VH-03 (public keys only in
// what the hub holds of a member), VH-18 (a fresh hub key per bind).
#include "service/vpn/noiseikinitiator.h"
#include "service/vpn/noiseikresponder.h"
#include "service/vpn/noisekeypair.h"
#include "service/vpn/vpndatagramopener.h"
#include "service/vpn/vpndatagramsealer.h"
#include "service/vpn/vpnhandshaketimestamps.h"
#include "service/vpn/vpnrekeyclock.h"
#include "service/vpn/vpnreplaywindow.h"
#include "service/vpn/vpnwireconstants.h"
#include "shared/secret.h"
#include "shared/util/manualclock.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QtEndian>

using namespace coreflow;
using namespace coreflow::vpn;

namespace {

QByteArray hex(const QJsonObject &o, const char *key) { return QByteArray::fromHex(o.value(QLatin1String(key)).toString().toLatin1()); }

NoiseKeyPair pairOf(const QByteArray &privateKey) { return NoiseKeyPair::fromPrivateKey(Secret(privateKey)); }

NoiseIkResponder::MembershipCheck onlyMember(const QByteArray &publicKey, QString nodeId = QStringLiteral("node-a"),
                                             int *calls = nullptr)
{
    return [publicKey, nodeId, calls](const QByteArray &candidate) -> std::optional<VpnMemberRef> {
        if (calls)
            ++*calls;
        if (candidate != publicKey)
            return std::nullopt;
        return VpnMemberRef{nodeId, 0x64600002};
    };
}

struct Session {
    NoiseKeyPair hub = NoiseKeyPair::generate();
    NoiseKeyPair member = NoiseKeyPair::generate();
    VpnTransportKeys memberKeys;
    VpnTransportKeys hubKeys;
};

Session handshake()
{
    Session s;
    NoiseIkInitiator initiator(NoiseKeyPair::fromPrivateKey(s.member.privateKey), s.hub.publicKey, kVpnNoisePrologue);
    NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(s.hub.privateKey), kVpnNoisePrologue);
    auto m1 = initiator.writeMessage1();
    auto response = responder.respond(m1.value(), onlyMember(s.member.publicKey));
    auto done = initiator.readMessage2(response.value().message2);
    s.memberKeys = std::move(done.value().keys);
    s.hubKeys = std::move(response.value().keys);
    return s;
}

} // namespace

class TestVpnCrypto : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(Secret::initialiseSodium()); }

    // §11.4: the published cacophony vector of Noise_IK_25519_ChaChaPoly_BLAKE2s, both roles, byte
    // for byte; its four transport messages through the datagram sealer/opener (§11.5: a datagram is
    // the counter followed by exactly Noise's transport ciphertext for that nonce).
    void cacophonyVectorsReplayByteForByte()
    {
        QFile file(QStringLiteral(COREFLOW_VPN_VECTORS));
        QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(file.fileName()));
        const QJsonArray vectors = QJsonDocument::fromJson(file.readAll()).object().value(QLatin1String("vectors")).toArray();
        QVERIFY(!vectors.isEmpty());
        for (const QJsonValue &value : vectors) {
            const QJsonObject v = value.toObject();
            QCOMPARE(v.value(QLatin1String("protocol_name")).toString(), QString::fromLatin1(kNoiseProtocolName.toByteArray()));
            const NoiseKeyPair initiatorStatic = pairOf(hex(v, "init_static"));
            const NoiseKeyPair responderStatic = pairOf(hex(v, "resp_static"));
            QCOMPARE(responderStatic.publicKey, hex(v, "init_remote_static"));
            const QByteArray initEphemeral = hex(v, "init_ephemeral");
            const QByteArray respEphemeral = hex(v, "resp_ephemeral");
            const QJsonArray messages = v.value(QLatin1String("messages")).toArray();
            QCOMPARE(messages.size(), 6);
            auto payload = [&](int i) { return hex(messages.at(i).toObject(), "payload"); };
            auto ciphertext = [&](int i) { return hex(messages.at(i).toObject(), "ciphertext"); };

            NoiseIkInitiator initiator(NoiseKeyPair::fromPrivateKey(initiatorStatic.privateKey), responderStatic.publicKey,
                                       hex(v, "init_prologue"), [&] { return pairOf(initEphemeral); });
            NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(responderStatic.privateKey), hex(v, "resp_prologue"),
                                       [&] { return pairOf(respEphemeral); });
            auto m1 = initiator.writeMessage1(payload(0));
            QVERIFY(m1.ok());
            QCOMPARE(m1.value().toHex(), ciphertext(0).toHex());
            auto response = responder.respond(ciphertext(0), onlyMember(initiatorStatic.publicKey), payload(1));
            QVERIFY(response.ok());
            QCOMPARE(response.value().initiatorPayload, payload(0));
            QCOMPARE(response.value().initiatorStaticKey, initiatorStatic.publicKey);
            QCOMPARE(response.value().message2.toHex(), ciphertext(1).toHex());
            auto done = initiator.readMessage2(ciphertext(1));
            QVERIFY(done.ok());
            QCOMPARE(done.value().responderPayload, payload(1));
            QCOMPARE(done.value().keys.handshakeHash.toHex(), hex(v, "handshake_hash").toHex());
            QCOMPARE(response.value().keys.handshakeHash.toHex(), hex(v, "handshake_hash").toHex());

            ManualClock clock;
            VpnDatagramSealer initiatorSealer(done.value().keys.sendKey, clock);
            VpnDatagramOpener initiatorOpener(done.value().keys.receiveKey, clock);
            VpnDatagramSealer responderSealer(response.value().keys.sendKey, clock);
            VpnDatagramOpener responderOpener(response.value().keys.receiveKey, clock);
            for (int i = 2; i < 6; ++i) {
                const bool fromInitiator = (i % 2) == 0;
                VpnDatagramSealer &sealer = fromInitiator ? initiatorSealer : responderSealer;
                VpnDatagramOpener &opener = fromInitiator ? responderOpener : initiatorOpener;
                const quint64 counter = quint64((i - 2) / 2);
                QByteArray datagram;
                QCOMPARE(sealer.seal(payload(i), datagram), VpnDatagramSealer::Outcome::Sealed);
                QCOMPARE(qFromBigEndian<quint64>(datagram.constData()), counter);
                QCOMPARE(datagram.sliced(8).toHex(), ciphertext(i).toHex());
                QByteArray opened;
                QCOMPARE(opener.open(datagram, opened), VpnDatagramOpener::Outcome::Opened);
                QCOMPARE(opened, payload(i));
            }
        }
    }

    // A broken primitive must turn the vector red: one flipped bit of the prologue changes every byte.
    void vectorsFailOnAnotherPrologue()
    {
        QFile file(QStringLiteral(COREFLOW_VPN_VECTORS));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QJsonObject v = QJsonDocument::fromJson(file.readAll()).object().value(QLatin1String("vectors")).toArray().first().toObject();
        const NoiseKeyPair responderStatic = pairOf(hex(v, "resp_static"));
        QByteArray prologue = hex(v, "init_prologue");
        prologue[0] = char(prologue[0] ^ 1);
        NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(responderStatic.privateKey), prologue);
        const QByteArray m1 = hex(v.value(QLatin1String("messages")).toArray().first().toObject(), "ciphertext");
        auto response = responder.respond(m1, [](const QByteArray &) { return std::optional<VpnMemberRef>(VpnMemberRef{}); });
        QVERIFY(!response.ok());
        QCOMPARE(response.failure(), NoiseHandshakeFailure::DecryptFailed);
    }

    // §11.4: a member is checked only after message 1 authenticated completely; an unknown key is
    // member-unknown and produces no message 2.
    void unknownMemberIsRefusedAfterAuthentication()
    {
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        const NoiseKeyPair member = NoiseKeyPair::generate();
        const NoiseKeyPair stranger = NoiseKeyPair::generate();
        NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(hub.privateKey), kVpnNoisePrologue);
        int calls = 0;
        NoiseIkInitiator initiator(NoiseKeyPair::fromPrivateKey(stranger.privateKey), hub.publicKey, kVpnNoisePrologue);
        auto response = responder.respond(initiator.writeMessage1().value(), onlyMember(member.publicKey, QStringLiteral("node-a"), &calls));
        QVERIFY(!response.ok());
        QCOMPARE(response.failure(), NoiseHandshakeFailure::MemberUnknown);
        QCOMPARE(noiseHandshakeFailureName(response.failure()), QStringLiteral("member-unknown"));
        QCOMPARE(calls, 1);

        // The same message with its last byte (the payload tag) altered: decrypt-failed, and the
        // membership check is never asked.
        NoiseIkInitiator honest(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        QByteArray m1 = honest.writeMessage1().value();
        m1[m1.size() - 1] = char(m1[m1.size() - 1] ^ 0x80);
        calls = 0;
        auto altered = responder.respond(m1, onlyMember(member.publicKey, QStringLiteral("node-a"), &calls));
        QCOMPARE(altered.failure(), NoiseHandshakeFailure::DecryptFailed);
        QCOMPARE(calls, 0);
    }

    void memberFoundCarriesItsReference()
    {
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        const NoiseKeyPair member = NoiseKeyPair::generate();
        NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(hub.privateKey), kVpnNoisePrologue);
        QCOMPARE(responder.publicKey(), hub.publicKey);
        NoiseIkInitiator initiator(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        auto response = responder.respond(initiator.writeMessage1().value(), onlyMember(member.publicKey, QStringLiteral("node-b")));
        QVERIFY(response.ok());
        QCOMPARE(response.value().member.nodeId, QStringLiteral("node-b"));
        // VH-03: what the hub learns of a member is its public key.
        QCOMPARE(response.value().initiatorStaticKey, member.publicKey);
        // 32 (e) + 16 (empty payload's tag): message 2 of the VPN protocol.
        QCOMPARE(response.value().message2.size(), 48);
        auto done = initiator.readMessage2(response.value().message2);
        QVERIFY(done.ok());
        QVERIFY(done.value().keys.sendKey.equals(response.value().keys.receiveKey));
        QVERIFY(done.value().keys.receiveKey.equals(response.value().keys.sendKey));
        QVERIFY(!done.value().keys.sendKey.equals(done.value().keys.receiveKey));
        QCOMPARE(done.value().keys.handshakeHash, response.value().keys.handshakeHash);
    }

    // §11.4: a handshake against the wrong hub key, or a message 2 altered, fails by name.
    void wrongHubKeyAndAlteredMessage2Fail()
    {
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        const NoiseKeyPair other = NoiseKeyPair::generate();
        const NoiseKeyPair member = NoiseKeyPair::generate();
        NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(hub.privateKey), kVpnNoisePrologue);
        NoiseIkInitiator wrongHub(NoiseKeyPair::fromPrivateKey(member.privateKey), other.publicKey, kVpnNoisePrologue);
        QCOMPARE(responder.respond(wrongHub.writeMessage1().value(), onlyMember(member.publicKey)).failure(),
                 NoiseHandshakeFailure::DecryptFailed);

        NoiseIkInitiator initiator(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        auto response = responder.respond(initiator.writeMessage1().value(), onlyMember(member.publicKey));
        QByteArray m2 = response.value().message2;
        m2[40] = char(m2[40] ^ 1);
        auto done = initiator.readMessage2(m2);
        QCOMPARE(done.failure(), NoiseHandshakeFailure::DecryptFailed);
        // One handshake per object: a second message 2 is out of turn.
        QCOMPARE(initiator.readMessage2(response.value().message2).failure(), NoiseHandshakeFailure::WrongState);
        QCOMPARE(initiator.writeMessage1().failure(), NoiseHandshakeFailure::WrongState);
    }

    // §11.4: a small-order ephemeral key (all-zero DH result) fails the handshake as dh-zero; short
    // messages are message-malformed.
    void allZeroDhAndShortMessagesFail()
    {
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(hub.privateKey), kVpnNoisePrologue);
        const auto anyone = [](const QByteArray &) { return std::optional<VpnMemberRef>(VpnMemberRef{}); };
        QByteArray zeroPoint(96, '\0');
        QCOMPARE(responder.respond(zeroPoint, anyone).failure(), NoiseHandshakeFailure::DhZero);
        QByteArray orderOne(96, '\0');
        orderOne[0] = 1;
        QCOMPARE(responder.respond(orderOne, anyone).failure(), NoiseHandshakeFailure::DhZero);
        QCOMPARE(responder.respond(QByteArray(95, 'x'), anyone).failure(), NoiseHandshakeFailure::MessageMalformed);
        QCOMPARE(responder.respond({}, anyone).failure(), NoiseHandshakeFailure::MessageMalformed);

        const NoiseKeyPair member = NoiseKeyPair::generate();
        NoiseIkInitiator initiator(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        QVERIFY(initiator.writeMessage1().ok());
        QByteArray smallOrderReply(48, '\0');
        QCOMPARE(initiator.readMessage2(smallOrderReply).failure(), NoiseHandshakeFailure::DhZero);

        NoiseIkInitiator toZeroHub(NoiseKeyPair::fromPrivateKey(member.privateKey), QByteArray(32, '\0'), kVpnNoisePrologue);
        QCOMPARE(toZeroHub.writeMessage1().failure(), NoiseHandshakeFailure::DhZero);
        NoiseIkInitiator shortReply(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        QVERIFY(shortReply.writeMessage1().ok());
        QCOMPARE(shortReply.readMessage2(QByteArray(47, 'x')).failure(), NoiseHandshakeFailure::MessageMalformed);
    }

    // VH-18: every bind generates a fresh static key; ephemerals differ per handshake.
    void freshKeysDiffer()
    {
        const NoiseKeyPair a = NoiseKeyPair::generate();
        const NoiseKeyPair b = NoiseKeyPair::generate();
        QVERIFY(a.isValid());
        QVERIFY(a.publicKey != b.publicKey);
        QVERIFY(!a.privateKey.equals(b.privateKey));
        QVERIFY(a.privateKey.isGuarded());
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        const NoiseKeyPair member = NoiseKeyPair::generate();
        NoiseIkInitiator first(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        NoiseIkInitiator second(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        QVERIFY(first.writeMessage1().value().first(32) != second.writeMessage1().value().first(32));
    }

    // §11.5: counters start at 0, increase by one and are never reused; the datagram is 24 bytes
    // longer than the packet.
    void sealerCountsUpAndNeverReuses()
    {
        Session s = handshake();
        ManualClock clock;
        VpnDatagramSealer sealer(s.memberKeys.sendKey, clock);
        const QByteArray packet(1400, 'p');
        QSet<QByteArray> seen;
        for (quint64 i = 0; i < 100; ++i) {
            QByteArray datagram;
            QCOMPARE(sealer.seal(packet, datagram), VpnDatagramSealer::Outcome::Sealed);
            QCOMPARE(datagram.size(), packet.size() + kVpnDatagramOverheadBytes);
            QCOMPARE(qFromBigEndian<quint64>(datagram.constData()), i);
            QVERIFY(!seen.contains(datagram.sliced(8)));
            seen.insert(datagram.sliced(8));
        }
        QCOMPARE(sealer.nextCounter(), quint64(100));
    }

    // §11.5: a replayed datagram is dropped; reordered datagrams within the window open once each.
    void replayedAndReorderedDatagrams()
    {
        Session s = handshake();
        ManualClock clock;
        VpnDatagramSealer sealer(s.memberKeys.sendKey, clock);
        VpnDatagramOpener opener(s.hubKeys.receiveKey, clock);
        QList<QByteArray> datagrams;
        for (int i = 0; i < 64; ++i) {
            QByteArray d;
            sealer.seal(QByteArray(20, char(i)), d);
            datagrams.append(d);
        }
        QByteArray packet;
        for (int i = 63; i >= 0; --i) {
            QCOMPARE(opener.open(datagrams.at(i), packet), VpnDatagramOpener::Outcome::Opened);
            QCOMPARE(packet, QByteArray(20, char(i)));
        }
        for (int i = 0; i < 64; ++i) {
            QCOMPARE(opener.open(datagrams.at(i), packet), VpnDatagramOpener::Outcome::Replayed);
            QVERIFY(packet.isEmpty());
        }
        QCOMPARE(VpnDatagramOpener::outcomeName(VpnDatagramOpener::Outcome::Replayed), QStringLiteral("replayed"));
    }

    // §11.5: the window holds at least 2048 counters behind the greatest; older is too-old.
    void windowEdgeAndTooOld()
    {
        Session s = handshake();
        ManualClock clock;
        VpnDatagramSealer sealer(s.memberKeys.sendKey, clock);
        VpnDatagramOpener opener(s.hubKeys.receiveKey, clock);
        QList<QByteArray> datagrams;
        for (int i = 0; i <= 5000; ++i) {
            QByteArray d;
            sealer.seal(QByteArrayView("x"), d);
            datagrams.append(d);
        }
        QByteArray packet;
        QCOMPARE(opener.open(datagrams.at(5000), packet), VpnDatagramOpener::Outcome::Opened);
        QCOMPARE(opener.open(datagrams.at(5000 - 2048), packet), VpnDatagramOpener::Outcome::TooOld);
        QCOMPARE(opener.open(datagrams.at(0), packet), VpnDatagramOpener::Outcome::TooOld);
        QCOMPARE(opener.open(datagrams.at(5000 - 2047), packet), VpnDatagramOpener::Outcome::Opened);
        // Every counter of the window is still remembered after later ones slid it.
        for (int i = 5000 - 2046; i < 5000; ++i)
            QCOMPARE(opener.open(datagrams.at(i), packet), VpnDatagramOpener::Outcome::Opened);
        for (int i = 5000 - 2047; i <= 5000; ++i)
            QCOMPARE(opener.open(datagrams.at(i), packet), VpnDatagramOpener::Outcome::Replayed);
    }

    // §11.5: the window is checked before and updated only after authentication: a forged datagram
    // with a far counter moves nothing, and a datagram under another key is authentication-failed.
    void forgedDatagramsMoveNothing()
    {
        Session s = handshake();
        Session other = handshake();
        ManualClock clock;
        VpnDatagramSealer sealer(s.memberKeys.sendKey, clock);
        VpnDatagramSealer wrongKey(other.memberKeys.sendKey, clock);
        VpnDatagramOpener opener(s.hubKeys.receiveKey, clock);
        QByteArray good0, good1, packet;
        sealer.seal(QByteArrayView("zero"), good0);
        sealer.seal(QByteArrayView("one"), good1);

        QByteArray foreign;
        wrongKey.seal(QByteArrayView("zero"), foreign);   // counter 0 under the wrong key
        QCOMPARE(opener.open(foreign, packet), VpnDatagramOpener::Outcome::AuthenticationFailed);
        QVERIFY(!opener.window().hasAccepted());

        QByteArray farCounter = good1;
        qToBigEndian<quint64>(1'000'000, farCounter.data());   // the counter is authenticated as the nonce
        QCOMPARE(opener.open(farCounter, packet), VpnDatagramOpener::Outcome::AuthenticationFailed);
        QVERIFY(!opener.window().hasAccepted());

        QByteArray flipped = good0;
        flipped[10] = char(flipped[10] ^ 1);
        QCOMPARE(opener.open(flipped, packet), VpnDatagramOpener::Outcome::AuthenticationFailed);

        QCOMPARE(opener.open(good0, packet), VpnDatagramOpener::Outcome::Opened);
        QCOMPARE(packet, QByteArray("zero"));
        QCOMPARE(opener.open(good1, packet), VpnDatagramOpener::Outcome::Opened);
        QCOMPARE(opener.window().greatest(), quint64(1));

        QCOMPARE(opener.open(QByteArray(23, 'x'), packet), VpnDatagramOpener::Outcome::DatagramTooShort);
        QByteArray exhausted = good0;
        qToBigEndian<quint64>(kVpnRejectAfterMessages, exhausted.data());
        QCOMPARE(opener.open(exhausted, packet), VpnDatagramOpener::Outcome::CounterExhausted);
    }

    // §11.6: the member rekeys at 120000 ms or 2^60 messages; keys 180000 ms old seal and open nothing.
    void rekeyTimersOnTheInjectedClock()
    {
        Session s = handshake();
        ManualClock clock;
        VpnDatagramSealer sealer(s.memberKeys.sendKey, clock);
        VpnDatagramOpener opener(s.hubKeys.receiveKey, clock);
        QByteArray early;
        QCOMPARE(sealer.seal(QByteArrayView("early"), early), VpnDatagramSealer::Outcome::Sealed);
        QVERIFY(!sealer.rekeyDue());
        clock.advance(kVpnRekeyAfterMs - 1);
        QVERIFY(!sealer.rekeyDue());
        clock.advance(1);
        QVERIFY(sealer.rekeyDue());
        QCOMPARE(sealer.keyAge().rekeyAtMs(), sealer.keyAge().establishedAtMs() + 120'000);

        VpnRekeyClock fresh(clock);
        QVERIFY(!fresh.rekeyDue(kVpnRekeyAfterMessages - 1));
        QVERIFY(fresh.rekeyDue(kVpnRekeyAfterMessages));
        QCOMPARE(kVpnRekeyAfterMessages, quint64(1) << 60);

        QByteArray late, packet;
        clock.advance(kVpnRejectAfterMs - kVpnRekeyAfterMs - 1);   // 179999 ms
        QCOMPARE(sealer.seal(QByteArrayView("late"), late), VpnDatagramSealer::Outcome::Sealed);
        clock.advance(1);                                          // 180000 ms
        QVERIFY(opener.keyAge().expired());
        QCOMPARE(opener.open(early, packet), VpnDatagramOpener::Outcome::KeysExpired);
        QCOMPARE(opener.open(late, packet), VpnDatagramOpener::Outcome::KeysExpired);
        QByteArray refused;
        QCOMPARE(sealer.seal(QByteArrayView("after"), refused), VpnDatagramSealer::Outcome::KeysExpired);
        QVERIFY(refused.isEmpty());
        QCOMPARE(sealer.nextCounter(), quint64(2));
        QCOMPARE(VpnDatagramSealer::outcomeName(VpnDatagramSealer::Outcome::KeysExpired), QStringLiteral("keys-expired"));
    }

    void replayWindowAlone()
    {
        VpnReplayWindow window;
        QCOMPARE(window.check(0), VpnReplayWindow::Verdict::Fresh);
        window.accept(0);
        QCOMPARE(window.check(0), VpnReplayWindow::Verdict::Replayed);
        // A jump far beyond the ring clears every remembered bit but keeps the new one.
        window.accept(10'000'000);
        QCOMPARE(window.check(10'000'000), VpnReplayWindow::Verdict::Replayed);
        QCOMPARE(window.check(10'000'000 - 64), VpnReplayWindow::Verdict::Fresh);
        QCOMPARE(window.check(10'000'000 - 2048), VpnReplayWindow::Verdict::TooOld);
        // A jump of exactly one ring word keeps the bits of the window.
        window.accept(10'000'000 - 100);
        window.accept(10'000'000 + 64);
        QCOMPARE(window.check(10'000'000 - 100), VpnReplayWindow::Verdict::Replayed);
        QCOMPARE(window.check(10'000'000), VpnReplayWindow::Verdict::Replayed);
        QCOMPARE(window.check(10'000'000 + 1), VpnReplayWindow::Verdict::Fresh);
    }

    // §11.4 (D-98): per key, a message 1 timestamp must be strictly greater than the greatest accepted,
    // compared as a 96-bit big-endian number (the seconds field outranks the nanoseconds field); a
    // refusal changes nothing; keys are independent; a payload of another size is malformed.
    void handshakeTimestampsOnlyMoveForward()
    {
        using Verdict = VpnHandshakeTimestamps::Verdict;
        auto stamp = [](quint64 seconds, quint32 nanoseconds) {
            QByteArray s(12, '\0');
            qToBigEndian<quint64>(seconds, s.data());
            qToBigEndian<quint32>(nanoseconds, s.data() + 8);
            return s;
        };
        const QByteArray keyA(32, 'a'), keyB(32, 'b');
        VpnHandshakeTimestamps table;
        QCOMPARE(table.admit(keyA, stamp(100, 5)), Verdict::Accepted);
        QCOMPARE(table.admit(keyA, stamp(100, 5)), Verdict::NotNewer);
        QCOMPARE(table.admit(keyA, stamp(100, 4)), Verdict::NotNewer);
        QCOMPARE(table.admit(keyA, stamp(99, 999999999)), Verdict::NotNewer);
        QCOMPARE(table.admit(keyB, stamp(1, 0)), Verdict::Accepted);   // another key: its own greatest
        QCOMPARE(table.admit(keyA, stamp(100, 6)), Verdict::Accepted);
        QCOMPARE(table.admit(keyA, stamp(100, 6)), Verdict::NotNewer);
        QCOMPARE(table.admit(keyA, stamp(101, 0)), Verdict::Accepted);  // seconds outrank nanoseconds
        QCOMPARE(table.admit(keyA, stamp(100, 999999999)), Verdict::NotNewer);
        QCOMPARE(table.admit(keyA, QByteArray()), Verdict::Malformed);
        QCOMPARE(table.admit(keyA, stamp(200, 0).left(11)), Verdict::Malformed);
        QCOMPARE(table.admit(keyA, stamp(200, 0) + 'x'), Verdict::Malformed);
        QCOMPARE(table.admit(keyA, stamp(101, 1)), Verdict::Accepted);  // the malformed ones moved nothing
        QCOMPARE(table.size(), 2);
    }
};

QTEST_GUILESS_MAIN(TestVpnCrypto)
#include "tst_vpncrypto.moc"
