#pragma once
// LoopbackCloudly: an in-process stand-in for Cloudly (the control plane) on 127.0.0.1, written against
// docs/contract.md only. It is a TLS WebSocket server (QWebSocketServer, SecureMode) whose certificate
// (CN/DNS "localhost", IP 127.0.0.1 and ::1) is issued by a TestCertificateAuthority, so the relay dials
// url() = wss://localhost:PORT/ and verifies Cloudly against that CA.
//
// Default behaviour (each method can be scripted with setHandler()/setAnswer()):
//   exchangeClusterRelayAuthorization { authorization }
//       -> { identity: { token, clusterId, expiresAt } } when authorization == Options.bearer
//          byte-for-byte; else refusal relay-identity-unverified. token: fresh random string;
//          expiresAt: Options.now() + Options.identityLifetimeMs (Unix ms).
//   registerCloudlyClientSession { identity: { token }, offer }
//       -> { offer: { sessionKind: "cloudlyClient", release: Options.release } } when the token was issued
//          here and has not expired by Options.now() (and was not revoked); else relay-identity-unverified.
//          sessionRegistered() is emitted after the answer is sent.
//   refreshClusterIdentity { identity: { token } } -> { identity: <new ClusterIdentity> } (same token rule).
//   getClusterConfig {} -> { cluster: { id: Options.clusterId, name: Options.clusterName,
//                                       relay: { origin: Options.relayOrigin } | null, nodes: Options.clusterNodes } }
//   getClusterRelayCertificate { domain }
//       -> { certificate: { domain, certificatePem (leaf then CA), privateKeyPem (PKCS#8) } } issued by the
//          CA for `domain` (DNS:domain; "localhost" also gets IP 127.0.0.1/::1), valid for
//          Options.relayCertificateLifetimeMs from the real system time; or setRelayCertificate()'s material.
//   registerPalletRuntimeSession { offer, nodeId, authorization, nodeInstanceNonce, ... }
//       -> { offer: { sessionKind: "palletRuntime", release: Options.release },
//            session: { nodeId, clusterId, sessionId: fresh UUID, relayRegistrationGeneration } }
//          (palletSessionRegistered(binding) is emitted after the answer is sent). A missing/empty nodeId
//          is refused request-invalid.
//   getRuntimeManagedVpnCredential, getRuntimeRegistryCredential, reportRuntimeNetworkProtection,
//   reportRuntimeAssignmentObservation, reportRuntimeAssignmentTerminalReceipt -> { accepted: true }
//   registerClusterIngress { offer, ingressId, nodeId, authorization }
//       -> { offer: { sessionKind: "clusterIngress", release: Options.release },
//            ingress: { id: ingressId, generation: n } } (n counts accepted ingress registrations from 1).
//   getClusterRouteTable {} -> { routeTable: setClusterRouteTable()'s value } (null until one is set).
//   getCorestoreControlRecipientState, beginCorestoreControlRecipientEnrollment,
//   completeCorestoreControlRecipientEnrollment, getCorestoreControlCredentialMaterial -> the §12.1
//       exchange, verified for real (corestoreRecipients(), cloudlycorestorerecipients.h).
//   getSecretIngressRecipient, publishCorestoreCredentialMaterial -> the §12.4 publication, the sealed
//       envelope opened and checked for real (secretIngress(), cloudlysecretingress.h).
//   any other method -> refusal "method-not-served: cloudly serves no method <name>".
//
// One origin for the session and the registry (Options.httpFront): the peer terminates TLS itself in a
// LoopbackHttpFront and hands WebSocket upgrades to its WebSocket server as before; with
// setHttpPassthrough(port, paths) every connection whose first request is under /v2/ or names one of
// `paths` (the token realm path) is piped to a plain-HTTP backend on 127.0.0.1:port instead, so the
// relay's image pulls (docs/contract.md §17: the registry is CLOUDLY_URL's origin) reach a real
// registry through "Cloudly". Without httpFront the WebSocket server listens itself (SecureMode).
//
// Any WebSocket peer may dial it (the relay, or a SimulatedPalletNode in a peer self-test); every
// connected socket is answered the same way. Pushes go to the most recently connected open socket.
//
// Typical in-process integration test:
//   TestCertificateAuthority ca;
//   LoopbackCloudly cloudly(ca, {.bearer = "relay-bearer", .relayOrigin = "https://localhost:" + port});
//   QVERIFY(cloudly.listen());
//   ... start the relay with CLOUDLY_URL = cloudly.url(), CA file from ca.writeCaPem(...)
//   QTRY_COMPARE(cloudly.callCount("registerCloudlyClientSession"), 1);
#include "tests/peers/answer.h"
#include "tests/peers/cloudlycorestorerecipients.h"
#include "tests/peers/cloudlysecretingress.h"
#include "tests/peers/receivedframe.h"
#include "tests/peers/testcertificateauthority.h"

