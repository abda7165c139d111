#include "service/corestore/corestoreclient.h"

#include "service/core/logging.h"
#include "service/corestore/corestorecredential.h"
#include "service/corestore/corestorehttpexchange.h"
#include "service/transport/httpclientpool.h"
#include "service/transport/tlsclientcontext.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"
#include "shared/secret.h"
#include "shared/util/clock.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QSet>

namespace coreflow {

using namespace contract;

namespace {

// Corestore's error.code of a 4xx answer, when the body is { error: { code: <plain name>, ... } }.
QString errorCodeOf(const QByteArray &body)
{
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(body, &error);
    if (error.error != QJsonParseError::NoError || !document.isObject())
        return QStringLiteral("unreadable");
    const QJsonValue code = document.object().value(QStringLiteral("error")).toObject().value(QStringLiteral("code"));
    if (!code.isString() || !RefusalQuote::isPlain(code.toString()))
        return QStringLiteral("unreadable");
    return code.toString();
}

} // namespace

CorestoreClient::CorestoreClient(CorestoreCredential &credential, const QList<QSslCertificate> &extraCaCertificates, Clock &clock,
                                 QObject *parent)
    : QObject(parent), m_credential(credential), m_extraCa(extraCaCertificates), m_clock(clock)
{
}

CorestoreClient::~CorestoreClient()
{
    for (auto &[id, call] : m_calls)
        if (call.exchange) {
            call.exchange->abandon();
            delete call.exchange;
            call.exchange = nullptr;
        }
    m_calls.clear();
    m_pools.clear();
}

int CorestoreClient::adoptNodes(const QList<ClusterNode> &nodes)
{
    QHash<QString, Node> next;
    QStringList order;
    for (const ClusterNode &n : nodes) {
        if (next.contains(n.id))
            continue;
        Node node = m_nodes.value(n.id);
        const std::optional<CorestoreEndpoint> before = node.endpoint;
        node.endpoint.reset();
        if (n.corestoreEndpoint) {
            QString why;
            node.endpoint = CorestoreEndpoint::from(*n.corestoreEndpoint, &why);
            if (!node.endpoint && (!before || before->url() != *n.corestoreEndpoint))
                qCWarning(logCorestore).noquote() << "node" << n.id << "publishes a Corestore endpoint that" << why << "; it is not dialled";
        }
        node.database.reset();
        if (n.corestoreDatabaseHost && n.corestoreDatabasePort)
            node.database = qMakePair(*n.corestoreDatabaseHost, *n.corestoreDatabasePort);
        next.insert(n.id, node);
        order.append(n.id);
    }
    // Calls of a node whose endpoint went away or changed end now (§15 "Endpoint", CS-05).
    QSet<QString> affected;
    for (const auto &[id, call] : m_calls) {
        const auto it = next.constFind(call.nodeId);
        if (it == next.constEnd() || !it->endpoint || !(*it->endpoint == call.endpoint))
            affected.insert(call.nodeId);
    }
    m_nodes = next;
    m_nodeOrder = order;
    for (const QString &nodeId : affected) {
        const auto it = m_nodes.constFind(nodeId);
        const bool removed = it == m_nodes.constEnd() || !it->endpoint;
        CorestoreCallOutcome outcome;
        if (removed) {
            outcome.kind = CorestoreCallOutcome::Kind::EndpointUnknown;
            outcome.refusal = Refusal{QString(refusal::corestoreEndpointUnknown),
                                      QStringLiteral("node %1 publishes no Corestore endpoint").arg(nodeId)};
        } else {
            outcome.kind = CorestoreCallOutcome::Kind::Unreachable;
        }
        endCallsOf(nodeId, outcome);
    }
    closeUnusedPools();
    Q_EMIT statusChanged();
    return endpointCount();
}

void CorestoreClient::endCallsOf(const QString &nodeId, const CorestoreCallOutcome &outcome)
{
    std::vector<quint64> ids;
    for (const auto &[id, call] : m_calls)
        if (call.nodeId == nodeId)
            ids.push_back(id);
    for (quint64 id : ids) {
        auto it = m_calls.find(id);
        if (it == m_calls.end())
            continue;
        CorestoreCallOutcome o = outcome;
        if (o.kind == CorestoreCallOutcome::Kind::Unreachable)
            o.refusal = Refusal{QString(refusal::corestoreUnreachable), lineHead(it->second) + QStringLiteral(": endpoint changed")};
        if (it->second.exchange) {
            it->second.exchange->abandon();
            it->second.exchange->deleteLater();
            it->second.exchange = nullptr;
        }
        finish(id, o);
    }
}

void CorestoreClient::closeUnusedPools()
{
    QSet<QString> used;
    for (const Node &node : std::as_const(m_nodes))
        if (node.endpoint)
            used.insert(node.endpoint->origin().toString());
    for (const auto &[id, call] : m_calls)
        used.insert(call.endpoint.origin().toString());
    for (const auto &[ticket, origin] : m_streams)
        used.insert(origin);
    for (auto it = m_pools.begin(); it != m_pools.end();) {
        if (used.contains(it->first)) {
            ++it;
            continue;
        }
        it = m_pools.erase(it);
    }
}

void CorestoreClient::get(const QString &nodeId, const QByteArray &route, Done done)
{
    startCall(QByteArrayLiteral("GET"), nodeId, route, {}, Options{}, std::move(done));
}

void CorestoreClient::post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, Done done)
{
    startCall(QByteArrayLiteral("POST"), nodeId, route, jsonBody, Options{}, std::move(done));
}

