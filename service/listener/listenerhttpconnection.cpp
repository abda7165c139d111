#include "service/listener/listenerhttpconnection.h"

#include "service/core/logging.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/httprefusal.h"
#include "service/transport/httpresponsehead.h"
#include "service/listener/tlshttpresponder.h"

#include <QTimerEvent>

#include <utility>

namespace coreflow {

ListenerHttpConnection::ListenerHttpConnection(TlsConnection *tls, const QByteArray &bytesSoFar, ListenerHttpSide &side,
                                               QObject *parent)
    : QObject(parent), m_tls(tls), m_side(side),
      m_parse(std::make_unique<HttpMessageParser>(HttpMessageParser::Kind::Request))
{
    m_tls->setParent(this);
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
                      contract::refusal::listenerBusy, {{QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1")}});
    }
    ++m_side.openConnections;
    m_counted = true;
    applyBounds();
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
    HttpMessageParser &parse = *m_parse;
    qsizetype offset = 0;
    while (offset < size && !m_stopParsing && !m_ended) {
        const bool answering = m_current != nullptr || !m_waiting.empty();
        if (answering && qsizetype(m_waiting.size()) >= kMaxPipelinedRequests) {
            // Between messages: these bytes begin one request more than may wait (D-60).
            if (admitRefusalLine())
                qCWarning(logListener, "more than %d pipelined requests on one connection: connection closed",
                          kMaxPipelinedRequests);
            m_stopParsing = true;
            abortUnanswered();
            return false;
        }
        const HttpMessageParser::Step step = parse.execute(data + offset, size - offset);
        if (const qsizetype held = heldRequestBytes(); held > m_side.peakHeldRequestBytes)
            m_side.peakHeldRequestBytes = held;
        offset += step.used;
        switch (step.event) {
        case HttpMessageParser::Event::HeadersComplete:
            headersComplete(parse.headBytes());
            continue;
        case HttpMessageParser::Event::MessageComplete:
            messageComplete();
            continue;
        case HttpMessageParser::Event::Failed:
            parseFailed(int(parse.error()));
            return false;
        case HttpMessageParser::Event::None:
            break;
        }
        if (!parse.headersDone() && parse.headBytes() > kMaxHeaderBlockBytes) {
            refuse(431, "the request header block is over the bound", false);
            return false;
        }
    }
    return !m_stopParsing && !m_ended;
}

void ListenerHttpConnection::headersComplete(qsizetype headBytes)
{
    const HttpMessageParser &parse = *m_parse;
    if (headBytes > kMaxHeaderBlockBytes)
        return refuse(431, "the request header block is over the bound", false);
    bool body = false;
    for (const auto &[name, value] : parse.headers().headers()) {
        if (name.compare("transfer-encoding", Qt::CaseInsensitive) == 0)
            body = true;
        else if (name.compare("content-length", Qt::CaseInsensitive) == 0)
            body = body || value != "0";
        else if (name.compare("upgrade", Qt::CaseInsensitive) == 0)
            m_webSocketUpgrade = value.compare("websocket", Qt::CaseInsensitive) == 0;
    }
    if (!body)
        return;
    const auto method = parse.method();
    if (method != HTTP_GET && method != HTTP_HEAD)
        refuse(405, "only GET and HEAD are forwarded; a registry write is not relayed", true);
    else
        refuse(413, "a request to this listener carries no body", false);
}

void ListenerHttpConnection::messageComplete()
{
    HttpMessageParser &parse = *m_parse;
    Waiting waiting;
    waiting.request.method = parse.methodName();
    waiting.request.url = QUrl::fromEncoded(parse.url(), QUrl::TolerantMode);
    waiting.heldBytes = parse.heldBytes();
    waiting.request.headers = parse.headers().take();
    waiting.closeUnanswered = std::exchange(m_webSocketUpgrade, false);
    // An upgrade of another kind (or CONNECT) ends what http_parser reads on this connection.
    waiting.last = !parse.keepAlive() || parse.upgrade();
    parse.nextMessage();
    if (waiting.last || waiting.closeUnanswered)
        m_stopParsing = true;
    m_waitingBytes += waiting.heldBytes;
    m_waiting.push_back(std::move(waiting));
    applyBounds();
    m_idleBound.stop(); // a whole request arrived
    dispatch();
}

void ListenerHttpConnection::applyBounds()
{
    const ListenerHeaderLineBound lines = m_side.handler ? m_side.handler->headerLineBound() : ListenerHeaderLineBound{};
    m_parse->setMaxHeaderLines(lines.maxLines);
    m_parse->setMaxHeldBytes(qMax<qsizetype>(0, kMaxHeldRequestBytes - m_waitingBytes));
}

void ListenerHttpConnection::takeWaiting(qsizetype heldBytes)
{
    m_waitingBytes -= heldBytes;
    applyBounds();
}

void ListenerHttpConnection::parseFailed(int error)
{
    const auto e = http_errno(error);
    // A bound crossed while the request arrived (D-60): the same refusals as once it is whole.
    const HttpHeaderCollector::Overflow overflow = m_parse->overflow();
    if (overflow == HttpHeaderCollector::Overflow::Lines && m_side.handler) {
        const ListenerHeaderLineBound lines = m_side.handler->headerLineBound();
        ++m_side.refusedRequests;
        return refuse(lines.status, lines.reason, lines.name, {});
    }
    if (overflow != HttpHeaderCollector::Overflow::None)
        return refuse(431, "the request header block is over the bound", false);
    if (e == HPE_HEADER_OVERFLOW)
        return refuse(431, "the request header block is over the bound", false);
    if (e == HPE_INVALID_CONTENT_LENGTH || e == HPE_UNEXPECTED_CONTENT_LENGTH || e == HPE_INVALID_TRANSFER_ENCODING
        || e == HPE_INVALID_CHUNK_SIZE) {
        const auto method = m_parse->method();
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
        takeWaiting(next.heldBytes);
        if (next.closeUnanswered) {
            // An answer could overtake answers to earlier pipelined requests, and sessions start at
            // "/" on a new connection: the connection is closed without one.
            if (admitRefusalLine())
                qCInfo(logListener) << "WebSocket upgrade on an HTTP connection: connection closed (sessions start on a new connection at /)";
            m_waiting.clear();
            m_waitingBytes = 0;
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
    responder->writeRefusal(contract::httpRefusal(404, contract::refusal::pathNotServed,
                                                  "this listener serves the node WebSocket at / and image pulls under /v2/"));
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
        m_waitingBytes = 0;
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
           methodRefused ? HttpHeaderPairs{{QByteArrayLiteral("Allow"), QByteArrayLiteral("GET, HEAD")}} : HttpHeaderPairs{});
}

void ListenerHttpConnection::refuse(int status, const QByteArray &reason, QLatin1StringView name,
                                    const HttpHeaderPairs &extraHeaders)
{
    m_closing = true;
    m_stopParsing = true;
    const bool answer = !m_current && m_waiting.empty() && m_tls->state() == TlsConnection::State::Open;
    // Under the relay's refusal log bound (§3.1, D-70): per connection 1st, 2nd, 4th, ...; at the
    // connection bound the listener-wide count of busy refusals doubles instead (each busy
    // connection has only the one): whoever fills the listener cannot fill the log too.
    const bool busy = name == contract::refusal::listenerBusy;
    const bool logged = busy ? (m_side.busyRefused & (m_side.busyRefused - 1)) == 0
                                   && (!m_side.refusalLog || m_side.refusalLog->admit(1))
                             : admitRefusalLine();
    if (logged)
        qCInfo(logListener, "listener: request refused %d %s (%s); connection %s%s", status, name.data(), reason.constData(),
               answer ? "closed" : "aborted",
               busy ? qPrintable(QStringLiteral(" (%1 refused at the bound so far)").arg(m_side.busyRefused)) : "");
    if (!answer) {
        abortUnanswered();
        return;
    }
    contract::HttpRefusal refusal = contract::httpRefusal(status, name, reason, {}, extraHeaders);
    refusal.headers.append({QByteArrayLiteral("Connection"), QByteArrayLiteral("close")});
    m_closeGrace.start(kCloseGraceMs, this);
    m_tls->write(httpResponseHead(refusal.status, refusal.headers) + refusal.body);
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
    m_waitingBytes = 0;
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
