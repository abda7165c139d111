#include "tests/peers/simulatedpalletnode.h"

#include <QDateTime>
#include <QLoggingCategory>
#include <QNetworkRequest>
#include <QSslConfiguration>
#include <QUuid>
#include <QWebSocket>

Q_LOGGING_CATEGORY(lcPeersNode, "coreflow.peers.node")

namespace coreflow::peers {

SimulatedPalletNode::SimulatedPalletNode(Options options, QObject *parent)
    : QObject(parent), m_options(std::move(options))
{
    if (m_options.nodeInstanceNonce.isEmpty())
        m_options.nodeInstanceNonce = QUuid::createUuid().toString(QUuid::WithoutBraces);
}

SimulatedPalletNode::~SimulatedPalletNode()
{
    m_pending.clear();
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        delete m_socket.data();
    }
}

// --- Connection ----------------------------------------------------------------------------------

void SimulatedPalletNode::open(const QUrl &url)
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
    }
    m_sslErrors.clear();
    m_lastError.clear();
    m_closeCode = 0;
    m_closeReason.clear();
    m_wasConnected = false;
    m_pending.clear();

    const QUrl target = url.isEmpty() ? m_options.url : url;
    auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, this);
    m_socket = socket;
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setProtocol(QSsl::TlsV1_2OrLater);
    tls.setCaCertificates(m_options.caCertificates);
    tls.setPeerVerifyMode(QSslSocket::VerifyPeer);
    socket->setSslConfiguration(tls);

    connect(socket, &QWebSocket::connected, this, [this] {
        m_wasConnected = true;
        qCInfo(lcPeersNode) << m_options.nodeId << "connected";
        Q_EMIT connected();
    });
    connect(socket, &QWebSocket::disconnected, this, [this, socket] {
        if (socket != m_socket)
            return;
        m_closeCode = int(socket->closeCode());
        m_closeReason = socket->closeReason();
        m_pending.clear();
        if (m_wasConnected) {
            qCInfo(lcPeersNode) << m_options.nodeId << "disconnected, close code" << m_closeCode << m_closeReason;
            m_wasConnected = false;
            Q_EMIT disconnected();
        } else {
            if (m_lastError.isEmpty())
                m_lastError = socket->errorString();
            qCInfo(lcPeersNode) << m_options.nodeId << "could not connect:" << m_lastError;
            Q_EMIT connectionFailed(m_lastError);
        }
    });
    connect(socket, QOverload<QAbstractSocket::SocketError>::of(&QWebSocket::error), this,
            [this, socket](QAbstractSocket::SocketError) {
                if (m_lastError.isEmpty())
                    m_lastError = socket->errorString();
            });
    connect(socket, &QWebSocket::sslErrors, this, [this](const QList<QSslError> &errors) {
        m_sslErrors += errors;
        for (const QSslError &e : errors)
            qCInfo(lcPeersNode) << m_options.nodeId << "TLS error:" << e.errorString();
    });
    connect(socket, &QWebSocket::textMessageReceived, this,
            [this](const QString &message) { onTextMessage(message.toUtf8()); });

    qCInfo(lcPeersNode) << m_options.nodeId << "dialling" << target.toString();
    socket->open(QNetworkRequest(target));
}

void SimulatedPalletNode::close(int closeCode, const QString &reason)
{
    if (m_socket)
        m_socket->close(QWebSocketProtocol::CloseCode(closeCode), reason);
}

void SimulatedPalletNode::abort()
{
    if (m_socket)
        m_socket->abort();
}

bool SimulatedPalletNode::isConnected() const
{
    return m_socket && m_socket->state() == QAbstractSocket::ConnectedState;
}

// --- Calls ---------------------------------------------------------------------------------------

QString SimulatedPalletNode::nextId() { return QStringLiteral("%1-%2").arg(m_options.nodeId).arg(++m_counter); }

QByteArray SimulatedPalletNode::registrationRequest() const
{
    return PeerEnvelope::compact(
        {{QStringLiteral("offer"),
          QJsonObject{{QStringLiteral("sessionKind"), QStringLiteral("palletRuntime")}, {QStringLiteral("release"), m_options.release}}},
         {QStringLiteral("nodeId"), m_options.nodeId},
         {QStringLiteral("authorization"), QString::fromUtf8(m_options.bearer)},
         {QStringLiteral("nodeInstanceNonce"), m_options.nodeInstanceNonce}});
}