#include "tests/peers/peerenvelope.h"
#include "tests/peers/peersessionbinding.h"

#include <QHash>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QPointer>
#include <QUrl>
#include <functional>
#include <memory>
#include <optional>

class QWebSocket;
class QWebSocketServer;

namespace coreflow::peers {

class LoopbackHttpFront;

class LoopbackCloudly : public QObject {
    Q_OBJECT
public:
    // (frame, request) -> what to do. `request` is frame.request parsed as an object ({} if unparsable).
    using Handler = std::function<Answer(const PeerFrame &frame, const QJsonObject &request)>;
    // Called with the relay's response-phase frame to a push (check frame.hasError()/errorRefusal()).
    using PushCallback = std::function<void(const PeerFrame &answer)>;

    struct Options {
        QByteArray bearer;                                  // the relay authorization accepted verbatim
        QString clusterId = QStringLiteral("cluster-1");
        QString clusterName = QStringLiteral("Loopback cluster");
        QString release = QStringLiteral("33.1.0");         // release in every answered offer
        QString relayOrigin;                                // "https://host[:port]"; empty -> relay: null
        QJsonArray clusterNodes;                            // getClusterConfig cluster.nodes (ClusterNode[])
        qint64 identityLifetimeMs = 3600000;                // ClusterIdentity lifetime, ms
        qint64 relayCertificateLifetimeMs = 24 * 3600 * 1000; // relay listener certificate lifetime, ms
        std::function<qint64()> now;                        // Unix ms; default: system time
        QHostAddress address = QHostAddress(QHostAddress::LocalHost);
        quint16 port = 0;                                   // 0: any free port
        std::optional<IssuedCertificate> serverCertificate; // Cloudly's own TLS cert; default: ca.issueLocalhost()
        bool httpFront = false; // TLS terminated by a LoopbackHttpFront (needed for setHttpPassthrough)
    };

    explicit LoopbackCloudly(const TestCertificateAuthority &ca, QObject *parent = nullptr);
    LoopbackCloudly(const TestCertificateAuthority &ca, Options options, QObject *parent = nullptr);
    ~LoopbackCloudly() override;

    // --- Listening ---------------------------------------------------------------------------------
    // Starts listening on Options.address:Options.port, or — after a previous listen() — on the port
    // bound then (so stopListening() + listen() comes back on the same URL). Returns false on failure.
    bool listen();
    // Closes the listening socket (new dials are refused at TCP level); open sockets stay open.
    void stopListening();
    bool isListening() const;
    quint16 port() const;            // the bound port (0 before the first listen())
    QUrl url() const;                // wss://localhost:PORT/
    // While true, every WebSocket upgrade is refused (the TLS handshake succeeds, the HTTP upgrade is
    // answered with an error and the socket closed: the client never reaches "connected").
    void refuseConnections(bool refuse);
    // Options.httpFront only: pipe connections whose first request is under /v2/ or at one of
    // extraPaths (exact paths, e.g. "/token") to plain HTTP on 127.0.0.1:backendPort (0: none).
    void setHttpPassthrough(quint16 backendPort, const QStringList &extraPaths = {});
    // Options.httpFront only (else empty): the first request path of every piped connection, in order.
    QStringList pipedHttpPaths() const;

    // --- Connections -------------------------------------------------------------------------------
    // Aborts every open socket (the relay sees its Cloudly session drop).
    void dropRelaySockets();
    // Closes every open socket with a WebSocket close frame (code, reason).
    void closeRelaySockets(int closeCode = 1000, const QString &reason = {});
    int connectionCount() const;       // open sockets now
    int totalConnections() const;      // sockets accepted since construction (refused ones excluded)

