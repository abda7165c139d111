#pragma once
// CorestoreClient: the relay's one client of every node's Corestore control API (docs/contract.md
// §12 intro, §12.1, §15; rules CS-01..CS-06, CS-13, ON-04).
//
// Endpoints: adoptNodes() takes the cluster document's nodes (at start, after every accepted
// registration, from every config push). A node whose endpoint is removed or changed stops being
// dialled at once: its calls — waiting for the credential, for a pooled connection, or running — end
// CORESTORE_ENDPOINT_UNKNOWN (removed) or CORESTORE_UNREACHABLE ... endpoint changed (changed), and a
// pool no node uses any more is closed. An endpoint that is not an https URL (§15) is not adopted.
//
// get(nodeId, route): the endpoint is judged first (none: CORESTORE_ENDPOINT_UNKNOWN, no enrollment),
// then the credential (CorestoreCredential::acquire; without one the call fails closed and nothing is
// sent), then one GET with "Authorization: Bearer <token>" on the endpoint origin's HttpClientPool
// (kPoolLimits), bounded by CorestoreHttpExchange (kCallTimeoutMs total, kMaxAnswerBytes). A 401 or
// 403 re-reads the token once per call and repeats the request once; a second 401/403 is
// corestore-refused. 5xx and every transport failure: CORESTORE_UNREACHABLE; another 4xx:
// corestore-refused with Corestore's error.code (plain names only); 2xx: Answered (the body is the
// caller's to read with its exact-key reader).
//
// post(nodeId, route, jsonBody[, options]): the same rules, sent as one POST with
// "Content-Type: application/json" and the body (bytes, sent as given; in guarded memory with the
// head). options.forbiddenKeepsCredential: only a 401 re-reads the credential; a 403 is an ordinary
// corestore-refused answer and leaves the credential as it is (the isolated-restore routes, §14).
//
// done() is called exactly once per get()/post(), never from inside the call for one that dials (it
// may be for one refused at once).
//
// Streams (database closures, §13.4, D-80): prepareStream() judges the endpoint and acquires the
// credential exactly as get() does, then hands the caller the node's pool and a request carrying the
// target and the bearer; the caller runs it with a receiver of its own, without the 10000 ms total and
// the 16 MiB answer bound (the closure lane bounds progress instead). The pool stays open, even when
// the node's endpoint changes meanwhile, until releaseStream(). A 401/403 on a stream is not repeated
// (its body cannot be sent twice): streamRefusedBearer() drops the token so the next call reads it
// again, and the stream ends corestore-refused.
#include "service/corestore/corestorecalloutcome.h"
#include "service/corestore/corestoreendpoint.h"
#include "service/transport/httpclientlimits.h"
#include "service/transport/httpclientrequest.h"
#include "shared/contract/types.h"
#include "shared/status/relaystatus.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QSslCertificate>
#include <QStringList>
#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace coreflow {

class Clock;
class CorestoreCredential;
class CorestoreHttpExchange;
class HttpClientPool;
class Secret;
class TlsClientContext;

