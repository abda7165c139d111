#include "tests/peers/loopbackcloudly.h"

#include "tests/peers/loopbackhttpfront.h"
#include "tests/peers/peercontractnames.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QRandomGenerator>
#include <QTcpSocket>
#include <QSslError>
#include <QUuid>
#include <QWebSocket>
#include <QWebSocketCorsAuthenticator>
#include <QWebSocketServer>

Q_LOGGING_CATEGORY(lcPeersCloudly, "coreflow.peers.cloudly")

namespace coreflow::peers {

namespace {

QString randomToken()
{
    QByteArray bytes(24, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), bytes.size() / 4);
    return QString::fromLatin1(bytes.toBase64(QByteArray::Base64UrlEncoding | QByteArray::OmitTrailingEquals));
}

QJsonObject parseObject(QByteArrayView raw)
{
    const QJsonDocument doc = QJsonDocument::fromJson(raw.toByteArray());
    return doc.isObject() ? doc.object() : QJsonObject{};
}

} // namespace

LoopbackCloudly::LoopbackCloudly(const TestCertificateAuthority &ca, QObject *parent)
    : LoopbackCloudly(ca, Options{}, parent)
{
}

LoopbackCloudly::LoopbackCloudly(const TestCertificateAuthority &ca, Options options, QObject *parent)
    : QObject(parent), m_ca(ca), m_options(std::move(options))
{
    m_corestoreRecipients = std::make_unique<CloudlyCorestoreRecipients>([this] { return now(); });
    m_secretIngress = std::make_unique<CloudlySecretIngress>([this] { return now(); }, [this] { return m_options.clusterId; });
    const IssuedCertificate serverCert = m_options.serverCertificate ? *m_options.serverCertificate : m_ca.issueLocalhost();
    if (m_options.httpFront) {
        m_server = new QWebSocketServer(QStringLiteral("loopback-cloudly"), QWebSocketServer::NonSecureMode, this);
        m_front = new LoopbackHttpFront(TestCertificateAuthority::serverConfiguration(serverCert), this);
        connect(m_front, &LoopbackHttpFront::upgradeRequested, this,
                [this](QTcpSocket *socket) { m_server->handleConnection(socket); });
    } else {
        m_server = new QWebSocketServer(QStringLiteral("loopback-cloudly"), QWebSocketServer::SecureMode, this);
        m_server->setSslConfiguration(TestCertificateAuthority::serverConfiguration(serverCert));
    }
    connect(m_server, &QWebSocketServer::newConnection, this, &LoopbackCloudly::onNewConnection);
    connect(m_server, &QWebSocketServer::sslErrors, this, [](const QList<QSslError> &errors) {
        for (const QSslError &e : errors)
            qCInfo(lcPeersCloudly) << "TLS error on an incoming connection:" << e.errorString();
    });
    // Refusing at the upgrade: the handshake is answered with an HTTP error, the client never connects.
    connect(m_server, &QWebSocketServer::originAuthenticationRequired, this,
            [this](QWebSocketCorsAuthenticator *authenticator) {
                if (m_refuse) {
                    qCInfo(lcPeersCloudly) << "refusing a WebSocket upgrade (refuseConnections)";
                    authenticator->setAllowed(false);
                }
            });
    connect(m_server, &QWebSocketServer::acceptError, this, [](QAbstractSocket::SocketError error) {
        qCWarning(lcPeersCloudly) << "accept error" << error;
    });
    connect(m_server, &QWebSocketServer::serverError, this, [](QWebSocketProtocol::CloseCode code) {
        qCInfo(lcPeersCloudly) << "WebSocket upgrade failed, close code" << int(code);
    });
}

LoopbackCloudly::~LoopbackCloudly()
{
    m_pendingPushes.clear();
    for (const auto &socket : std::as_const(m_sockets)) {
        if (socket) {
            socket->disconnect(this);
            socket->abort();
        }
    }
}

// --- Listening -----------------------------------------------------------------------------------

