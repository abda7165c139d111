// Cross-test of the relay's Noise IK (docs/contract.md §11.4, §11.5) against an independent peer:
// tests/peers/noise_ik_peer.py on Debian's python3-dissononce, over stdin/stdout. Both directions
// (dissononce as initiator against NoiseIkResponder, NoiseIkInitiator against dissononce as
// responder), the handshake hash compared, then transport messages each way through
// VpnDatagramSealer / VpnDatagramOpener (a datagram is the counter, then Noise's transport message
// for that nonce). A prologue that is not §11.4's fails the handshake.
#include "service/vpn/noiseikinitiator.h"
#include "service/vpn/noiseikresponder.h"
#include "service/vpn/noisekeypair.h"
#include "service/vpn/vpndatagramopener.h"
#include "service/vpn/vpndatagramsealer.h"
#include "service/vpn/vpnwireconstants.h"
#include "shared/secret.h"
#include "shared/util/manualclock.h"
#include "tests/support/skiporfail.h"

#include <QProcess>
#include <QTest>
#include <QtEndian>

using namespace coreflow;
using namespace coreflow::vpn;

namespace {

constexpr int kTransportMessages = 5;
constexpr int kLineWaitMs = 20000;

QString dissononceMissing()
{
    QProcess probe;
    probe.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral("import dissononce")});
    if (!probe.waitForFinished(kLineWaitMs) || probe.exitStatus() != QProcess::NormalExit || probe.exitCode() != 0)
        return QStringLiteral("Debian's python3-dissononce is not installed (/usr/bin/python3 cannot import dissononce)");
    return {};
}

// One peer process; lines "<tag> <hex>".
class NoisePeer {
public:
    explicit NoisePeer(const QStringList &arguments)
    {
        m_process.setProcessChannelMode(QProcess::SeparateChannels);
        m_process.start(QStringLiteral("/usr/bin/python3"), QStringList{QStringLiteral(COREFLOW_NOISE_PEER)} + arguments);
    }
    ~NoisePeer()
    {
        m_process.closeWriteChannel();
        if (!m_process.waitForFinished(kLineWaitMs))
            m_process.kill();
        m_process.waitForFinished(kLineWaitMs);
    }
    // The value of the next line, which must carry tag; a null array otherwise.
    QByteArray expect(const QByteArray &tag)
    {
        while (!m_process.canReadLine()) {
            if (!m_process.waitForReadyRead(kLineWaitMs)) {
                m_lastLine = "(no line; stderr: " + m_process.readAllStandardError() + ")";
                return {};
            }
        }
        m_lastLine = m_process.readLine().trimmed();
        const qsizetype space = m_lastLine.indexOf(' ');
        if (m_lastLine.left(space) != tag)
            return {};
        return QByteArray::fromHex(m_lastLine.mid(space + 1));
    }
    void send(const QByteArray &tag, const QByteArray &bytes) { m_process.write(tag + ' ' + bytes.toHex() + '\n'); }
    const QByteArray &lastLine() const { return m_lastLine; }
    int finish()
    {
        m_process.closeWriteChannel();
        m_process.waitForFinished(kLineWaitMs);
        return m_process.exitCode();
    }

private:
    QProcess m_process;
    QByteArray m_lastLine;
};

QString hexOf(const Secret &key) { return QString::fromLatin1(key.reveal().toByteArray().toHex()); }
QString hexOf(const QByteArray &bytes) { return QString::fromLatin1(bytes.toHex()); }

QByteArray withCounter(quint64 counter, const QByteArray &noiseTransportMessage)
{
    QByteArray datagram(8, '\0');
    qToBigEndian<quint64>(counter, datagram.data());
    return datagram + noiseTransportMessage;
}

template <typename T>
QString failureText(const NoiseOutcome<T> &outcome)
{
    return outcome.ok() ? QString() : noiseHandshakeFailureName(outcome.failure());
}

} // namespace

