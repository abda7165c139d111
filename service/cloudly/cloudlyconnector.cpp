#include "service/cloudly/cloudlyconnector.h"

#include "service/cloudly/cloudlysocket.h"
#include "service/transport/tlsclientcontext.h"

#include "service/core/logging.h"
#include "shared/contract/methods.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/secretstringtake.h"

#include <QJsonDocument>
#include <QRandomGenerator>

namespace coreflow {

using namespace contract;

namespace {
Refusal named(QLatin1StringView name, const QString &reason) { return Refusal{QString(name), reason}; }

// The identity an answer carries (response.identity of exchangeClusterRelayAuthorization and
// refreshClusterIdentity; contract §6.0). Its token goes from the answer's bytes straight into a
// Secret; QJsonDocument reads only a copy in which the token is blanked, and that copy is wiped
// (contract §19.4): a QJsonObject keeps its strings in a buffer it grows by realloc() and frees
// unwiped, so the token must never enter one.
Result<ClusterIdentity> identityOfAnswer(const Frame &answer)
{
    QByteArray blanked(answer.response.data(), answer.response.size());
    std::optional<Secret> token = takeSecretString(blanked, {"identity", "token"});
    Frame blankedAnswer;
    blankedAnswer.response = QByteArrayView(blanked);
    auto response = blankedAnswer.responseObject();
    Secret::wipe(blanked);
    if (!response)
        return response.refusal();
    ExactKeyReader reader(response.value(), QStringLiteral("response"));
    const QJsonObject identityJson = reader.requiredObject(QStringLiteral("identity"));
    if (auto refusal = reader.finish())
        return *refusal;
    auto identity = ClusterIdentity::read(identityJson, QStringLiteral("response.identity"));
    if (identity && token) // read() saw the blanked token: same length, so the same emptiness check
        identity.value().token = std::move(*token);
    return identity;
}
} // namespace

CloudlyConnector::CloudlyConnector(QUrl url, Secret bearer, QList<QSslCertificate> extraCaCertificates,
                                   MethodTable &cloudlyMethods, Clock &clock, const RelayTiming &timing, QObject *parent)
    : QObject(parent), m_url(std::move(url)), m_bearer(std::move(bearer)), m_extraCa(std::move(extraCaCertificates)),
      m_methods(cloudlyMethods), m_clock(clock), m_timing(timing),
      m_keepalive(SessionKeepalive::create(clock, timing.sessionPingIntervalMs, timing.sessionSilenceDeadlineMs))
{
    m_reconnectTimer = m_clock.createTimer(this);
    m_renewalTimer = m_clock.createTimer(this);
    m_handshakeTimer = m_clock.createTimer(this);
    m_reofferTimer = m_clock.createTimer(this);
    connect(m_reofferTimer.get(), &ClockTimer::timeout, this, [this] {
        // Also on a socket that stays dispatchable: a refusal at an identity renewal is offered again too.
        if (isConnected() && !m_parked && !m_stopping) {
            qCInfo(logCloudly) << "offering this relay's contract to Cloudly again";
            registerSession();
        }
    });
    connect(m_reconnectTimer.get(), &ClockTimer::timeout, this, &CloudlyConnector::connectNow);
    connect(m_renewalTimer.get(), &ClockTimer::timeout, this, &CloudlyConnector::renewIdentity);
    connect(m_handshakeTimer.get(), &ClockTimer::timeout, this, [this] {
        qCWarning(logCloudly).noquote() << "Cloudly session handshake took longer than"
                                        << m_timing.cloudlyHandshakeTimeoutMs << "ms; reconnecting";
        if (m_socket)
            m_socket->abort();
    });
}

CloudlyConnector::~CloudlyConnector()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
}

bool CloudlyConnector::isConnected() const
{
    return m_socket && m_socket->isOpen();
}

qint64 CloudlyConnector::identityRenewalDueMs() const
{
    return m_renewalTimer->isActive() ? m_renewalTimer->deadlineMs() : 0;
}

