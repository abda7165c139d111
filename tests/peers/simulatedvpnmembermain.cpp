// coreflow-simulated-vpn-member: one SimulatedVpnMember (docs/contract.md §11.3..§11.7) as a process, for
// the demo (resources/demo.sh).
//
//   coreflow-simulated-vpn-member --key-file PATH --print-public-key
//       makes a fresh 32-byte X25519 private key in PATH (0600) unless PATH exists, prints the base64
//       public key on stdout and exits 0: what a node hands Cloudly for its network membership (§11.1).
//   coreflow-simulated-vpn-member --key-file PATH --node-id ID --hub ADDRESS:PORT --hub-public-key BASE64
//                                 --address A.B.C.D [--send-to A.B.C.D] [--verbose]
//       dials the hub (QUIC, ALPN coreflow-vpn/1), runs the Noise IK handshake and, with --send-to, sends
//       one IPv4 packet from --address to that member address every second until the hub relays one
//       from it, which is answered with one more packet; then it stays connected until stopped.
//
// Prints one line per event on stdout: "vpn member <id> connected to <hub>", "vpn member <id> handshake
// done", "vpn member <id> sent a <n>-byte packet to <address>", "vpn member <id> received a <n>-byte
// packet from <address>", "vpn member <id> closed by the hub (code 0x<hex>)". Exits 0 on SIGTERM/SIGINT,
// 2 on bad arguments, 1 when the key file cannot be read or written or the dial fails.
#include "tests/peers/peernoiseinitiator.h"
#include "tests/peers/quitonsignal.h"
#include "tests/peers/simulatedvpnmember.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QHostAddress>
#include <QLoggingCategory>
#include <QTimer>

#include <cstdio>

using namespace coreflow::peers;

