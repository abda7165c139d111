#pragma once
// ListenerRequestGuard: bounds what a client may send on the relay's TLS listener before its request
// is handled (the pull endpoint's listener-side half; RelayListener attaches one to every accepted
// socket). Qt 6.4's QAbstractHttpServer reads a whole request, body included, into memory (twice: its
// read transaction and the request's body buffer) before any handler runs; the guard looks at each
// request's header block as it arrives, before Qt's parser (its readyRead slot is connected first),
// and refuses at once:
//   - a header block (request line + header lines + blank line) over kMaxHeaderBlockBytes:
//     431 request-invalid;
//   - a request announcing a body (Content-Length other than 0, or any Transfer-Encoding): for a
//     method other than GET/HEAD 405 registry-method-refused (Allow: GET, HEAD; a write is never
//     relayed, IP-02), for GET/HEAD 413 request-invalid (a pull and the WebSocket upgrade carry none).
// A refusal is answered when no earlier answer on the connection is still in progress (the handler
// marks the socket with kAnswerInProgressProperty while it answers or holds pipelined requests);
// otherwise an answer could interleave with one still streaming, so the connection is aborted. After a refusal the guard stops Qt's parser (its
// readyRead connection is cut), discards what still arrives, sends the answer with Connection: close,
// closes, and aborts if the close has not completed within kCloseGraceMs.
// Every accepted socket also gets a read buffer of kReadBufferBytes, so what the socket holds stays
// bounded whatever happens to the parser. A WebSocket upgrade request (Upgrade: websocket) lifts the
// read buffer bound and detaches the guard before Qt completes the upgrade: node sessions are
// bounded by their own protocol, not here.
//
// The guard mirrors Qt 6.4's request framing (QHttpServerRequestPrivate::parse): leading whitespace
// before a request line is skipped, a line ends at LF (CR before it optional), the header block ends
// at an empty line. Qt keeps a read transaction open from a request's first byte until the request is
// complete, and consumes every available byte of an incomplete request, so: no transaction open means
// the next unread byte starts a request; an open transaction means every unread byte continues the
// current one.
#include <QByteArray>
#include <QObject>
#include <QPointer>

class QTcpSocket;
class QTimer;

namespace coreflow {

class ListenerRequestGuard : public QObject {
    Q_OBJECT
public:
    static constexpr qsizetype kMaxHeaderBlockBytes = 64 * 1024;
    static constexpr qint64 kReadBufferBytes = 256 * 1024;
    static constexpr int kCloseGraceMs = 2000;
    // Dynamic property (bool) the HTTP handler sets on a socket while an answer on it is in progress.
    static constexpr const char *kAnswerInProgressProperty = "coreflowHttpAnswerInProgress";

    // Attaches a guard (a child of socket) to a socket accepted by httpServer. Must run before
    // httpServer connects to the socket's readyRead (ListenerHttpServer::adopt attaches it before it
    // hands the socket to the server).
    static ListenerRequestGuard *attach(QTcpSocket *socket, QObject *httpServer);

    // Totals over every guard of this process (tests, status).
    static qint64 refusedConnections();

private:
    ListenerRequestGuard(QTcpSocket *socket, QObject *httpServer);
    void onReadyRead();
    void scan(const QByteArray &bytes);
    void headerBlockComplete();
    void refuse(int status, const QByteArray &reason, bool methodRefused = false);
    void discard();

    QTcpSocket *m_socket;
    QPointer<QObject> m_server;
    QByteArray m_block;       // the current request's bytes so far, leading whitespace skipped
    qsizetype m_lineStart = 0; // offset in m_block of the line being read
    qsizetype m_skipped = 0;  // whitespace skipped before the request line (Qt holds it too)
    bool m_requestLineDone = false;
    bool m_complete = false;  // the current request's header block has ended
    int m_requests = 0;       // header blocks completed on this connection
    bool m_closing = false;
    QTimer *m_closeTimer = nullptr;
};

} // namespace coreflow
