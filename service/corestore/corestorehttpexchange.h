#pragma once
// CorestoreHttpExchange: one request of the relay to a node's Corestore on the endpoint's
// HttpClientPool (docs/contract.md §15 "Bound" and "Answers"). The whole request — the wait for a
// pooled connection, dial, TLS, the answer's last byte — is bounded at timeoutMs on the injected
// Clock (total; bytes arriving do not extend it). The body is collected up to maxBodyBytes: a
// Content-Length above it fails before a body byte is read, counted bytes beyond it fail at once
// (answer-too-large); either way the request is withdrawn (its connection closed).
//
// Exactly one finished() per exchange (unless abandon() came first): either an answer (status,
// body), or failureClass — a value-free word of §15's list ("timeout after 10000 ms", "connection
// refused", "answer-too-large (over 16777216 bytes)", ...). The exchange never logs; the caller
// deletes it after finished().
#include "service/transport/httpclientrequest.h"
#include "service/transport/httpresponsereceiver.h"

#include <QByteArray>
#include <QObject>
#include <QString>
#include <memory>

namespace coreflow {

class Clock;
class ClockTimer;
class HttpClientPool;

class CorestoreHttpExchange : public QObject, public HttpResponseReceiver {
    Q_OBJECT
public:
    CorestoreHttpExchange(HttpClientPool &pool, Clock &clock, qint64 timeoutMs, qsizetype maxBodyBytes, QObject *parent = nullptr);
    ~CorestoreHttpExchange() override;

    void start(const HttpClientRequest &request);
    // Withdraws the request (the endpoint was removed, the relay stops); finished() is not emitted.
    void abandon();

    bool answered() const { return m_status != 0 && m_failureClass.isEmpty(); }
    int status() const { return m_status; }
    const QByteArray &body() const { return m_body; }
    const QString &failureClass() const { return m_failureClass; }

    // The §15 words for a transport failure.
    static QString failureWord(HttpClientFailure failure);

Q_SIGNALS:
    void finished();

private:
    // HttpResponseReceiver
    void responseHead(int status, const HttpHeaderPairs &headers) override;
    bool responseBodyRoom() const override { return true; }
    void responseBody(const char *data, qsizetype size) override;
    void responseComplete() override;
    void responseFailed(HttpClientFailure failure) override;

    void failWith(const QString &failureClass, bool withdraw);

    HttpClientPool &m_pool;
    std::unique_ptr<ClockTimer> m_timer;
    qint64 m_timeoutMs;
    qsizetype m_maxBodyBytes;
    int m_status = 0;
    QByteArray m_body;
    QString m_failureClass;
    bool m_running = false;
};

} // namespace coreflow