qint64 CloudlyConnector::reofferDueMs() const
{
    return m_reofferTimer->isActive() ? m_reofferTimer->deadlineMs() : 0;
}

void CloudlyConnector::park()
{
    m_parked = true;
    // A parked relay never authenticates again in this process: its bearer goes now (contract §19.4).
    m_bearer = Secret();
    m_renewalTimer->stop();
    m_reofferTimer->stop();
    m_reconnectTimer->stop();
    Q_EMIT statusChanged();
}

void CloudlyConnector::scheduleReoffer()
{
    m_handshakeTimer->stop();
    if (!m_parked && !m_stopping)
        m_reofferTimer->start(m_timing.refusedOfferRetryIntervalMs);
    if (m_dispatchable)
        scheduleRenewal(); // the registration before this one still stands; keep the identity alive
    Q_EMIT statusChanged();
}

qint64 CloudlyConnector::reconnectDueMs() const
{
    return m_reconnectTimer->isActive() ? m_reconnectTimer->deadlineMs() : 0;
}

void CloudlyConnector::start()
{
    if (m_started)
        return;
    m_started = true;
    if (m_url.scheme() == QLatin1String("wss")) {
        auto context = TlsClientContext::create(m_extraCa);
        if (!context) {
            qCWarning(logCloudly).noquote() << "cannot open the Cloudly session:" << context.refusal().text();
            m_stopping = true; // the start fails; the composition root rolls back
            Q_EMIT startRefused(context.refusal());
            return;
        }
        m_tlsContext = std::move(context).value();
    }
    connectNow();
}

void CloudlyConnector::connectNow()
{
    if (m_stopping || m_parked)
        return;
    m_socketCounted = false;
    m_reofferTimer->stop();
    clearChunkLane();
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket.release()->deleteLater();
    }
    m_socket = std::make_unique<CloudlySocket>(m_tlsContext, qsizetype(Envelope::maxFrameBytes), m_keepalive);
    connect(m_socket.get(), &CloudlySocket::connected, this, &CloudlyConnector::onConnected);
    connect(m_socket.get(), &CloudlySocket::disconnected, this, &CloudlyConnector::onDisconnected);
    connect(m_socket.get(), &CloudlySocket::textMessage, this, &CloudlyConnector::onTextMessage);
    connect(m_socket.get(), &CloudlySocket::written, this, [this] {
        feedChunkLane();
        if (m_sendBacklogged && m_socket && m_socket->pendingBytes() <= kSendLowWaterBytes)
            setSendBacklogged(false);
        Q_EMIT socketWritten();
    });
    // Binary messages are database closure chunks (§13.4); the closure lane reads them.
    connect(m_socket.get(), &CloudlySocket::binaryMessage, this, [this](const QByteArray &payload) {
        if (m_dispatchable)
            Q_EMIT binaryFrame(payload);
    });
    qCInfo(logCloudly).noquote() << "connecting to Cloudly at" << m_url.toString(QUrl::RemoveUserInfo | QUrl::RemoveQuery);
    m_handshakeTimer->start(m_timing.cloudlyHandshakeTimeoutMs);
    m_socket->open(m_url);
    Q_EMIT statusChanged();
}

qint64 CloudlyConnector::lastFrameReceivedAtMs() const
{
    const qint64 live = m_socket ? m_socket->lastReceivedAtMs() : 0;
    return live > 0 ? live : m_lastFrameAtMs;
}

QString CloudlyConnector::keepaliveState() const
{
    if (m_lostToSilence && !m_dispatchable)
        return QStringLiteral("silent");
    if (!m_keepalive)
        return QStringLiteral("off");
    if (!m_socket)
        return QStringLiteral("no-session");
    const auto state = m_socket->keepaliveState();
    return state == WebSocketSession::KeepaliveState::Off ? QStringLiteral("no-session")
                                                          : WebSocketSession::keepaliveStateName(state);
}