class CorestoreClient : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 kCallTimeoutMs = 10000;                 // corestoreCallTimeoutMs (§20.2)
    static constexpr qsizetype kMaxAnswerBytes = 16 * 1024 * 1024;  // §15 "Answers"
    static constexpr HttpClientLimits kPoolLimits{4, 2, 30000, 32}; // per endpoint origin (§15 "Pool")

    using Done = std::function<void(const CorestoreCallOutcome &outcome)>;
    struct Options {
        bool forbiddenKeepsCredential = false; // a 403 is the answer, not a verdict on the credential
        // A quoted error.code this returns true for is written "withheld" (the lane's own secret, e.g. an
        // isolated-restore grant a Corestore reflects, §14); the held token is withheld always.
        std::function<bool(QStringView code)> withholds;
    };

    CorestoreClient(CorestoreCredential &credential, const QList<QSslCertificate> &extraCaCertificates, Clock &clock,
                    QObject *parent = nullptr);
    ~CorestoreClient() override;

    // Returns the number of nodes whose endpoint is now dialled.
    int adoptNodes(const QList<contract::ClusterNode> &nodes);
    void get(const QString &nodeId, const QByteArray &route, Done done);
    struct StreamStart {
        CorestoreCallOutcome failure;      // kind Answered when the stream may run
        HttpClientPool *pool = nullptr;    // the node's pool, open until releaseStream(ticket)
        HttpClientRequest request;         // method, target (endpoint path + route) and bearer set
        QString lineHead;                  // "<METHOD> <path> on node <id>" for refusal lines
        quint64 ticket = 0;
        quint64 tokenGeneration = 0;
    };
    using StreamReady = std::function<void(StreamStart start)>;
    void prepareStream(const QString &nodeId, const QByteArray &method, const QByteArray &route, StreamReady ready);
    void releaseStream(quint64 ticket);
    void streamRefusedBearer(quint64 tokenGeneration);
    // The §15 refusal a stream's non-2xx answer is (status, Corestore's error body), as get() names it.
    CorestoreCallOutcome streamOutcome(const QString &lineHead, int status, const QByteArray &errorBody) const;
    void post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, Done done);
    void post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, const Options &options, Done done);
    // Ends every call (CORESTORE_UNREACHABLE ... the relay is stopping) and closes every pool.
    void stop();

    int endpointCount() const;
    std::optional<CorestoreEndpoint> endpointOf(const QString &nodeId) const;
    // The node's corestoreDatabase { host, port }, when published (bindings use it next).
    std::optional<QPair<QString, int>> databaseOf(const QString &nodeId) const;
    QList<status::CorestoreNode> statusNodes() const;
    int callsInFlight() const { return int(m_calls.size()); }
    // Pools open now, and their connections (tests, bench).
    int poolCount() const { return int(m_pools.size()); }
    int connectionCount() const;

Q_SIGNALS:
    void statusChanged();

private:
    struct Node {
        std::optional<CorestoreEndpoint> endpoint;
        std::optional<QPair<QString, int>> database;
        CorestoreCallOutcome::Kind lastOutcome = CorestoreCallOutcome::Kind::Answered;
        bool called = false;
        qint64 lastCallAtMs = 0;
    };
    struct Call {
        QString nodeId;
        CorestoreEndpoint endpoint;
        QByteArray method;
        QByteArray route;
        QByteArray body;
        Options options;
        Done done;
        bool repeated = false;       // the 401/403 re-read was used
        quint64 tokenGeneration = 0;
        CorestoreHttpExchange *exchange = nullptr;
    };

    void startCall(const QByteArray &method, const QString &nodeId, const QByteArray &route, const QByteArray &body,
                   const Options &options, Done done);
    void onCredential(quint64 id, const Secret *token, quint64 generation, const contract::Refusal &failure);
    void send(quint64 id, const Secret &token, quint64 generation);
    void onFinished(quint64 id);
    void finish(quint64 id, CorestoreCallOutcome outcome);
    void endCallsOf(const QString &nodeId, const CorestoreCallOutcome &outcome);
    HttpClientPool &poolFor(const CorestoreEndpoint &endpoint);
    void closeUnusedPools();
    QString lineHead(const Call &call) const; // "<method> <path> on node <id>"
    // Corestore's error.code to quote, "withheld" when it is the held token itself (CS-09).
    QString quotableCode(const QByteArray &body) const;
    QString quotableCode(const QByteArray &body, const Options &options) const;

    CorestoreCredential &m_credential;
    QList<QSslCertificate> m_extraCa;
    Clock &m_clock;
    std::shared_ptr<const TlsClientContext> m_tls;
    bool m_tlsTried = false;
    QHash<QString, Node> m_nodes;
    QStringList m_nodeOrder;
    std::map<quint64, Call> m_calls;
    std::map<quint64, QString> m_streams; // ticket -> origin of the pool it pins
    std::map<QString, std::unique_ptr<HttpClientPool>> m_pools; // by origin
    quint64 m_nextId = 1;
    bool m_stopped = false;
};

} // namespace coreflow