void CorestoreClient::post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, const Options &options,
                           Done done)
{
    startCall(QByteArrayLiteral("POST"), nodeId, route, jsonBody, options, std::move(done));
}

void CorestoreClient::startCall(const QByteArray &method, const QString &nodeId, const QByteArray &route, const QByteArray &body,
                           const Options &options, Done done)
{
    const auto node = m_nodes.find(nodeId);
    if (m_stopped || node == m_nodes.end() || !node->endpoint) {
        // Judged before the credential: nothing is enrolled for a call that cannot be made (§12.1).
        CorestoreCallOutcome outcome;
        outcome.kind = CorestoreCallOutcome::Kind::EndpointUnknown;
        outcome.refusal = Refusal{QString(refusal::corestoreEndpointUnknown), QStringLiteral("node %1 publishes no Corestore endpoint").arg(nodeId)};
        if (node != m_nodes.end()) {
            node->called = true;
            node->lastOutcome = outcome.kind;
            node->lastCallAtMs = m_clock.nowMs();
            Q_EMIT statusChanged();
        }
        done(outcome);
        return;
    }
    const quint64 id = m_nextId++;
    Call call;
    call.nodeId = nodeId;
    call.endpoint = *node->endpoint;
    call.method = method;
    call.route = route;
    call.body = body;
    call.options = options;
    call.done = std::move(done);
    m_calls.emplace(id, std::move(call));
    m_credential.acquire([this, id](const Secret *token, quint64 generation, const Refusal &failure) {
        onCredential(id, token, generation, failure);
    });
}

void CorestoreClient::onCredential(quint64 id, const Secret *token, quint64 generation, const Refusal &failure)
{
    if (!m_calls.count(id))
        return; // ended meanwhile (endpoint removed, stop)
    if (!token) {
        // Fail closed: nothing is sent without the credential (ON-04).
        CorestoreCallOutcome outcome;
        outcome.kind = CorestoreCallOutcome::Kind::Credential;
        outcome.refusal = failure.name.isEmpty()
            ? Refusal{QString(refusal::corestoreCredentialMissing), QStringLiteral("no Corestore control credential is held")}
            : failure;
        finish(id, outcome);
        return;
    }
    send(id, *token, generation);
}

HttpClientPool &CorestoreClient::poolFor(const CorestoreEndpoint &endpoint)
{
    const QString key = endpoint.origin().toString();
    auto it = m_pools.find(key);
    if (it != m_pools.end())
        return *it->second;
    if (!m_tlsTried) {
        m_tlsTried = true;
        auto context = TlsClientContext::create(m_extraCa);
        if (context)
            m_tls = context.value();
        else
            qCWarning(logCorestore).noquote() << "no TLS client context for Corestore calls:" << context.refusal().text();
    }
    auto pool = std::make_unique<HttpClientPool>(endpoint.origin(), m_tls, kPoolLimits, m_clock);
    HttpClientPool &ref = *pool;
    m_pools.emplace(key, std::move(pool));
    return ref;
}