QString SimulatedPalletNode::registerSession(Callback callback, const QString &correlationId)
{
    return call(QStringLiteral("registerPalletRuntimeSession"), registrationRequest(),
                [this, callback = std::move(callback)](const PeerFrame &answer) {
                    if (answer.hasError()) {
                        const PeerRefusal r = answer.errorRefusal();
                        qCInfo(lcPeersNode) << m_options.nodeId << "registration refused:" << r.text();
                        Q_EMIT sessionRefused(r);
                    } else {
                        const auto response = answer.responseObject();
                        auto binding = response ? PeerSessionBinding::read(
                                                      response->value(QStringLiteral("session")).toObject(),
                                                      QStringLiteral("session"))
                                                : PeerResult<PeerSessionBinding>(response.refusal());
                        if (binding) {
                            m_session = binding.value();
                            qCInfo(lcPeersNode) << m_options.nodeId << "registered, session" << m_session->sessionId
                                                << "generation" << m_session->relayRegistrationGeneration;
                            Q_EMIT sessionRegistered(*m_session);
                        } else {
                            qCWarning(lcPeersNode) << m_options.nodeId << "registration answer unreadable:"
                                                   << binding.refusal().text();
                            Q_EMIT sessionRefused(binding.refusal());
                        }
                    }
                    if (callback)
                        callback(answer);
                },
                correlationId);
}

QString SimulatedPalletNode::call(const QString &method, const QByteArray &rawRequest, Callback callback,
                                  const QString &correlationId)
{
    if (!isConnected()) {
        qCWarning(lcPeersNode) << m_options.nodeId << "call" << method << "while not connected";
        return {};
    }
    const QString id = correlationId.isEmpty() ? nextId() : correlationId;
    if (m_pending.contains(id))
        qCWarning(lcPeersNode) << m_options.nodeId << "correlation id" << id << "is already pending; replacing it";
    m_pending.insert(id, {method, std::move(callback)});
    qCInfo(lcPeersNode) << m_options.nodeId << "call" << method << id;
    m_socket->sendTextMessage(QString::fromUtf8(PeerEnvelope::request(method, id, rawRequest)));
    return id;
}

QString SimulatedPalletNode::call(const QString &method, const QJsonObject &request, Callback callback,
                                  const QString &correlationId)
{
    return call(method, PeerEnvelope::compact(request), std::move(callback), correlationId);
}

QString SimulatedPalletNode::callWithSession(const QString &method, const QJsonObject &extraFields, Callback callback,
                                             const QString &correlationId)
{
    QJsonObject request{{QStringLiteral("session"), sessionJson()}};
    for (auto it = extraFields.begin(); it != extraFields.end(); ++it)
        request.insert(it.key(), it.value());
    return call(method, request, std::move(callback), correlationId);
}

bool SimulatedPalletNode::sendRaw(const QByteArray &frame)
{
    if (!isConnected())
        return false;
    m_socket->sendTextMessage(QString::fromUtf8(frame));
    return true;
}

// --- Incoming ------------------------------------------------------------------------------------

