#include "bench/closures/streamingrestoresink.h"

#include <QSslSocket>
#include <QUrl>
#include <QUrlQuery>
#include <algorithm>
#include <openssl/evp.h>

namespace coreflow::bench {

namespace {
constexpr qsizetype kMaxHeadBytes = 64 * 1024;
constexpr qsizetype kReadBufferBytes = 256 * 1024;
constexpr qint64 kRatedSocketBufferBytes = 64 * 1024;
constexpr int kRefillMs = 5;

QByteArray errorJson(const char *code) { return QByteArray(R"({"error":{"code":")") + code + R"("}})"; }
} // namespace

struct StreamingRestoreSink::Exchange {
    QSslSocket *socket = nullptr;
    QByteArray head;               // request line and headers, until the blank line
    bool inBody = false;
    bool answered = false;
    bool isRestore = false;
    int refusedStatus = 0;         // > 0: answer this once the body was read
    QByteArray refusedCode;
    qint64 expected = 0;
    qint64 received = 0;
    QByteArray statedSha256;
    EVP_MD_CTX *sha = nullptr;
    ~Exchange() { EVP_MD_CTX_free(sha); }
};

StreamingRestoreSink::StreamingRestoreSink(QSslConfiguration tls, QByteArray bearerToken, QObject *parent)
    : QTcpServer(parent), m_tls(std::move(tls)), m_bearer(std::move(bearerToken)), m_buffer(size_t(kReadBufferBytes))
{
    m_refillTimer.setInterval(kRefillMs);
    m_refillTimer.setTimerType(Qt::PreciseTimer);
    connect(&m_refillTimer, &QTimer::timeout, this, &StreamingRestoreSink::refill);
}

StreamingRestoreSink::~StreamingRestoreSink() = default;

void StreamingRestoreSink::setBytesPerSecond(qint64 bytesPerSecond)
{
    m_bytesPerSecond = std::max<qint64>(0, bytesPerSecond);
    m_allowance = 0;
    m_lastRefill.start();
    if (m_bytesPerSecond > 0)
        m_refillTimer.start();
    else
        m_refillTimer.stop();
    for (auto &e : m_exchanges)
        e->socket->setReadBufferSize(m_bytesPerSecond > 0 ? kRatedSocketBufferBytes : 0);
}

void StreamingRestoreSink::incomingConnection(qintptr descriptor)
{
    auto exchange = std::make_unique<Exchange>();
    auto *socket = new QSslSocket(this);
    exchange->socket = socket;
    if (!socket->setSocketDescriptor(descriptor)) {
        delete socket;
        return;
    }
    socket->setSslConfiguration(m_tls);
    socket->setReadBufferSize(m_bytesPerSecond > 0 ? kRatedSocketBufferBytes : 0);
    Exchange *raw = exchange.get();
    m_exchanges.push_back(std::move(exchange));
    connect(socket, &QSslSocket::readyRead, this, [this, raw] { readFrom(*raw); });
    connect(socket, &QSslSocket::disconnected, this, [this, socket] { forget(socket); }, Qt::QueuedConnection);
    connect(socket, &QSslSocket::errorOccurred, this, [socket](QAbstractSocket::SocketError) { socket->abort(); });
    socket->startServerEncryption();
}

void StreamingRestoreSink::forget(QSslSocket *socket)
{
    const auto it = std::find_if(m_exchanges.begin(), m_exchanges.end(), [socket](const auto &e) { return e->socket == socket; });
    if (it != m_exchanges.end())
        m_exchanges.erase(it);
    socket->deleteLater();
}

void StreamingRestoreSink::refill()
{
    const double seconds = double(m_lastRefill.nsecsElapsed()) / 1e9;
    m_lastRefill.start();
    // At most 50 ms worth banked, so a pause is not followed by a burst above the rate.
    m_allowance = std::min(m_allowance + seconds * double(m_bytesPerSecond), double(m_bytesPerSecond) / 20.0);
    for (size_t i = 0; i < m_exchanges.size(); ++i)
        if (m_exchanges[i]->inBody && !m_exchanges[i]->answered)
            readFrom(*m_exchanges[i]);
}

void StreamingRestoreSink::readFrom(Exchange &exchange)
{
    if (exchange.answered)
        return;
    if (!exchange.inBody && !readHead(exchange))
        return;
    readBody(exchange);
}

bool StreamingRestoreSink::readHead(Exchange &exchange)
{
    // Line by line, so no body byte is taken with the head.
    while (exchange.socket->canReadLine()) {
        exchange.head += exchange.socket->readLine(kMaxHeadBytes);
        if (exchange.head.endsWith("\r\n\r\n"))
            break;
    }
    if (!exchange.head.endsWith("\r\n\r\n")) {
        if (exchange.head.size() > kMaxHeadBytes)
            exchange.socket->abort();
        return false;
    }
    exchange.inBody = true;
    const QList<QByteArray> lines = exchange.head.split('\n');
    const QList<QByteArray> requestLine = lines.value(0).trimmed().split(' ');
    const QUrl target(QString::fromLatin1(requestLine.value(1)));
    exchange.isRestore = requestLine.value(0) == "POST" && target.path().endsWith(QLatin1String("/control/database-closures/restore"));
    bool lengthSeen = false, bearerOk = false, encodingOk = true;
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const QByteArray line = lines.at(i).trimmed();
        const qsizetype colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const QByteArray name = line.first(colon).trimmed().toLower();
        const QByteArray value = line.mid(colon + 1).trimmed();
        if (name == "content-length") {
            lengthSeen = true;
            exchange.expected = value.toLongLong();
        } else if (name == "authorization") {
            bearerOk = value == "Bearer " + m_bearer;
        } else if (name == "transfer-encoding") {
            encodingOk = false;
        } else if (name == "content-encoding") {
            encodingOk = encodingOk && value.compare("identity", Qt::CaseInsensitive) == 0;
        } else if (name == "x-corestore-closure-sha256") {
            exchange.statedSha256 = value.toLower();
        }
    }
    const QUrlQuery query(target);
    if (!bearerOk) {
        exchange.refusedStatus = 401;
        exchange.refusedCode = "unauthorized";
    } else if (!exchange.isRestore) {
        exchange.refusedStatus = 404;
        exchange.refusedCode = "route-unknown";
    } else if (!lengthSeen) {
        exchange.refusedStatus = 400;
        exchange.refusedCode = "closure-length-required";
    } else if (!encodingOk) {
        exchange.refusedStatus = 400;
        exchange.refusedCode = "closure-encoding-refused";
    } else if (!query.hasQueryItem(QStringLiteral("serviceId")) || !query.hasQueryItem(QStringLiteral("backupId"))) {
        exchange.refusedStatus = 400;
        exchange.refusedCode = "request-invalid";
    }
    if (exchange.refusedStatus > 0 && !lengthSeen) {
        answer(exchange, exchange.refusedStatus, errorJson(exchange.refusedCode.constData()));
        return false;
    }
    exchange.sha = EVP_MD_CTX_new();
    EVP_DigestInit_ex(exchange.sha, EVP_sha256(), nullptr);
    return true;
}

void StreamingRestoreSink::readBody(Exchange &exchange)
{
    while (exchange.received < exchange.expected) {
        qint64 room = std::min<qint64>(kReadBufferBytes, exchange.expected - exchange.received);
        if (m_bytesPerSecond > 0)
            room = std::min<qint64>(room, qint64(m_allowance));
        if (room <= 0)
            return; // the next refill reads on
        const qint64 n = exchange.socket->read(m_buffer.data(), room);
        if (n <= 0)
            return;
        if (m_bytesPerSecond > 0)
            m_allowance -= double(n);
        EVP_DigestUpdate(exchange.sha, m_buffer.data(), size_t(n));
        exchange.received += n;
    }
    finishBody(exchange);
}

void StreamingRestoreSink::finishBody(Exchange &exchange)
{
    QElapsedTimer sinceLastByte;
    sinceLastByte.start();
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(exchange.sha, digest, &length);
    const QByteArray hex = QByteArray(reinterpret_cast<const char *>(digest), int(length)).toHex();
    if (exchange.refusedStatus > 0) {
        answer(exchange, exchange.refusedStatus, errorJson(exchange.refusedCode.constData()));
        return;
    }
    const bool accepted = hex == exchange.statedSha256;
    if (accepted)
        answer(exchange, 200,
               QByteArray(R"({"restored":true,"sizeBytes":)") + QByteArray::number(exchange.received) + R"(,"sha256":")" + hex + R"("})");
    else
        answer(exchange, 400, errorJson("closure-digest-mismatch"));
    Q_EMIT restoreFinished(exchange.received, hex, accepted, sinceLastByte.nsecsElapsed() / 1000);
}

void StreamingRestoreSink::answer(Exchange &exchange, int status, const QByteArray &json)
{
    exchange.answered = true;
    const QByteArray reason = status == 200 ? "OK" : status == 401 ? "Unauthorized" : status == 404 ? "Not Found" : "Bad Request";
    QByteArray response = "HTTP/1.1 " + QByteArray::number(status) + ' ' + reason + "\r\nContent-Type: application/json\r\nContent-Length: " +
                          QByteArray::number(json.size()) + "\r\nConnection: close\r\n\r\n" + json;
    exchange.socket->write(response);
    exchange.socket->flush();
    exchange.socket->disconnectFromHost(); // after the answer is written
}

} // namespace coreflow::bench
