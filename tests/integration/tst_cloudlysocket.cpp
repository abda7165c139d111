// tst_cloudlysocket: the relay's own client transport for its one Cloudly session (docs/contract.md
// §6.0.1, D-54, OV-01: the relay dials out, one session): TcpDialer, TlsConnection in
// the client role over TlsClientContext, WebSocketClientHandshake, WebSocketSession (client role).
//
// Peers: Qt's QWebSocketServer (an independent WebSocket implementation) over real TLS with a test CA
// made at test time, and raw loopback TCP servers for answers Qt would never send.
#include "service/core/methodtable.h"
#include "service/cloudly/cloudlyconnector.h"
#include "service/cloudly/cloudlysocket.h"
#include "tests/support/epolltestmain.h"
#include "tests/integration/logcapture.h"
#include "tests/peers/reservedloopbackport.h"
#include "tests/peers/testcertificateauthority.h"
#include "service/transport/tlsclientcontext.h"
#include "shared/util/manualclock.h"

#include <QCryptographicHash>
#include <QSignalSpy>
#include <QSslConfiguration>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>
#include <QWebSocketServer>

#include <sys/socket.h>
#include <unistd.h>

using namespace coreflow;
using coreflow::peers::TestCertificateAuthority;

namespace {
constexpr qsizetype kMaxMessage = 16 * 1024 * 1024;
const QByteArray kCanary = "CANARY-cloudly-url-query-7f3a9c";

// A QWebSocketServer on 127.0.0.1 that records what it receives and echoes text back.
struct QtServer {
    std::unique_ptr<QWebSocketServer> server;
    QList<QWebSocket *> clients;
    QList<QByteArray> received;
    QString requestPathAndQuery;
    bool echo = true;

    QtServer(const peers::IssuedCertificate *certificate)
    {
        server = std::make_unique<QWebSocketServer>(QStringLiteral("test"),
                                                    certificate ? QWebSocketServer::SecureMode : QWebSocketServer::NonSecureMode);
        if (certificate) {
            QSslConfiguration ssl = QSslConfiguration::defaultConfiguration();
            ssl.setLocalCertificateChain(certificate->chain);
            ssl.setPrivateKey(certificate->key);
            ssl.setPeerVerifyMode(QSslSocket::VerifyNone);
            server->setSslConfiguration(ssl);
        }
        QObject::connect(server.get(), &QWebSocketServer::newConnection, server.get(), [this] {
            while (QWebSocket *socket = server->nextPendingConnection()) {
                socket->setParent(server.get()); // nextPendingConnection hands ownership over
                clients.append(socket);
                requestPathAndQuery = socket->requestUrl().path() + (socket->requestUrl().hasQuery()
                                                                          ? QLatin1Char('?') + socket->requestUrl().query(QUrl::FullyEncoded)
                                                                          : QString());
                QObject::connect(socket, &QWebSocket::textMessageReceived, socket, [this, socket](const QString &text) {
                    received.append(text.toUtf8());
                    if (echo)
                        socket->sendTextMessage(text);
                });
            }
        });
    }
    quint16 listen()
    {
        const quint16 port = coreflow::test::reservedLoopbackPort();
        return server->listen(QHostAddress::LocalHost, port) ? port : 0;
    }
};

// A raw TCP server that answers the first request with fixed bytes (built from the request).
struct RawServer {
    QTcpServer server;
    QTcpSocket *socket = nullptr;
    QByteArray request;
    QByteArray afterAnswer; // what the client sent after our answer
    std::function<QByteArray(const QByteArray &request)> answer;