    // --- Scripting ---------------------------------------------------------------------------------
    void setHandler(const QString &method, Handler handler);
    // A fixed answer for every request of `method` (Answer::useDefault() restores the default).
    void setAnswer(const QString &method, const Answer &answer);
    void clearHandler(const QString &method);
    void clearHandlers();
    // The default behaviour for one request (for handlers that wrap it, e.g. add a delay).
    Answer defaultAnswer(const PeerFrame &frame, const QJsonObject &request);

    // getClusterRelayCertificate answers this material instead of issuing one; `domain` empty: echo the
    // requested domain. resetRelayCertificate() restores issuing per request.
    void setRelayCertificate(const IssuedCertificate &material, const QString &domain = {});
    void setRelayCertificatePem(const QByteArray &certificatePem, const QByteArray &privateKeyPem,
                                const QString &domain = {});
    void resetRelayCertificate();
    // The response object { certificate: { domain, certificatePem, privateKeyPem } } for material.
    static QJsonObject certificateResponse(const QString &domain, const IssuedCertificate &material);

    void setRelayRegistrationGeneration(qint64 generation);
    // What getClusterRouteTable answers as routeTable: a ClusterRouteTable object, or null (the default).
    void setClusterRouteTable(const QJsonValue &table) { m_routeTable = table; }
    // registerClusterRelay's default acceptance: { offer, origin: Options.relayOrigin, credential:
    // { id, generation } (settable; "rotating" the generation makes later acceptances name another
    // one), registration: { id: "relay-registration-1", generation: +1 per acceptance } }.
    void setRelayCredential(const QString &id, qint64 generation)
    {
        m_relayCredentialId = id;
        m_relayCredentialGeneration = generation;
    }
    qint64 relayRegistrationRecordGeneration() const { return m_relayRecordGeneration; }
    qint64 relayRegistrationGeneration() const;
    void setRelayOrigin(const QString &origin);           // "" -> relay: null
    void setBearer(const QByteArray &bearer);
    // Every identity token issued so far stops being valid (registerCloudlyClientSession and
    // refreshClusterIdentity with it are refused relay-identity-unverified).
    void revokeIdentityTokens();
    Options &options() { return m_options; }
    // The Corestore control recipient side of §12.1 (see cloudlycorestorerecipients.h): the four
    // methods are answered by it unless a handler is set for them.
    CloudlyCorestoreRecipients &corestoreRecipients() { return *m_corestoreRecipients; }
    // The secret ingress recipient and the publication of §12.4 (see cloudlysecretingress.h): the two
    // methods are answered by it unless a handler is set for them.
    CloudlySecretIngress &secretIngress() { return *m_secretIngress; }

    // --- Observation -------------------------------------------------------------------------------
    const QList<ReceivedFrame> &frames() const { return m_frames; }   // every received text frame
    QList<ReceivedFrame> requests(const QString &method) const;       // request-phase frames of method
    int callCount(const QString &method) const;                       // request-phase frames of method
    QByteArray lastRawRequest(const QString &method) const;           // its request bytes, empty if none
    std::optional<ReceivedFrame> lastRequest(const QString &method) const;
    void clearLog();
    // Every identity answered (exchange and refresh), oldest first.
    const QList<QJsonObject> &issuedIdentities() const { return m_issuedIdentities; }
    // Every SessionBinding answered by registerPalletRuntimeSession, oldest first.
    const QList<PeerSessionBinding> &issuedBindings() const { return m_issuedBindings; }
    std::optional<PeerSessionBinding> bindingFor(const QString &nodeId) const; // the latest one
    int registeredSessionCount() const { return m_registeredSessions; }

    // --- Pushing (Cloudly -> relay) ---------------------------------------------------------------
    // Sends a request frame { method, request: rawRequestJson (verbatim), correlation: { id: fresh,
    // phase: "request" } } to the latest open socket; onAnswer gets the response-phase frame with that
    // id. Returns the correlation id, or an empty string when no socket is open (onAnswer never runs).
    QString push(const QString &method, const QByteArray &rawRequestJson, PushCallback onAnswer = {});
    QString push(const QString &method, const QJsonObject &request, PushCallback onAnswer = {});
    // Sends bytes verbatim as one text frame to the latest open socket. False when none is open.
    bool pushRaw(const QByteArray &frame);

