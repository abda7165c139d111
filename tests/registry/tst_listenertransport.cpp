// tst_listenertransport: the relay listener's own TLS and WebSocket transport (RelayListener,
// ListenerHandshake, WebSocketSession; docs/contract.md D-53), with Qt's QWebSocket and a raw TLS
// client as independent peers.
//   CL-02  one TLS WebSocket upgrade at "/"; an upgrade elsewhere is refused before any 101
//   CL-04  beside the upgrade, plain HTTP on the same port and certificate reaches the HTTP side
//   CL-06  text arrives and leaves as the exact UTF-8 bytes
//   FW-14  a node that stops reading only fills its own bounded queue (closed 1008 beyond it)
//   OC-*   close codes (the wave's 4000) reach the node; a node's close is echoed
#include "tests/support/epolltestmain.h"
#include "service/core/epolleventdispatcher.h"
#include "service/listener/relaylistener.h"
#include "tests/registry/rawhttpsclient.h"
#include "tests/registry/testpki.h"
#include "tests/registry/testwait.h"

#include <QSslConfiguration>
#include <QTest>
#include <QWebSocket>

using namespace coreflow;
using namespace coreflow::test;

namespace {
// A masked client frame, as a node's WebSocket library writes it.
QByteArray maskedFrame(quint8 opcode, QByteArrayView payload)
{
    QByteArray out;
    out.append(char(0x80 | opcode));
    const qsizetype n = payload.size();
    if (n < 126) {
        out.append(char(0x80 | n));
    } else {
        out.append(char(0x80 | 126));
        out.append(char(n >> 8));
        out.append(char(n & 0xFF));
    }
    const char key[4] = {0x11, 0x22, 0x33, 0x44};
    out.append(key, 4);
    for (qsizetype i = 0; i < n; ++i)
        out.append(char(payload[i] ^ key[i % 4]));
    return out;
}

const RawHeaders kUpgrade{{"Upgrade", "websocket"}, {"Connection", "Upgrade"},
                          {"Sec-WebSocket-Version", "13"}, {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}};
} // namespace