void CloudlyConnector::onConnected()
{
    qCInfo(logCloudly) << "Cloudly socket open; authenticating";
    authenticate();
}

void CloudlyConnector::authenticate()
{
    // Composed in guarded memory (no QString or QJsonObject copy of the bearer, contract §19.4).
    const Secret body = Secret::concatenated({"{\"authorization\":", m_bearer.jsonQuoted().reveal(), "}"});
    sendSecretCall(QString(method::exchangeClusterRelayAuthorization), body, m_timing.cloudlyCallTimeoutMs, [this](const CallResult &r) {
        if (!r.delivered)
            return handshakeFailed(r.refusal, false);
        if (r.answer.hasError())
            return handshakeFailed(r.answer.errorRefusal(), true);
        auto identity = identityOfAnswer(r.answer);
        if (!identity)
            return handshakeFailed(identity.refusal(), true);
        m_identity = std::move(identity).value();
        m_identityIssuedAtMs = m_clock.nowMs();
        m_clusterId = m_identity->clusterId;
        qCInfo(logCloudly).noquote() << "authenticated as cluster" << m_clusterId;
        registerSession();
    });
}

void CloudlyConnector::registerSession()
{
    if (!m_identity || m_parked || m_stopping)
        return;
    const ProtocolOffer own = offerForCloudlySession();
    const Secret body = Secret::concatenated({"{\"identity\":{\"token\":", m_identity->token.jsonQuoted().reveal(),
                                              "},\"offer\":", Envelope::compact(own.toJson()), "}"});
    sendSecretCall(QString(method::registerCloudlyClientSession), body, m_timing.cloudlyCallTimeoutMs, [this, own](const CallResult &r) {
        if (!r.delivered)
            return handshakeFailed(r.refusal, false);
        if (r.answer.hasError()) {
            const Refusal error = r.answer.errorRefusal();
            if (error.name != QLatin1String(refusal::protocolOfferRefused))
                return handshakeFailed(error, true);
            // Cloudly's view: peerOffer is ours, ownOffer is Cloudly's.
            const QString cloudlyOffer = cloudlyOfferInRefusal(error);
            const QString line = QStringLiteral("Cloudly refused this relay's offer %1; Cloudly speaks %2 (offered again every %3 ms)")
                                     .arg(own.describe(), cloudlyOffer)
                                     .arg(m_timing.refusedOfferRetryIntervalMs);
            qCWarning(logCloudly).noquote() << line;
            Q_EMIT cloudlyOfferRefused(cloudlyOffer, own.describe(), line);
            return scheduleReoffer();
        }
        std::optional<Refusal> problem;
        QJsonObject offerJson;
        auto response = r.answer.responseObject();
        if (!response) {
            problem = response.refusal();
        } else {
            ExactKeyReader reader(response.value(), QStringLiteral("response"));
            offerJson = reader.requiredObject(QStringLiteral("offer"));
            problem = reader.finish();
        }
        const AnsweredOffer judged = judgeAnsweredOffer(response ? &response.value() : nullptr, offerJson, problem);
        if (judged.verdict == AnsweredOffer::Verdict::NotContract) {
            if (judged.namesServableOffer)
                Q_EMIT cloudlyOfferAgreed();
            const QString line = QStringLiteral("Cloudly's answer to registerCloudlyClientSession is not the contract's: %1 (offered again every %2 ms)")
                                     .arg(judged.problem->reason)
                                     .arg(m_timing.refusedOfferRetryIntervalMs);
            qCWarning(logCloudly).noquote() << line;
            Q_EMIT cloudlyAnswerNotContract(line);
            return scheduleReoffer();
        }
        if (judged.verdict == AnsweredOffer::Verdict::NotServable) {
            const QString line = QStringLiteral("Cloudly answered with %1, which this relay (%2) cannot serve (offered again every %3 ms)")
                                     .arg(judged.offer->describe(), own.describe())
                                     .arg(m_timing.refusedOfferRetryIntervalMs);
            qCWarning(logCloudly).noquote() << line;
            Q_EMIT cloudlyOfferRefused(judged.offer->describe(), own.describe(), line);
            return scheduleReoffer();
        }
        m_answeredOffer = judged.offer;
        m_lostToSilence = false;
        m_handshakeTimer->stop();
        m_reofferTimer->stop();
        m_backoffAttempt = 0;
        m_dispatchable = true;
        m_everDispatchable = true;
        const bool newCarrier = !m_socketCounted;
        if (newCarrier) {
            m_socketCounted = true;
            ++m_carrierCount;
            m_dispatchableSinceMs = m_clock.nowMs();
        }
        scheduleRenewal();
        qCInfo(logCloudly).noquote() << (newCarrier ? "Cloudly session registered; carrier" : "Cloudly session re-registered after identity renewal; carrier")
                                     << m_carrierCount << "Cloudly offered" << m_answeredOffer->describe();
        Q_EMIT cloudlyOfferServed();
        Q_EMIT dispatchable(m_carrierCount, newCarrier);
        Q_EMIT statusChanged();
    });
}