class TestVpnNoiseInterop : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QVERIFY(Secret::initialiseSodium()); }

    void dissononceInitiatorAgainstOurResponder()
    {
        COREFLOW_SKIP_OR_FAIL(dissononceMissing());
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        const NoiseKeyPair member = NoiseKeyPair::generate();
        NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(hub.privateKey), kVpnNoisePrologue);
        NoisePeer peer({QStringLiteral("initiator"), QStringLiteral("--static"), hexOf(member.privateKey),
                        QStringLiteral("--remote"), hexOf(hub.publicKey),
                        QStringLiteral("--transport"), QString::number(kTransportMessages)});
        const QByteArray message1 = peer.expect("message1");
        QVERIFY2(!message1.isNull(), peer.lastLine().constData());
        QCOMPARE(message1.size(), 96);
        auto response = responder.respond(message1, [&](const QByteArray &key) -> std::optional<VpnMemberRef> {
            if (key != member.publicKey)
                return std::nullopt;
            return VpnMemberRef{QStringLiteral("node-python"), 0x64600003};
        });
        QVERIFY2(response.ok(), qPrintable(failureText(response)));
        QCOMPARE(response.value().member.nodeId, QStringLiteral("node-python"));
        peer.send("message2", response.value().message2);
        QCOMPARE(peer.expect("hash").toHex(), response.value().keys.handshakeHash.toHex());
        exchangeTransport(peer, response.value().keys);
        if (QTest::currentTestFailed())
            return;
    }

    void ourInitiatorAgainstDissononceResponder()
    {
        COREFLOW_SKIP_OR_FAIL(dissononceMissing());
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        const NoiseKeyPair member = NoiseKeyPair::generate();
        NoisePeer peer({QStringLiteral("responder"), QStringLiteral("--static"), hexOf(hub.privateKey),
                        QStringLiteral("--member"), hexOf(member.publicKey),
                        QStringLiteral("--transport"), QString::number(kTransportMessages)});
        NoiseIkInitiator initiator(NoiseKeyPair::fromPrivateKey(member.privateKey), hub.publicKey, kVpnNoisePrologue);
        auto message1 = initiator.writeMessage1();
        QVERIFY(message1.ok());
        peer.send("message1", message1.value());
        const QByteArray message2 = peer.expect("message2");
        QVERIFY2(!message2.isNull(), peer.lastLine().constData());
        auto done = initiator.readMessage2(message2);
        QVERIFY2(done.ok(), qPrintable(failureText(done)));
        QCOMPARE(peer.expect("hash").toHex(), done.value().keys.handshakeHash.toHex());
        exchangeTransport(peer, done.value().keys);
        if (QTest::currentTestFailed())
            return;
    }

    // The prologue binds the protocol: a peer on another prologue does not get through.
    void anotherPrologueFails()
    {
        COREFLOW_SKIP_OR_FAIL(dissononceMissing());
        const NoiseKeyPair hub = NoiseKeyPair::generate();
        const NoiseKeyPair member = NoiseKeyPair::generate();
        NoiseIkResponder responder(NoiseKeyPair::fromPrivateKey(hub.privateKey), kVpnNoisePrologue);
        NoisePeer peer({QStringLiteral("initiator"), QStringLiteral("--static"), hexOf(member.privateKey),
                        QStringLiteral("--remote"), hexOf(hub.publicKey), QStringLiteral("--prologue"),
                        QStringLiteral("coreflow-vpn/2")});
        const QByteArray message1 = peer.expect("message1");
        QVERIFY(!message1.isNull());
        auto response = responder.respond(message1, [&](const QByteArray &) { return std::optional<VpnMemberRef>(VpnMemberRef{}); });
        QVERIFY(!response.ok());
        QCOMPARE(response.failure(), NoiseHandshakeFailure::DecryptFailed);
    }

private:
    // Transport both ways: the peer's messages open in our opener with their nonce as counter; ours,
    // stripped of the counter, open in the peer.
    void exchangeTransport(NoisePeer &peer, const VpnTransportKeys &keys)
    {
        ManualClock clock;
        VpnDatagramOpener opener(keys.receiveKey, clock);
        VpnDatagramSealer sealer(keys.sendKey, clock);
        QByteArray packet;
        for (int i = 0; i < kTransportMessages; ++i) {
            const QByteArray message = peer.expect("transport");
            QVERIFY2(!message.isNull(), peer.lastLine().constData());
            QCOMPARE(opener.open(withCounter(quint64(i), message), packet), VpnDatagramOpener::Outcome::Opened);
            QCOMPARE(packet, QByteArray("python-") + QByteArray::number(i));
            // The peer's message again: a replay, dropped.
            QCOMPARE(opener.open(withCounter(quint64(i), message), packet), VpnDatagramOpener::Outcome::Replayed);
        }
        for (int i = 0; i < kTransportMessages; ++i) {
            QByteArray datagram;
            QCOMPARE(sealer.seal(QByteArray("relay-") + QByteArray::number(i), datagram), VpnDatagramSealer::Outcome::Sealed);
            peer.send("transport", datagram.sliced(kVpnDatagramCounterBytes));
        }
        for (int i = 0; i < kTransportMessages; ++i) {
            const QByteArray opened = peer.expect("opened");
            QVERIFY2(!opened.isNull(), peer.lastLine().constData());
            QCOMPARE(opened, QByteArray("relay-") + QByteArray::number(i));
        }
        QCOMPARE(peer.finish(), 0);
    }
};

QTEST_GUILESS_MAIN(TestVpnNoiseInterop)
#include "tst_vpnnoiseinterop.moc"