namespace {

void say(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

int fail(const QString &message, int code)
{
    std::fputs(("coreflow-simulated-vpn-member: " + message + '\n').toUtf8().constData(), stderr);
    return code;
}

// The private key of PATH, made there first when PATH does not exist; empty when it cannot be.
QByteArray privateKeyOf(const QString &path)
{
    QFile file(path);
    if (!file.exists()) {
        if (!file.open(QIODevice::WriteOnly | QIODevice::NewOnly))
            return {};
        file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        const QByteArray key = PeerNoiseInitiator::newPrivateKey();
        if (file.write(key) != key.size())
            return {};
        return key;
    }
    if (!file.open(QIODevice::ReadOnly))
        return {};
    const QByteArray key = file.readAll();
    return key.size() == 32 ? key : QByteArray();
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("coreflow-simulated-vpn-member"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Simulated VPN member for the Coreflow relay demo"));
    parser.addHelpOption();
    const QCommandLineOption keyFileOpt(QStringLiteral("key-file"), QStringLiteral("The member's private key (made when absent)."),
                                        QStringLiteral("path"));
    const QCommandLineOption printOpt(QStringLiteral("print-public-key"), QStringLiteral("Print the base64 public key and exit."));
    const QCommandLineOption nodeOpt(QStringLiteral("node-id"), QStringLiteral("The member's node id (for its lines)."), QStringLiteral("id"));
    const QCommandLineOption hubOpt(QStringLiteral("hub"), QStringLiteral("The hub's IPv4 address and UDP port."), QStringLiteral("address:port"));
    const QCommandLineOption hubKeyOpt(QStringLiteral("hub-public-key"), QStringLiteral("The hub's Noise static public key, base64."),
                                       QStringLiteral("base64"));
    const QCommandLineOption addressOpt(QStringLiteral("address"), QStringLiteral("This member's address in the network."),
                                        QStringLiteral("ipv4"));
    const QCommandLineOption sendToOpt(QStringLiteral("send-to"), QStringLiteral("Another member's address to send packets to."),
                                       QStringLiteral("ipv4"));
    const QCommandLineOption verboseOpt(QStringLiteral("verbose"), QStringLiteral("Log the peer's own lines to stderr."));
    parser.addOptions({keyFileOpt, printOpt, nodeOpt, hubOpt, hubKeyOpt, addressOpt, sendToOpt, verboseOpt});
    parser.process(app);

    if (!parser.isSet(verboseOpt))
        QLoggingCategory::setFilterRules(QStringLiteral("coreflow.peers.*.debug=false\ncoreflow.peers.*.info=false"));

    if (!parser.isSet(keyFileOpt))
        return fail(QStringLiteral("--key-file is required"), 2);
    const QByteArray privateKey = privateKeyOf(parser.value(keyFileOpt));
    if (privateKey.isEmpty())
        return fail(QStringLiteral("cannot read or make a 32-byte key in %1").arg(parser.value(keyFileOpt)), 1);
    if (parser.isSet(printOpt)) {
        say(QString::fromLatin1(PeerNoiseInitiator::publicKeyOf(privateKey).toBase64()));
        return 0;
    }

    const QString id = parser.value(nodeOpt);
    const QString hub = parser.value(hubOpt);
    const qsizetype colon = hub.lastIndexOf(QLatin1Char(':'));
    bool portOk = false;
    const uint port = colon > 0 ? hub.mid(colon + 1).toUInt(&portOk) : 0;
    const QHostAddress hubAddress(colon > 0 ? hub.left(colon) : QString());
    if (id.isEmpty() || hubAddress.protocol() != QAbstractSocket::IPv4Protocol || !portOk || port == 0 || port > 65535)
        return fail(QStringLiteral("--node-id and --hub A.B.C.D:PORT are required"), 2);
    const QByteArray hubKey = QByteArray::fromBase64(parser.value(hubKeyOpt).toLatin1());
    if (hubKey.size() != 32)
        return fail(QStringLiteral("--hub-public-key must be the base64 of 32 bytes"), 2);
    const QHostAddress own(parser.value(addressOpt));
    const QHostAddress peer(parser.value(sendToOpt));
    if (own.protocol() != QAbstractSocket::IPv4Protocol || (parser.isSet(sendToOpt) && peer.protocol() != QAbstractSocket::IPv4Protocol))
        return fail(QStringLiteral("--address (and --send-to) must be IPv4 addresses"), 2);

    QuitOnSignal quitOnSignal;
    SimulatedVpnMember::Options options;
    options.hubAddress = hubAddress;
    options.hubPort = quint16(port);
    options.staticPrivateKey = privateKey;
    options.hubPublicKey = hubKey;
    SimulatedVpnMember member(options);

    QTimer sender;
    sender.setInterval(1000);
    bool answered = false;
    const auto sendOne = [&] {
        const QByteArray packet = SimulatedVpnMember::ipv4Packet(own, peer, 200, 'd');
        member.sendPacket(packet);
        say(QStringLiteral("vpn member %1 sent a %2-byte packet to %3").arg(id).arg(packet.size()).arg(peer.toString()));
    };
    QObject::connect(&sender, &QTimer::timeout, &member, sendOne);
    QObject::connect(&member, &SimulatedVpnMember::connected, [&] {
        say(QStringLiteral("vpn member %1 connected to %2").arg(id, hub));
        member.handshake();
    });
    QObject::connect(&member, &SimulatedVpnMember::handshakeDone, [&] {
        say(QStringLiteral("vpn member %1 handshake done").arg(id));
        if (parser.isSet(sendToOpt) && !answered) {
            sender.start();
            sendOne();
        }
    });
    QObject::connect(&member, &SimulatedVpnMember::packetReceived, [&](const QByteArray &packet) {
        // The source address is bytes 12..15 of the IPv4 header.
        const QString from = packet.size() >= 20
            ? QHostAddress(quint32(quint8(packet[12])) << 24 | quint32(quint8(packet[13])) << 16 | quint32(quint8(packet[14])) << 8
                           | quint32(quint8(packet[15])))
                  .toString()
            : QStringLiteral("?");
        say(QStringLiteral("vpn member %1 received a %2-byte packet from %3").arg(id).arg(packet.size()).arg(from));
        // The first packet from the peer is answered once (so both ends see one relayed); then quiet.
        if (parser.isSet(sendToOpt) && from == peer.toString() && !answered) {
            answered = true;
            sender.stop();
            sendOne();
        }
    });
    QObject::connect(&member, &SimulatedVpnMember::closed, [&] {
        sender.stop();
        const auto code = member.closeCode();
        say(code ? QStringLiteral("vpn member %1 closed by the hub (code 0x%2)").arg(id).arg(*code, 0, 16)
                 : QStringLiteral("vpn member %1 connection closed").arg(id));
    });
    if (!member.dial())
        return fail(QStringLiteral("cannot dial %1").arg(hub), 1);
    const int rc = QCoreApplication::exec();
    member.closeConnection();
    return rc;
}
