#include "service/closures/closuresend.h"

#include "service/closures/closuredescriptor.h"
#include "service/closures/closurechunkframe.h"
#include "service/closures/closureprogresswatch.h"
#include "service/cloudly/cloudlyconnector.h"
#include "service/core/logging.h"
#include "service/corestore/corestoreclient.h"
#include "service/corestore/corestorehttpexchange.h"
#include "service/transport/httpclientpool.h"
#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QJsonDocument>
#include <QPointer>

#include <cstring>

namespace coreflow {

using namespace contract;

namespace {

const QByteArray kExportRoute = QByteArrayLiteral("/control/database-closures/export");

std::optional<QByteArray> headerOf(const HttpHeaderPairs &headers, QByteArrayView name)
{
    std::optional<QByteArray> found;
    for (const auto &[n, v] : headers)
        if (QByteArrayView(n).compare(name, Qt::CaseInsensitive) == 0) {
            if (found)
                return QByteArray(); // repeated: unreadable
            found = v;
        }
    return found;
}

// Corestore's error.code, when the body is { error: { code: <plain name> } }.
QString errorCodeOf(const QByteArray &body)
{
    const QJsonObject error = QJsonDocument::fromJson(body).object().value(QStringLiteral("error")).toObject();
    const QString code = error.value(QStringLiteral("code")).toString();
    return RefusalQuote::isPlain(code) ? code : QString();
}

} // namespace

ClosureSend::ClosureSend(CloudlyConnector &cloudly, CorestoreClient &corestore, Clock &clock, qint64 cloudlyCallTimeoutMs,
                         QString nodeId, QString serviceId, QString backupId, ClosureTransfer::SendDone done, QObject *parent)
    : ClosureStream(Direction::Send, cloudly, corestore, clock, cloudlyCallTimeoutMs, std::move(nodeId), std::move(serviceId),
                    std::move(backupId), parent),
      m_done(std::move(done))
{
    setReceiver(this);
}

ClosureSend::~ClosureSend()
{
    endQuietly(); // deleted by its owner: done() is not called any more
}

std::optional<qint64> ClosureSend::knownSizeBytes() const
{
    return m_phase == Phase::Preparing || m_phase == Phase::Exporting ? std::nullopt : std::optional<qint64>(m_sizeBytes);
}

QString ClosureSend::stateWord() const
{
    switch (m_phase) {
    case Phase::Preparing: return QStringLiteral("preparing");
    case Phase::Exporting: return QStringLiteral("exporting");
    case Phase::Offering: return QStringLiteral("offering");
    case Phase::Streaming: return QStringLiteral("streaming");
    case Phase::Completing: return QStringLiteral("completing");
    case Phase::Ended: break;
    }
    return QStringLiteral("ended");
}

QString ClosureSend::awaitedSide() const
{
    switch (m_phase) {
    case Phase::Preparing:
    case Phase::Exporting: return QStringLiteral("node");
    case Phase::Offering:
    case Phase::Completing: return QStringLiteral("cloudly");
    case Phase::Streaming: return m_heldBySocket ? QStringLiteral("cloudly") : QStringLiteral("node");
    case Phase::Ended: break;
    }
    return QString();
}

void ClosureSend::start()
{
    // The Cloudly session first (CS-64): without one no export is asked of Corestore; the endpoint and
    // the credential follow in CorestoreClient::prepareStream, before the export is requested.
    if (!m_cloudly.isDispatchable())
        return fail(Refusal{QString(refusal::cloudlySessionUnavailable),
                            QStringLiteral("no dispatchable Cloudly session for the closure of backup %1").arg(m_backupId)},
                    {});
    m_watch->start(); // the export's answer is the node's to give: bounded by progress too
    const QPointer<ClosureSend> self(this);
    m_corestore.prepareStream(m_nodeId, "POST", kExportRoute, [self](CorestoreClient::StreamStart start) {
        if (!self)
            return;
        if (!self->m_ended && start.failure.kind != CorestoreCallOutcome::Kind::Answered)
            return self->fail(start.failure.refusal, {});
        if (!self->adoptStreamStart(start.ticket, start.pool, start.tokenGeneration, start.lineHead))
            return;
        self->m_requestBody = Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), self->m_serviceId},
                                                             {QStringLiteral("backupId"), self->m_backupId}});
        HttpClientRequest request = std::move(start.request);
        request.headers.append({QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/json")});
        request.headers.append({QByteArrayLiteral("Accept"), QByteArrayLiteral("application/octet-stream")});
        request.bodyStream = self.data();
        request.bodyStreamBytes = self->m_requestBody.size();
        self->m_phase = Phase::Exporting;
        self->m_pool->submit(self.data(), request);
    });
}

