#include "service/listener/listenerhttpconnection.h"

#include "service/core/logging.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/httprefusalbody.h"
#include "service/transport/httpheadercollector.h"
#include "service/listener/tlshttpresponder.h"

#include <QTimerEvent>

#include <utility>

#include <http_parser.h>

namespace coreflow {

// http_parser in request mode; it pauses itself at the end of each header block and each message,
// so the connection decides about a request (bounds, body) before the parser reads on.
struct ListenerHttpConnection::Parse {
    enum class Event { None, HeadersDone, MessageDone };
    http_parser parser{};
    http_parser_settings settings{};
    QByteArray url;
    HttpHeaderCollector headers;
    Event event = Event::None;
    bool headersDone = false;
    qsizetype headBytes = 0; // bytes of the current request read before its header block ended
    bool webSocketUpgrade = false;

    void nextMessage()
    {
        url.clear();
        headers.clear();
        headersDone = false;
        headBytes = 0;
        webSocketUpgrade = false;
    }
    static Parse &of(http_parser *p) { return *static_cast<Parse *>(p->data); }
};

ListenerHttpConnection::ListenerHttpConnection(TlsConnection *tls, const QByteArray &bytesSoFar, ListenerHttpSide &side,
                                               QObject *parent)
    : QObject(parent), m_tls(tls), m_side(side), m_parse(new Parse)
{
    m_tls->setParent(this);
    Parse &parse = *m_parse;
    http_parser_init(&parse.parser, HTTP_REQUEST);
    parse.parser.data = &parse;
    http_parser_settings_init(&parse.settings);
    parse.settings.on_url = [](http_parser *p, const char *at, size_t length) {
        Parse::of(p).url.append(at, qsizetype(length));
        return 0;
    };
    HttpHeaderCollector::install<Parse, &Parse::headers>(parse.settings);
    parse.settings.on_headers_complete = [](http_parser *p) {
        Parse &s = Parse::of(p);
        s.headers.finish();
        s.event = Parse::Event::HeadersDone;
        http_parser_pause(p, 1);
        return 0;
    };
    parse.settings.on_message_complete = [](http_parser *p) {
        Parse::of(p).event = Parse::Event::MessageDone;
        http_parser_pause(p, 1);
        return 0;
    };
    m_tls->setReceiver(this);
    // Not from inside the listener's hand-over: the handler may answer (and this connection end) at once.
    QMetaObject::invokeMethod(this, [this, bytesSoFar] { start(bytesSoFar); }, Qt::QueuedConnection);
}

ListenerHttpConnection::~ListenerHttpConnection()
{
    if (m_counted)
        --m_side.openConnections;
    if (m_tls)
        m_tls->setReceiver(nullptr);
    if (TlsHttpResponder *current = m_current) {
        m_current = nullptr;
        current->connectionGone();
    }
}

void ListenerHttpConnection::start(const QByteArray &bytesSoFar)
{
    if (m_ended)
        return;
    if (m_tls->state() == TlsConnection::State::Closed)
        return end();
    if (m_side.openConnections >= m_side.maxConnections) {
        ++m_side.busyRefused;
        return refuse(503, "the listener holds as many HTTP connections as it serves at once; retry",
                      contract::refusal::listenerBusy, "Retry-After: 1\r\n");
    }
    ++m_side.openConnections;
    m_counted = true;
    if (!bytesSoFar.isEmpty() && !feed(bytesSoFar.constData(), bytesSoFar.size()))
        return;
    readClient();
    updateIdleBound();
}

void ListenerHttpConnection::updateIdleBound()
{
    const bool idle = !m_ended && !m_closing && !m_stopParsing && !m_current && m_waiting.empty();
    if (!idle)
        m_idleBound.stop();
    else if (!m_idleBound.isActive())
        m_idleBound.start(m_side.idleRequestTimeoutMs, this);
}

void ListenerHttpConnection::readClient()
{
    char buffer[kReadChunkBytes];
    while (!m_ended) {
        if (!m_closing && m_tls->pendingBytes() >= kTlsWatermarkBytes) {
            // The client is not reading its answers: take no further requests from it until it does
            // (tlsWritten() resumes).
            m_tls->setReadEnabled(false);
            return;
        }
        const qsizetype n = m_tls->read(buffer, kReadChunkBytes);
        if (n <= 0)
            return;
        if (m_closing || m_stopParsing)
            continue; // discarded: nothing more is read from this connection as a request
        if (!feed(buffer, n))
            return;
    }
}

bool ListenerHttpConnection::feed(const char *data, qsizetype size)
{
    Parse &parse = *m_parse;
    qsizetype offset = 0;
    while (offset < size && !m_stopParsing && !m_ended) {
        const size_t used = http_parser_execute(&parse.parser, &parse.settings, data + offset, size_t(size - offset));
        const auto error = HTTP_PARSER_ERRNO(&parse.parser);
        offset += qsizetype(used);
        if (error == HPE_PAUSED) {
            http_parser_pause(&parse.parser, 0);
            const Parse::Event event = parse.event;
            parse.event = Parse::Event::None;
            if (event == Parse::Event::HeadersDone) {
                // Paused on the header block's last LF, which is not counted as read yet.
                headersComplete(parse.headBytes + qsizetype(used) + 1);
            } else if (event == Parse::Event::MessageDone) {
                messageComplete();
            }
            continue;
        }
        if (!parse.headersDone)
            parse.headBytes += qsizetype(used);
        if (error != HPE_OK) {
            parseFailed(int(error));
            return false;
        }
        if (!parse.headersDone && parse.headBytes > kMaxHeaderBlockBytes) {
            refuse(431, "the request header block is over the bound", false);
            return false;
        }
    }
    return !m_stopParsing && !m_ended;
}

void ListenerHttpConnection::headersComplete(qsizetype headBytes)
{
    Parse &parse = *m_parse;
    parse.headersDone = true;
    if (headBytes > kMaxHeaderBlockBytes)
        return refuse(431, "the request header block is over the bound", false);
    bool body = false;
    for (const auto &[name, value] : parse.headers.headers()) {
        if (name.compare("transfer-encoding", Qt::CaseInsensitive) == 0)
            body = true;
        else if (name.compare("content-length", Qt::CaseInsensitive) == 0)
            body = body || value != "0";
        else if (name.compare("upgrade", Qt::CaseInsensitive) == 0)
            parse.webSocketUpgrade = value.compare("websocket", Qt::CaseInsensitive) == 0;
    }
    if (!body)
        return;
    const auto method = http_method(parse.parser.method);
    if (method != HTTP_GET && method != HTTP_HEAD)
        refuse(405, "only GET and HEAD are forwarded; a registry write is not relayed", true);
    else
        refuse(413, "a request to this listener carries no body", false);
}

void ListenerHttpConnection::messageComplete()
{
    Parse &parse = *m_parse;
    Waiting waiting;
    waiting.request.method = http_method_str(http_method(parse.parser.method));
    waiting.request.url = QUrl::fromEncoded(parse.url, QUrl::TolerantMode);
    waiting.request.headers = parse.headers.take();
    waiting.closeUnanswered = parse.webSocketUpgrade;
    // An upgrade of another kind (or CONNECT) ends what http_parser reads on this connection.
    waiting.last = !http_should_keep_alive(&parse.parser) || parse.parser.upgrade;
    parse.nextMessage();
    if (waiting.last || waiting.closeUnanswered)
        m_stopParsing = true;
    const bool answering = m_current != nullptr || !m_waiting.empty();
    if (answering && qsizetype(m_waiting.size()) >= kMaxPipelinedRequests) {
        qCWarning(logListener, "more than %d pipelined requests on one connection: connection closed",
                  kMaxPipelinedRequests);
        m_stopParsing = true;
        abortUnanswered();
        return;
    }
    m_waiting.push_back(std::move(waiting));
    m_idleBound.stop(); // a whole request arrived
    dispatch();
}

void ListenerHttpConnection::parseFailed(int error)
{
    const auto e = http_errno(error);
    if (e == HPE_HEADER_OVERFLOW)
        return refuse(431, "the request header block is over the bound", false);
    if (e == HPE_INVALID_CONTENT_LENGTH || e == HPE_UNEXPECTED_CONTENT_LENGTH || e == HPE_INVALID_TRANSFER_ENCODING
        || e == HPE_INVALID_CHUNK_SIZE) {
        const auto method = http_method(m_parse->parser.method);
        if (method != HTTP_GET && method != HTTP_HEAD)
            return refuse(405, "only GET and HEAD are forwarded; a registry write is not relayed", true);
        return refuse(413, "a request to this listener carries no body", false);
    }
    refuse(400, "the request is not HTTP/1.1 this listener accepts (a control character in a header, or a malformed line)",
           false);
}

void ListenerHttpConnection::dispatch()
{
    if (m_dispatching)
        return; // the loop below picks the next one up
    m_dispatching = true;
    while (!m_ended && !m_current && !m_waiting.empty()) {
        Waiting next = std::move(m_waiting.front());
        m_waiting.pop_front();
        if (next.closeUnanswered) {
            // An answer could overtake answers to earlier pipelined requests, and sessions start at
            // "/" on a new connection: the connection is closed without one.
            qCInfo(logListener) << "WebSocket upgrade on an HTTP connection: connection closed (sessions start on a new connection at /)";
            m_waiting.clear();
            m_tls->shutdown(); // tlsClosed() ends this
            break;
        }
        m_lastAnswer = next.last;
        auto responder = std::make_unique<TlsHttpResponder>(this);
        m_current = responder.get();
        if (ListenerHttpHandler *handler = m_side.handler)
            handler->handleHttp(next.request, std::move(responder));
        else
            answerNotServed(std::move(responder));
    }
    m_dispatching = false;
    updateIdleBound();
}

void ListenerHttpConnection::answerNotServed(std::unique_ptr<ListenerHttpResponder> responder)
{
    const QByteArray body = contract::httpRefusalBody(QLatin1StringView("UNSUPPORTED"), contract::refusal::pathNotServed,
                                                  "this listener serves the node WebSocket at / and image pulls under /v2/");
    responder->writeHead(404, {{"Content-Type", "application/json"}, {"Content-Length", QByteArray::number(body.size())}});
    responder->writeBody(body);
    responder->finish();
}

void ListenerHttpConnection::writeAnswer(QByteArrayView bytes)
{
    // Answer bytes arriving in small reads become full TLS records (TlsConnection::writeDeferred).
    if (!m_ended)
        m_tls->writeDeferred(bytes);
}

void ListenerHttpConnection::answerFinished(TlsHttpResponder *responder)
{
    if (responder != m_current || m_ended)
        return;
    m_current = nullptr;
    if (m_lastAnswer) {
        m_waiting.clear();
        m_tls->shutdown(); // after the queue drains; tlsClosed() ends this
        return;
    }
    if (m_waiting.empty() || m_dispatching)
        return updateIdleBound();
    // Later, not from inside the finishing handler.
    QMetaObject::invokeMethod(this, &ListenerHttpConnection::dispatch, Qt::QueuedConnection);
}

void ListenerHttpConnection::abortConnection()
{
    m_current = nullptr; // only a responder calls this, and it knows
    if (!m_ended)
        m_tls->abort(); // tlsClosed() ends this
}

void ListenerHttpConnection::tlsWritten()
{
    if (m_current)
        m_current->connectionWritten();
    if (m_ended || m_closing || m_tls->readEnabled() || m_tls->pendingBytes() >= kTlsWatermarkBytes)
        return;
    m_tls->setReadEnabled(true);
    readClient();
}

void ListenerHttpConnection::refuse(int status, const QByteArray &reason, bool methodRefused)
{
    ++m_side.refusedRequests;
    refuse(status, reason, methodRefused ? contract::refusal::registryMethodRefused : contract::refusal::requestInvalid,
           methodRefused ? QByteArrayLiteral("Allow: GET, HEAD\r\n") : QByteArray());
}

void ListenerHttpConnection::refuse(int status, const QByteArray &reason, QLatin1StringView name, const QByteArray &extraHeaders)
{
    m_closing = true;
    m_stopParsing = true;
    const bool answer = !m_current && m_waiting.empty() && m_tls->state() == TlsConnection::State::Open;
    // At the connection bound only the 1st, 2nd, 4th, 8th, ... refusal is logged (with its count):
    // whoever fills the listener cannot fill the log too.
    const bool busy = name == contract::refusal::listenerBusy;
    if (!busy || (m_side.busyRefused & (m_side.busyRefused - 1)) == 0)
        qCInfo(logListener, "listener: request refused %d %s (%s); connection %s%s", status, name.data(), reason.constData(),
               answer ? "closed" : "aborted",
               busy ? qPrintable(QStringLiteral(" (%1 refused at the bound so far)").arg(m_side.busyRefused)) : "");
    if (!answer) {
        abortUnanswered();
        return;
    }
    const QByteArray body = contract::httpRefusalBody(QLatin1StringView(status == 503 ? "UNAVAILABLE" : "UNSUPPORTED"), name, reason);
    QByteArray out = TlsHttpResponder::statusLine(status);
    out += "Content-Type: application/json\r\n";
    out += "Content-Length: " + QByteArray::number(body.size()) + "\r\n";
    out += "Docker-Distribution-API-Version: registry/2.0\r\n";
    out += extraHeaders;
    out += "Connection: close\r\n\r\n";
    out += body;
    m_closeGrace.start(kCloseGraceMs, this);
    m_tls->write(out);
    m_tls->shutdown(); // close_notify once the answer is out; tlsClosed() ends this
}

void ListenerHttpConnection::timerEvent(QTimerEvent *event)
{
    if (event->timerId() == m_idleBound.timerId()) {
        m_idleBound.stop();
        if (m_ended || m_current || !m_waiting.empty())
            return;
        ++m_side.idleClosed;
        qCDebug(logListener, "listener: connection closed: no whole request within %d ms", m_side.idleRequestTimeoutMs);
        m_stopParsing = true;
        m_tls->abort(); // tlsClosed() ends this
        return;
    }
    if (event->timerId() != m_closeGrace.timerId())
        return QObject::timerEvent(event);
    m_closeGrace.stop();
    if (!m_ended)
        m_tls->abort(); // the client did not take the refusal in time
}

void ListenerHttpConnection::end()
{
    if (m_ended)
        return;
    m_ended = true;
    m_closeGrace.stop();
    m_idleBound.stop();
    dropAnswers();
    deleteLater();
}

void ListenerHttpConnection::dropAnswers()
{
    m_waiting.clear();
    if (TlsHttpResponder *current = m_current) {
        m_current = nullptr;
        current->connectionGone();
    }
}

void ListenerHttpConnection::abortUnanswered()
{
    dropAnswers();
    m_tls->abort(); // tlsClosed() ends this
}

} // namespace coreflow
