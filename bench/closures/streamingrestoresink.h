#pragma once
// StreamingRestoreSink: the closure benchmark's Corestore restore side (docs/contract.md §13.4 receive,
// §15.1 `POST /control/database-closures/restore`), written for bench/ only: a plain QTcpServer with
// TLS (QSslSocket) and an HTTP/1.1 request reader that takes the body's `Content-Length` bytes as they
// arrive, hashes them (OpenSSL EVP SHA-256) and counts them, holding nothing but one read buffer, and
// answers at once after the last byte. Peer code: it includes nothing of service/ or shared/.
//
// Why not the tests' LoopbackCorestore: Qt 6.4's QHttpServer reads a whole request body before its
// handler runs, so a 1 GiB restore was held in memory and answered more than 30 s after its last byte
// (the relay's progress bound then ended the stream, bench/README.md "Database closures").
//
// Requests (one per connection; the relay closes a connection that carried a streamed body):
//   POST <any base>/control/database-closures/restore?serviceId=&backupId=
//     needs `Authorization: Bearer <token>` (else 401 unauthorized), `Content-Length` (else 400
//     closure-length-required), no `Transfer-Encoding` / non-identity `Content-Encoding` (400
//     closure-encoding-refused), `X-Corestore-Closure-Sha256`; after the last byte:
//     200 { "restored": true, "sizeBytes": N, "sha256": "<hex of the body>" } when the body hashed to the
//     stated digest, else 400 { error: { code: "closure-digest-mismatch" } }.
//   anything else: its body is read and dropped, then 404 { error: { code: "route-unknown" } }.
// Rate: setBytesPerSecond(n > 0) reads at most n bytes per second (a token bucket refilled every 5 ms,
// the socket's read buffer held at 64 KiB so the sender is held back by TCP, not by this process's
// memory); 0 reads as fast as bytes arrive.
#include <QByteArray>
#include <QElapsedTimer>
#include <QSslConfiguration>
#include <QTcpServer>
#include <QTimer>
#include <memory>
#include <vector>

class QSslSocket;

namespace coreflow::bench {

class StreamingRestoreSink : public QTcpServer {
    Q_OBJECT
public:
    StreamingRestoreSink(QSslConfiguration tls, QByteArray bearerToken, QObject *parent = nullptr);
    ~StreamingRestoreSink() override;

    void setBytesPerSecond(qint64 bytesPerSecond);

Q_SIGNALS:
    // One restore request finished: body bytes read, their hex SHA-256, whether it was accepted, and
    // the microseconds from the body's last byte read to the answer handed to the socket.
    void restoreFinished(qint64 bytes, const QByteArray &sha256Hex, bool accepted, qint64 answerMicros);

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    struct Exchange;

    void readFrom(Exchange &exchange);
    bool readHead(Exchange &exchange);
    void readBody(Exchange &exchange);
    void finishBody(Exchange &exchange);
    void answer(Exchange &exchange, int status, const QByteArray &json);
    void refill();
    void forget(QSslSocket *socket);

    QSslConfiguration m_tls;
    QByteArray m_bearer;
    qint64 m_bytesPerSecond = 0;
    double m_allowance = 0;        // bytes that may be read now (rated mode)
    QElapsedTimer m_lastRefill;
    QTimer m_refillTimer;
    std::vector<char> m_buffer;    // the one read buffer
    std::vector<std::unique_ptr<Exchange>> m_exchanges;
};

} // namespace coreflow::bench