    // --- Binary frames (database closure chunks, §13.4) -------------------------------------------
    // Without a binary handler a binary frame closes the socket with 1003 (text frames only). With
    // one, every binary message from the relay is handed to it.
    void setBinaryHandler(std::function<void(const QByteArray &payload)> handler) { m_binaryHandler = std::move(handler); }
    // Sends one binary message to the latest open socket. False when none is open.
    bool sendBinary(const QByteArray &payload);
    // Bytes the latest open socket has not written yet (0 without one).
    qint64 bytesToWrite() const;
    int pendingPushCount() const { return int(m_pendingPushes.size()); }

Q_SIGNALS:
    void frameReceived(const QString &method);         // any parsed frame (both phases)
    void requestReceived(const QString &method);       // request-phase frames only
    void invalidFrameReceived(const QByteArray &raw);  // PeerEnvelope::parse refused it
    void relayConnected();
    void relayDisconnected();
    void sessionRegistered();                          // registerCloudlyClientSession answered ok
    void palletSessionRegistered(const coreflow::peers::PeerSessionBinding &binding);
    void pushAnswered(const QString &method, const QString &correlationId);

private:
    struct PendingPush {
        QString method;
        QPointer<QWebSocket> socket;
        PushCallback callback;
    };

    void onNewConnection();
    void onTextMessage(QWebSocket *socket, const QByteArray &utf8);
    void onSocketGone(QWebSocket *socket);
    QWebSocket *latestSocket() const;
    qint64 now() const;
    QJsonObject newIdentity();
    bool tokenValid(const QJsonObject &request) const;

    Answer answerExchange(const QJsonObject &request);
    Answer answerRegisterCloudlyClientSession(const QJsonObject &request);
    Answer answerRefresh(const QJsonObject &request);
    Answer answerClusterConfig();
    Answer answerRelayCertificate(const QJsonObject &request);
    Answer answerRegisterPalletRuntimeSession(const QJsonObject &request);
    Answer answerRegisterClusterIngress(const QJsonObject &request);
    Answer answerRegisterClusterRelay(const QJsonObject &request);

    TestCertificateAuthority m_ca;
    Options m_options;
    QWebSocketServer *m_server = nullptr;
    LoopbackHttpFront *m_front = nullptr; // Options.httpFront
    quint16 m_boundPort = 0;
    bool m_refuse = false;
    QList<QPointer<QWebSocket>> m_sockets;
    int m_totalConnections = 0;
    QHash<QString, Handler> m_handlers;
    QList<ReceivedFrame> m_frames;
    QHash<QString, qint64> m_tokens; // token -> expiresAt (Unix ms)
    QList<QJsonObject> m_issuedIdentities;
    QList<PeerSessionBinding> m_issuedBindings;
    int m_registeredSessions = 0;
    qint64 m_generation = 0;
    QJsonValue m_routeTable = QJsonValue(QJsonValue::Null);
    QString m_relayCredentialId = QStringLiteral("relay-credential-1");
    qint64 m_relayCredentialGeneration = 1;
    qint64 m_relayRecordGeneration = 0;
    qint64 m_ingressGeneration = 0;
    std::optional<QJsonObject> m_certificateOverride; // { domain?, certificatePem, privateKeyPem }
    QHash<QString, PendingPush> m_pendingPushes;
    std::function<void(const QByteArray &)> m_binaryHandler;
    struct BinaryCount {
        qint64 messages = 0;
        qint64 bytes = 0;
    };
    QHash<const QWebSocket *, BinaryCount> m_binaryCounts; // per socket, for ReceivedFrame::binary*Before
    std::unique_ptr<CloudlyCorestoreRecipients> m_corestoreRecipients;
    std::unique_ptr<CloudlySecretIngress> m_secretIngress;
    quint64 m_pushCounter = 0;
};

} // namespace coreflow::peers