class TstListenerTransport : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        m_pki = std::make_unique<TestPki>(QStringLiteral("listener"));
        QVERIFY2(m_pki->ok(), qPrintable(m_pki->error()));
        m_cert = m_pki->issueServer(QStringLiteral("relay"));
    }

    // Issue 16 ("run the integration suite on it"), review: this file drives the relay's own listener
    // (TlsConnection's read and write QSocketNotifiers on one fd, WebSocketSession) end to end, and the
    // node-facing decoder corners of tests/PROOFS.md (D4, D5: invalidCloseIsAnswered1002) are proven
    // here; production runs them on EpollEventDispatcher (service/main.cpp), so must this test.
    void runsOnTheProductionDispatcher_issue16()
    {
        QVERIFY2(qobject_cast<EpollEventDispatcher *>(QCoreApplication::eventDispatcher()),
                 "tst_listenertransport runs on Qt's default event dispatcher, not the relay's (QTEST_GUILESS_MAIN)");
    }

    void init()
    {
        m_listener = std::make_unique<RelayListener>();
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setLocalCertificate(m_cert.certificate);
        tls.setPrivateKey(m_cert.key);
        const auto refusal = m_listener->listen(QStringLiteral("127.0.0.1"), 0, tls);
        QVERIFY2(!refusal, refusal ? qPrintable(refusal->text()) : "");
        m_sessions.clear();
        m_closedCodes.clear();
        connect(m_listener.get(), &RelayListener::nodeSessionAccepted, this, [this](WebSocketSession *session) {
            session->setParent(this);
            m_sessions.append(session);
            // These sessions stand for registered nodes: what an accepted registration does (§3.4).
            session->promote();
            connect(session, &WebSocketSession::textMessage, session, [session](const QByteArray &m) { session->sendText(m); });
            connect(session, &WebSocketSession::closed, this, [this](quint16 code) { m_closedCodes.append(code); });
        });
    }

    void cleanup()
    {
        qDeleteAll(m_sessions);
        m_sessions.clear();
        m_listener.reset();
    }

    void textEchoesByteForByte_CL02_CL06()
    {
        QWebSocket ws;
        openClient(ws);
        QList<QByteArray> got;
        connect(&ws, &QWebSocket::textMessageReceived, this, [&](const QString &m) { got.append(m.toUtf8()); });
        const QByteArray body = QByteArray("{\"method\":\"reportRuntimeAssignmentObservation\",\"n\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}");
        ws.sendTextMessage(QString::fromUtf8(body));
        const QByteArray big(200000, 'b');
        ws.sendTextMessage(QString::fromUtf8(big));
        QVERIFY(spinUntil([&] { return got.size() == 2; }, 10000));
        QCOMPARE(got.at(0), body);
        QCOMPARE(got.at(1), big);
        // A ping is answered with a pong carrying its payload.
        QByteArray pong;
        connect(&ws, &QWebSocket::pong, this, [&](quint64, const QByteArray &payload) { pong = payload; });
        ws.ping("heartbeat");
        QVERIFY(spinUntil([&] { return pong == "heartbeat"; }, 5000));
    }

    void upgradeElsewhereIsRefusedBefore101_CL02()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        client.sendRequest("GET", "/v2/", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"},
                                           {"Sec-WebSocket-Version", "13"}, {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
        RawResponse response;
        QVERIFY(client.readResponse(response));
        QCOMPARE(response.status, 404);
        QVERIFY2(response.body.contains("path-not-served"), response.body.constData());
        QVERIFY(m_sessions.isEmpty());
    }

    void brokenWebSocketHandshakeIsRefused400_CL02()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        client.sendRequest("GET", "/", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"}, {"Sec-WebSocket-Version", "8"}});
        RawResponse response;
        QVERIFY(client.readResponse(response));
        QCOMPARE(response.status, 400);
        QVERIFY2(response.body.contains("request-invalid"), response.body.constData());
        QVERIFY(m_sessions.isEmpty());
    }

    void plainHttpReachesTheHttpSideOnTheSamePort_CL04()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        QCOMPARE(client.socket().peerCertificate(), m_cert.certificate);
        client.sendRequest("GET", "/v2/");
        RawResponse response;
        QVERIFY(client.readResponse(response));
        QCOMPARE(response.status, 404); // no handler set: path-not-served from the listener's HTTP loop
        QVERIFY(response.body.contains("path-not-served"));
        // The connection stays usable for a second request (kept alive).
        client.sendRequest("GET", "/other");
        RawResponse second;
        QVERIFY(client.readResponse(second));
        QCOMPARE(second.status, 404);
    }

    void relayCloseCodeReachesTheNode_OC()
    {
        QWebSocket ws;
        openClient(ws);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        bool disconnected = false;
        connect(&ws, &QWebSocket::disconnected, this, [&] { disconnected = true; });
        m_sessions.first()->close(4000, "cloudly session changed; register again");
        QVERIFY(!m_sessions.first()->isOpen());
        QVERIFY(spinUntil([&] { return disconnected; }, 5000));
        QCOMPARE(int(ws.closeCode()), 4000);
        QCOMPARE(ws.closeReason(), QStringLiteral("cloudly session changed; register again"));
        QVERIFY(spinUntil([&] { return m_closedCodes.size() == 1; }, 5000));
        QCOMPARE(m_closedCodes.first(), quint16(4000));
    }

    void nodeCloseIsEchoedAndReported()
    {
        QWebSocket ws;
        openClient(ws);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        ws.close(QWebSocketProtocol::CloseCode(4001), QStringLiteral("bye"));
        QVERIFY(spinUntil([&] { return m_closedCodes.size() == 1; }, 5000));
        QCOMPARE(m_closedCodes.first(), quint16(4001));
        QVERIFY(spinUntil([&] { return ws.state() == QAbstractSocket::UnconnectedState; }, 5000));
    }

    // A node that stops reading: its queue grows to the bound and no further; beyond it the session
    // closes 1008 (and a node that never answers the Close is dropped after the close grace).
    void stalledNodeFillsOnlyItsOwnBoundedQueue_FW14()
    {
        RawHttpsClient stalled(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(stalled.connectAndWait());
        stalled.sendRequest("GET", "/", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"},
                                         {"Sec-WebSocket-Version", "13"}, {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        stalled.pause(16 * 1024);
        WebSocketSession *session = m_sessions.first();
        QWebSocket healthy;
        openClient(healthy);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 2; }, 5000));
        QList<QString> healthyGot;
        connect(&healthy, &QWebSocket::textMessageReceived, this, [&](const QString &m) { healthyGot.append(m); });

        const QByteArray chunk(64 * 1024, 'p');
        qsizetype maxPending = 0;
        int sent = 0;
        while (session->isOpen() && sent < 2000) {
            session->sendText(chunk);
            maxPending = qMax(maxPending, session->pendingBytes());
            ++sent;
            if (sent % 64 == 0)
                // Pacing: lets the session write between bursts, so the queue bound (not the test) decides.
                QTest::qWait(1);
        }
        QVERIFY2(!session->isOpen(), "the session never reached its queue bound");
        QVERIFY(maxPending <= WebSocketSession::kMaxPendingBytes);
        QVERIFY(maxPending > WebSocketSession::kMaxPendingBytes / 2);
        // The other node is unaffected meanwhile.
        healthy.sendTextMessage(QStringLiteral("still here"));
        QVERIFY(spinUntil([&] { return healthyGot.size() == 1; }, 3000));
        // The stalled node never answers the Close: dropped after the grace period.
        QVERIFY(spinUntil([&] { return m_closedCodes.contains(1008); }, WebSocketSession::kCloseGraceMs + 3000));
    }

    // A node that vanishes (RST) while the relay writes to it: the write fails with EPIPE/ECONNRESET
    // (never SIGPIPE) and the session reports 1006.
    void nodeVanishingMidWriteEndsOnlyItsSession()
    {
        RawHttpsClient gone(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(gone.connectAndWait());
        gone.sendRequest("GET", "/", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"},
                                      {"Sec-WebSocket-Version", "13"}, {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        WebSocketSession *session = m_sessions.first();
        gone.socket().setSocketOption(QAbstractSocket::LowDelayOption, 1);
        gone.socket().abort();
        const QByteArray chunk(64 * 1024, 'v');
        for (int i = 0; i < 200 && session->isOpen(); ++i) {
            session->sendText(chunk);
            // Pacing: lets the session notice the aborted peer between sends.
            QTest::qWait(1);
        }
        QVERIFY(spinUntil([&] { return m_closedCodes.size() == 1; }, 5000));
        QCOMPARE(m_closedCodes.first(), quint16(1006));
    }

    // Pongs count against the same 32 MiB send bound: a node that pings without reading is closed
    // 1008 instead of growing the relay's memory (FW-14: no unbounded queue).
    void pingFloodWithoutReadingIsBounded_FW14()
    {
        RawHttpsClient flooder(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(flooder.connectAndWait());
        flooder.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        flooder.pause(16 * 1024);
        WebSocketSession *session = m_sessions.first();
        QByteArray burst;
        for (int i = 0; i < 512; ++i)
            burst += maskedFrame(0x9, QByteArray(125, 'p'));
        qsizetype maxPending = 0;
        for (int round = 0; round < 1200 && session->isOpen(); ++round) {
            flooder.socket().write(burst);
            // Pacing: lets the session read the flood and queue its Pongs between bursts.
            QTest::qWait(1);
            maxPending = qMax(maxPending, session->pendingBytes());
        }
        QVERIFY2(!session->isOpen(), "the ping flood never reached the send bound");
        QVERIFY(maxPending <= WebSocketSession::kMaxPendingBytes + 256); // + the Close frame itself
        QVERIFY(spinUntil([&] { return m_closedCodes.contains(1008); }, WebSocketSession::kCloseGraceMs + 3000));
    }

    // A node that sent Close but never reads the answer still goes after the close grace.
    void closeFromANodeThatStopsReadingEndsWithinTheGrace()
    {
        RawHttpsClient node(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(node.connectAndWait());
        node.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        node.pause(16 * 1024);
        WebSocketSession *session = m_sessions.first();
        for (int i = 0; i < 200 && session->pendingBytes() < 4 * 1024 * 1024; ++i) {
            session->sendText(QByteArray(64 * 1024, 'q'));
            // Pacing: lets the session hand bytes to the kernel until the paused peer's buffers are full.
            QTest::qWait(1);
        }
        QVERIFY(session->pendingBytes() > 0);
        QByteArray close = maskedFrame(0x8, QByteArray("\x0f\xa1", 2)); // 4001
        node.socket().write(close);
        QVERIFY(spinUntil([&] { return m_closedCodes.size() == 1; }, WebSocketSession::kCloseGraceMs + 3000));
        QCOMPARE(m_closedCodes.first(), quint16(4001));
    }

    // A Close whose reason is not UTF-8 is answered 1007 (RFC 6455 §8.1).
    void closeWithNonUtf8ReasonIsAnswered1007()
    {
        RawHttpsClient node(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(node.connectAndWait());
        node.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        QVERIFY(spinUntil([&] { return node.received() > 0; }, 5000)); // the 101
        const qint64 before = node.received();
        node.socket().write(maskedFrame(0x8, QByteArray("\x03\xe8\xc3\x28", 4))); // 1000 + invalid UTF-8
        QVERIFY(spinUntil([&] { return m_closedCodes.size() == 1; }, 5000));
        QCOMPARE(m_closedCodes.first(), quint16(1007));
        // The session has ended; the answer reaches the client's socket in a later turn.
        QVERIFY(spinUntil([&] { return node.received() > before; }, 5000)); // an answer went out before the close
    }

    // A Close the peer may not send (RFC 6455 §5.5.1, §7.4): a 1-byte payload, or a code outside the
    // ranges a peer may use. The session answers 1002 and ends with that code (docs/contract.md §3).
    void invalidCloseIsAnswered1002_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::newRow("1-byte payload") << QByteArray("\x03", 1);
        QTest::newRow("code 999") << QByteArray("\x03\xe7", 2);
        QTest::newRow("code 1004 (reserved)") << QByteArray("\x03\xec", 2);
        QTest::newRow("code 1005 (never sent)") << QByteArray("\x03\xed", 2);
        QTest::newRow("code 1006 (never sent)") << QByteArray("\x03\xee", 2);
        QTest::newRow("code 1015 (never sent)") << QByteArray("\x03\xf7", 2);
        QTest::newRow("code 2999") << QByteArray("\x0b\xb7", 2);
        QTest::newRow("code 5000") << QByteArray("\x13\x88", 2);
    }
    void invalidCloseIsAnswered1002()
    {
        QFETCH(QByteArray, payload);
        RawHttpsClient node(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(node.connectAndWait());
        node.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        QVERIFY(spinUntil([&] { return node.received() > 0; }, 5000)); // the 101
        const qint64 before = node.received();
        node.socket().write(maskedFrame(0x8, payload));
        QVERIFY(spinUntil([&] { return m_closedCodes.size() == 1; }, 5000));
        QCOMPARE(m_closedCodes.first(), quint16(1002));
        // The session has ended; the answering Close reaches the client's socket in a later turn.
        QVERIFY(spinUntil([&] { return node.received() > before; }, 5000)); // the answering Close went out
    }

    // A valid code with an empty reason, and no payload at all (1005 reported), end as sent.
    void validCloseIsEchoed_data()
    {
        QTest::addColumn<QByteArray>("payload");
        QTest::addColumn<int>("code");
        QTest::newRow("no payload") << QByteArray() << 1005;
        QTest::newRow("1000") << QByteArray("\x03\xe8", 2) << 1000;
        QTest::newRow("3000") << QByteArray("\x0b\xb8", 2) << 3000;
        QTest::newRow("4999 with reason") << QByteArray("\x13\x87" "bye", 5) << 4999;
    }
    void validCloseIsEchoed()
    {
        QFETCH(QByteArray, payload);
        QFETCH(int, code);
        RawHttpsClient node(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(node.connectAndWait());
        node.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        QVERIFY(spinUntil([&] { return node.received() > 0; }, 5000));
        node.socket().write(maskedFrame(0x8, payload));
        QVERIFY(spinUntil([&] { return m_closedCodes.size() == 1; }, 5000));
        QCOMPARE(int(m_closedCodes.first()), code);
    }

    // The 64 KiB header bound holds for upgrades too: an oversize one never gets a 101.
    void oversizeUpgradeHeaderIsRefused431()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        RawHeaders headers = kUpgrade;
        headers.append({"X-Padding", QByteArray(70 * 1024, 'x')});
        client.sendRequest("GET", "/", headers);
        RawResponse response;
        QVERIFY(client.readResponse(response));
        QCOMPARE(response.status, 431);
        QVERIFY(m_sessions.isEmpty());
    }

    // Upgrade token lists are read token by token; an unpadded key is refused.
    void upgradeTokensAndKeyAreReadStrictly_CL02()
    {
        RawHttpsClient listed(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(listed.connectAndWait());
        listed.sendRequest("GET", "/", {{"Upgrade", "foo, websocket"}, {"Connection", "Upgrade"},
                                        {"Sec-WebSocket-Version", "13"}, {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="}});
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));

        RawHttpsClient unpadded(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(unpadded.connectAndWait());
        unpadded.sendRequest("GET", "/", {{"Upgrade", "websocket"}, {"Connection", "Upgrade"},
                                          {"Sec-WebSocket-Version", "13"}, {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ"}});
        RawResponse response;
        QVERIFY(unpadded.readResponse(response));
        QCOMPARE(response.status, 400);
        QCOMPARE(m_sessions.size(), 1);
    }

    // An upgrade pipelined behind plain HTTP requests is not answered out of order: the earlier
    // request is answered, then the connection closes without an answer to the upgrade.
    void upgradeOnAnHttpConnectionClosesIt_CL02()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        client.sendRequest("GET", "/v2/");
        RawResponse first;
        QVERIFY(client.readResponse(first));
        QCOMPARE(first.status, 404); // no handler: path-not-served from the HTTP side
        client.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return client.socket().state() == QAbstractSocket::UnconnectedState; }, 5000));
        RawResponse none;
        QVERIFY(!client.readResponse(none, false, 200));
        QVERIFY(m_sessions.isEmpty());
    }

    // An upgrade pipelined behind plain requests: those are answered in order first, then the
    // connection closes without an answer to the upgrade (D-55).
    void upgradePipelinedBehindAnswersClosesAfterThem_CL02()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        QByteArray burst = "GET /v2/a HTTP/1.1\r\nHost: localhost\r\n\r\nGET /v2/b HTTP/1.1\r\nHost: localhost\r\n\r\n";
        burst += "GET / HTTP/1.1\r\nHost: localhost\r\n";
        for (const auto &[name, value] : kUpgrade)
            burst += name + ": " + value + "\r\n";
        burst += "\r\n";
        client.socket().write(burst);
        RawResponse first;
        QVERIFY(client.readResponse(first));
        QCOMPARE(first.status, 404);
        RawResponse second;
        QVERIFY(client.readResponse(second));
        QCOMPARE(second.status, 404);
        QVERIFY(spinUntil([&] { return client.socket().state() == QAbstractSocket::UnconnectedState; }, 5000));
        RawResponse none;
        QVERIFY(!client.readResponse(none, false, 200));
        QVERIFY(m_sessions.isEmpty());
    }

    // A request that does not ask for keep-alive is the connection's last: answered, then closed.
    void requestWithoutKeepAliveIsTheLast_CL04()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        client.sendRequest("GET", "/v2/", {{"Connection", "close"}});
        RawResponse response;
        QVERIFY(client.readResponse(response));
        QCOMPARE(response.status, 404);
        QVERIFY(spinUntil([&] { return client.socket().state() == QAbstractSocket::UnconnectedState; }, 5000));
    }

    // What http_parser does not accept as a request (a bare CR in a header) is refused by name, with
    // Connection: close, before any handler sees it (§17, D-55).
    void malformedRequestIsRefused400_CL04()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        client.socket().write("GET /v2/ HTTP/1.1\r\nHost: localhost\r\nX-Split: a\rb\r\n\r\n");
        RawResponse response;
        QVERIFY(client.readResponse(response));
        QCOMPARE(response.status, 400);
        QVERIFY2(response.body.contains("request-invalid"), response.body.constData());
        QCOMPARE(response.header("connection"), QByteArray("close"));
        QVERIFY(spinUntil([&] { return client.socket().state() == QAbstractSocket::UnconnectedState; }, 5000));
        QCOMPARE(m_listener->refusedHttpRequests(), 1);
    }

    // The idle bound (§17): a kept-alive connection that asks nothing more, or drips its next header
    // block, is closed once the bound passes; a request sent in time is answered as usual. (Bound
    // lowered to 300 ms for the test; the relay runs with 10000 ms.)
    void idleConnectionsAreClosedAtTheIdleBound()
    {
        m_listener->setIdleRequestTimeoutMs(300);
        RawHttpsClient quiet(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(quiet.connectAndWait());
        quiet.socket().write("GET /nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n");
        RawResponse first;
        QVERIFY(quiet.readResponse(first));
        QCOMPARE(first.status, 404);
        quiet.socket().write("GET /still-nothing HTTP/1.1\r\nHost: localhost\r\n\r\n"); // in time: answered
        RawResponse second;
        QVERIFY(quiet.readResponse(second));
        QCOMPARE(second.status, 404);
        QCOMPARE(quiet.socket().state(), QAbstractSocket::ConnectedState);

        RawHttpsClient drip(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(drip.connectAndWait());
        drip.socket().write("GET /nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n");
        RawResponse answered;
        QVERIFY(drip.readResponse(answered));
        const QByteArray slow = "GET /v2/ HTTP/1.1\r\nHost: localhost\r\nUser-Agent: a-very-slow-client\r\n";
        int sent = 0;
        bool dripClosed = false;
        for (; sent < slow.size() && !dripClosed; ++sent) {
            drip.socket().write(slow.mid(sent, 1));
            dripClosed = spinUntil([&] { return drip.socket().state() == QAbstractSocket::UnconnectedState; }, 50);
        }
        QVERIFY2(dripClosed || spinUntil([&] { return drip.socket().state() == QAbstractSocket::UnconnectedState; }, 5000),
                 "a connection dripping its header block was kept");
        QVERIFY(sent < slow.size()); // cut before the header block could complete
        QVERIFY(spinUntil([&] { return quiet.socket().state() == QAbstractSocket::UnconnectedState; }, 5000));
        QCOMPARE(m_listener->idleClosedConnections(), 2);
    }

    // The connection bound (§17): beyond it a new HTTP connection is answered 503 listener-busy and
    // closed; once a held connection goes, a new one is served again. (Bound lowered to 2 for the test.)
    void httpConnectionsBeyondTheBoundAreRefusedBusy()
    {
        m_listener->setMaxHttpConnections(2);
        auto held1 = std::make_unique<RawHttpsClient>(m_listener->boundPort(), m_pki->caCertificate());
        RawHttpsClient held2(m_listener->boundPort(), m_pki->caCertificate());
        for (RawHttpsClient *c : {held1.get(), &held2}) {
            QVERIFY(c->connectAndWait());
            c->socket().write("GET /nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n");
            RawResponse r;
            QVERIFY(c->readResponse(r));
            QCOMPARE(r.status, 404);
        }
        QCOMPARE(m_listener->openHttpConnections(), 2);
        RawHttpsClient third(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(third.connectAndWait());
        third.socket().write("GET /v2/ HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer CANARY-busy-token\r\n\r\n");
        RawResponse busy;
        QVERIFY(third.readResponse(busy));
        QCOMPARE(busy.status, 503);
        QVERIFY2(busy.body.contains("listener-busy"), busy.body.constData());
        QCOMPARE(busy.header("retry-after"), QByteArray("1"));
        QCOMPARE(busy.header("connection"), QByteArray("close"));
        QVERIFY(spinUntil([&] { return third.socket().state() == QAbstractSocket::UnconnectedState; }, 5000));
        QCOMPARE(m_listener->busyRefusedConnections(), 1);

        held1->socket().disconnectFromHost();
        QVERIFY(spinUntil([&] { return m_listener->openHttpConnections() == 1; }, 5000));
        RawHttpsClient fourth(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(fourth.connectAndWait());
        fourth.socket().write("GET /nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n");
        RawResponse served;
        QVERIFY(fourth.readResponse(served));
        QCOMPARE(served.status, 404);
    }

    // Pipelined requests from a client that never reads its answers stop being read (bounded):
    // the relay's memory does not follow the client's sending.
    void pipelinedRequestsWithoutReadingAreBounded()
    {
        RawHttpsClient client(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(client.connectAndWait());
        client.pause(16 * 1024);
        QByteArray burst;
        for (int i = 0; i < 4000; ++i)
            burst += "GET /nothing-here HTTP/1.1\r\nHost: localhost\r\n\r\n";
        // ~80 MB of requests: more than every kernel buffer on the way can hold.
        auto pending = [&] { return client.socket().bytesToWrite() + client.socket().encryptedBytesToWrite(); };
        for (int round = 0; round < 400 && pending() < 8 * 1024 * 1024; ++round) {
            client.socket().write(burst);
            // Pacing: lets the client's socket push what it can between writes.
            QTest::qWait(2);
        }
        // The relay stops taking requests: what the client wrote piles up on its own side.
        QVERIFY2(spinUntil([&] { return pending() > 4 * 1024 * 1024; }, 10000), "the relay kept reading unanswered requests");
    }

    // Many connections each dripping most of a large frame: together they hold at most the
    // listener's receive budget; the session whose growth would pass it is closed 1008.
    void partialMessagesShareOneReceiveBudget()
    {
        m_listener->setReceiveBudgetBytes(4 * 1024 * 1024);
        QByteArray header;
        header.append(char(0x81));
        header.append(char(0x80 | 127));
        const quint64 announced = 10 * 1024 * 1024;
        for (int i = 7; i >= 0; --i)
            header.append(char((announced >> (8 * i)) & 0xFF));
        header.append("\x01\x02\x03\x04", 4);
        const QByteArray part(3 * 1024 * 1024, 'd');
        RawHttpsClient first(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(first.connectAndWait());
        first.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 1; }, 5000));
        first.socket().write(header + part);
        RawHttpsClient second(m_listener->boundPort(), m_pki->caCertificate());
        QVERIFY(second.connectAndWait());
        second.sendRequest("GET", "/", kUpgrade);
        QVERIFY(spinUntil([&] { return m_sessions.size() == 2; }, 5000));
        // A negative: the first session's unfinished frame must not close it while a second connects; turns for a wrong close.
        QTest::qWait(200);
        QVERIFY(m_sessions.at(0)->isOpen());
        second.socket().write(header + part);
        QVERIFY(spinUntil([&] { return !m_sessions.at(1)->isOpen(); }, 10000));
        QVERIFY(m_sessions.at(0)->isOpen()); // the first one keeps its share
        QVERIFY(spinUntil([&] { return m_closedCodes.contains(1008); }, WebSocketSession::kCloseGraceMs + 3000));
    }

private:
    void openClient(QWebSocket &ws)
    {
        QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
        conf.setCaCertificates({m_pki->caCertificate()});
        ws.setSslConfiguration(conf);
        ws.open(QUrl(QStringLiteral("wss://localhost:%1/").arg(m_listener->boundPort())));
        QVERIFY(spinUntil([&] { return ws.state() == QAbstractSocket::ConnectedState; }, 10000));
    }

    std::unique_ptr<TestPki> m_pki;
    TestPki::Issued m_cert;
    std::unique_ptr<RelayListener> m_listener;
    QList<WebSocketSession *> m_sessions;
    QList<quint16> m_closedCodes;
};

COREFLOW_EPOLL_TEST_MAIN(TstListenerTransport)
#include "tst_listenertransport.moc"