bool LoopbackCloudly::listen()
{
    if (isListening())
        return true;
    const quint16 port = m_boundPort ? m_boundPort : m_options.port;
    if (m_front) {
        if (!m_front->listen(m_options.address, port)) {
            qCWarning(lcPeersCloudly) << "cannot listen on" << m_options.address.toString() << port << m_front->errorString();
            return false;
        }
        m_boundPort = m_front->port();
        qCInfo(lcPeersCloudly) << "listening at" << url().toString() << "(TLS front: session and registry)";
        return true;
    }
    if (!m_server->listen(m_options.address, port)) {
        qCWarning(lcPeersCloudly) << "cannot listen on" << m_options.address.toString() << port << m_server->errorString();
        return false;
    }
    m_boundPort = m_server->serverPort();
    qCInfo(lcPeersCloudly) << "listening at" << url().toString();
    return true;
}

void LoopbackCloudly::stopListening()
{
    if (m_front) {
        if (m_front->isListening()) {
            m_front->close();
            qCInfo(lcPeersCloudly) << "stopped listening on port" << m_boundPort;
        }
        return;
    }
    if (m_server->isListening()) {
        m_server->close();
        qCInfo(lcPeersCloudly) << "stopped listening on port" << m_boundPort;
    }
}

bool LoopbackCloudly::isListening() const { return m_front ? m_front->isListening() : m_server->isListening(); }

void LoopbackCloudly::setHttpPassthrough(quint16 backendPort, const QStringList &extraPaths)
{
    if (m_front)
        m_front->setPassthrough(backendPort, extraPaths);
    else
        qCWarning(lcPeersCloudly) << "setHttpPassthrough needs Options.httpFront";
}

QStringList LoopbackCloudly::pipedHttpPaths() const { return m_front ? m_front->pipedPaths() : QStringList(); }

quint16 LoopbackCloudly::port() const { return m_boundPort; }

QUrl LoopbackCloudly::url() const { return QUrl(QStringLiteral("wss://localhost:%1/").arg(m_boundPort)); }

void LoopbackCloudly::refuseConnections(bool refuse) { m_refuse = refuse; }

// --- Connections ---------------------------------------------------------------------------------

void LoopbackCloudly::onNewConnection()
{
    while (m_server->hasPendingConnections()) {
        QWebSocket *socket = m_server->nextPendingConnection();
        if (!socket)
            break;
        socket->setParent(this);
        if (m_refuse) {
            qCInfo(lcPeersCloudly) << "refusing a connection (refuseConnections)";
            socket->abort();
            socket->deleteLater();
            continue;
        }
        ++m_totalConnections;
        m_sockets.append(socket);
        qCInfo(lcPeersCloudly) << "connection" << m_totalConnections << "from" << socket->peerAddress().toString()
                               << socket->peerPort() << "path" << socket->requestUrl().path();
        connect(socket, &QWebSocket::textMessageReceived, this,
                [this, socket](const QString &message) { onTextMessage(socket, message.toUtf8()); });
        connect(socket, &QWebSocket::binaryMessageReceived, this, [this, socket](const QByteArray &payload) {
            BinaryCount &count = m_binaryCounts[socket];
            ++count.messages;
            count.bytes += payload.size();
            if (m_binaryHandler)
                return m_binaryHandler(payload);
            qCWarning(lcPeersCloudly) << "binary frame received; closing with 1003";
            socket->close(QWebSocketProtocol::CloseCodeDatatypeNotSupported, QStringLiteral("text frames only"));
        });
        connect(socket, &QWebSocket::disconnected, this, [this, socket] { onSocketGone(socket); });
        Q_EMIT relayConnected();
    }
}

void LoopbackCloudly::onSocketGone(QWebSocket *socket)
{
    const qsizetype index = m_sockets.indexOf(socket);
    if (index < 0)
        return;
    m_sockets.removeAt(index);
    m_binaryCounts.remove(socket);
    for (auto it = m_pendingPushes.begin(); it != m_pendingPushes.end();) {
        if (it->socket == socket || !it->socket) {
            qCInfo(lcPeersCloudly) << "push" << it->method << it.key() << "lost with its socket";
            it = m_pendingPushes.erase(it);
        } else {
            ++it;
        }
    }
    qCInfo(lcPeersCloudly) << "connection closed" << socket->closeCode() << socket->closeReason();
    socket->deleteLater();
    Q_EMIT relayDisconnected();
}

void LoopbackCloudly::dropRelaySockets()
{
    const auto sockets = m_sockets;
    for (const auto &socket : sockets)
        if (socket)
            socket->abort();
}

void LoopbackCloudly::closeRelaySockets(int closeCode, const QString &reason)
{
    const auto sockets = m_sockets;
    for (const auto &socket : sockets)
        if (socket)
            socket->close(QWebSocketProtocol::CloseCode(closeCode), reason);
}