void SimulatedPalletNode::onTextMessage(const QByteArray &utf8)
{
    ReceivedFrame record;
    record.rawFrame = utf8;
    record.timeMs = QDateTime::currentMSecsSinceEpoch();
    auto parsed = PeerEnvelope::parse(utf8);
    if (!parsed) {
        record.parsed = false;
        record.parseRefusal = parsed.refusal();
        m_answers.append(record);
        qCWarning(lcPeersNode) << m_options.nodeId << "unparsable frame:" << parsed.refusal().text();
        return;
    }
    const PeerFrame frame = parsed.value();
    record.method = frame.method;
    record.correlationId = frame.correlationId;
    record.phase = frame.phase;
    record.rawRequest = frame.request.toByteArray();
    record.rawResponse = frame.response.toByteArray();
    record.rawError = frame.error.toByteArray();

    if (frame.phase == Phase::Response) {
        m_answers.append(record);
        auto it = m_pending.find(frame.correlationId);
        if (it == m_pending.end()) {
            qCWarning(lcPeersNode) << m_options.nodeId << "answer" << frame.method << frame.correlationId
                                   << "matches no call";
        } else {
            auto [callMethod, callback] = it.value();
            m_pending.erase(it);
            if (callMethod != frame.method)
                qCWarning(lcPeersNode) << m_options.nodeId << "answer for" << callMethod << "names method" << frame.method;
            qCInfo(lcPeersNode) << m_options.nodeId << "answer" << frame.method << frame.correlationId
                                << (frame.hasError() ? frame.errorRefusal().text() : QStringLiteral("ok"));
            if (callback)
                callback(frame);
        }
        Q_EMIT answerReceived(frame.method, frame.correlationId);
        return;
    }

    m_pushes.append(record);
    qCInfo(lcPeersNode) << m_options.nodeId << "push" << frame.method << frame.correlationId;
    const auto requestObject = frame.requestObject();
    const QJsonObject request = requestObject ? requestObject.value() : QJsonObject{};
    Answer answer = Answer::useDefault();
    if (const auto handler = m_pushHandlers.value(frame.method))
        answer = handler(frame, request);
    if (answer.kind == Answer::Kind::Default) {
        const qint64 delay = answer.delayMs;
        answer = defaultPushAnswer(frame);
        if (delay > 0)
            answer.delayMs = delay;
    }
    // pushReceived is emitted after the answer is sent (or scheduled), so a test that waits for the
    // signal can then wait for the relay to deliver the answer.
    deliverAnswer(this, m_socket, frame, answer);
    Q_EMIT pushReceived(frame.method);
}

Answer SimulatedPalletNode::defaultPushAnswer(const PeerFrame &frame) const
{
    // A renewal is acknowledged in the contract's shape (docs/contract.md §8.3): it names the renewal's
    // projection and sequence. (Window checks by the node's own clock are scripted per test.)
    if (frame.method == QLatin1String("applyRuntimeNetworkDnsLeaseRenewal")) {
        auto request = frame.requestObject();
        const QJsonObject renewal = request ? request.value().value(QStringLiteral("renewal")).toObject() : QJsonObject();
        return Answer::respond({{QStringLiteral("projection"), renewal.value(QStringLiteral("projection"))},
                                {QStringLiteral("sequence"), renewal.value(QStringLiteral("sequence"))},
                                {QStringLiteral("state"), QStringLiteral("admitted")}});
    }
    // The node pushes of docs/contract.md §8.3, written out from the contract.
    static const QStringList pushes{QStringLiteral("applyRuntimeAssignment"), QStringLiteral("applyRuntimeNetworkSigningAuthority"),
                                    QStringLiteral("applyRuntimeNetworkProjection"), QStringLiteral("applyRuntimeNetworkDnsLeaseRenewal")};
    if (pushes.contains(frame.method))
            return Answer::respond({{QStringLiteral("acknowledged"), true}, {QStringLiteral("nodeId"), m_options.nodeId}});
    return Answer::refuse(QLatin1StringView("method-not-served"),
                          QStringLiteral("palletRuntime serves no method %1").arg(frame.method));
}

// --- Scripting / observation ---------------------------------------------------------------------

void SimulatedPalletNode::setPushHandler(const QString &method, PushHandler handler)
{
    if (handler)
        m_pushHandlers.insert(method, std::move(handler));
    else
        m_pushHandlers.remove(method);
}

void SimulatedPalletNode::setPushAnswer(const QString &method, const Answer &answer)
{
    setPushHandler(method, [answer](const PeerFrame &, const QJsonObject &) { return answer; });
}

void SimulatedPalletNode::clearPushHandlers() { m_pushHandlers.clear(); }

QList<ReceivedFrame> SimulatedPalletNode::pushes(const QString &method) const
{
    QList<ReceivedFrame> out;
    for (const ReceivedFrame &f : m_pushes)
        if (f.method == method)
            out.append(f);
    return out;
}

int SimulatedPalletNode::pushCount(const QString &method) const { return int(pushes(method).size()); }

QByteArray SimulatedPalletNode::lastPushRawRequest(const QString &method) const
{
    for (auto it = m_pushes.crbegin(); it != m_pushes.crend(); ++it)
        if (it->method == method)
            return it->rawRequest;
    return {};
}

std::optional<ReceivedFrame> SimulatedPalletNode::answerFor(const QString &correlationId) const
{
    for (auto it = m_answers.crbegin(); it != m_answers.crend(); ++it)
        if (it->correlationId == correlationId)
            return *it;
    return std::nullopt;
}

} // namespace coreflow::peers