void CloudlyConnector::scheduleRenewal()
{
    if (!m_identity || m_parked)
        return;
    const qint64 now = m_clock.nowMs();
    const qint64 lifetime = qMax<qint64>(0, m_identity->expiresAtMs - m_identityIssuedAtMs);
    const qint64 byLead = m_identity->expiresAtMs - m_timing.identityRenewalLeadMs;
    const qint64 byFraction = m_identityIssuedAtMs + qint64(double(lifetime) * m_timing.identityRenewalMaxFraction);
    // Whichever is earlier (contract §6.0, §20), but never before a fifth of the lifetime: an identity of
    // 60000 ms or less would otherwise be renewed on receipt, a renewal storm (a 75000 ms one renews at
    // 15000 ms either way).
    const qint64 at = qMax(qMin(byLead, byFraction), m_identityIssuedAtMs + lifetime / 5);
    m_renewalTimer->start(qMax<qint64>(0, at - now));
}

void CloudlyConnector::renewIdentity()
{
    if (!m_identity || !m_dispatchable || m_stopping || m_parked)
        return;
    qCInfo(logCloudly) << "renewing the Cloudly identity on the open socket";
    const Secret body = Secret::concatenated({"{\"identity\":{\"token\":", m_identity->token.jsonQuoted().reveal(), "}}"});
    sendSecretCall(QString(method::refreshClusterIdentity), body, m_timing.cloudlyCallTimeoutMs, [this](const CallResult &r) {
        std::optional<Refusal> failure;
        if (!r.delivered)
            failure = r.refusal;
        else if (r.answer.hasError())
            failure = r.answer.errorRefusal();
        if (!failure) {
            auto identity = identityOfAnswer(r.answer);
            if (!identity) {
                failure = identity.refusal();
            } else {
                m_identity = std::move(identity).value();
                m_identityIssuedAtMs = m_clock.nowMs();
                registerSession();
                return;
            }
        }
        qCWarning(logCloudly).noquote() << "identity renewal failed:" << failure->name << "- reconnecting to authenticate afresh";
        if (m_socket)
            m_socket->abort();
    });
}

void CloudlyConnector::handshakeFailed(const Refusal &refusal, bool byCloudly)
{
    m_lastErrorClass = refusal.name;
    m_handshakeFailedOnSocket = true;
    qCWarning(logCloudly).noquote() << "Cloudly session handshake failed:" << refusal.name
                                    << (byCloudly ? "(answered by Cloudly)" : "(transport)");
    if (byCloudly && !m_everDispatchable) {
        m_stopping = true; // the start fails; the composition root rolls back
        Q_EMIT startRefused(refusal);
        return;
    }
    if (m_socket)
        m_socket->abort();
}

