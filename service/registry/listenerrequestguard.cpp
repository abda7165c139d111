#include "listenerrequestguard.h"

#include "registrylog.h"
#include "registryrefusal.h"

#include <QTcpSocket>
#include <QTimer>
#include <atomic>

#include "shared/contract/refusalnames.h"

namespace coreflow {

namespace {

std::atomic<qint64> g_refused{0};

bool isRequestLineWhitespace(char c)
{
    return c == '\v' || c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

const char *reasonPhrase(int status)
{
    switch (status) {
    case 405: return "Method Not Allowed";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    default: return "Bad Request";
    }
}

} // namespace

ListenerRequestGuard *ListenerRequestGuard::attach(QTcpSocket *socket, QObject *httpServer)
{
    return new ListenerRequestGuard(socket, httpServer);
}

qint64 ListenerRequestGuard::refusedConnections() { return g_refused.load(); }

ListenerRequestGuard::ListenerRequestGuard(QTcpSocket *socket, QObject *httpServer)
    : QObject(socket), m_socket(socket), m_server(httpServer)
{
    m_socket->setReadBufferSize(kReadBufferBytes);
    connect(m_socket, &QIODevice::readyRead, this, &ListenerRequestGuard::onReadyRead);
}

void ListenerRequestGuard::onReadyRead()
{
    if (m_closing) {
        discard();
        return;
    }
    if (!m_socket->isTransactionStarted()) {
        // Qt's parser is between requests: the next unread byte starts one.
        m_block.clear();
        m_lineStart = 0;
        m_requestLineDone = false;
        m_complete = false;
        m_skipped = 0;
    } else if (m_complete) {
        return; // the parser is reading what the header block announced (never a body: refused)
    }
    const qint64 room = kMaxHeaderBlockBytes + 1 - (m_block.size() + m_skipped);
    const QByteArray fresh = m_socket->peek(qMax<qint64>(0, qMin(m_socket->bytesAvailable(), room)));
    scan(fresh);
}

void ListenerRequestGuard::scan(const QByteArray &bytes)
{
    for (const char c : bytes) {
        if (!m_requestLineDone && m_block.isEmpty() && isRequestLineWhitespace(c)) {
            ++m_skipped;
        } else {
            m_block.append(c);
            if (c == '\n') {
                if (!m_requestLineDone) {
                    m_requestLineDone = true;
                    m_lineStart = m_block.size();
                } else {
                    const QByteArrayView headers = QByteArrayView(m_block).sliced(m_lineStart);
                    if (headers.endsWith("\n\r\n") || headers.endsWith("\n\n") || headers == "\r\n"
                        || headers == "\n") {
                        headerBlockComplete();
                        return; // later bytes belong to the next request, scanned when Qt gets there
                    }
                }
            }
        }
        if (m_block.size() + m_skipped > kMaxHeaderBlockBytes) {
            refuse(431, "the request header block is over the bound");
            return;
        }
    }
}

void ListenerRequestGuard::headerBlockComplete()
{
    m_complete = true;
    bool body = false;
    bool upgradeWebSocket = false;
    bool connectionUpgrade = false;
    const QList<QByteArray> lines = m_block.mid(m_lineStart).split('\n');
    for (QByteArray line : lines) {
        if (line.endsWith('\r'))
            line.chop(1);
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.left(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "transfer-encoding") {
            body = true;
        } else if (name == "content-length") {
            bool ok = false;
            const qulonglong length = value.toULongLong(&ok);
            if (!ok || length != 0)
                body = true;
        } else if (name == "upgrade") {
            upgradeWebSocket = value.compare("websocket", Qt::CaseInsensitive) == 0;
        } else if (name == "connection") {
            connectionUpgrade = connectionUpgrade || value.toLower().contains("upgrade");
        }
    }
    if (body) {
        const QByteArray method = m_block.left(m_block.indexOf(' '));
        if (method != "GET" && method != "HEAD")
            refuse(405, "only GET and HEAD are forwarded; a registry write is not relayed", true);
        else
            refuse(413, "a request to this listener carries no body");
        return;
    }
    ++m_requests;
    m_block.clear();
    if (upgradeWebSocket && connectionUpgrade) {
        // A node session: Qt completes the upgrade (or refuses it) right after this slot.
        m_socket->setReadBufferSize(0);
        disconnect(m_socket, nullptr, this, nullptr);
        deleteLater();
    }
}

void ListenerRequestGuard::refuse(int status, const QByteArray &reason, bool methodRefused)
{
    const QLatin1StringView name = methodRefused ? contract::refusal::registryMethodRefused
                                                 : contract::refusal::requestInvalid;
    m_closing = true;
    ++g_refused;
    m_block.clear();
    // Qt's parser must not see another byte of this connection.
    if (m_server)
        disconnect(m_socket, &QIODevice::readyRead, m_server, nullptr);
    discard();
    const bool answer = !m_socket->property(kAnswerInProgressProperty).toBool()
        && m_socket->state() == QAbstractSocket::ConnectedState;
    qCInfo(lcRegistry, "listener: request refused %d %s (%s); connection %s", status, name.data(),
           reason.constData(), answer ? "closed" : "aborted");
    if (!answer) {
        m_socket->abort();
        return;
    }
    const QByteArray body = RegistryRefusal::body(QLatin1StringView("UNSUPPORTED"), name, reason);
    QByteArray out = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reasonPhrase(status) + "\r\n";
    out += "Content-Type: application/json\r\n";
    out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    out += "Docker-Distribution-API-Version: registry/2.0\r\n";
    if (methodRefused)
        out += "Allow: GET, HEAD\r\n";
    out += "Connection: close\r\n\r\n";
    out += body;
    m_socket->write(out);
    m_closeTimer = new QTimer(this);
    m_closeTimer->setSingleShot(true);
    connect(m_closeTimer, &QTimer::timeout, m_socket, &QAbstractSocket::abort);
    m_closeTimer->start(kCloseGraceMs);
    m_socket->disconnectFromHost();
}

void ListenerRequestGuard::discard()
{
    if (m_socket->isTransactionStarted())
        m_socket->commitTransaction(); // drops what the parser's transaction held
    m_socket->skip(m_socket->bytesAvailable());
}

} // namespace coreflow