qsizetype ClosureSend::requestBodyRead(char *out, qsizetype max)
{
    const qsizetype n = qMin(max, m_requestBody.size() - m_requestBodyOffset);
    if (n > 0) {
        memcpy(out, m_requestBody.constData() + m_requestBodyOffset, size_t(n));
        m_requestBodyOffset += n;
    }
    return n;
}

void ClosureSend::responseHead(int status, const HttpHeaderPairs &headers)
{
    m_watch->moved();
    m_status = status;
    if (status < 200 || status >= 300)
        return; // the error body is read (bounded), then judged in responseComplete()
    const auto unreadable = [this](const char *what) {
        fail(Refusal{QString(refusal::corestoreUnreachable), m_lineHead + QStringLiteral(": unreadable answer (%1)").arg(QLatin1String(what))}, {});
    };
    const auto length = headerOf(headers, "Content-Length");
    bool numeric = false;
    const qint64 size = length ? length->trimmed().toLongLong(&numeric) : -1;
    if (!length || !numeric || size < 0 || quint64(size) > ClosureChunkFrame::kMaxOffset)
        return unreadable("Content-Length");
    if (headerOf(headers, "Transfer-Encoding"))
        return unreadable("Transfer-Encoding");
    const auto encoding = headerOf(headers, "Content-Encoding");
    if (encoding && encoding->trimmed().compare("identity", Qt::CaseInsensitive) != 0)
        return unreadable("Content-Encoding");
    const auto sha = headerOf(headers, "X-Corestore-Closure-Sha256");
    if (!sha || !StreamingSha256::isHexDigest(sha->trimmed().toLower()))
        return unreadable("X-Corestore-Closure-Sha256");
    const auto receipt = headerOf(headers, "X-Corestore-Closure-Receipt");
    if (!receipt || !ClosureDescriptor::isCarriableReceipt(receipt->trimmed()))
        return unreadable("X-Corestore-Closure-Receipt");
    m_sizeBytes = size;
    m_statedSha256 = sha->trimmed().toLower();
    m_receipt = receipt->trimmed();
    offer();
}

void ClosureSend::offer()
{
    m_phase = Phase::Offering;
    ClosureDescriptor descriptor;
    descriptor.streamId = m_streamId;
    descriptor.serviceId = m_serviceId;
    descriptor.backupId = m_backupId;
    descriptor.nodeId = m_nodeId;
    descriptor.sizeBytes = m_sizeBytes;
    descriptor.sha256 = m_statedSha256;
    descriptor.corestoreReceipt = m_receipt;
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("descriptor"), descriptor.toJson()}});
    const QPointer<ClosureSend> self(this);
    m_cloudly.call(QString(method::offerServiceDatabaseClosure), body, m_callTimeoutMs, [self](const CloudlyConnector::CallResult &r) {
        if (!self || self->m_ended)
            return;
        if (!r.delivered)
            return self->cloudlyCallFailed(r.refusal);
        if (r.answer.hasError())
            return self->fail(refusedByCloudly(QStringLiteral("Cloudly refused offerServiceDatabaseClosure"), r.answer.errorRefusal()), {});
        self->onPermit(r.answer.response.toByteArray());
    });
}

