#pragma once
// RawHttpsClient: a node stand-in that speaks raw HTTP/1.1 over TLS to the test listener, so tests see
// the relay's answer byte for byte: every header line (repeated ones too), the framing (Content-Length
// or chunked), and can read slowly, stop reading, or leave mid-body.
#include "tests/registry/peers/fakeregistry.h"

#include <QByteArray>
#include <QObject>
#include <QSslCertificate>
#include <QSslSocket>

namespace coreflow::test {

struct RawResponse {
    int status = 0;
    RawHeaders headers;
    QByteArray body;      // de-chunked when the answer was chunked
    bool chunked = false;
    QByteArray header(const QByteArray &name) const;
    QList<QByteArray> values(const QByteArray &name) const;
    bool has(const QByteArray &name) const { return !values(name).isEmpty(); }
};

class RawHttpsClient : public QObject {
    Q_OBJECT
public:
    RawHttpsClient(quint16 port, const QSslCertificate &ca, QObject *parent = nullptr);
    bool connectAndWait(int timeoutMs = 10000);
    QSslSocket &socket() { return m_socket; }

    // Sends "<method> <target> HTTP/1.1" with Host and the given extra header lines.
    void sendRequest(const QByteArray &method, const QByteArray &target, const RawHeaders &headers = {},
                     const QByteArray &body = {});
    // Waits until a complete answer is buffered and takes it (head: no body expected).
    bool readResponse(RawResponse &out, bool head = false, int timeoutMs = 15000);
    // Waits until the header block of the next answer has arrived; parses it into out (body empty).
    bool waitForHeaders(RawResponse &out, int timeoutMs = 15000);
    // Bytes received so far (decrypted, including headers) since connect.
    qint64 received() const { return m_received; }
    // Stops reading from the socket (bounded read buffer); resume() reads again.
    void pause(qint64 readBuffer = 16 * 1024);
    void resume();
    // After waitForHeaders(): every further byte is counted and checked against
    // FakeRegistry::patternByte(patternOffset + n) instead of being buffered (for large bodies).
    void discardBody(qint64 patternOffset = 0);
    qint64 discarded() const { return m_discarded; }
    bool patternOk() const { return m_patternOk; }

private:
    void onReadyRead();
    bool tryParse(RawResponse &out, bool head, bool headersOnly);

    QSslSocket m_socket;
    quint16 m_port;
    QByteArray m_buffer;
    qint64 m_received = 0;
    bool m_paused = false;
    bool m_discarding = false;
    qint64 m_discardOffset = 0;
    qint64 m_discarded = 0;
    bool m_patternOk = true;
    void consumeDiscarded(const QByteArray &data);
};

} // namespace coreflow::test
