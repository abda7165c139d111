#include "tests/peers/loopbackingress.h"
#include "tests/peers/peercontractnames.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QLoggingCategory>
#include <QNetworkRequest>
#include <QSslConfiguration>
#include <QWebSocket>

Q_LOGGING_CATEGORY(lcPeersIngress, "coreflow.peers.ingress")

namespace coreflow::peers {

LoopbackIngress::LoopbackIngress(Options options, QObject *parent) : QObject(parent), m_options(std::move(options)) {}

LoopbackIngress::~LoopbackIngress()
{
    m_pending.clear();
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        delete m_socket.data();
    }
}

void LoopbackIngress::open()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
    }
    m_lastError.clear();
    m_wasConnected = false;
    m_registered = false;
    m_pending.clear();
    auto *socket = new QWebSocket(QString(), QWebSocketProtocol::VersionLatest, this);
    m_socket = socket;
    QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
    tls.setProtocol(QSsl::TlsV1_2OrLater);
    tls.setCaCertificates(m_options.caCertificates);
    tls.setPeerVerifyMode(QSslSocket::VerifyPeer);
    socket->setSslConfiguration(tls);
    connect(socket, &QWebSocket::connected, this, [this] {
        m_wasConnected = true;
        qCInfo(lcPeersIngress) << m_options.ingressId << "connected";
        Q_EMIT connected();
    });
    connect(socket, &QWebSocket::disconnected, this, [this, socket] {
        if (socket != m_socket)
            return;
        m_pending.clear();
        if (m_wasConnected) {
            m_wasConnected = false;
            qCInfo(lcPeersIngress) << m_options.ingressId << "disconnected";
            Q_EMIT disconnected();
        } else {
            if (m_lastError.isEmpty())
                m_lastError = socket->errorString();
            Q_EMIT connectionFailed(m_lastError);
        }
    });
    connect(socket, &QWebSocket::textMessageReceived, this, [this](const QString &message) { onTextMessage(message.toUtf8()); });
    socket->open(QNetworkRequest(m_options.url));
}

void LoopbackIngress::close(int closeCode, const QString &reason)
{
    if (m_socket)
        m_socket->close(QWebSocketProtocol::CloseCode(closeCode), reason);
}

bool LoopbackIngress::isConnected() const { return m_socket && m_socket->state() == QAbstractSocket::ConnectedState; }

QByteArray LoopbackIngress::registrationRequest() const
{
    return PeerEnvelope::compact({{QStringLiteral("offer"), offerJson(m_options.sessionKind, m_options.release)},
                                        {QStringLiteral("ingressId"), m_options.ingressId},
                                        {QStringLiteral("nodeId"), m_options.nodeId},
                                        {QStringLiteral("authorization"), QString::fromUtf8(m_options.bearer)}});
}

QString LoopbackIngress::registerIngress(Callback callback)
{
    return call(QString(method::registerClusterIngress), registrationRequest(), [this, callback](const PeerFrame &answer) {
        if (!answer.hasError()) {
            m_registered = true;
            const auto response = answer.responseObject();
            const QJsonValue revision = response ? response->value(QStringLiteral("routeTableRevision")) : QJsonValue();
            m_registrationRevision = revision.isDouble() ? std::optional<qint64>(revision.toInteger()) : std::nullopt;
        }
        if (callback)
            callback(answer);
    });
}

QString LoopbackIngress::pullRouteTable(Callback callback)
{
    const QByteArray body = QByteArrayLiteral("{\"appliedRevision\":")
                            + (m_appliedRevision ? QByteArray::number(*m_appliedRevision) : QByteArrayLiteral("null")) + '}';
    return call(QString(method::getClusterIngressRouteTable), body, [this, callback](const PeerFrame &answer) {
        if (!answer.hasError()) {
            ++m_pulls;
            m_routeTableRaw = answer.response.toByteArray();
            const auto response = answer.responseObject();
            m_routeTable = response ? response->value(QStringLiteral("routeTable")) : QJsonValue();
            if (m_routeTable.isObject())
                m_appliedRevision = m_routeTable.toObject().value(QStringLiteral("revision")).toInteger();
            Q_EMIT routeTablePulled();
        }
        if (callback)
            callback(answer);
    });
}