int LoopbackCloudly::connectionCount() const
{
    int n = 0;
    for (const auto &socket : m_sockets)
        if (socket && socket->state() == QAbstractSocket::ConnectedState)
            ++n;
    return n;
}

int LoopbackCloudly::totalConnections() const { return m_totalConnections; }

QWebSocket *LoopbackCloudly::latestSocket() const
{
    for (auto it = m_sockets.crbegin(); it != m_sockets.crend(); ++it)
        if (*it && (*it)->state() == QAbstractSocket::ConnectedState)
            return *it;
    return nullptr;
}

// --- Frames --------------------------------------------------------------------------------------

void LoopbackCloudly::onTextMessage(QWebSocket *socket, const QByteArray &utf8)
{
    ReceivedFrame record;
    record.rawFrame = utf8;
    record.timeMs = QDateTime::currentMSecsSinceEpoch();
    record.binaryMessagesBefore = m_binaryCounts.value(socket).messages;
    record.binaryBytesBefore = m_binaryCounts.value(socket).bytes;
    auto parsed = PeerEnvelope::parse(utf8);
    if (!parsed) {
        record.parsed = false;
        record.parseRefusal = parsed.refusal();
        m_frames.append(record);
        qCWarning(lcPeersCloudly) << "unparsable frame:" << parsed.refusal().text();
        Q_EMIT invalidFrameReceived(utf8);
        return;
    }
    const PeerFrame frame = parsed.value();
    record.method = frame.method;
    record.correlationId = frame.correlationId;
    record.phase = frame.phase;
    record.rawRequest = frame.request.toByteArray();
    record.rawResponse = frame.response.toByteArray();
    record.rawError = frame.error.toByteArray();
    m_frames.append(record);
    Q_EMIT frameReceived(frame.method);

    if (frame.phase == Phase::Response) {
        auto it = m_pendingPushes.find(frame.correlationId);
        if (it == m_pendingPushes.end()) {
            qCWarning(lcPeersCloudly) << "answer" << frame.method << frame.correlationId << "matches no push";
            return;
        }
        PendingPush pending = it.value();
        m_pendingPushes.erase(it);
        qCInfo(lcPeersCloudly) << "push" << pending.method << frame.correlationId << "answered"
                               << (frame.hasError() ? frame.errorRefusal().text() : QStringLiteral("ok"));
        if (pending.callback)
            pending.callback(frame);
        Q_EMIT pushAnswered(pending.method, frame.correlationId);
        return;
    }

    qCInfo(lcPeersCloudly) << "request" << frame.method << frame.correlationId;
    Q_EMIT requestReceived(frame.method);
    const auto requestObject = frame.requestObject();
    const QJsonObject request = requestObject ? requestObject.value() : QJsonObject{};

    Answer answer = Answer::useDefault();
    if (const auto handler = m_handlers.value(frame.method))
        answer = handler(frame, request);
    if (answer.kind == Answer::Kind::Default) {
        const qint64 delay = answer.delayMs;
        answer = defaultAnswer(frame, request);
        if (delay > 0)
            answer.delayMs = delay;
    }

    std::function<void()> onSent;
    if (answer.kind == Answer::Kind::Response && frame.method == method::registerCloudlyClientSession) {
        onSent = [this] {
            ++m_registeredSessions;
            Q_EMIT sessionRegistered();
        };
    } else if (answer.kind == Answer::Kind::Response && frame.method == method::registerPalletRuntimeSession) {
        const QJsonObject response = parseObject(answer.rawResponse);
        auto binding = PeerSessionBinding::read(response.value(QStringLiteral("session")).toObject(),
                                                      QStringLiteral("session"));
        if (binding) {
            onSent = [this, b = binding.value()] {
                m_issuedBindings.append(b);
                Q_EMIT palletSessionRegistered(b);
            };
        }
    }
    deliverAnswer(this, socket, frame, answer, std::move(onSent));
}