    quint16 listen()
    {
        const quint16 port = coreflow::test::reservedLoopbackPort();
        if (!server.listen(QHostAddress::LocalHost, port))
            return 0;
        QObject::connect(&server, &QTcpServer::newConnection, &server, [this] {
            socket = server.nextPendingConnection();
            QObject::connect(socket, &QTcpSocket::readyRead, socket, [this] {
                const QByteArray bytes = socket->readAll();
                if (request.contains("\r\n\r\n")) {
                    afterAnswer += bytes;
                    return;
                }
                request += bytes;
                if (request.contains("\r\n\r\n"))
                    socket->write(answer(request));
            });
        });
        return port;
    }
    static QByteArray keyOf(const QByteArray &request)
    {
        for (const QByteArray &line : request.split('\n'))
            if (line.toLower().startsWith("sec-websocket-key:"))
                return line.mid(18).trimmed();
        return {};
    }
};

// Sec-WebSocket-Accept as RFC 6455 §4.2.2 defines it, computed here (not by the relay's transport):
// base64(SHA-1(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")).
QByteArray rfc6455Accept(const QByteArray &key)
{
    return QCryptographicHash::hash(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11", QCryptographicHash::Sha1).toBase64();
}

// One frame as a server reads it, decoded here from RFC 6455 §5.2's layout (not by the relay's own
// decoder, which must not judge its own client's output): FIN, RSV1-3, opcode; MASK and the 7-bit
// length, extended to 16 or 64 bits by 126 and 127 (network byte order); the 4-byte masking key when
// MASK is set; the payload, unmasked by XOR with key[i % 4] (§5.3). `complete` is false while `wire`
// does not hold the whole frame yet.
struct FrameAsServerReadsIt {
    bool complete = false;
    bool fin = false;
    quint8 rsv = 0;
    quint8 opcode = 0;
    bool masked = false;
    QByteArray payload;
    qsizetype wireSize = 0;
};

FrameAsServerReadsIt readOneFrame(const QByteArray &wire)
{
    FrameAsServerReadsIt frame;
    if (wire.size() < 2)
        return frame;
    const quint8 first = quint8(wire[0]);
    const quint8 second = quint8(wire[1]);
    frame.fin = (first & 0x80) != 0;
    frame.rsv = quint8((first >> 4) & 0x07);
    frame.opcode = quint8(first & 0x0F);
    frame.masked = (second & 0x80) != 0;
    quint64 length = second & 0x7F;
    qsizetype at = 2;
    if (length == 126 || length == 127) {
        const int extended = length == 126 ? 2 : 8;
        if (wire.size() < at + extended)
            return frame;
        length = 0;
        for (int i = 0; i < extended; ++i)
            length = (length << 8) | quint8(wire[at + i]);
        at += extended;
    }
    QByteArray key;
    if (frame.masked) {
        if (wire.size() < at + 4)
            return frame;
        key = wire.mid(at, 4);
        at += 4;
    }
    if (quint64(wire.size() - at) < length)
        return frame;
    frame.payload = wire.mid(at, qsizetype(length));
    if (frame.masked)
        for (qsizetype i = 0; i < frame.payload.size(); ++i)
            frame.payload[i] = char(frame.payload[i] ^ key[i % 4]);
    frame.wireSize = at + qsizetype(length);
    frame.complete = true;
    return frame;
}

std::shared_ptr<TlsClientContext> trusting(const QList<QSslCertificate> &cas)
{
    auto context = TlsClientContext::create(cas);
    return context ? std::move(context).value() : nullptr;
}
} // namespace

class TstCloudlySocket : public QObject {
    Q_OBJECT
private:
    TestCertificateAuthority m_ca;
    testing::LogCapture m_log;

    void assertNoCanary(const CloudlySocket &socket)
    {
        QVERIFY(!socket.errorString().contains(QString::fromLatin1(kCanary)));
        QVERIFY(!m_log.contains(QString::fromLatin1(kCanary)));
    }

private Q_SLOTS:
    void init()
    {
        m_log.install();
        m_log.clear();
    }

