#pragma once
// RawWebSocketClient: a WebSocket client of the listener written from RFC 6455 for hostile-peer tests:
// it can announce a frame and never finish it, announce lengths no library would, and stop reading,
// which a WebSocket library would not do. TLS through QSslSocket; the relay runs in this process, so
// every wait runs the event loop. Shared by tst_hostilepeers and tst_attacklimits.
#include <QByteArray>
#include <QList>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslSocket>
#include <QTest>

namespace coreflow::testing {

class RawWebSocketClient {
public:
    bool open(quint16 port, const QList<QSslCertificate> &ca)
    {
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setCaCertificates(ca);
        m_socket.setSslConfiguration(tls);
        m_socket.connectToHostEncrypted(QStringLiteral("localhost"), port);
        // The relay runs in this process: wait with the event loop running, never blocking.
        if (!QTest::qWaitFor([&] { return m_socket.isEncrypted(); }, 5000))
            return false;
        m_socket.write("GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n");
        (void)QTest::qWaitFor([&] {
            m_in += m_socket.readAll();
            return m_in.contains("\r\n\r\n");
        }, 5000);
        const qsizetype end = m_in.indexOf("\r\n\r\n");
        if (end < 0 || !m_in.startsWith("HTTP/1.1 101"))
            return false;
        m_in.remove(0, end + 4);
        return true;
    }
    // A masked text frame header announcing length bytes, then the first `send` of them.
    void announce(quint64 length, qint64 send)
    {
        QByteArray header;
        header.append(char(0x81));
        if (length < 126) {
            header.append(char(0x80 | length));
        } else if (length <= 0xffff) {
            header.append(char(0x80 | 126));
            header.append(char(length >> 8)).append(char(length & 0xff));
        } else {
            header.append(char(0x80 | 127));
            for (int i = 7; i >= 0; --i)
                header.append(char((length >> (8 * i)) & 0xff));
        }
        header.append(QByteArray(4, '\0')); // mask key 0: the payload goes as is
        m_socket.write(header);
        m_socket.write(QByteArray(send, ' '));
    }
    // Waits until the relay's Close frame arrived; its code (0 when none came).
    quint16 waitForClose(int ms = 5000)
    {
        quint16 code = 0;
        (void)QTest::qWaitFor([&] {
            m_in += m_socket.readAll();
            if (m_in.size() >= 4 && quint8(m_in[0]) == 0x88)
                code = quint16((quint8(m_in[2]) << 8) | quint8(m_in[3]));
            return code != 0 || (m_socket.state() != QAbstractSocket::ConnectedState && m_in.isEmpty());
        }, ms);
        return code;
    }
    QByteArray closeReason() const
    {
        return m_in.size() >= 4 && quint8(m_in[0]) == 0x88 ? m_in.mid(4, quint8(m_in[1]) - 2) : QByteArray();
    }
    // Qt's socket stops taking bytes from the kernel once `bytes` wait unread (0: no bound): a peer
    // that stops reading, so the relay's answers pile up on its side.
    void setReadBufferSize(qint64 bytes) { m_socket.setReadBufferSize(bytes); }
    // Reads (discarding what was read, apart from a tail) until needle arrived; false after ms.
    bool readUntil(const QByteArray &needle, int ms)
    {
        bool found = false;
        (void)QTest::qWaitFor([&] {
            m_in += m_socket.readAll();
            found = m_in.contains(needle);
            if (m_in.size() > 2 * needle.size())
                m_in.remove(0, m_in.size() - 2 * needle.size());
            return found || (m_socket.state() != QAbstractSocket::ConnectedState && m_socket.bytesAvailable() == 0);
        }, ms);
        return found;
    }
    void sendFrame(const QByteArray &payload)
    {
        announce(quint64(payload.size()), 0);
        m_socket.write(payload);
    }

private:
    QSslSocket m_socket;
    QByteArray m_in;
};

} // namespace coreflow::testing
