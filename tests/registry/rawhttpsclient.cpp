#include "tests/registry/rawhttpsclient.h"

#include "tests/registry/testwait.h"

#include <QHostAddress>
#include <QTest>

#include <cstring>

namespace coreflow::test {

QByteArray RawResponse::header(const QByteArray &name) const
{
    const auto v = values(name);
    return v.isEmpty() ? QByteArray() : v.first();
}

QList<QByteArray> RawResponse::values(const QByteArray &name) const
{
    QList<QByteArray> out;
    for (const auto &[k, v] : headers) {
        if (k.compare(name, Qt::CaseInsensitive) == 0)
            out.append(v);
    }
    return out;
}

RawHttpsClient::RawHttpsClient(quint16 port, const QSslCertificate &ca, QObject *parent)
    : QObject(parent), m_port(port)
{
    QSslConfiguration conf = QSslConfiguration::defaultConfiguration();
    conf.setCaCertificates({ca});
    conf.setPeerVerifyMode(QSslSocket::VerifyPeer);
    m_socket.setSslConfiguration(conf);
    m_socket.setPeerVerifyName(QStringLiteral("localhost"));
    connect(&m_socket, &QIODevice::readyRead, this, &RawHttpsClient::onReadyRead);
}

bool RawHttpsClient::connectAndWait(int timeoutMs)
{
    m_socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), m_port);
    m_socket.setPeerVerifyName(QStringLiteral("localhost"));
    return spinUntil([this] { return m_socket.isEncrypted(); }, timeoutMs);
}

void RawHttpsClient::sendRequest(const QByteArray &method, const QByteArray &target, const RawHeaders &headers,
                                 const QByteArray &body)
{
    QByteArray out = method + ' ' + target + " HTTP/1.1\r\nHost: localhost:" + QByteArray::number(m_port) + "\r\n";
    for (const auto &[k, v] : headers)
        out += k + ": " + v + "\r\n";
    if (!body.isEmpty())
        out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    out += "\r\n" + body;
    m_socket.write(out);
}

void RawHttpsClient::onReadyRead()
{
    if (m_paused)
        return;
    const QByteArray data = m_socket.readAll();
    m_received += data.size();
    if (m_discarding)
        consumeDiscarded(data);
    else
        m_buffer += data;
}

void RawHttpsClient::discardBody(qint64 patternOffset)
{
    const qsizetype end = m_buffer.indexOf("\r\n\r\n");
    const QByteArray rest = end < 0 ? QByteArray() : m_buffer.mid(end + 4);
    m_buffer.clear();
    m_discarding = true;
    m_discardOffset = patternOffset;
    m_discarded = 0;
    consumeDiscarded(rest);
}

void RawHttpsClient::consumeDiscarded(const QByteArray &data)
{
    for (qsizetype done = 0; done < data.size() && m_patternOk;) {
        const qsizetype n = qMin<qsizetype>(64 * 1024, data.size() - done);
        const QByteArray expected = FakeRegistry::pattern(m_discardOffset + m_discarded + done, n);
        if (memcmp(expected.constData(), data.constData() + done, size_t(n)) != 0)
            m_patternOk = false;
        done += n;
    }
    m_discarded += data.size();
}

void RawHttpsClient::pause(qint64 readBuffer)
{
    m_paused = true;
    m_socket.setReadBufferSize(readBuffer);
}

void RawHttpsClient::resume()
{
    m_paused = false;
    m_socket.setReadBufferSize(0);
    onReadyRead();
}

bool RawHttpsClient::tryParse(RawResponse &out, bool head, bool headersOnly)
{
    const qsizetype end = m_buffer.indexOf("\r\n\r\n");
    if (end < 0)
        return false;
    RawResponse r;
    const QList<QByteArray> lines = m_buffer.left(end).split('\n');
    r.status = lines.value(0).split(' ').value(1).toInt();
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i).trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon > 0)
            r.headers.append({line.left(colon).trimmed(), line.mid(colon + 1).trimmed()});
    }
    r.chunked = r.header("transfer-encoding").toLower().contains("chunked");
    if (headersOnly) {
        out = r;
        return true;
    }
    qsizetype pos = end + 4;
    const bool noBody = head || r.status == 204 || r.status == 304 || (r.status >= 100 && r.status < 200);
    if (!noBody) {
        if (r.chunked) {
            for (;;) {
                const qsizetype lineEnd = m_buffer.indexOf("\r\n", pos);
                if (lineEnd < 0)
                    return false;
                bool ok = false;
                const qint64 size = m_buffer.mid(pos, lineEnd - pos).split(';').value(0).trimmed().toLongLong(&ok, 16);
                if (!ok)
                    return false;
                if (m_buffer.size() < lineEnd + 2 + size + 2)
                    return false;
                if (size == 0) {
                    pos = lineEnd + 4; // no trailers
                    break;
                }
                r.body += m_buffer.mid(lineEnd + 2, size);
                pos = lineEnd + 2 + size + 2;
            }
        } else if (r.has("content-length")) {
            const qint64 n = r.header("content-length").toLongLong();
            if (m_buffer.size() < pos + n)
                return false;
            r.body = m_buffer.mid(pos, n);
            pos += n;
        } else {
            if (m_socket.state() == QAbstractSocket::ConnectedState)
                return false; // delimited by close
            r.body = m_buffer.mid(pos);
            pos = m_buffer.size();
        }
    }
    m_buffer.remove(0, pos);
    out = r;
    return true;
}

bool RawHttpsClient::readResponse(RawResponse &out, bool head, int timeoutMs)
{
    return spinUntil([&] { return tryParse(out, head, false); }, timeoutMs);
}

bool RawHttpsClient::waitForHeaders(RawResponse &out, int timeoutMs)
{
    return spinUntil([&] { return tryParse(out, false, true); }, timeoutMs);
}

} // namespace coreflow::test