QString LoopbackIngress::call(const QString &method, const QByteArray &rawRequest, Callback callback, const QString &correlationId)
{
    if (!isConnected())
        return {};
    const QString id = correlationId.isEmpty() ? QStringLiteral("%1-%2").arg(m_options.ingressId).arg(++m_counter) : correlationId;
    m_pending.insert(id, {method, std::move(callback)});
    m_socket->sendTextMessage(QString::fromUtf8(PeerEnvelope::request(method, id, rawRequest)));
    return id;
}

QByteArray LoopbackIngress::trafficPage()
{
    return QByteArrayLiteral("{\"collectedAt\":1700000000000,\"items\":["
                             "{\"hostname\":\"a.example.com\",\"requests\":12,\"bytesIn\":3400,\"bytesOut\":56000,\"errors\":1},"
                             "{\"hostname\":\"b.example.com\",\"requests\":0,\"bytesIn\":0,\"bytesOut\":0,\"errors\":0}],"
                             "\"nextCursor\":null}");
}

Answer LoopbackIngress::defaultAnswer(const PeerFrame &frame)
{
    if (frame.method == method::pushClusterIngressRouteTableChanged)
        return Answer::respondRaw("{}");
    if (frame.method == method::getClusterTrafficStatistics)
        return Answer::respondRaw(trafficPage());
    return Answer::refuse(refusal::methodNotServed, QStringLiteral("clusterIngress serves no method %1").arg(frame.method));
}

void LoopbackIngress::onTextMessage(const QByteArray &utf8)
{
    auto parsed = PeerEnvelope::parse(utf8);
    if (!parsed) {
        qCWarning(lcPeersIngress) << m_options.ingressId << "unparsable frame:" << parsed.refusal().text();
        return;
    }
    const PeerFrame frame = parsed.value();
    ReceivedFrame record;
    record.rawFrame = utf8;
    record.timeMs = QDateTime::currentMSecsSinceEpoch();
    record.method = frame.method;
    record.correlationId = frame.correlationId;
    record.phase = frame.phase;
    record.rawRequest = frame.request.toByteArray();
    record.rawResponse = frame.response.toByteArray();
    record.rawError = frame.error.toByteArray();

    if (frame.phase == Phase::Response) {
        m_answers.append(record);
        auto it = m_pending.find(frame.correlationId);
        if (it != m_pending.end()) {
            Callback callback = it.value().second;
            m_pending.erase(it);
            qCInfo(lcPeersIngress) << m_options.ingressId << "answer" << frame.method
                                   << (frame.hasError() ? frame.errorRefusal().name : QStringLiteral("ok"));
            if (callback)
                callback(frame);
        }
        Q_EMIT answerReceived(frame.method, frame.correlationId);
        return;
    }

    m_requests.append(record);
    qCInfo(lcPeersIngress) << m_options.ingressId << "request" << frame.method;
    const auto requestObject = frame.requestObject();
    const QJsonObject request = requestObject ? requestObject.value() : QJsonObject{};
    Answer answer = Answer::useDefault();
    if (const auto handler = m_handlers.value(frame.method))
        answer = handler(frame, request);
    if (answer.kind == Answer::Kind::Default)
        answer = defaultAnswer(frame);
    deliverAnswer(this, m_socket, frame, answer);
    Q_EMIT requestReceived(frame.method);
    if (frame.method == method::pushClusterIngressRouteTableChanged && m_options.pullOnHint)
        pullRouteTable();
}

void LoopbackIngress::setHandler(const QString &method, Handler handler)
{
    if (handler)
        m_handlers.insert(method, std::move(handler));
    else
        m_handlers.remove(method);
}

void LoopbackIngress::setAnswer(const QString &method, const Answer &answer)
{
    setHandler(method, [answer](const PeerFrame &, const QJsonObject &) { return answer; });
}

QList<ReceivedFrame> LoopbackIngress::requests(const QString &method) const
{
    QList<ReceivedFrame> out;
    for (const ReceivedFrame &f : m_requests)
        if (f.method == method)
            out.append(f);
    return out;
}

} // namespace coreflow::peers