void ClosureSend::onPermit(const QByteArray &response)
{
    const QJsonObject object = QJsonDocument::fromJson(response).object();
    ExactKeyReader r(object, QStringLiteral("response"));
    const QJsonObject permit = r.requiredObject(QStringLiteral("permit"));
    std::optional<Refusal> refused = r.finish();
    QString streamId;
    qint64 maxChunk = 0;
    if (!refused) {
        ExactKeyReader p(permit, QStringLiteral("response.permit"));
        streamId = p.requiredString(QStringLiteral("streamId"));
        maxChunk = p.requiredInteger(QStringLiteral("maxChunkBytes"));
        if (!p.failed() && maxChunk < 1)
            p.fail(QStringLiteral("maxChunkBytes"), QStringLiteral("is below 1"));
        if (!p.failed() && QUuid::fromString(streamId) != m_streamId)
            p.fail(QStringLiteral("streamId"), QStringLiteral("names another stream"));
        refused = p.finish();
    }
    m_cloudlyKnows = true;
    if (refused) {
        return fail(Refusal{QString(refusal::closureRefused), QStringLiteral("Cloudly's permit is not the contract's: %1").arg(refused->reason)},
                    QString(refusal::closureRefused));
    }
    m_maxChunkBytes = qsizetype(qMin<qint64>(maxChunk, ClosureChunkFrame::kMaxPayloadBytes));
    startChunk();
    m_phase = Phase::Streaming;
    qCInfo(logClosures).noquote() << "closure" << ClosureDescriptor::idText(m_streamId) << "of backup" << m_backupId << "service"
                                  << m_serviceId << "on node" << m_nodeId << ":" << m_sizeBytes << "bytes to Cloudly";
    const QByteArray early = std::exchange(m_early, QByteArray());
    if (!early.isEmpty())
        take(early.constData(), early.size());
    if (m_ended)
        return;
    if (m_exportComplete)
        return finishExport();
    if (m_pool)
        m_pool->resume(this);
}

bool ClosureSend::responseBodyRoom() const
{
    if (m_status < 200 || m_status >= 300)
        return m_errorBody.size() < kMaxErrorBodyBytes;
    if (m_phase != Phase::Streaming)
        return false;
    m_heldBySocket = m_cloudly.sendPendingBytes() >= kMaxUnwrittenBytes;
    return !m_heldBySocket;
}

void ClosureSend::responseBody(const char *data, qsizetype size)
{
    m_watch->moved();
    if (m_status < 200 || m_status >= 300) {
        m_errorBody.append(data, qMin(size, kMaxErrorBodyBytes - m_errorBody.size()));
        return;
    }
    if (m_phase == Phase::Offering) {
        m_early.append(data, size); // arrived in the head's read; room is false until the permit
        return;
    }
    if (m_phase != Phase::Streaming)
        return;
    take(data, size);
}

void ClosureSend::take(const char *data, qsizetype size)
{
    if (m_read + size > m_sizeBytes)
        return fail(Refusal{QString(refusal::closureDigestMismatch),
                            QStringLiteral("the export of node %1 ran past its stated %2 bytes").arg(m_nodeId).arg(m_sizeBytes)},
                    QString(refusal::closureDigestMismatch));
    m_read += size;
    while (size > 0 && !m_ended) {
        const qsizetype take = qMin(size, m_maxChunkBytes - chunkPayloadBytes());
        m_chunk.append(data, take);
        data += take;
        size -= take;
        if (chunkPayloadBytes() == m_maxChunkBytes)
            sendChunk();
    }
}

void ClosureSend::startChunk()
{
    m_chunk = QByteArray();
    m_chunk.reserve(ClosureChunkFrame::kHeaderBytes + m_maxChunkBytes);
    m_chunk.resize(ClosureChunkFrame::kHeaderBytes);
}

