#include "tests/peers/loopbackcorestore.h"

#include "tests/peers/closurebytegenerator.h"
#include "tests/peers/corestoreexchange.h"

#include <QDateTime>
#include <QHttpServer>
#include <QHttpServerRequest>
#include <QHttpServerResponder>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QRegularExpression>
#include <QSslConfiguration>
#include <QtEndian>

Q_LOGGING_CATEGORY(lcPeersCorestore, "coreflow.peers.corestore")

namespace coreflow::peers {

namespace {

constexpr qint64 maxStageChunkBytes = 524288; // §14: decoded chunk data bound
const QByteArray jsonType = "application/json";

QByteArray compact(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact);
}

QByteArray errorBody(const QString &code, const QString &reason)
{
    return compact(QJsonObject{{QStringLiteral("error"),
                                QJsonObject{{QStringLiteral("code"), code}, {QStringLiteral("reason"), reason}}}});
}

bool isHexSha256(const QString &value)
{
    static const QRegularExpression hex(QStringLiteral("^[0-9a-f]{64}$"));
    return hex.match(value).hasMatch();
}

bool isString(const QJsonObject &object, const char *key)
{
    return object.value(QLatin1String(key)).isString() && !object.value(QLatin1String(key)).toString().isEmpty();
}

bool isInteger(const QJsonValue &value)
{
    return value.isDouble() && value.toDouble() == double(qint64(value.toDouble()));
}

QByteArray methodName(QHttpServerRequest::Method method)
{
    switch (method) {
    case QHttpServerRequest::Method::Get: return "GET";
    case QHttpServerRequest::Method::Put: return "PUT";
    case QHttpServerRequest::Method::Delete: return "DELETE";
    case QHttpServerRequest::Method::Post: return "POST";
    case QHttpServerRequest::Method::Head: return "HEAD";
    case QHttpServerRequest::Method::Options: return "OPTIONS";
    case QHttpServerRequest::Method::Patch: return "PATCH";
    case QHttpServerRequest::Method::Connect: return "CONNECT";
    default: return "UNKNOWN";
    }
}

} // namespace

