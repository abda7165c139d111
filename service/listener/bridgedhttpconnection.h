#pragma once
// BridgedHttpConnection: carries one listener connection that is not a WebSocket session between
// its TLS side (TlsConnection) and a local socket pair whose other end the Qt HTTP server reads as
// a plain QTcpSocket (HttpBridge; docs/contract.md D-53). TLS stays the listener's; HTTP parsing and
// the pull endpoint stay Qt's.
//
// Backpressure both ways, nothing unbounded:
//  - client -> Qt: when the pair does not take bytes, TLS reading pauses (at most one read chunk,
//    16 KiB, is held here); it also pauses while the client leaves kTlsWatermarkBytes of answers
//    unread, so pipelined requests cannot make Qt queue answers without bound;
//  - Qt -> client: the pair is read only while the TLS queue holds less than kTlsWatermarkBytes
//    (256 KiB), so a slow client slows the Qt side (and through BodyPump the registry read).
// Either side closing ends both: the client leaving closes the pair (Qt sees the socket disconnect
// and the pull endpoint aborts its upstream request); Qt closing flushes, sends close_notify and
// closes the TLS side.
#include "tlsconnection.h"

#include <QObject>

class QSocketNotifier;

namespace coreflow {

class BridgedHttpConnection : public QObject, private TlsConnection::Receiver {
    Q_OBJECT
public:
    static constexpr qsizetype kTlsWatermarkBytes = 256 * 1024;
    static constexpr qsizetype kChunkBytes = 16 * 1024;

    // Takes ownership of tls and of localFd (the relay's end of the pair); firstBytes were read from
    // the client already and go to the Qt side first.
    BridgedHttpConnection(TlsConnection *tls, int localFd, const QByteArray &firstBytes, QObject *parent = nullptr);
    ~BridgedHttpConnection() override;

private:
    void tlsReadable() override { fromClient(); }
    void tlsWritten() override { toClient(); }
    void tlsClosed() override { end(); }
    void fromClient();
    bool flushToLocal();
    void toClient();
    void end();

    TlsConnection *m_tls;
    int m_fd;
    QSocketNotifier *m_localRead = nullptr;
    QSocketNotifier *m_localWrite = nullptr;
    QByteArray m_toLocal;
    qsizetype m_toLocalOffset = 0;
    bool m_ended = false;
};

} // namespace coreflow