void CloudlyConnector::onDisconnected()
{
    const bool wasDispatchable = m_dispatchable;
    m_dispatchable = false;
    clearChunkLane();
    setSendBacklogged(false); // nothing waits for a socket that is gone
    m_renewalTimer->stop();
    m_handshakeTimer->stop();
    m_reofferTimer->stop();
    const QString why = m_socket ? m_socket->errorString() : QString();
    const bool silent = m_socket && m_socket->lostToSilence();
    if (m_socket && m_socket->lastReceivedAtMs() > 0)
        m_lastFrameAtMs = m_socket->lastReceivedAtMs();
    if (silent)
        m_lostToSilence = true;
    if (silent)
        m_lastErrorClass = QStringLiteral("silent");
    else if (wasDispatchable)
        m_lastErrorClass = QStringLiteral("session-lost");
    else if (m_lastErrorClass.isEmpty() || !m_handshakeFailedOnSocket)
        m_lastErrorClass = QStringLiteral("connect-failed");
    m_handshakeFailedOnSocket = false;
    failAllPending(named(refusal::cloudlySessionLost, QStringLiteral("the Cloudly session closed before it answered")));
    if (wasDispatchable) {
        if (silent)
            qCWarning(logCloudly).noquote() << "Cloudly session lost:" << why;
        else
            qCWarning(logCloudly).noquote() << "Cloudly session lost";
        Q_EMIT sessionLost();
    } else if (!m_stopping) {
        qCWarning(logCloudly).noquote() << "could not open the Cloudly session:" << why;
    }
    Q_EMIT statusChanged();
    if (m_stopping) {
        maybeFinishStop();
        return;
    }
    if (m_parked) {
        qCWarning(logCloudly) << "parked: not reconnecting; only a restart holding the bearer of the current generation serves this cluster again";
        return;
    }
    scheduleReconnect();
}

void CloudlyConnector::scheduleReconnect()
{
    const qint64 base = qMin<qint64>(m_timing.reconnectMaxBackoffMs,
                                     m_timing.reconnectInitialBackoffMs << qMin(m_backoffAttempt, 20));
    const double jitter = 1.0 + m_timing.reconnectJitter * (2.0 * QRandomGenerator::global()->generateDouble() - 1.0);
    const qint64 delay = qMin<qint64>(m_timing.reconnectMaxBackoffMs, qMax<qint64>(0, qint64(double(base) * jitter)));
    ++m_backoffAttempt;
    ++m_reconnects;
    qCInfo(logCloudly) << "reconnecting to Cloudly in" << delay << "ms";
    m_reconnectTimer->start(delay);
}

void CloudlyConnector::onTextMessage(const QByteArray &message)
{
    auto parsed = Envelope::parse(message);
    if (!parsed) {
        qCWarning(logCloudly).noquote() << "unreadable frame from Cloudly:" << parsed.refusal().text();
        return;
    }
    const Frame &frame = parsed.value();
    if (frame.phase == Phase::Response) {
        bool ok = false;
        const quint64 id = frame.correlationId.mid(1).toULongLong(&ok);
        if (!ok || !frame.correlationId.startsWith(QLatin1Char('c')) || !m_pending.count(id)) {
            qCDebug(logCloudly).noquote() << "answer for no pending call, method" << frame.method;
            return;
        }
        finishCall(id, CallResult{true, frame, {}});
        // The answers of the secret-bearing calls echo their request or carry a key: the decoded copy
        // is wiped (contract §19.4).
        if (frame.method == method::exchangeClusterRelayAuthorization
            || frame.method == method::registerCloudlyClientSession
            || frame.method == method::refreshClusterIdentity || frame.method == method::getClusterRelayCertificate
            || frame.method == method::getClusterRouteTable) {
            Secret::wipe(parsed.value().raw);
            Envelope::wipeDecodedStrings(message.size());
        }
        return;
    }
    QPointer<CloudlySocket> origin = m_socket.get();
    // An answer echoes its request (a route table's keys): Secret content, unless the method's answers
    // carry only a node's bytes (a push's acknowledgement; MethodTable::answersCarryNodeDataOnly).
    const auto content = m_methods.answersCarryNodeDataOnly(frame.method) ? TlsConnection::Content::Ordinary
                                                                           : TlsConnection::Content::Secret;
    m_methods.dispatch(frame, Caller{}, [origin, content](QByteArray answer) {
        if (origin)
            origin->sendText(answer, content); // nothing when that socket is no longer open
        if (content == TlsConnection::Content::Secret)
            Secret::wipe(answer);
    });
    // A pushed route table carries every hostname's private key: its decoded copy is wiped once the
    // lane has read it (a lane that kept the frame keeps its own copy; contract §19.4).
    if (frame.method == method::pushClusterRouteTable) {
        Secret::wipe(parsed.value().raw);
        Envelope::wipeDecodedStrings(message.size());
    }
}