Answer LoopbackCloudly::defaultAnswer(const PeerFrame &frame, const QJsonObject &request)
{
    const QString &m = frame.method;
    if (m_corestoreRecipients->serves(m))
        return m_corestoreRecipients->answer(m, request);
    if (m_secretIngress->serves(m))
        return m_secretIngress->answer(m, request);
    if (m == method::exchangeClusterRelayAuthorization)
        return answerExchange(request);
    if (m == method::registerCloudlyClientSession)
        return answerRegisterCloudlyClientSession(request);
    if (m == method::refreshClusterIdentity)
        return answerRefresh(request);
    if (m == method::getClusterConfig)
        return answerClusterConfig();
    if (m == method::getClusterRelayCertificate)
        return answerRelayCertificate(request);
    if (m == method::registerPalletRuntimeSession)
        return answerRegisterPalletRuntimeSession(request);
    if (m == method::registerClusterIngress)
        return answerRegisterClusterIngress(request);
    if (m == method::registerClusterRelay)
        return answerRegisterClusterRelay(request);
    if (m == method::getClusterRouteTable)
        return Answer::respond({{QStringLiteral("routeTable"), m_routeTable}});
    for (const auto &nodeMethod : method::forwardedNodeMethods)
        if (m == nodeMethod)
            return Answer::respond({{QStringLiteral("accepted"), true}});
    return Answer::refuse(refusal::methodNotServed, QStringLiteral("cloudly serves no method %1").arg(m));
}

Answer LoopbackCloudly::answerRegisterClusterRelay(const QJsonObject &request)
{
    if (!request.value(QStringLiteral("relay")).isObject() || !request.value(QStringLiteral("offer")).isObject()
        || !request.value(QStringLiteral("registrationSequence")).isDouble())
        return Answer::refuse(refusal::requestInvalid, QStringLiteral("registerClusterRelay needs relay, registrationSequence and offer"));
    if (m_options.relayOrigin.isEmpty())
        return Answer::refuse(refusal::relayClusterNotEnabled, QStringLiteral("no relay is enabled for this cluster"));
    ++m_relayRecordGeneration;
    return Answer::respond(QJsonObject{
        {QStringLiteral("offer"), QJsonObject{{QStringLiteral("sessionKind"), QStringLiteral("cloudlyClient")},
                                              {QStringLiteral("release"), m_options.release}}},
        {QStringLiteral("origin"), m_options.relayOrigin},
        {QStringLiteral("credential"), QJsonObject{{QStringLiteral("id"), m_relayCredentialId},
                                                   {QStringLiteral("generation"), double(m_relayCredentialGeneration)}}},
        {QStringLiteral("registration"), QJsonObject{{QStringLiteral("id"), QStringLiteral("relay-registration-1")},
                                                     {QStringLiteral("generation"), double(m_relayRecordGeneration)}}}});
}

qint64 LoopbackCloudly::now() const
{
    return m_options.now ? m_options.now() : QDateTime::currentMSecsSinceEpoch();
}

QJsonObject LoopbackCloudly::newIdentity()
{
    const QString token = randomToken();
    const qint64 expiresAt = now() + m_options.identityLifetimeMs;
    m_tokens.insert(token, expiresAt);
    const QJsonObject identity{{QStringLiteral("token"), token},
                               {QStringLiteral("clusterId"), m_options.clusterId},
                               {QStringLiteral("expiresAt"), double(expiresAt)}};
    m_issuedIdentities.append(identity);
    return identity;
}

bool LoopbackCloudly::tokenValid(const QJsonObject &request) const
{
    const QJsonValue token = request.value(QStringLiteral("identity")).toObject().value(QStringLiteral("token"));
    if (!token.isString())
        return false;
    const auto it = m_tokens.constFind(token.toString());
    return it != m_tokens.constEnd() && now() < it.value();
}

Answer LoopbackCloudly::answerExchange(const QJsonObject &request)
{
    const QJsonValue authorization = request.value(QStringLiteral("authorization"));
    // Byte-for-byte: the JSON string's UTF-8 bytes against the configured bearer.
    if (!authorization.isString() || m_options.bearer.isEmpty() || authorization.toString().toUtf8() != m_options.bearer)
        return Answer::refuse(refusal::relayIdentityUnverified, QStringLiteral("the relay authorization is not accepted"));
    return Answer::respond({{QStringLiteral("identity"), newIdentity()}});
}

Answer LoopbackCloudly::answerRegisterCloudlyClientSession(const QJsonObject &request)
{
    if (!tokenValid(request))
        return Answer::refuse(refusal::relayIdentityUnverified, QStringLiteral("the identity token is not valid"));
    return Answer::respond({{QStringLiteral("offer"),
                             offerJson(QString(sessionKind::cloudlyClient), m_options.release)}});
}

