#include "tests/peers/loopbackclosurestore.h"

#include "tests/peers/loopbackcloudly.h"
#include "tests/peers/peercontractnames.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QTimer>
#include <QtEndian>

namespace coreflow::peers {

namespace {

QString idText(const QUuid &id) { return id.toString(QUuid::WithoutBraces); }

} // namespace

LoopbackClosureStore::LoopbackClosureStore(LoopbackCloudly &cloudly, QObject *parent) : QObject(parent), m_cloudly(cloudly)
{
    m_cloudly.setHandler(QString(method::offerServiceDatabaseClosure),
                         [this](const PeerFrame &, const QJsonObject &request) { return answerOffer(request); });
    m_cloudly.setHandler(QString(method::openServiceDatabaseClosure),
                         [this](const PeerFrame &, const QJsonObject &request) { return answerOpen(request); });
    m_cloudly.setHandler(QString(method::grantServiceDatabaseClosureCredit),
                         [this](const PeerFrame &, const QJsonObject &request) { return answerGrant(request); });
    m_cloudly.setHandler(QString(method::completeServiceDatabaseClosure),
                         [this](const PeerFrame &, const QJsonObject &request) { return answerComplete(request); });
    m_cloudly.setHandler(QString(method::abortServiceDatabaseClosure),
                         [this](const PeerFrame &, const QJsonObject &request) { return answerAbort(request); });
    m_cloudly.setBinaryHandler([this](const QByteArray &payload) { onBinary(payload); });
}

LoopbackClosureStore::~LoopbackClosureStore()
{
    m_cloudly.setBinaryHandler({});
    for (const auto name : {method::offerServiceDatabaseClosure, method::openServiceDatabaseClosure, method::grantServiceDatabaseClosureCredit,
                            method::completeServiceDatabaseClosure, method::abortServiceDatabaseClosure})
        m_cloudly.clearHandler(QString(name));
}

void LoopbackClosureStore::holdClosure(const QString &serviceId, const QString &backupId, const QString &nodeId, qint64 size, quint64 seed,
                                       const QByteArray &receipt)
{
    Outgoing o;
    o.serviceId = serviceId;
    o.backupId = backupId;
    o.nodeId = nodeId;
    o.size = size;
    o.seed = seed;
    o.receipt = receipt;
    o.sha256Hex = sha256Of(size, seed);
    m_held.append(o);
}

QByteArray LoopbackClosureStore::chunkFrame(const QUuid &streamId, quint64 offset, const QByteArray &payload)
{
    QByteArray frame = streamId.toRfc4122();
    char be[8];
    qToBigEndian<quint64>(offset, be);
    frame.append(be, 8);
    frame.append(payload);
    return frame;
}

bool LoopbackClosureStore::sendChunk(const QUuid &streamId, quint64 offset, const QByteArray &payload)
{
    return m_cloudly.sendBinary(chunkFrame(streamId, offset, payload));
}

QList<LoopbackClosureStore::Incoming> LoopbackClosureStore::incoming() const
{
    QList<Incoming> out = m_finishedIncoming;
    for (const IncomingState &s : m_incoming)
        out.append(s.info);
    return out;
}

QList<LoopbackClosureStore::Outgoing> LoopbackClosureStore::outgoing() const { return m_outgoing.values(); }

Answer LoopbackClosureStore::answerOffer(const QJsonObject &request)
{
    const QJsonObject d = request.value(QStringLiteral("descriptor")).toObject();
    const QString streamId = d.value(QStringLiteral("streamId")).toString();
    if (QUuid::fromString(streamId).isNull() || request.size() != 1 || d.size() != 7)
        return Answer::refuse(refusal::requestInvalid, QStringLiteral("the offer is not { descriptor: ClosureDescriptor }"));
    if (m_refuseOffers)
        return Answer::refuse(refusal::closureRefused, QStringLiteral("this Cloudly takes no closures now"));
    IncomingState state;
    state.info.streamId = streamId;
    state.info.serviceId = d.value(QStringLiteral("serviceId")).toString();
    state.info.backupId = d.value(QStringLiteral("backupId")).toString();
    state.info.nodeId = d.value(QStringLiteral("nodeId")).toString();
    state.info.statedSize = qint64(d.value(QStringLiteral("sizeBytes")).toDouble(-1));
    state.info.statedSha256 = d.value(QStringLiteral("sha256")).toString().toLatin1();
    state.info.corestoreReceipt = d.value(QStringLiteral("corestoreReceipt")).toString().toLatin1();
    state.hash = std::shared_ptr<EVP_MD_CTX>(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestInit_ex(state.hash.get(), EVP_sha256(), nullptr);
    m_incoming.insert(streamId, std::move(state));
    return Answer::respond(QJsonObject{{QStringLiteral("permit"), QJsonObject{{QStringLiteral("streamId"), streamId},
                                                                              {QStringLiteral("maxChunkBytes"), double(m_maxChunkBytes)}}}});
}

void LoopbackClosureStore::onBinary(const QByteArray &payload)
{
    if (payload.size() < kHeaderBytes) {
        m_aborts.append({QString(), QStringLiteral("cloudly"), QStringLiteral("short-frame")});
        return;
    }
    const QUuid id = QUuid::fromRfc4122(QByteArrayView(payload).first(16));
    const quint64 offset = qFromBigEndian<quint64>(payload.constData() + 16);
    const QByteArrayView data = QByteArrayView(payload).sliced(kHeaderBytes);
    auto it = m_incoming.find(idText(id));
    if (it == m_incoming.end())
        return; // a stream Cloudly does not hold (aborted meanwhile)
    Incoming &info = it->info;
    if (info.violation.isEmpty()) {
        if (offset != quint64(info.receivedBytes))
            info.violation = QStringLiteral("offset %1 after %2 bytes").arg(offset).arg(info.receivedBytes);
        else if (data.isEmpty() || data.size() > m_maxChunkBytes)
            info.violation = QStringLiteral("payload of %1 bytes").arg(data.size());
    }
    if (m_hashWorker)
        m_hashWorker->update(it->hash, payload, kHeaderBytes);
    else
        EVP_DigestUpdate(it->hash.get(), data.data(), size_t(data.size()));
    info.receivedBytes += data.size();
    ++info.chunks;
    info.largestPayload = qMax<qint64>(info.largestPayload, data.size());
    Q_EMIT chunkReceived();
    if (m_abortAfterBytes >= 0 && info.receivedBytes >= m_abortAfterBytes && !it->abortSent) {
        it->abortSent = true;
        const QString streamId = info.streamId;
        m_finishedIncoming.append(info);
        m_incoming.erase(it);
        m_cloudly.push(QString(method::abortServiceDatabaseClosure),
                       QJsonObject{{QStringLiteral("streamId"), streamId}, {QStringLiteral("side"), QStringLiteral("cloudly")},
                                   {QStringLiteral("reason"), QStringLiteral("cloudly-storage-full")}});
    }
}

Answer LoopbackClosureStore::answerComplete(const QJsonObject &request)
{
    const QString streamId = request.value(QStringLiteral("streamId")).toString();
    const qint64 size = qint64(request.value(QStringLiteral("sizeBytes")).toDouble(-1));
    const QByteArray sha = request.value(QStringLiteral("sha256")).toString().toLatin1();
    const QString outcome = request.value(QStringLiteral("outcome")).toString();
    const auto receipt = [&](qint64 bytes, const QByteArray &digest) {
        return Answer::respond(QJsonObject{{QStringLiteral("receipt"), QJsonObject{{QStringLiteral("streamId"), streamId},
                                                                                  {QStringLiteral("storedAt"), double(QDateTime::currentMSecsSinceEpoch())},
                                                                                  {QStringLiteral("sizeBytes"), double(bytes)},
                                                                                  {QStringLiteral("sha256"), QString::fromLatin1(digest)}}}});
    };
    if (outcome == QLatin1String("restored")) {
        auto it = m_outgoing.find(streamId);
        if (it == m_outgoing.end())
            return Answer::refuse(refusal::notFound, QStringLiteral("no such stream"));
        it->completed = true;
        return receipt(size, sha);
    }
    auto it = m_incoming.find(streamId);
    if (it == m_incoming.end() || outcome != QLatin1String("sent"))
        return Answer::refuse(refusal::notFound, QStringLiteral("no such stream"));
    if (m_hashWorker)
        m_hashWorker->waitIdle(); // every chunk of the stream hashed
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digestBytes = 0;
    EVP_DigestFinal_ex(it->hash.get(), digest, &digestBytes);
    it->info.computedSha256 = QByteArray(reinterpret_cast<const char *>(digest), int(digestBytes)).toHex();
    const Incoming info = it->info;
    if (m_refuseCompletions || !info.violation.isEmpty() || size != info.receivedBytes || size != info.statedSize
        || sha != info.computedSha256 || sha != info.statedSha256) {
        m_finishedIncoming.append(info);
        m_incoming.erase(it);
        return Answer::refuse(refusal::closureRefused, QStringLiteral("the stream is not what its descriptor stated"));
    }
    it->info.completed = true;
    m_finishedIncoming.append(it->info);
    m_incoming.erase(it);
    return receipt(info.receivedBytes, info.computedSha256);
}

Answer LoopbackClosureStore::answerAbort(const QJsonObject &request)
{
    const Abort abort{request.value(QStringLiteral("streamId")).toString(), request.value(QStringLiteral("side")).toString(),
                      request.value(QStringLiteral("reason")).toString()};
    m_aborts.append(abort);
    auto it = m_incoming.find(abort.streamId);
    if (it != m_incoming.end()) {
        m_finishedIncoming.append(it->info);
        m_incoming.erase(it);
    }
    m_outgoing.remove(abort.streamId);
    Q_EMIT abortReceived(abort.streamId, abort.reason);
    return Answer::respond(QJsonObject{});
}

Answer LoopbackClosureStore::answerOpen(const QJsonObject &request)
{
    const QString serviceId = request.value(QStringLiteral("serviceId")).toString();
    const QString backupId = request.value(QStringLiteral("backupId")).toString();
    const QString nodeId = request.value(QStringLiteral("nodeId")).toString();
    const QString streamId = request.value(QStringLiteral("streamId")).toString();
    if (QUuid::fromString(streamId).isNull())
        return Answer::refuse(refusal::requestInvalid, QStringLiteral("field request.streamId is not a UUID"));
    for (const Outgoing &held : std::as_const(m_held)) {
        if (held.serviceId != serviceId || held.backupId != backupId || held.nodeId != nodeId)
            continue;
        Outgoing o = held;
        o.streamId = streamId;
        m_outgoing.insert(streamId, o);
        const QJsonObject descriptor{{QStringLiteral("streamId"), streamId},
                                     {QStringLiteral("serviceId"), serviceId},
                                     {QStringLiteral("backupId"), backupId},
                                     {QStringLiteral("nodeId"), nodeId},
                                     {QStringLiteral("sizeBytes"), double(o.size)},
                                     {QStringLiteral("sha256"), QString::fromLatin1(o.sha256Hex)},
                                     {QStringLiteral("corestoreReceipt"), QString::fromLatin1(o.receipt)}};
        return Answer::respond(QJsonObject{{QStringLiteral("descriptor"), descriptor}});
    }
    return Answer::refuse(refusal::notFound, QStringLiteral("no closure for that backup"));
}

Answer LoopbackClosureStore::answerGrant(const QJsonObject &request)
{
    const QString streamId = request.value(QStringLiteral("streamId")).toString();
    const qint64 credit = qint64(request.value(QStringLiteral("creditBytes")).toDouble(0));
    auto it = m_outgoing.find(streamId);
    if (it == m_outgoing.end() || credit < 1)
        return Answer::refuse(refusal::notFound, QStringLiteral("no such stream"));
    it->granted += credit;
    ++it->grants;
    it->largestOutstanding = qMax(it->largestOutstanding, it->granted - it->sent);
    QTimer::singleShot(0, this, [this, streamId] { feed(streamId); });
    return Answer::respond(QJsonObject{});
}

void LoopbackClosureStore::feed(const QString &streamId)
{
    auto it = m_outgoing.find(streamId);
    if (it == m_outgoing.end())
        return;
    Outgoing &o = *it;
    const ClosureByteGenerator generator(o.seed);
    // overrunCredit: once the whole closure was granted, one byte more than was granted (and described).
    qint64 limit = qMin(o.granted, o.size) + (m_overrun && o.granted >= o.size ? 1 : 0);
    if (m_stallAfter >= 0)
        limit = qMin(limit, m_stallAfter);
    while (o.sent < limit) {
        const qint64 n = qMin<qint64>(m_maxChunkBytes, limit - o.sent);
        QByteArray payload = generator.bytes(o.sent, n);
        if (m_corruptAt >= o.sent && m_corruptAt < o.sent + n)
            payload[int(m_corruptAt - o.sent)] = char(payload[int(m_corruptAt - o.sent)] ^ 0x5a);
        if (!sendChunk(QUuid::fromString(streamId), quint64(o.sent), payload))
            return;
        o.sent += n;
    }
}

} // namespace coreflow::peers