void ClosureSend::sendChunk()
{
    const qsizetype payload = chunkPayloadBytes();
    if (payload == 0)
        return;
    // The frame was filled in place: its header goes into the room left for it, and the frame itself
    // (not a composed copy of it) is handed to the chunk lane (D-138).
    ClosureChunkFrame::writeHeader(m_chunk.data(), m_streamId, quint64(m_sent));
    m_sha.update(QByteArrayView(m_chunk).sliced(ClosureChunkFrame::kHeaderBytes));
    if (!m_cloudly.sendBinary(std::exchange(m_chunk, QByteArray()), m_streamId))
        return sessionLost(QStringLiteral("the Cloudly session went away after %1 of %2 bytes").arg(m_sent).arg(m_sizeBytes));
    m_sent += payload;
    startChunk();
}

void ClosureSend::socketDrained()
{
    // Progress only while the backlog holds the export: the socket taking other frames is not this
    // stream's progress.
    if (m_phase != Phase::Streaming || !m_heldBySocket)
        return;
    m_watch->moved();
    if (m_pool && responseBodyRoom())
        m_pool->resume(this);
}

void ClosureSend::responseComplete()
{
    m_pool = nullptr; // the exchange is over
    if (m_ended)
        return;
    if (m_status < 200 || m_status >= 300) {
        if (m_status == 404 && errorCodeOf(m_errorBody) == QLatin1String("no-database"))
            return fail(Refusal{QString(refusal::closureAbsent), QStringLiteral("service %1 has no database").arg(m_serviceId)}, {});
        return fail(corestoreRefusal(m_status, m_errorBody), {});
    }
    m_exportComplete = true;
    if (m_phase == Phase::Streaming)
        finishExport(); // else once the permit arrived
}

void ClosureSend::finishExport()
{
    sendChunk();
    if (m_ended)
        return;
    const QByteArray digest = m_sha.hexDigest();
    if (m_sent != m_sizeBytes || digest != m_statedSha256)
        return fail(Refusal{QString(refusal::closureDigestMismatch),
                            QStringLiteral("node %1 exported %2 bytes whose SHA-256 is not the one it stated").arg(m_nodeId).arg(m_sent)},
                    QString(refusal::closureDigestMismatch));
    complete();
}

void ClosureSend::responseFailed(HttpClientFailure failure)
{
    m_pool = nullptr;
    if (m_ended)
        return;
    fail(Refusal{QString(refusal::corestoreUnreachable), m_lineHead + QStringLiteral(": ") + CorestoreHttpExchange::failureWord(failure)},
         m_cloudlyKnows ? QString(refusal::corestoreUnreachable) : QString());
}

void ClosureSend::complete()
{
    m_phase = Phase::Completing;
    m_watch->stop(); // the completion call has its own bound
    m_chunk = QByteArray();
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("streamId"), ClosureDescriptor::idText(m_streamId)},
                                                         {QStringLiteral("sizeBytes"), double(m_sent)},
                                                         {QStringLiteral("sha256"), QString::fromLatin1(m_sha.hexDigest())},
                                                         {QStringLiteral("outcome"), QStringLiteral("sent")}});
    const QPointer<ClosureSend> self(this);
    // Behind the stream's chunks still in the chunk lane: the completion never overtakes them (D-112).
    m_cloudly.call(QString(method::completeServiceDatabaseClosure), body, m_callTimeoutMs, [self](const CloudlyConnector::CallResult &r) {
        if (!self || self->m_ended)
            return;
        if (!r.delivered)
            return self->cloudlyCallFailed(r.refusal);
        if (r.answer.hasError())
            return self->fail(refusedByCloudly(QStringLiteral("Cloudly did not accept the closure"), r.answer.errorRefusal()), {});
        self->onReceipt(r.answer.response.toByteArray());
    }, CloudlyConnector::Lane::BehindClosureChunks);
}