Answer LoopbackCloudly::answerRefresh(const QJsonObject &request)
{
    if (!tokenValid(request))
        return Answer::refuse(refusal::relayIdentityUnverified, QStringLiteral("the identity token is not valid"));
    return Answer::respond({{QStringLiteral("identity"), newIdentity()}});
}

Answer LoopbackCloudly::answerClusterConfig()
{
    QJsonValue relay = QJsonValue::Null;
    if (!m_options.relayOrigin.isEmpty())
        relay = QJsonObject{{QStringLiteral("origin"), m_options.relayOrigin}};
    return Answer::respond({{QStringLiteral("cluster"),
                             QJsonObject{{QStringLiteral("id"), m_options.clusterId},
                                         {QStringLiteral("name"), m_options.clusterName},
                                         {QStringLiteral("relay"), relay},
                                         {QStringLiteral("nodes"), m_options.clusterNodes}}}});
}

QJsonObject LoopbackCloudly::certificateResponse(const QString &domain, const IssuedCertificate &material)
{
    return QJsonObject{{QStringLiteral("certificate"),
                        QJsonObject{{QStringLiteral("domain"), domain},
                                    {QStringLiteral("certificatePem"), QString::fromLatin1(material.certPem)},
                                    {QStringLiteral("privateKeyPem"), QString::fromLatin1(material.keyPem)}}}};
}

Answer LoopbackCloudly::answerRelayCertificate(const QJsonObject &request)
{
    const QJsonValue domainValue = request.value(QStringLiteral("domain"));
    if (!domainValue.isString() || domainValue.toString().isEmpty())
        return Answer::refuse(refusal::requestInvalid, QStringLiteral("field domain is missing or not a string"));
    const QString domain = domainValue.toString();
    if (m_certificateOverride) {
        QJsonObject certificate = *m_certificateOverride;
        if (!certificate.contains(QStringLiteral("domain")))
            certificate.insert(QStringLiteral("domain"), domain);
        return Answer::respond({{QStringLiteral("certificate"), certificate}});
    }
    const IssuedCertificate issued = m_ca.issueForHost(domain, m_options.relayCertificateLifetimeMs);
    if (issued.isNull())
        return Answer::refuse(QLatin1StringView("certificate-unavailable"), QStringLiteral("the test CA failed"));
    return Answer::respond(certificateResponse(domain, issued));
}

Answer LoopbackCloudly::answerRegisterClusterIngress(const QJsonObject &request)
{
    const QJsonValue ingressId = request.value(QStringLiteral("ingressId"));
    if (!ingressId.isString() || ingressId.toString().isEmpty())
        return Answer::refuse(refusal::requestInvalid, QStringLiteral("field ingressId is missing or not a string"));
    return Answer::respond(
        {{QStringLiteral("offer"),
          offerJson(QString(sessionKind::clusterIngress), m_options.release)},
         {QStringLiteral("ingress"), QJsonObject{{QStringLiteral("id"), ingressId.toString()},
                                                 {QStringLiteral("generation"), ++m_ingressGeneration}}}});
}

Answer LoopbackCloudly::answerRegisterPalletRuntimeSession(const QJsonObject &request)
{
    const QJsonValue nodeId = request.value(QStringLiteral("nodeId"));
    if (!nodeId.isString() || nodeId.toString().isEmpty())
        return Answer::refuse(refusal::requestInvalid, QStringLiteral("field nodeId is missing or not a string"));
    const PeerSessionBinding binding{nodeId.toString(), m_options.clusterId,
                                           QUuid::createUuid().toString(QUuid::WithoutBraces), m_generation};
    return Answer::respond(
        {{QStringLiteral("offer"),
          offerJson(QString(sessionKind::palletRuntime), m_options.release)},
         {QStringLiteral("session"), binding.toJson()}});
}

// --- Scripting -----------------------------------------------------------------------------------

void LoopbackCloudly::setHandler(const QString &method, Handler handler)
{
    if (handler)
        m_handlers.insert(method, std::move(handler));
    else
        m_handlers.remove(method);
}

void LoopbackCloudly::setAnswer(const QString &method, const Answer &answer)
{
    setHandler(method, [answer](const PeerFrame &, const QJsonObject &) { return answer; });
}

void LoopbackCloudly::clearHandler(const QString &method) { m_handlers.remove(method); }