    // OV-01, CL-06 (bodies untouched): over verified TLS to Qt's server, text leaves and arrives as the
    // exact UTF-8 bytes, small and large, in order; the request target keeps path and query.
    void wssCarriesExactUtf8BytesBothWays_OV01()
    {
        const auto certificate = m_ca.issueLocalhost();
        QtServer peer(&certificate);
        const quint16 port = peer.listen();
        QVERIFY(port);
        CloudlySocket socket(trusting({m_ca.caCertificate()}), kMaxMessage);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        QList<QByteArray> got;
        connect(&socket, &CloudlySocket::textMessage, this, [&got](const QByteArray &utf8) { got.append(utf8); });
        socket.open(QUrl(QStringLiteral("wss://localhost:%1/typedrequest?cluster=a%20b").arg(port)));
        QVERIFY(connected.wait(10000));
        QVERIFY(socket.isOpen());
        QCOMPARE(peer.requestPathAndQuery, QStringLiteral("/typedrequest?cluster=a%20b"));

        const QByteArray small = QByteArray("{\"method\":\"ping\",\"text\":\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x9a\x80\"}");
        QByteArray large(1024 * 1024 + 3, Qt::Uninitialized);
        for (qsizetype i = 0; i < large.size(); ++i)
            large[i] = char('a' + i % 26);
        socket.sendText(small);
        socket.sendText(large);
        socket.sendText("{}");
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), 3, 10000);
        QCOMPARE(peer.received, (QList<QByteArray>{small, large, "{}"}));
        QCOMPARE(got, (QList<QByteArray>{small, large, "{}"}));
    }

    // The Cloudly origin may be named by IP literal: the certificate's IP address is then checked.
    void ipLiteralIsVerifiedAgainstTheCertificatesAddress()
    {
        const auto certificate = m_ca.issueLocalhost(); // DNS:localhost, IP:127.0.0.1, IP:::1
        QtServer peer(&certificate);
        const quint16 port = peer.listen();
        CloudlySocket socket(trusting({m_ca.caCertificate()}), kMaxMessage);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        socket.open(QUrl(QStringLiteral("wss://127.0.0.1:%1/").arg(port)));
        QVERIFY(connected.wait(10000));
    }

    // Verification cannot be skipped: an untrusted chain or another name fails the attempt by name.
    void untrustedOrMisnamedCertificateFailsByName_data()
    {
        QTest::addColumn<QString>("certificateHost");
        QTest::addColumn<bool>("trustCa");
        QTest::addRow("CA not trusted") << QStringLiteral("localhost") << false;
        QTest::addRow("name mismatch") << QStringLiteral("cloudly.other.example") << true;
    }
    void untrustedOrMisnamedCertificateFailsByName()
    {
        QFETCH(QString, certificateHost);
        QFETCH(bool, trustCa);
        const auto certificate = m_ca.issueForHost(certificateHost);
        QtServer peer(&certificate);
        const quint16 port = peer.listen();
        TestCertificateAuthority stranger(QStringLiteral("Somebody Else"));
        CloudlySocket socket(trusting({trustCa ? m_ca.caCertificate() : stranger.caCertificate()}), kMaxMessage);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        QSignalSpy disconnected(&socket, &CloudlySocket::disconnected);
        socket.open(QUrl(QStringLiteral("wss://localhost:%1/?token=%2").arg(port).arg(QString::fromLatin1(kCanary))));
        QVERIFY(disconnected.wait(10000));
        QCOMPARE(connected.size(), 0);
        QCOMPARE(disconnected.size(), 1);
        QVERIFY2(socket.errorString().startsWith(QStringLiteral("certificate verification failed")),
                 qPrintable(socket.errorString()));
        QVERIFY(peer.received.isEmpty());
        assertNoCanary(socket);
    }

    // ws:// (loopback peers only; the configuration refuses it elsewhere) uses the same session code.
    void plainWsOnLoopback()
    {
        QtServer peer(nullptr);
        const quint16 port = peer.listen();
        CloudlySocket socket(nullptr, kMaxMessage);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        QList<QByteArray> got;
        connect(&socket, &CloudlySocket::textMessage, this, [&got](const QByteArray &utf8) { got.append(utf8); });
        socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(port)));
        QVERIFY(connected.wait(10000));
        socket.sendText("{\"hello\":\"ws\"}");
        QTRY_COMPARE_WITH_TIMEOUT(got.size(), 1, 10000);
        QCOMPARE(got.first(), QByteArray("{\"hello\":\"ws\"}"));
    }

    // An upgrade answered with anything but a proper 101 fails naming the status only: never a header
    // value, body byte or the URL's query.
    void refusedUpgradeNamesTheStatusOnly_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<QString>("expected");
        QTest::addRow("404") << QByteArray("HTTP/1.1 404 Not Found\r\nX-Leak: " + kCanary + "\r\nContent-Length: 6\r\n\r\nsecret")
                             << QStringLiteral("HTTP status 404");
        QTest::addRow("200") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") << QStringLiteral("HTTP status 200");
        QTest::addRow("wrong accept")
            << QByteArray("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                          "Sec-WebSocket-Accept: " + kCanary + "\r\n\r\n")
            << QStringLiteral("wrong Sec-WebSocket-Accept");
        QTest::addRow("not http") << QByteArray("SSH-2.0-OpenSSH\r\n\r\n") << QStringLiteral("not HTTP/1.1");
    }
    void refusedUpgradeNamesTheStatusOnly()
    {
        QFETCH(QByteArray, answer);
        QFETCH(QString, expected);
        RawServer peer;
        peer.answer = [answer](const QByteArray &) { return answer; };
        const quint16 port = peer.listen();
        CloudlySocket socket(nullptr, kMaxMessage);
        QSignalSpy disconnected(&socket, &CloudlySocket::disconnected);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/session?token=%2").arg(port).arg(QString::fromLatin1(kCanary))));
        QVERIFY(disconnected.wait(10000));
        QCOMPARE(connected.size(), 0);
        QVERIFY2(socket.errorString().contains(expected), qPrintable(socket.errorString()));
        QVERIFY(peer.request.startsWith("GET /session?token=" + kCanary + " HTTP/1.1\r\n"));
        QVERIFY(peer.request.contains("\r\nSec-WebSocket-Version: 13\r\n"));
        QCOMPARE(RawServer::keyOf(peer.request).size(), 24);
        assertNoCanary(socket);
    }

    // The raw servers below answer the client's key with rfc6455Accept(); RFC 6455 §1.3 publishes one
    // pair, so a slip in this test's own computation cannot let a wrong client check pass.
    void rawServerAcceptMatchesRfc6455Example()
    {
        QCOMPARE(rfc6455Accept("dGhlIHNhbXBsZSBub25jZQ=="), QByteArray("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
    }

    // RFC 6455 §5.1: a server must not mask; the client fails the session with 1002 (its Close frame,
    // itself masked, reaches the server).
    void maskedFrameFromTheServerFailsWith1002()
    {
        RawServer peer;
        peer.answer = [](const QByteArray &request) {
            return QByteArray("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Accept: ")
                   + rfc6455Accept(RawServer::keyOf(request)) + "\r\n\r\n"
                   + QByteArray("\x81\x85\x01\x02\x03\x04", 6) + QByteArray("igohn"); // "hello" masked
        };
        const quint16 port = peer.listen();
        CloudlySocket socket(nullptr, kMaxMessage);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        QSignalSpy texts(&socket, &CloudlySocket::textMessage);
        socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(port)));
        QVERIFY(connected.wait(10000));
        QTRY_VERIFY_WITH_TIMEOUT(readOneFrame(peer.afterAnswer).complete, 10000);
        QCOMPARE(texts.size(), 0);
        // The client's one frame, read by this test (readOneFrame): a final, unextended Close (opcode
        // 0x8, §5.5.1), masked as every client frame must be (§5.3), a control payload of 2..125 bytes
        // (§5.5) that starts with the code 1002 in network byte order, and nothing after it.
        const FrameAsServerReadsIt closeFrame = readOneFrame(peer.afterAnswer);
        QVERIFY(closeFrame.fin);
        QCOMPARE(closeFrame.rsv, quint8(0));
        QCOMPARE(closeFrame.opcode, quint8(0x8));
        QVERIFY2(closeFrame.masked, "a client frame must be masked (RFC 6455 §5.3)");
        QVERIFY2(closeFrame.payload.size() >= 2 && closeFrame.payload.size() <= 125, closeFrame.payload.toHex().constData());
        QCOMPARE((quint8(closeFrame.payload[0]) << 8) | quint8(closeFrame.payload[1]), 1002);
        QCOMPARE(closeFrame.wireSize, peer.afterAnswer.size());
    }

    // The server's Close ends the session once: disconnected() names the code.
    void serverCloseIsReportedOnceWithItsCode()
    {
        const auto certificate = m_ca.issueLocalhost();
        QtServer peer(&certificate);
        const quint16 port = peer.listen();
        CloudlySocket socket(trusting({m_ca.caCertificate()}), kMaxMessage);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        QSignalSpy disconnected(&socket, &CloudlySocket::disconnected);
        socket.open(QUrl(QStringLiteral("wss://localhost:%1/").arg(port)));
        QVERIFY(connected.wait(10000));
        QTRY_COMPARE(peer.clients.size(), 1);
        peer.clients.first()->close(QWebSocketProtocol::CloseCode(4000), QStringLiteral("go"));
        QVERIFY(disconnected.wait(10000));
        QVERIFY2(socket.errorString().contains(QStringLiteral("code 4000")), qPrintable(socket.errorString()));
        // A negative: turns for a wrongly repeated `disconnected` to arrive after the first one.
        QTest::qWait(50);
        QCOMPARE(disconnected.size(), 1);
        QCOMPARE(socket.state(), CloudlySocket::State::Unconnected);
        socket.sendText("{}"); // nothing happens on a closed socket
    }

    // D-54: what the relay queues for a Cloudly that stopped reading is bounded (32 MiB): past it the
    // session is closed 1008 "cloudly-not-reading" and, the Close not being read either, dropped after
    // the 2000 ms close grace; the connector then reconnects as for any lost session.
    void cloudlyThatStopsReadingIsDroppedAtTheSendBound_D54()
    {
        RawServer peer; // answers the upgrade, then never reads again
        peer.answer = [&peer](const QByteArray &request) {
            peer.socket->setReadBufferSize(1);
            QObject::disconnect(peer.socket, &QTcpSocket::readyRead, nullptr, nullptr);
            return QByteArray("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                              "Sec-WebSocket-Accept: ")
                   + rfc6455Accept(RawServer::keyOf(request)) + "\r\n\r\n";
        };
        const quint16 port = peer.listen();
        CloudlySocket socket(nullptr, kMaxMessage);
        QSignalSpy connected(&socket, &CloudlySocket::connected);
        QSignalSpy disconnected(&socket, &CloudlySocket::disconnected);
        socket.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(port)));
        QVERIFY(connected.wait(10000));
        const QByteArray chunk(1024 * 1024, 'q');
        int sent = 0;
        while (socket.isOpen() && sent < 200) {
            socket.sendText(chunk);
            ++sent;
            QCoreApplication::processEvents(); // the turn ends: queued frames go to the kernel
        }
        QVERIFY(sent > 32);  // the kernel's buffers took some, then the queue filled to its bound
        QVERIFY(sent < 200); // and the session stopped taking more
        QVERIFY(disconnected.size() == 1 || disconnected.wait(10000));
        QVERIFY2(socket.errorString().contains(QStringLiteral("code 1008")), qPrintable(socket.errorString()));
    }

    // D-54: frames written deferred in one turn leave together when the turn ends, in order, after
    // bytes written at once before them and before bytes written at once after them.
    void deferredWritesLeaveTogetherAtTheEndOfTheTurn_D54()
    {
        int fds[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
        TlsConnection plain(fds[0], nullptr); // plaintext: Open from the start
        QCOMPARE(plain.state(), TlsConnection::State::Open);
        auto drain = [&fds] {
            QByteArray got;
            char buffer[4096];
            ssize_t n;
            while ((n = ::recv(fds[1], buffer, sizeof buffer, 0)) > 0)
                got.append(buffer, qsizetype(n));
            return got;
        };
        plain.write("A");
        plain.writeDeferred("b");
        plain.writeDeferred("c");
        QCOMPARE(drain(), QByteArray("A"));  // the deferred bytes wait for the turn to end
        plain.write("D");                    // queued behind them, never ahead
        QCOMPARE(drain(), QByteArray());
        QTRY_COMPARE(plain.pendingBytes(), 0);
        QCOMPARE(drain(), QByteArray("bcD"));
        ::close(fds[1]);
    }

    // The Cloudly handshake bound (§6.0, D-11: cloudlyHandshakeTimeoutMs, 10000 ms on the injected
    // clock) covers dial, TLS, upgrade and authentication: a Cloudly that accepts and never answers is
    // dropped exactly at the bound and a reconnect is scheduled (WD-02 backoff).
    void silentCloudlyIsDroppedAtTheHandshakeBound_D11()
    {
        RawServer silent;
        silent.answer = [](const QByteArray &) { return QByteArray(); }; // reads the upgrade, says nothing
        const quint16 port = silent.listen();
        ManualClock clock;
        contract::RelayTiming timing;
        MethodTable methods(QStringLiteral("cloudly"));
        CloudlyConnector connector(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(port)), Secret(QByteArray("CANARY-bearer-1")),
                                   {}, methods, clock, timing);
        connector.start();
        QTRY_VERIFY_WITH_TIMEOUT(silent.request.contains("\r\n\r\n"), 10000); // the upgrade request arrived
        QVERIFY(!silent.request.contains("CANARY")); // the bearer travels only in the first frame
        clock.advance(timing.cloudlyHandshakeTimeoutMs - 1);
        QCOMPARE(connector.reconnectDueMs(), 0);
        QVERIFY(!m_log.contains(QStringLiteral("handshake took longer than")));
        clock.advance(1);
        QVERIFY(m_log.contains(QStringLiteral("handshake took longer than")));
        QVERIFY(connector.reconnectDueMs() > clock.nowMs());
        QVERIFY(!connector.isConnected());
        QVERIFY(!m_log.contains(QStringLiteral("CANARY-bearer-1")));
    }

    // Nobody listening: the attempt fails naming the connect step; abort() while connecting or open
    // reports disconnected() exactly once, before it returns.
    void refusedConnectAndAbortAreReportedOnce()
    {
        const quint16 nobody = coreflow::test::reservedLoopbackPort();
        CloudlySocket refused(nullptr, kMaxMessage);
        QSignalSpy refusedDown(&refused, &CloudlySocket::disconnected);
        refused.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(nobody)));
        QVERIFY(refusedDown.wait(10000));
        QVERIFY2(refused.errorString().startsWith(QStringLiteral("could not connect to 127.0.0.1 port")),
                 qPrintable(refused.errorString()));

        CloudlySocket early(nullptr, kMaxMessage);
        QSignalSpy earlyDown(&early, &CloudlySocket::disconnected);
        early.open(QUrl(QStringLiteral("ws://127.0.0.1:%1/").arg(nobody)));
        early.abort();
        QCOMPARE(earlyDown.size(), 1);
        // A negative: turns for a queued second `disconnected` after abort() (a deferred emission would show here).
        QTest::qWait(100);
        QCOMPARE(earlyDown.size(), 1);

        const auto certificate = m_ca.issueLocalhost();
        QtServer peer(&certificate);
        const quint16 port = peer.listen();
        CloudlySocket open(trusting({m_ca.caCertificate()}), kMaxMessage);
        QSignalSpy connected(&open, &CloudlySocket::connected);
        QSignalSpy openDown(&open, &CloudlySocket::disconnected);
        open.open(QUrl(QStringLiteral("wss://localhost:%1/").arg(port)));
        QVERIFY(connected.wait(10000));
        QTRY_COMPARE(peer.clients.size(), 1);
        QSignalSpy serverSaw(peer.clients.first(), &QWebSocket::disconnected);
        open.closeNow(1001, "relay stopping");
        QCOMPARE(openDown.size(), 1);
        QVERIFY(serverSaw.wait(10000));
        QCOMPARE(openDown.size(), 1);
    }
};

COREFLOW_EPOLL_TEST_MAIN(TstCloudlySocket)
#include "tst_cloudlysocket.moc"