void CloudlyConnector::sendOnSocket(const QByteArray &frame, TlsConnection::Content content)
{
    m_socket->sendText(frame, content);
    if (!m_sendBacklogged && m_socket->pendingBytes() >= kSendHighWaterBytes)
        setSendBacklogged(true);
}

bool CloudlyConnector::sendBinary(QByteArray payload, const QUuid &stream)
{
    if (!m_dispatchable || m_stopping || !m_socket || !m_socket->isOpen())
        return false;
    m_chunkLaneBytes += payload.size();
    m_chunkLane.push_back(LaneFrame{std::move(payload), stream, false});
    feedChunkLane();
    return true;
}

void CloudlyConnector::feedChunkLane()
{
    // Whole frames only, in lane order; an ordinary frame sent meanwhile went to the socket directly,
    // ahead of all of these (docs/contract.md §13.4 "Fairness", D-112).
    while (!m_chunkLane.empty() && m_socket && m_socket->isOpen() && m_socket->pendingBytes() < kChunkLaneLowWaterBytes) {
        LaneFrame next = std::move(m_chunkLane.front());
        m_chunkLane.pop_front();
        m_chunkLaneBytes -= next.bytes.size();
        if (next.text)
            m_socket->sendText(next.bytes);
        else
            m_socket->sendBinary(next.bytes);
    }
}

void CloudlyConnector::dropQueuedChunks(const QUuid &stream)
{
    if (stream.isNull())
        return;
    for (auto it = m_chunkLane.begin(); it != m_chunkLane.end();) {
        if (!it->text && it->stream == stream) {
            m_chunkLaneBytes -= it->bytes.size();
            it = m_chunkLane.erase(it);
        } else {
            ++it;
        }
    }
}

void CloudlyConnector::clearChunkLane()
{
    m_chunkLane.clear();
    m_chunkLaneBytes = 0;
}

qsizetype CloudlyConnector::sendPendingBytes() const { return (m_socket ? m_socket->pendingBytes() : 0) + m_chunkLaneBytes; }

void CloudlyConnector::setSendBacklogged(bool backlogged)
{
    if (m_sendBacklogged == backlogged)
        return;
    m_sendBacklogged = backlogged;
    if (backlogged) {
        ++m_sendBacklogEpisodes;
        qCInfo(logCloudly).noquote() << "the Cloudly session is backlogged (" << m_socket->pendingBytes()
                                     << "bytes waiting); node sockets are not read until it drains";
    } else {
        qCInfo(logCloudly) << "the Cloudly session drained; node sockets are read again";
    }
    Q_EMIT sendBacklogChanged(backlogged);
}

quint64 CloudlyConnector::call(const QString &method, QByteArrayView rawRequest, qint64 timeoutMs, CallCallback callback, Lane lane)
{
    if (!m_dispatchable || m_stopping) {
        const quint64 id = m_nextCallId++;
        callback(CallResult{false, {}, named(refusal::cloudlySessionUnavailable, QStringLiteral("no Cloudly session"))});
        return id;
    }
    return sendCall(method, rawRequest, timeoutMs, std::move(callback), false, lane);
}