void LoopbackCloudly::clearHandlers() { m_handlers.clear(); }

void LoopbackCloudly::setRelayCertificate(const IssuedCertificate &material, const QString &domain)
{
    setRelayCertificatePem(material.certPem, material.keyPem, domain);
}

void LoopbackCloudly::setRelayCertificatePem(const QByteArray &certificatePem, const QByteArray &privateKeyPem,
                                             const QString &domain)
{
    QJsonObject certificate{{QStringLiteral("certificatePem"), QString::fromLatin1(certificatePem)},
                            {QStringLiteral("privateKeyPem"), QString::fromLatin1(privateKeyPem)}};
    if (!domain.isEmpty())
        certificate.insert(QStringLiteral("domain"), domain);
    m_certificateOverride = certificate;
}

void LoopbackCloudly::resetRelayCertificate() { m_certificateOverride.reset(); }

void LoopbackCloudly::setRelayRegistrationGeneration(qint64 generation) { m_generation = generation; }

qint64 LoopbackCloudly::relayRegistrationGeneration() const { return m_generation; }

void LoopbackCloudly::setRelayOrigin(const QString &origin) { m_options.relayOrigin = origin; }

void LoopbackCloudly::setBearer(const QByteArray &bearer) { m_options.bearer = bearer; }

void LoopbackCloudly::revokeIdentityTokens() { m_tokens.clear(); }

// --- Observation ---------------------------------------------------------------------------------

QList<ReceivedFrame> LoopbackCloudly::requests(const QString &method) const
{
    QList<ReceivedFrame> out;
    for (const ReceivedFrame &f : m_frames)
        if (f.parsed && f.phase == Phase::Request && f.method == method)
            out.append(f);
    return out;
}

int LoopbackCloudly::callCount(const QString &method) const
{
    int n = 0;
    for (const ReceivedFrame &f : m_frames)
        if (f.parsed && f.phase == Phase::Request && f.method == method)
            ++n;
    return n;
}

std::optional<ReceivedFrame> LoopbackCloudly::lastRequest(const QString &method) const
{
    for (auto it = m_frames.crbegin(); it != m_frames.crend(); ++it)
        if (it->parsed && it->phase == Phase::Request && it->method == method)
            return *it;
    return std::nullopt;
}

QByteArray LoopbackCloudly::lastRawRequest(const QString &method) const
{
    const auto last = lastRequest(method);
    return last ? last->rawRequest : QByteArray();
}

void LoopbackCloudly::clearLog() { m_frames.clear(); }

std::optional<PeerSessionBinding> LoopbackCloudly::bindingFor(const QString &nodeId) const
{
    for (auto it = m_issuedBindings.crbegin(); it != m_issuedBindings.crend(); ++it)
        if (it->nodeId == nodeId)
            return *it;
    return std::nullopt;
}

// --- Pushing -------------------------------------------------------------------------------------

QString LoopbackCloudly::push(const QString &method, const QByteArray &rawRequestJson, PushCallback onAnswer)
{
    QWebSocket *socket = latestSocket();
    if (!socket) {
        qCWarning(lcPeersCloudly) << "push" << method << "has no open socket";
        return {};
    }
    const QString id = QStringLiteral("cloudly-push-%1").arg(++m_pushCounter);
    m_pendingPushes.insert(id, PendingPush{method, socket, std::move(onAnswer)});
    qCInfo(lcPeersCloudly) << "push" << method << id;
    socket->sendTextMessage(QString::fromUtf8(PeerEnvelope::request(method, id, rawRequestJson)));
    return id;
}

QString LoopbackCloudly::push(const QString &method, const QJsonObject &request, PushCallback onAnswer)
{
    return push(method, PeerEnvelope::compact(request), std::move(onAnswer));
}

bool LoopbackCloudly::sendBinary(const QByteArray &payload)
{
    QWebSocket *socket = latestSocket();
    if (!socket)
        return false;
    socket->sendBinaryMessage(payload);
    return true;
}

qint64 LoopbackCloudly::bytesToWrite() const
{
    QWebSocket *socket = latestSocket();
    return socket ? socket->bytesToWrite() : 0;
}

bool LoopbackCloudly::pushRaw(const QByteArray &frame)
{
    QWebSocket *socket = latestSocket();
    if (!socket)
        return false;
    socket->sendTextMessage(QString::fromUtf8(frame));
    return true;
}

} // namespace coreflow::peers