// --- Behaviour factories ---

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::answer(int status, const QByteArray &body,
                                                                  const HeaderList &headers)
{
    Behaviour b;
    b.kind = Kind::Answer;
    b.status = status;
    b.body = body;
    b.headers = headers;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::unauthorized()
{
    return answer(401, errorBody(QStringLiteral("unauthorized"), QStringLiteral("bearer not accepted (scripted)")));
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::forbidden()
{
    return answer(403, errorBody(QStringLiteral("forbidden"), QStringLiteral("operation not allowed (scripted)")));
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::legacyConflict(const QByteArray &code)
{
    return answer(409, errorBody(QString::fromUtf8(code), QStringLiteral("legacy adoption refused (scripted)")));
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::serverError(int status)
{
    return answer(status, errorBody(QStringLiteral("internal"), QStringLiteral("scripted server error")));
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::hang()
{
    Behaviour b;
    b.kind = Kind::Hang;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::dropConnection()
{
    Behaviour b;
    b.kind = Kind::Drop;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::slowBody(qint64 bytesPerSecond)
{
    Behaviour b;
    b.bytesPerSecond = bytesPerSecond;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::truncatedBody(qint64 sentBytes)
{
    Behaviour b;
    b.sendBodyBytes = sentBytes < 0 ? -2 : sentBytes;
    b.closeAfterPartialBody = true;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::stallAfter(qint64 sentBytes)
{
    Behaviour b;
    b.sendBodyBytes = sentBytes < 0 ? -2 : sentBytes;
    b.closeAfterPartialBody = false;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::oversizedBody(qint64 sizeBytes)
{
    Behaviour b;
    b.kind = Kind::Oversized;
    b.oversizedBytes = sizeBytes;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::badJsonBody()
{
    Behaviour b;
    b.kind = Kind::BadJson;
    return b;
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::delayed(qint64 delayMs)
{
    return delayed(delayMs, Behaviour{});
}

LoopbackCorestore::Behaviour LoopbackCorestore::Behaviour::delayed(qint64 delayMs, Behaviour then)
{
    then.delayMs = delayMs;
    return then;
}

// --- ObservedRequest ---

QByteArray LoopbackCorestore::ObservedRequest::header(const QByteArray &name) const
{
    for (const auto &h : headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return h.second;
    return {};
}

bool LoopbackCorestore::ObservedRequest::hasHeader(const QByteArray &name) const
{
    for (const auto &h : headers)
        if (h.first.compare(name, Qt::CaseInsensitive) == 0)
            return true;
    return false;
}

// --- LoopbackCorestore ---

QStringList LoopbackCorestore::routes()
{
    static const QStringList all{QString::fromLatin1(reconcileRoute),          QString::fromLatin1(materialRoute),
            QString::fromLatin1(inventoryRoute),          QString::fromLatin1(legacyResourcesRoute),
            QString::fromLatin1(backupsRoute),            QString::fromLatin1(volumesRoute),
            QString::fromLatin1(restoreVolumeRoute),      QString::fromLatin1(restoreDatabaseRoute),
            QString::fromLatin1(restoreObjectStorageRoute), QString::fromLatin1(pruneRoute),
            QString::fromLatin1(closureExportRoute),      QString::fromLatin1(closureRestoreRoute),
            QString::fromLatin1(isolatedPrepareRoute),    QString::fromLatin1(isolatedStageRoute),
            QString::fromLatin1(isolatedProgressRoute),   QString::fromLatin1(isolatedExecuteRoute),
            QString::fromLatin1(isolatedCleanupRoute)};
    return all;
}

LoopbackCorestore::LoopbackCorestore(const TestCertificateAuthority &ca, QObject *parent)
    : LoopbackCorestore(ca, Options{}, parent)
{
}

LoopbackCorestore::LoopbackCorestore(const TestCertificateAuthority &ca, Options options, QObject *parent)
    : LoopbackCorestore(ca.issueForHost(options.host), options, parent)
{
}

LoopbackCorestore::LoopbackCorestore(const IssuedCertificate &certificate, Options options, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_certificate(certificate),
      m_server(std::make_unique<QHttpServer>())
{
    while (m_options.basePath.endsWith(QLatin1Char('/')))
        m_options.basePath.chop(1);
    if (!m_options.basePath.isEmpty() && !m_options.basePath.startsWith(QLatin1Char('/')))
        m_options.basePath.prepend(QLatin1Char('/'));
    // No routes are registered: every request reaches the missing handler with its responder, so the
    // peer decides per request how (and whether) to answer (see the header).
    m_server->setMissingHandler([this](const QHttpServerRequest &request, QHttpServerResponder &&responder) {
        onRequest(request, std::move(responder));
    });
}

LoopbackCorestore::~LoopbackCorestore()
{
    const auto exchanges = m_exchanges;
    m_exchanges.clear();
    qDeleteAll(exchanges);
    m_server.reset();
}

bool LoopbackCorestore::listen()
{
    if (m_certificate.isNull()) {
        qCWarning(lcPeersCorestore) << "no certificate to present";
        return false;
    }
    m_server->sslSetup(TestCertificateAuthority::serverConfiguration(m_certificate));
    m_port = m_server->listen(QHostAddress::LocalHost, m_options.port);
    if (m_port == 0) {
        qCWarning(lcPeersCorestore) << "cannot listen on 127.0.0.1:" << m_options.port;
        return false;
    }
    qCInfo(lcPeersCorestore) << "listening at" << endpoint().toString();
    return true;
}

quint16 LoopbackCorestore::port() const
{
    return m_port;
}

QUrl LoopbackCorestore::endpoint() const
{
    QUrl url;
    url.setScheme(QStringLiteral("https"));
    url.setHost(m_options.host);
    url.setPort(m_port);
    url.setPath(m_options.basePath);
    return url;
}

void LoopbackCorestore::setAcceptedToken(const QByteArray &token) { m_options.acceptedToken = token; }
QByteArray LoopbackCorestore::acceptedToken() const { return m_options.acceptedToken; }

void LoopbackCorestore::script(const QString &route, const Behaviour &behaviour, int times)
{
    for (int i = 0; i < times; ++i)
        m_queued[route].append(behaviour);
}

void LoopbackCorestore::setStanding(const QString &route, const Behaviour &behaviour)
{
    m_standing.insert(route, behaviour);
}

void LoopbackCorestore::clearScript(const QString &route)
{
    m_queued.remove(route);
    m_standing.remove(route);
}

void LoopbackCorestore::clearAllScripts()
{
    m_queued.clear();
    m_standing.clear();
}

int LoopbackCorestore::queuedBehaviours(const QString &route) const
{
    return int(m_queued.value(route).size());
}

void LoopbackCorestore::setInventory(const QByteArray &servicesJson) { m_inventory = servicesJson; }
void LoopbackCorestore::setLegacyResources(const QByteArray &servicesJson) { m_legacyResources = servicesJson; }

void LoopbackCorestore::setServiceWithoutDatabase(const QString &serviceId, bool withoutDatabase)
{
    if (withoutDatabase)
        m_servicesWithoutDatabase.insert(serviceId);
    else
        m_servicesWithoutDatabase.remove(serviceId);
}

void LoopbackCorestore::setRefusedGrant(const QByteArray &grant) { m_refusedGrants.insert(grant); }
void LoopbackCorestore::setClosureSizeBytes(qint64 bytes) { m_options.closureSizeBytes = qMax<qint64>(0, bytes); }
void LoopbackCorestore::setClosureBytesPerSecond(qint64 bytesPerSecond) { m_options.closureBytesPerSecond = bytesPerSecond; }

quint64 LoopbackCorestore::closureSeedFor(const QString &serviceId, const QString &backupId) const
{
    const QByteArray digest = QCryptographicHash::hash((serviceId + QLatin1Char('\n') + backupId).toUtf8(),
                                                       QCryptographicHash::Sha256);
    return m_options.closureSeed ^ qFromBigEndian<quint64>(digest.constData());
}

QByteArray LoopbackCorestore::closureBytes(const QString &serviceId, const QString &backupId, qint64 offset,
                                           qint64 length) const
{
    return ClosureByteGenerator(closureSeedFor(serviceId, backupId)).bytes(offset, length);
}

QByteArray LoopbackCorestore::closureSha256(const QString &serviceId, const QString &backupId) const
{
    const QPair<quint64, qint64> key{closureSeedFor(serviceId, backupId), m_options.closureSizeBytes};
    auto it = m_closureDigests.constFind(key);
    if (it == m_closureDigests.constEnd())
        it = m_closureDigests.insert(key, ClosureByteGenerator(key.first).sha256Hex(key.second));
    return *it;
}

QList<LoopbackCorestore::RestoredClosure> LoopbackCorestore::restoredClosures() const { return m_restoredClosures; }
QStringList LoopbackCorestore::restoreLog() const { return m_restoreLog; }

QStringList LoopbackCorestore::volumes(const QString &serviceId) const
{
    QStringList names = m_volumes.value(serviceId).values();
    names.sort();
    return names;
}

qint64 LoopbackCorestore::isolatedRestoreRevision(const QString &restoreId) const
{
    const auto it = m_isolated.constFind(restoreId);
    return it == m_isolated.constEnd() ? -1 : it->revision;
}

QString LoopbackCorestore::isolatedRestorePhase(const QString &restoreId) const
{
    const auto it = m_isolated.constFind(restoreId);
    return it == m_isolated.constEnd() ? QString() : it->phase;
}

int LoopbackCorestore::requestCount(const QString &route) const { return m_counts.value(route); }
int LoopbackCorestore::totalRequestCount() const { return m_total; }

std::optional<LoopbackCorestore::ObservedRequest> LoopbackCorestore::lastRequest(const QString &route) const
{
    const auto it = m_last.constFind(route);
    if (it == m_last.constEnd())
        return std::nullopt;
    return *it;
}

QStringList LoopbackCorestore::requestLog() const { return m_log; }
bool LoopbackCorestore::sawRequestWithoutBearer() const { return m_sawWithoutBearer; }
int LoopbackCorestore::rejectedBearerCount() const { return m_rejectedBearer; }
int LoopbackCorestore::openExchanges() const { return int(m_exchanges.size()); }

void LoopbackCorestore::resetObservations()
{
    m_counts.clear();
    m_last.clear();
    m_log.clear();
    m_total = 0;
    m_sawWithoutBearer = false;
    m_rejectedBearer = 0;
}

qint64 LoopbackCorestore::nowMs() const
{
    return m_options.now ? m_options.now() : QDateTime::currentMSecsSinceEpoch();
}

LoopbackCorestore::Behaviour LoopbackCorestore::nextBehaviour(const QString &route)
{
    auto queued = m_queued.find(route);
    if (queued != m_queued.end() && !queued->isEmpty()) {
        Behaviour b = queued->takeFirst();
        if (queued->isEmpty())
            m_queued.erase(queued);
        return b;
    }
    return m_standing.value(route, Behaviour{});
}

void LoopbackCorestore::onRequest(const QHttpServerRequest &request, QHttpServerResponder &&responder)
{
    ObservedRequest observed;
    observed.method = methodName(request.method());
    observed.path = request.url().path();
    observed.query = request.query();
    for (const auto &h : request.headers())
        observed.headers.append(h);
    observed.body = request.body();
    observed.receivedAtMs = nowMs();

    const QString prefix = m_options.basePath + QStringLiteral("/control/");
    QString route;
    if (observed.path.startsWith(prefix)) {
        route = QString::fromLatin1(observed.method) + QLatin1Char(' ') + observed.path.mid(m_options.basePath.size());
        if (!routes().contains(route))
            route.clear();
    }
    observed.route = route;

    ++m_total;
    m_counts[route] += 1;
    m_log.append(route);
    m_last.insert(route, observed);

    const QByteArray authorization = observed.header("Authorization");
    int authorizationHeaders = 0;
    for (const auto &h : observed.headers)
        authorizationHeaders += h.first.compare("Authorization", Qt::CaseInsensitive) == 0 ? 1 : 0;
    if (!authorization.startsWith("Bearer "))
        m_sawWithoutBearer = true;
    Q_EMIT requestReceived(route);

    Answer answer;
    Behaviour behaviour;
    if (authorizationHeaders != 1 || authorization != "Bearer " + m_options.acceptedToken) {
        ++m_rejectedBearer;
        qCInfo(lcPeersCorestore) << "401 for" << observed.method << observed.path << "(bearer not accepted)";
        answer.status = 401;
        answer.body = errorBody(QStringLiteral("unauthorized"), QStringLiteral("bearer not accepted"));
    } else if (route.isEmpty()) {
        answer.status = 404;
        answer.body = errorBody(QStringLiteral("route-unknown"),
                                QStringLiteral("no route %1 %2").arg(QString::fromLatin1(observed.method), observed.path));
    } else {
        behaviour = nextBehaviour(route);
        switch (behaviour.kind) {
        case Behaviour::Kind::Default:
            answer = defaultAnswer(route, observed);
            break;
        case Behaviour::Kind::Answer:
            answer.status = behaviour.status;
            answer.body = behaviour.body;
            answer.headers = behaviour.headers;
            break;
        case Behaviour::Kind::BadJson:
            answer.body = "{\"services\":[{\"serviceId\":\"s\",\"databases\":[";
            break;
        case Behaviour::Kind::Oversized:
        case Behaviour::Kind::Hang:
        case Behaviour::Kind::Drop:
            break;
        }
    }

    CorestoreExchange::Plan plan;
    plan.status = answer.status;
    plan.headers = answer.headers;
    bool typed = false;
    for (const auto &h : plan.headers)
        typed = typed || h.first.compare("Content-Type", Qt::CaseInsensitive) == 0;
    if (!typed)
        plan.headers.prepend({"Content-Type", answer.generatedSize >= 0 ? "application/octet-stream" : jsonType});
    if (answer.generatedSize >= 0) {
        const ClosureByteGenerator generator(answer.generatedSeed);
        plan.declaredLength = answer.generatedSize;
        plan.source = [generator](qint64 offset, char *out, qint64 length) { generator.fill(offset, out, length); };
        plan.bytesPerSecond = m_options.closureBytesPerSecond;
    } else if (behaviour.kind == Behaviour::Kind::Oversized) {
        // {"services":[],"padding":"aaaa…"} of exactly oversizedBytes.
        const QByteArray head = "{\"services\":[],\"padding\":\"";
        const QByteArray tail = "\"}";
        const qint64 size = qMax<qint64>(behaviour.oversizedBytes, head.size() + tail.size());
        plan.declaredLength = size;
        plan.source = [head, tail, size](qint64 offset, char *out, qint64 length) {
            for (qint64 i = 0; i < length; ++i) {
                const qint64 p = offset + i;
                if (p < head.size())
                    out[i] = head.at(qsizetype(p));
                else if (p >= size - tail.size())
                    out[i] = tail.at(qsizetype(p - (size - tail.size())));
                else
                    out[i] = 'a';
            }
        };
    } else {
        const QByteArray body = answer.body;
        plan.declaredLength = body.size();
        plan.source = [body](qint64 offset, char *out, qint64 length) {
            memcpy(out, body.constData() + offset, size_t(length));
        };
    }
    if (behaviour.kind == Behaviour::Kind::Hang)
        plan.mode = CorestoreExchange::Mode::Hang;
    else if (behaviour.kind == Behaviour::Kind::Drop)
        plan.mode = CorestoreExchange::Mode::Drop;
    if (behaviour.bytesPerSecond > 0)
        plan.bytesPerSecond = behaviour.bytesPerSecond;
    if (behaviour.sendBodyBytes == -2)
        plan.sendBytes = plan.declaredLength / 2;
    else if (behaviour.sendBodyBytes >= 0)
        plan.sendBytes = qMin(behaviour.sendBodyBytes, plan.declaredLength);
    plan.closeAfterPartial = behaviour.closeAfterPartialBody;
    plan.delayMs = behaviour.delayMs;

    auto *exchange = new CorestoreExchange(std::move(responder), std::move(plan), this);
    m_exchanges.append(exchange);
    connect(exchange, &CorestoreExchange::finished, this, [this, exchange, route](bool completely) {
        m_exchanges.removeOne(exchange);
        exchange->deleteLater();
        if (completely)
            Q_EMIT answerFinished(route);
    });
    exchange->start();
}

LoopbackCorestore::Answer LoopbackCorestore::defaultAnswer(const QString &route, const ObservedRequest &request)
{
    Answer answer;
    const auto refuse = [&answer](int status, const QString &code, const QString &reason) {
        answer.status = status;
        answer.body = errorBody(code, reason);
        return answer;
    };

    if (route == QLatin1String(inventoryRoute)) {
        answer.body = "{\"services\":" + m_inventory + "}";
        return answer;
    }
    if (route == QLatin1String(legacyResourcesRoute)) {
        answer.body = "{\"services\":" + m_legacyResources + "}";
        return answer;
    }
    if (route == QLatin1String(closureRestoreRoute))
        return closureRestoreAnswer(request);
    if (route.startsWith(QLatin1String("POST /control/isolated-restore/")))
        return isolatedRestoreAnswer(route.mid(int(qstrlen("POST /control/isolated-restore/"))), request);

    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return refuse(400, QStringLiteral("request-invalid"), QStringLiteral("the body is not a JSON object"));
    const QJsonObject body = document.object();

    if (route == QLatin1String(reconcileRoute) || route == QLatin1String(materialRoute)) {
        const QJsonObject bindingRequest = body.value(QStringLiteral("request")).toObject();
        if (!isString(body, "grant") || !isString(bindingRequest, "bindingName") || !isString(bindingRequest, "capability"))
            return refuse(400, QStringLiteral("request-invalid"), QStringLiteral("grant or request is missing"));
        const QString name = bindingRequest.value(QStringLiteral("bindingName")).toString();
        if (route == QLatin1String(reconcileRoute)) {
            QJsonObject reconciled{{QStringLiteral("name"), name}, {QStringLiteral("state"), QStringLiteral("reconciled")}};
            // §15.1 (D-85): an object-storage binding's retention evidence is the retention applied.
            if (bindingRequest.value(QStringLiteral("retention")).isObject())
                reconciled.insert(QStringLiteral("retention"), bindingRequest.value(QStringLiteral("retention")));
            answer.body = compact({{QStringLiteral("binding"), reconciled}});
            return answer;
        }
        const QString secret = QString::fromUtf8(m_options.materialSecret);
        QJsonObject material;
        if (bindingRequest.value(QStringLiteral("capability")).toString() == QLatin1String("database")) {
            const QJsonObject endpoint = bindingRequest.value(QStringLiteral("endpoint")).toObject();
            const QString host = endpoint.value(QStringLiteral("host")).toString();
            const int port = endpoint.value(QStringLiteral("port")).toInt();
            material = {{QStringLiteral("capability"), QStringLiteral("database")},
                        {QStringLiteral("endpoint"), endpoint},
                        {QStringLiteral("database"), QStringLiteral("db-") + name},
                        {QStringLiteral("username"), QStringLiteral("user-") + name},
                        {QStringLiteral("password"), secret},
                        {QStringLiteral("uri"), QStringLiteral("mongodb://user-%1:%2@%3:%4/db-%1").arg(name, secret, host).arg(port)}};
        } else {
            material = {{QStringLiteral("capability"), QStringLiteral("objectstorage")},
                        {QStringLiteral("endpoint"), QStringLiteral("https://127.0.0.1:%1/s3").arg(m_port)},
                        {QStringLiteral("bucket"), QStringLiteral("bucket-") + name},
                        {QStringLiteral("accessKeyId"), QStringLiteral("key-") + name},
                        {QStringLiteral("secretAccessKey"), secret},
                        {QStringLiteral("region"), QStringLiteral("local")}};
        }
        answer.body = compact({{QStringLiteral("material"), material}});
        return answer;
    }

    if (route == QLatin1String(backupsRoute)) {
        if (!isString(body, "serviceId") || !isString(body, "backupId"))
            return refuse(400, QStringLiteral("request-invalid"), QStringLiteral("serviceId and backupId are required"));
        const QString serviceId = body.value(QStringLiteral("serviceId")).toString();
        const QString backupId = body.value(QStringLiteral("backupId")).toString();
        const auto take = [&](const QString &part) {
            Snapshot s{serviceId, backupId, QStringLiteral("snap-%1-%2").arg(backupId, part), m_options.snapshotSizeBytes, nowMs()};
            m_snapshots.append(s);
            return QJsonObject{{QStringLiteral("snapshotId"), s.snapshotId}, {QStringLiteral("sizeBytes"), s.sizeBytes}};
        };
        QJsonValue database = QJsonValue::Null;
        if (body.value(QStringLiteral("database")).toBool() && !m_servicesWithoutDatabase.contains(serviceId))
            database = take(QStringLiteral("database"));
        QJsonArray volumes;
        for (const QJsonValue &v : body.value(QStringLiteral("volumes")).toArray()) {
            QJsonObject snapshot = take(QStringLiteral("volume-") + v.toString());
            snapshot.insert(QStringLiteral("name"), v.toString());
            volumes.append(snapshot);
        }
        QJsonValue objectStorage = QJsonValue::Null;
        if (body.value(QStringLiteral("objectStorage")).toBool())
            objectStorage = take(QStringLiteral("objectstorage"));
        answer.body = compact({{QStringLiteral("snapshots"),
                                QJsonObject{{QStringLiteral("database"), database},
                                            {QStringLiteral("volumes"), volumes},
                                            {QStringLiteral("objectStorage"), objectStorage}}}});
        return answer;
    }

    if (route == QLatin1String(volumesRoute)) {
        if (!isString(body, "serviceId") || !isString(body, "name"))
            return refuse(400, QStringLiteral("request-invalid"), QStringLiteral("serviceId and name are required"));
        const QString name = body.value(QStringLiteral("name")).toString();
        auto &names = m_volumes[body.value(QStringLiteral("serviceId")).toString()];
        const bool created = !names.contains(name);
        names.insert(name);
        answer.body = compact({{QStringLiteral("name"), name}, {QStringLiteral("created"), created}});
        return answer;
    }

    if (route == QLatin1String(restoreVolumeRoute) || route == QLatin1String(restoreDatabaseRoute)
        || route == QLatin1String(restoreObjectStorageRoute)) {
        const bool volume = route == QLatin1String(restoreVolumeRoute);
        if (!isString(body, "serviceId") || !isString(body, "backupId") || !isString(body, "snapshotId")
            || (volume && !isString(body, "name")))
            return refuse(400, QStringLiteral("request-invalid"), QStringLiteral("serviceId, backupId and snapshotId are required"));
        const QString kind = route.mid(int(qstrlen("POST /control/restores/")));
        QStringList entry{kind, body.value(QStringLiteral("serviceId")).toString(), body.value(QStringLiteral("backupId")).toString()};
        if (volume)
            entry.append(body.value(QStringLiteral("name")).toString());
        entry.append(body.value(QStringLiteral("snapshotId")).toString());
        m_restoreLog.append(entry.join(QLatin1Char(':')));
        answer.body = compact({{QStringLiteral("restored"), true}});
        return answer;
    }

    if (route == QLatin1String(pruneRoute)) {
        const QJsonValue service = body.value(QStringLiteral("serviceId"));
        if (!(service.isNull() || service.isString()) || !isInteger(body.value(QStringLiteral("olderThan")))
            || !body.value(QStringLiteral("keepBackupIds")).isArray())
            return refuse(400, QStringLiteral("request-invalid"), QStringLiteral("serviceId, olderThan and keepBackupIds are required"));
        const qint64 olderThan = qint64(body.value(QStringLiteral("olderThan")).toDouble());
        QSet<QString> keep;
        for (const QJsonValue &v : body.value(QStringLiteral("keepBackupIds")).toArray())
            keep.insert(v.toString());
        qint64 pruned = 0;
        qint64 freed = 0;
        for (qsizetype i = m_snapshots.size() - 1; i >= 0; --i) {
            const Snapshot &s = m_snapshots.at(i);
            if ((service.isNull() || s.serviceId == service.toString()) && s.takenAtMs < olderThan && !keep.contains(s.backupId)) {
                ++pruned;
                freed += s.sizeBytes;
                m_snapshots.removeAt(i);
            }
        }
        answer.body = compact({{QStringLiteral("prunedSnapshots"), pruned}, {QStringLiteral("freedBytes"), freed}});
        return answer;
    }

    if (route == QLatin1String(closureExportRoute)) {
        if (!isString(body, "serviceId") || !isString(body, "backupId"))
            return refuse(400, QStringLiteral("request-invalid"), QStringLiteral("serviceId and backupId are required"));
        const QString serviceId = body.value(QStringLiteral("serviceId")).toString();
        const QString backupId = body.value(QStringLiteral("backupId")).toString();
        if (m_servicesWithoutDatabase.contains(serviceId))
            return refuse(404, QStringLiteral("no-database"), QStringLiteral("service %1 has no database").arg(serviceId));
        answer.generatedSize = m_options.closureSizeBytes;
        answer.generatedSeed = closureSeedFor(serviceId, backupId);
        answer.headers = {{"Content-Type", "application/octet-stream"},
                          {"X-Corestore-Closure-Sha256", closureSha256(serviceId, backupId)},
                          {"X-Corestore-Closure-Receipt",
                           QStringLiteral("receipt:%1:%2:%3").arg(serviceId, backupId).arg(++m_receiptCounter).toUtf8()}};
        return answer;
    }

    return refuse(404, QStringLiteral("route-unknown"), QStringLiteral("no route %1").arg(route));
}

LoopbackCorestore::Answer LoopbackCorestore::closureRestoreAnswer(const ObservedRequest &request)
{
    Answer answer;
    const auto refuse = [&answer](const QString &code, const QString &reason) {
        answer.status = 400;
        answer.body = errorBody(code, reason);
        return answer;
    };
    const QString serviceId = request.query.queryItemValue(QStringLiteral("serviceId"), QUrl::FullyDecoded);
    const QString backupId = request.query.queryItemValue(QStringLiteral("backupId"), QUrl::FullyDecoded);
    if (serviceId.isEmpty() || backupId.isEmpty())
        return refuse(QStringLiteral("request-invalid"), QStringLiteral("serviceId and backupId query items are required"));
    if (request.hasHeader("Transfer-Encoding"))
        return refuse(QStringLiteral("closure-encoding-refused"), QStringLiteral("Transfer-Encoding is not allowed"));
    const QByteArray contentEncoding = request.header("Content-Encoding").trimmed();
    if (request.hasHeader("Content-Encoding") && contentEncoding.compare("identity", Qt::CaseInsensitive) != 0)
        return refuse(QStringLiteral("closure-encoding-refused"), QStringLiteral("Content-Encoding is not allowed"));
    bool lengthOk = false;
    const qint64 length = request.header("Content-Length").trimmed().toLongLong(&lengthOk);
    if (!request.hasHeader("Content-Length") || !lengthOk || length != request.body.size())
        return refuse(QStringLiteral("closure-length-required"),
                      QStringLiteral("an exact Content-Length is required"));
    const QByteArray receipt = request.header("X-Corestore-Closure-Receipt");
    if (receipt.isEmpty())
        return refuse(QStringLiteral("closure-receipt-missing"), QStringLiteral("X-Corestore-Closure-Receipt is required"));
    const QByteArray sha256 = QCryptographicHash::hash(request.body, QCryptographicHash::Sha256).toHex();
    if (request.header("X-Corestore-Closure-Sha256").trimmed().toLower() != sha256)
        return refuse(QStringLiteral("closure-digest-mismatch"),
                      QStringLiteral("the body's SHA-256 does not match X-Corestore-Closure-Sha256"));
    m_restoredClosures.append({serviceId, backupId, request.body.size(), sha256, receipt});
    answer.body = compact({{QStringLiteral("restored"), true},
                           {QStringLiteral("sizeBytes"), qint64(request.body.size())},
                           {QStringLiteral("sha256"), QString::fromLatin1(sha256)}});
    return answer;
}

LoopbackCorestore::Answer LoopbackCorestore::isolatedRestoreAnswer(const QString &operation, const ObservedRequest &request)
{
    Answer answer;
    const auto refuse = [&answer](int status, const QString &code, const QString &reason) {
        answer.status = status;
        answer.body = errorBody(code, reason);
        return answer;
    };
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject())
        return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("the control is not a JSON object"));
    const QJsonObject control = document.object();
    if (!isString(control, "operation") || !isString(control, "restoreId") || !isString(control, "grant"))
        return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("operation, restoreId and grant are required"));
    if (control.value(QStringLiteral("operation")).toString() != operation)
        return refuse(400, QStringLiteral("operation-mismatch"),
                      QStringLiteral("the control's operation is not %1").arg(operation));
    if (m_refusedGrants.contains(control.value(QStringLiteral("grant")).toString().toUtf8()))
        return refuse(403, QStringLiteral("grant-refused"), QStringLiteral("the grant is not accepted"));
    const QString restoreId = control.value(QStringLiteral("restoreId")).toString();
    const QJsonValue expected = control.value(QStringLiteral("expectedRevision"));

    if (operation == QLatin1String("prepare")) {
        if (!expected.isNull())
            return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("prepare takes expectedRevision null"));
        if (m_isolated.contains(restoreId))
            return refuse(409, QStringLiteral("restore-exists"), QStringLiteral("restore %1 is already prepared").arg(restoreId));
        IsolatedRestore state;
        for (const QJsonValue &v : control.value(QStringLiteral("manifest")).toObject().value(QStringLiteral("objects")).toArray()) {
            const QJsonObject o = v.toObject();
            if (!isString(o, "key") || !isInteger(o.value(QStringLiteral("sizeBytes")))
                || o.value(QStringLiteral("sizeBytes")).toDouble() < 0 || !isHexSha256(o.value(QStringLiteral("sha256")).toString()))
                return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("manifest object needs key, sizeBytes and sha256"));
            state.objects.append({o.value(QStringLiteral("key")).toString(), qint64(o.value(QStringLiteral("sizeBytes")).toDouble()),
                                  o.value(QStringLiteral("sha256")).toString().toLatin1(), 0,
                                  std::make_shared<QCryptographicHash>(QCryptographicHash::Sha256)});
        }
        if (!control.value(QStringLiteral("manifest")).isObject())
            return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("prepare needs a manifest"));
        state.revision = 1;
        state.phase = QStringLiteral("prepared");
        state.updatedAtMs = nowMs();
        m_isolated.insert(restoreId, state);
    } else {
        auto it = m_isolated.find(restoreId);
        if (it == m_isolated.end())
            return refuse(404, QStringLiteral("restore-unknown"), QStringLiteral("no restore %1").arg(restoreId));
        IsolatedRestore &state = *it;
        if (operation != QLatin1String("progress")) {
            if (!isInteger(expected) || qint64(expected.toDouble()) != state.revision)
                return refuse(409, QStringLiteral("revision-stale"),
                              QStringLiteral("expectedRevision is not the current revision %1").arg(state.revision));
            if (state.phase == QLatin1String("cleaned"))
                return refuse(409, QStringLiteral("restore-cleaned"), QStringLiteral("restore %1 was cleaned up").arg(restoreId));
        }
        if (operation == QLatin1String("stage")) {
            const QJsonObject chunk = control.value(QStringLiteral("chunk")).toObject();
            if (!isString(chunk, "objectKey") || !isInteger(chunk.value(QStringLiteral("offset")))
                || !chunk.value(QStringLiteral("data")).isString() || !chunk.value(QStringLiteral("chunkSha256")).isString())
                return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("stage needs chunk.objectKey, offset, data, chunkSha256"));
            int index = -1;
            for (int i = 0; i < state.objects.size(); ++i)
                if (state.objects.at(i).key == chunk.value(QStringLiteral("objectKey")).toString())
                    index = i;
            if (index < 0)
                return refuse(400, QStringLiteral("object-unknown"), QStringLiteral("the chunk's object is not in the manifest"));
            IsolatedObject &object = state.objects[index];
            const auto decoded = QByteArray::fromBase64Encoding(chunk.value(QStringLiteral("data")).toString().toLatin1(),
                                                                QByteArray::AbortOnBase64DecodingErrors);
            if (!decoded)
                return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("chunk.data is not base64"));
            const QByteArray data = *decoded;
            if (data.size() > maxStageChunkBytes)
                return refuse(400, QStringLiteral("chunk-too-large"), QStringLiteral("a chunk holds at most 524288 bytes"));
            if (QCryptographicHash::hash(data, QCryptographicHash::Sha256).toHex()
                != chunk.value(QStringLiteral("chunkSha256")).toString().toLatin1())
                return refuse(400, QStringLiteral("chunk-digest-mismatch"), QStringLiteral("chunkSha256 does not match the data"));
            const qint64 offset = qint64(chunk.value(QStringLiteral("offset")).toDouble());
            if (offset != object.nextOffset)
                return refuse(409, QStringLiteral("offset-mismatch"),
                              QStringLiteral("the object's next offset is %1").arg(object.nextOffset));
            if (offset + data.size() > object.sizeBytes)
                return refuse(400, QStringLiteral("control-invalid"), QStringLiteral("the chunk runs past the object's size"));
            object.hash->addData(data);
            object.nextOffset += data.size();
            state.lastObject = index;
            ++state.revision;
            state.updatedAtMs = nowMs();
            if (object.nextOffset == object.sizeBytes && object.hash->result().toHex() != object.sha256) {
                state.phase = QStringLiteral("failed");
                state.failure = QStringLiteral("object-digest-mismatch: %1").arg(object.key);
                return refuse(400, QStringLiteral("object-digest-mismatch"),
                              QStringLiteral("object %1 does not match its manifest sha256").arg(object.key));
            }
            bool complete = true;
            for (const IsolatedObject &o : std::as_const(state.objects))
                complete = complete && o.nextOffset == o.sizeBytes;
            state.phase = complete ? QStringLiteral("staged") : QStringLiteral("staging");
        } else if (operation == QLatin1String("execute")) {
            bool complete = state.phase != QLatin1String("failed") && state.phase != QLatin1String("restored");
            for (const IsolatedObject &o : std::as_const(state.objects))
                complete = complete && o.nextOffset == o.sizeBytes;
            if (!complete)
                return refuse(409, QStringLiteral("not-staged"), QStringLiteral("restore %1 is not staged").arg(restoreId));
            ++state.revision;
            state.phase = QStringLiteral("restored");
            state.updatedAtMs = nowMs();
        } else if (operation == QLatin1String("cleanup")) {
            ++state.revision;
            state.phase = QStringLiteral("cleaned");
            state.updatedAtMs = nowMs();
        }
    }

    const IsolatedRestore &state = m_isolated[restoreId];
    QJsonValue staged = QJsonValue::Null;
    if (state.lastObject >= 0) {
        const IsolatedObject &o = state.objects.at(state.lastObject);
        staged = QJsonObject{{QStringLiteral("key"), o.key}, {QStringLiteral("nextOffset"), o.nextOffset},
                             {QStringLiteral("sizeBytes"), o.sizeBytes}};
    }
    QJsonObject progress{{QStringLiteral("restoreId"), restoreId},
                         {QStringLiteral("revision"), state.revision},
                         {QStringLiteral("phase"), state.phase},
                         {QStringLiteral("stagedObject"), staged},
                         {QStringLiteral("updatedAt"), state.updatedAtMs},
                         {QStringLiteral("failure"), state.failure.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(state.failure)}};
    if (operation == QLatin1String("stage") && state.lastObject >= 0)
        progress.insert(QStringLiteral("receivedObject"), QJsonObject{{QStringLiteral("key"), state.objects.at(state.lastObject).key}});
    if (operation == QLatin1String("execute"))
        progress.insert(QStringLiteral("restoredMappings"), QJsonArray{});
    if (operation == QLatin1String("cleanup"))
        progress.insert(QStringLiteral("deletedStaging"), true);
    answer.body = compact(progress);
    return answer;
}

} // namespace coreflow::peers