void CorestoreClient::send(quint64 id, const Secret &token, quint64 generation)
{
    Call &call = m_calls.at(id);
    call.tokenGeneration = generation;
    HttpClientRequest request;
    request.method = call.method;
    request.target = call.endpoint.targetFor(call.route);
    request.bearer = token; // the head carrying it is composed in guarded memory (§19.4)
    request.headers.append(qMakePair(QByteArrayLiteral("Accept"), QByteArrayLiteral("application/json")));
    if (call.method == "POST") {
        request.headers.append(qMakePair(QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")));
        request.body = call.body;
    }
    auto *exchange = new CorestoreHttpExchange(poolFor(call.endpoint), m_clock, kCallTimeoutMs, kMaxAnswerBytes, this);
    call.exchange = exchange;
    connect(exchange, &CorestoreHttpExchange::finished, this, [this, id] { onFinished(id); });
    exchange->start(request);
}

QString CorestoreClient::lineHead(const Call &call) const
{
    return QStringLiteral("%1 %2 on node %3")
        .arg(QString::fromLatin1(call.method), QString::fromUtf8(call.endpoint.targetFor(call.route)), call.nodeId);
}

QString CorestoreClient::quotableCode(const QByteArray &body) const { return quotableCode(body, Options{}); }

QString CorestoreClient::quotableCode(const QByteArray &body, const Options &options) const
{
    const QString code = errorCodeOf(body);
    if (m_credential.matchesToken(code.toUtf8()) || (options.withholds && options.withholds(code)))
        return QStringLiteral("withheld");
    return code;
}

void CorestoreClient::onFinished(quint64 id)
{
    auto it = m_calls.find(id);
    if (it == m_calls.end())
        return;
    Call &call = it->second;
    CorestoreHttpExchange *exchange = std::exchange(call.exchange, nullptr);
    exchange->deleteLater();
    CorestoreCallOutcome outcome;
    if (!exchange->failureClass().isEmpty()) {
        outcome.kind = CorestoreCallOutcome::Kind::Unreachable;
        outcome.refusal = Refusal{QString(refusal::corestoreUnreachable), lineHead(call) + QStringLiteral(": ") + exchange->failureClass()};
        return finish(id, outcome);
    }
    const int status = exchange->status();
    const bool verdictOnCredential = status == 401 || (status == 403 && !call.options.forbiddenKeepsCredential);
    if (verdictOnCredential && !call.repeated) {
        // Drop the token and read it again, once per call; then repeat once (§12.1, CS-13).
        call.repeated = true;
        m_credential.reread(call.tokenGeneration, [this, id](const Secret *token, quint64 generation, const Refusal &failure) {
            onCredential(id, token, generation, failure);
        });
        return;
    }
    outcome.status = status;
    if (status >= 200 && status < 300) {
        outcome.kind = CorestoreCallOutcome::Kind::Answered;
        outcome.body = exchange->body();
    } else if (status >= 400 && status < 500) {
        outcome.kind = CorestoreCallOutcome::Kind::Refused;
        outcome.body = exchange->body(); // the error body: §14 quotes Corestore's reason, §12.2 reads a 409's legacy code
        outcome.refusal = Refusal{QString(refusal::corestoreRefused),
                                  lineHead(call) + QStringLiteral(" answered %1: %2").arg(status).arg(quotableCode(exchange->body(), call.options))};
    } else {
        outcome.kind = CorestoreCallOutcome::Kind::Unreachable;
        outcome.refusal = Refusal{QString(refusal::corestoreUnreachable), lineHead(call) + QStringLiteral(": %1").arg(status)};
    }
    finish(id, outcome);
}

void CorestoreClient::finish(quint64 id, CorestoreCallOutcome outcome)
{
    auto it = m_calls.find(id);
    if (it == m_calls.end())
        return;
    Call call = std::move(it->second);
    m_calls.erase(it);
    if (call.exchange) {
        call.exchange->abandon();
        call.exchange->deleteLater();
    }
    auto node = m_nodes.find(call.nodeId);
    if (node != m_nodes.end()) {
        node->called = true;
        node->lastOutcome = outcome.kind;
        node->lastCallAtMs = m_clock.nowMs();
    }
    // A failed enrollment is logged once by the credential, not by every call it stops (§12.1).
    if (outcome.kind == CorestoreCallOutcome::Kind::Unreachable || outcome.kind == CorestoreCallOutcome::Kind::Refused)
        qCInfo(logCorestore).noquote() << outcome.refusal.text();
    Q_EMIT statusChanged();
    call.done(outcome);
}

void CorestoreClient::stop()
{
    m_stopped = true;
    std::vector<quint64> ids;
    for (const auto &[id, call] : m_calls)
        ids.push_back(id);
    for (quint64 id : ids) {
        auto it = m_calls.find(id);
        if (it == m_calls.end())
            continue;
        CorestoreCallOutcome outcome;
        outcome.kind = CorestoreCallOutcome::Kind::Unreachable;
        outcome.refusal = Refusal{QString(refusal::corestoreUnreachable), lineHead(it->second) + QStringLiteral(": the relay is stopping")};
        finish(id, outcome);
    }
    m_pools.clear();
}

void CorestoreClient::prepareStream(const QString &nodeId, const QByteArray &method, const QByteArray &route, StreamReady ready)
{
    const auto node = m_nodes.find(nodeId);
    if (m_stopped || node == m_nodes.end() || !node->endpoint) {
        StreamStart start;
        start.failure.kind = CorestoreCallOutcome::Kind::EndpointUnknown;
        start.failure.refusal = Refusal{QString(refusal::corestoreEndpointUnknown), QStringLiteral("node %1 publishes no Corestore endpoint").arg(nodeId)};
        ready(std::move(start));
        return;
    }
    const CorestoreEndpoint endpoint = *node->endpoint;
    const QPointer<CorestoreClient> self(this);
    m_credential.acquire([self, nodeId, method, route, endpoint, ready = std::move(ready)](const Secret *token, quint64 generation,
                                                                                           const Refusal &failure) {
        if (!self)
            return;
        StreamStart start;
        start.lineHead = QStringLiteral("%1 %2 on node %3")
                             .arg(QString::fromLatin1(method), QString::fromUtf8(endpoint.targetFor(route)), nodeId);
        if (self->m_stopped) {
            start.failure.kind = CorestoreCallOutcome::Kind::Unreachable;
            start.failure.refusal = Refusal{QString(refusal::corestoreUnreachable), start.lineHead + QStringLiteral(": the relay is stopping")};
            return ready(std::move(start));
        }
        if (!token) {
            start.failure.kind = CorestoreCallOutcome::Kind::Credential;
            start.failure.refusal = failure.name.isEmpty()
                ? Refusal{QString(refusal::corestoreCredentialMissing), QStringLiteral("no Corestore control credential is held")}
                : failure;
            return ready(std::move(start));
        }
        start.failure.kind = CorestoreCallOutcome::Kind::Answered;
        start.pool = &self->poolFor(endpoint);
        start.request.method = method;
        start.request.target = endpoint.targetFor(route);
        start.request.bearer = *token;
        start.tokenGeneration = generation;
        start.ticket = self->m_nextId++;
        self->m_streams.emplace(start.ticket, endpoint.origin().toString());
        ready(std::move(start));
    });
}

void CorestoreClient::releaseStream(quint64 ticket)
{
    if (m_streams.erase(ticket))
        closeUnusedPools();
}

void CorestoreClient::streamRefusedBearer(quint64 tokenGeneration)
{
    m_credential.reread(tokenGeneration, [](const Secret *, quint64, const Refusal &) {});
}

CorestoreCallOutcome CorestoreClient::streamOutcome(const QString &lineHead, int status, const QByteArray &errorBody) const
{
    CorestoreCallOutcome outcome;
    outcome.status = status;
    if (status >= 200 && status < 300) {
        outcome.kind = CorestoreCallOutcome::Kind::Answered;
    } else if (status >= 400 && status < 500) {
        outcome.kind = CorestoreCallOutcome::Kind::Refused;
        outcome.refusal = Refusal{QString(refusal::corestoreRefused),
                                  lineHead + QStringLiteral(" answered %1: %2").arg(status).arg(quotableCode(errorBody))};
    } else {
        outcome.kind = CorestoreCallOutcome::Kind::Unreachable;
        outcome.refusal = Refusal{QString(refusal::corestoreUnreachable), lineHead + QStringLiteral(": %1").arg(status)};
    }
    return outcome;
}

int CorestoreClient::endpointCount() const
{
    int count = 0;
    for (const Node &node : m_nodes)
        count += node.endpoint ? 1 : 0;
    return count;
}

std::optional<CorestoreEndpoint> CorestoreClient::endpointOf(const QString &nodeId) const
{
    const auto it = m_nodes.constFind(nodeId);
    return it == m_nodes.constEnd() ? std::nullopt : it->endpoint;
}

std::optional<QPair<QString, int>> CorestoreClient::databaseOf(const QString &nodeId) const
{
    const auto it = m_nodes.constFind(nodeId);
    return it == m_nodes.constEnd() ? std::nullopt : it->database;
}

QList<status::CorestoreNode> CorestoreClient::statusNodes() const
{
    QList<status::CorestoreNode> out;
    for (const QString &id : m_nodeOrder) {
        const Node &node = m_nodes[id];
        out.append(status::CorestoreNode{id, node.endpoint.has_value(),
                                         node.called ? CorestoreCallOutcome::word(node.lastOutcome) : QStringLiteral("none"),
                                         node.lastCallAtMs});
    }
    return out;
}

int CorestoreClient::connectionCount() const
{
    int count = 0;
    for (const auto &[origin, pool] : m_pools)
        count += pool->connectionCount();
    return count;
}

} // namespace coreflow