void ClosureSend::onReceipt(const QByteArray &response)
{
    ExactKeyReader r(QJsonDocument::fromJson(response).object(), QStringLiteral("response"));
    const QJsonObject receiptJson = r.requiredObject(QStringLiteral("receipt"));
    std::optional<Refusal> refused = r.finish();
    ClosureReceipt receipt;
    if (!refused) {
        ExactKeyReader p(receiptJson, QStringLiteral("response.receipt"));
        receipt.streamId = p.requiredString(QStringLiteral("streamId"));
        receipt.storedAtMs = p.requiredInteger(QStringLiteral("storedAt"));
        receipt.sizeBytes = p.requiredInteger(QStringLiteral("sizeBytes"));
        receipt.sha256 = p.requiredString(QStringLiteral("sha256"));
        if (!p.failed() && QUuid::fromString(receipt.streamId) != m_streamId)
            p.fail(QStringLiteral("streamId"), QStringLiteral("names another stream"));
        refused = p.finish();
    }
    if (refused)
        return fail(Refusal{QString(refusal::closureRefused), QStringLiteral("Cloudly's receipt is not the contract's: %1").arg(refused->reason)}, {});
    if (receipt.sizeBytes != m_sent || receipt.sha256.toLatin1() != m_sha.hexDigest())
        return fail(Refusal{QString(refusal::closureDigestMismatch),
                            QStringLiteral("Cloudly's receipt states another size or SHA-256 than the %1 bytes sent").arg(m_sent)},
                    {});
    receipt.streamId = ClosureDescriptor::idText(m_streamId);
    m_receiptOut = receipt;
    endWell(QStringLiteral("stored by Cloudly: %1 bytes").arg(receipt.sizeBytes));
}

void ClosureSend::chunkArrived(quint64, QByteArrayView)
{
    // A send stream receives no chunks: Cloudly broke the stream's direction.
    fail(Refusal{QString(refusal::closureRefused), QStringLiteral("Cloudly sent a chunk on a stream the relay sends")},
         QString(refusal::closureStreamUnknown));
}

void ClosureSend::abortedByCloudly(const QString &side, const QString &reason)
{
    m_cloudlyKnows = false; // Cloudly ended it: nothing to tell it
    fail(Refusal{QString(refusal::closureRefused), QStringLiteral("Cloudly aborted the stream after %1 of %2 bytes (side %3: %4)")
                                                      .arg(m_sent)
                                                      .arg(m_sizeBytes)
                                                      .arg(plainOr(side, QStringLiteral("unnamed")), plainOr(reason, QStringLiteral("unnamed")))},
         {});
}

void ClosureSend::quiet()
{
    const bool cloudlyHolds = m_phase == Phase::Streaming && m_cloudly.sendPendingBytes() >= kMaxUnwrittenBytes;
    fail(Refusal{QString(refusal::closureTransferStalled), QStringLiteral("%1 went quiet after %2 of %3 bytes")
                                                               .arg(cloudlyHolds ? QStringLiteral("cloudly") : QStringLiteral("node"))
                                                               .arg(m_sent)
                                                               .arg(m_sizeBytes)},
         QString(refusal::closureTransferStalled));
}

void ClosureSend::fail(const Refusal &refusal, const QString &abortReason)
{
    endRefused(refusal, abortReason.isEmpty() ? QString() : QStringLiteral("relay"), abortReason);
}

void ClosureSend::deliverRefusal(const Refusal &refusal)
{
    if (auto done = std::move(m_done))
        done(refusal);
}

void ClosureSend::deliverSuccess()
{
    if (auto done = std::move(m_done))
        done(m_receiptOut);
}

void ClosureSend::releaseBytes()
{
    m_phase = Phase::Ended;
    m_chunk = QByteArray();
    m_early = QByteArray();
    m_errorBody = QByteArray();
}

} // namespace coreflow