quint64 CloudlyConnector::sendSecretCall(const QString &method, const Secret &rawRequest, qint64 timeoutMs, CallCallback callback)
{
    return sendCall(method, rawRequest.reveal(), timeoutMs, std::move(callback), true);
}

quint64 CloudlyConnector::sendCall(const QString &method, QByteArrayView rawRequest, qint64 timeoutMs, CallCallback callback,
                                   bool wipeFrame, Lane lane)
{
    const quint64 id = m_nextCallId++;
    if (!isConnected()) {
        callback(CallResult{false, {}, named(refusal::cloudlySessionUnavailable, QStringLiteral("no Cloudly session"))});
        return id;
    }
    Pending pending;
    pending.method = method;
    pending.callback = std::move(callback);
    pending.deadline = m_callDeadlines.schedule(timeoutMs, [this, id, timeoutMs] {
        finishCall(id, CallResult{false, {}, named(refusal::cloudlyForwardTimeout,
                                                   QStringLiteral("no answer from Cloudly within %1 ms").arg(timeoutMs))});
    });
    m_pending.emplace(id, std::move(pending));
    QByteArray frame = Envelope::request(method, QLatin1Char('c') + QString::number(id), rawRequest);
    if (lane == Lane::BehindClosureChunks && !m_chunkLane.empty() && !wipeFrame) {
        m_chunkLaneBytes += frame.size();
        m_chunkLane.push_back(LaneFrame{std::move(frame), {}, true});
        return id;
    }
    // framed (masked) and handed to TLS before it returns
    sendOnSocket(frame, wipeFrame ? TlsConnection::Content::Secret : TlsConnection::Content::Ordinary);
    if (wipeFrame)
        Secret::wipe(frame);
    return id;
}

void CloudlyConnector::finishCall(quint64 id, CallResult result)
{
    auto it = m_pending.find(id);
    if (it == m_pending.end())
        return;
    Pending pending = std::move(it->second);
    m_pending.erase(it);
    m_callDeadlines.cancel(pending.deadline);
    if (pending.callback)
        pending.callback(result);
    if (m_stopping)
        maybeFinishStop();
}

void CloudlyConnector::cancel(quint64 callId)
{
    auto it = m_pending.find(callId);
    if (it == m_pending.end())
        return;
    m_callDeadlines.cancel(it->second.deadline);
    m_pending.erase(it);
    if (m_stopping)
        maybeFinishStop();
}

void CloudlyConnector::failAllPending(const Refusal &refusal)
{
    QList<quint64> ids;
    for (const auto &entry : m_pending)
        ids.append(entry.first);
    for (quint64 id : ids)
        finishCall(id, CallResult{false, {}, refusal});
}

void CloudlyConnector::stop(std::function<void()> done)
{
    m_stopping = true;
    m_stopDone = std::move(done);
    m_reconnectTimer->stop();
    m_renewalTimer->stop();
    m_handshakeTimer->stop();
    m_reofferTimer->stop();
    if (!m_pending.empty())
        qCInfo(logCloudly) << "stopping: waiting for" << m_pending.size() << "Cloudly call(s) in flight";
    maybeFinishStop();
}

void CloudlyConnector::maybeFinishStop()
{
    if (!m_stopping || !m_stopDone || !m_pending.empty())
        return;
    if (m_socket && m_socket->state() != CloudlySocket::State::Unconnected) {
        m_socket->disconnect(this);
        m_socket->closeNow(1001, "relay stopping"); // 1001: going away
    }
    clearChunkLane();
    m_dispatchable = false;
    auto done = std::move(m_stopDone);
    m_stopDone = nullptr;
    qCInfo(logCloudly) << "Cloudly session closed";
    Q_EMIT statusChanged();
    done();
}

void CloudlyConnector::abortSocketForTest()
{
    if (m_socket)
        m_socket->abort();
}

} // namespace coreflow
