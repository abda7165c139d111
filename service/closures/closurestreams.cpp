#include "service/closures/closurestreams.h"

#include "service/closures/closurechunkframe.h"
#include "service/closures/closuredescriptor.h"
#include "service/closures/closurereceive.h"
#include "service/closures/closuresend.h"
#include "service/cloudly/cloudlyconnector.h"
#include "service/core/logging.h"
#include "shared/contract/envelope.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"
#include "shared/util/clock.h"

#include <QPointer>
#include <algorithm>
#include <QTimer>

namespace coreflow {

using namespace contract;

namespace {

struct TransferRequest {
    QString nodeId;
    QString serviceId;
    QString backupId;
};

Result<TransferRequest> readTransferRequest(const Frame &frame)
{
    auto request = frame.requestObject();
    if (!request)
        return request.refusal();
    ExactKeyReader r(request.value(), QStringLiteral("request"));
    TransferRequest out;
    out.nodeId = r.requiredString(QStringLiteral("nodeId"));
    out.serviceId = r.requiredString(QStringLiteral("serviceId"));
    out.backupId = r.requiredString(QStringLiteral("backupId"));
    for (const auto &[key, value] : {std::pair{QStringLiteral("nodeId"), out.nodeId}, std::pair{QStringLiteral("serviceId"), out.serviceId},
                                     std::pair{QStringLiteral("backupId"), out.backupId}})
        if (!r.failed() && value.isEmpty())
            r.fail(key, QStringLiteral("is empty"));
        else if (!r.failed() && !RefusalQuote::isPlain(value)) // written into log lines and the status (§13.5, D-96)
            r.fail(key, QStringLiteral("is not a plain name (1 to %1 of A-Z a-z 0-9 _ - .)").arg(RefusalQuote::maxQuotedChars));
    if (auto refused = r.finish())
        return *refused;
    return out;
}

} // namespace

ClosureStreams::ClosureStreams(CloudlyConnector &cloudly, CorestoreClient &corestore, MethodTable &cloudlyMethods, Clock &clock,
                               qint64 cloudlyCallTimeoutMs, QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_corestore(corestore), m_methods(cloudlyMethods), m_clock(clock),
      m_callTimeoutMs(cloudlyCallTimeoutMs)
{
    connect(&m_cloudly, &CloudlyConnector::binaryFrame, this, &ClosureStreams::onBinaryFrame);
    connect(&m_cloudly, &CloudlyConnector::sessionLost, this, &ClosureStreams::onSessionLost);
    connect(&m_cloudly, &CloudlyConnector::socketWritten, this, [this] {
        const QList<ClosureStream *> streams = m_streams.values();
        for (ClosureStream *stream : streams)
            if (m_streams.contains(stream->streamId()))
                stream->socketDrained();
    });
}

ClosureStreams::~ClosureStreams()
{
    detach();
    const QList<ClosureStream *> streams = m_streams.values();
    m_streams.clear();
    for (ClosureStream *stream : streams) {
        stream->disconnect(this);
        delete stream; // releases its exchange and timer; done() is not called any more
    }
}

void ClosureStreams::attach()
{
    if (m_attached)
        return;
    m_attached = true;
    m_methods.add(QString(method::backupServiceDatabaseClosure), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        serveTransfer(frame, std::move(reply), false);
    });
    m_methods.add(QString(method::restoreServiceDatabaseClosure), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        serveTransfer(frame, std::move(reply), true);
    });
    m_methods.add(QString(method::abortServiceDatabaseClosure), [this](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        serveAbort(frame, std::move(reply));
    });
}

void ClosureStreams::detach()
{
    if (!m_attached)
        return;
    m_attached = false;
    m_methods.remove(QString(method::backupServiceDatabaseClosure));
    m_methods.remove(QString(method::restoreServiceDatabaseClosure));
    m_methods.remove(QString(method::abortServiceDatabaseClosure));
}

void ClosureStreams::stop()
{
    m_stopped = true;
    endAll(QString(refusal::cloudlySessionLost), QStringLiteral("the relay is stopping"));
}

bool ClosureStreams::sessionDispatchable() const { return m_cloudly.isDispatchable(); }

bool ClosureStreams::holdsResources() const
{
    for (const ClosureStream *stream : m_streams)
        if (stream->holdsResources())
            return true;
    return false;
}

void ClosureStreams::adopt(ClosureStream *stream)
{
    m_streams.insert(stream->streamId(), stream);
    connect(stream, &ClosureStream::ended, this, [this](ClosureStream *s) {
        if (m_streams.value(s->streamId()) == s)
            m_streams.remove(s->streamId());
        record(*s);
        s->deleteLater();
        Q_EMIT streamEnded();
        Q_EMIT statusChanged();
    });
    QTimer::singleShot(0, stream, [stream] { stream->start(); });
    Q_EMIT statusChanged();
}

void ClosureStreams::record(const ClosureStream &stream)
{
    const status::ClosureTransferStatus entry = stream.statusEntry();
    (stream.direction() == ClosureStream::Direction::Send ? m_endedBytesSent : m_endedBytesReceived) += entry.bytesMoved;
    ++m_outcomes[stream.outcome()];
    m_recent.append(status::ClosureOutcomeStatus{entry.streamId, entry.direction, entry.nodeId, entry.serviceId, entry.backupId,
                                                 entry.startedAtMs, m_clock.nowMs(), entry.bytesMoved, entry.sizeBytes, stream.outcome()});
    while (m_recent.size() > status::BackupLaneStatus::kRecentTransfers)
        m_recent.removeFirst();
}

qint64 ClosureStreams::heldBytes() const
{
    qint64 held = 0;
    for (const ClosureStream *stream : m_streams)
        held += stream->heldBytes();
    return held;
}

status::BackupLaneStatus ClosureStreams::statusLane() const
{
    status::BackupLaneStatus lane;
    lane.closureBytesSent = m_endedBytesSent;
    lane.closureBytesReceived = m_endedBytesReceived;
    for (const ClosureStream *stream : m_streams) {
        if (stream->hasEnded())
            continue;
        lane.transfers.append(stream->statusEntry());
        (stream->direction() == ClosureStream::Direction::Send ? lane.closureBytesSent : lane.closureBytesReceived) += stream->bytesMoved();
    }
    std::stable_sort(lane.transfers.begin(), lane.transfers.end(), [](const auto &a, const auto &b) {
        return a.startedAtMs != b.startedAtMs ? a.startedAtMs < b.startedAtMs : a.streamId < b.streamId;
    });
    lane.recent = m_recent;
    lane.transfersByOutcome = m_outcomes;
    return lane;
}

void ClosureStreams::sendToCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, SendDone done)
{
    if (m_stopped) {
        QTimer::singleShot(0, this, [done = std::move(done)] {
            done(Refusal{QString(refusal::cloudlySessionLost), QStringLiteral("the relay is stopping")});
        });
        return;
    }
    adopt(new ClosureSend(m_cloudly, m_corestore, m_clock, m_callTimeoutMs, nodeId, serviceId, backupId, std::move(done), this));
}

void ClosureStreams::restoreFromCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, RestoreDone done)
{
    if (m_stopped) {
        QTimer::singleShot(0, this, [done = std::move(done)] {
            done(Refusal{QString(refusal::cloudlySessionLost), QStringLiteral("the relay is stopping")});
        });
        return;
    }
    adopt(new ClosureReceive(m_cloudly, m_corestore, m_clock, m_callTimeoutMs, nodeId, serviceId, backupId, std::move(done), this));
}

void ClosureStreams::onBinaryFrame(const QByteArray &payload)
{
    const ClosureChunkFrame::Chunk chunk = ClosureChunkFrame::read(payload);
    if (chunk.streamId.isNull())
        return dropped(ClosureChunkFrame::problemText(chunk.problem));
    ClosureStream *stream = m_streams.value(chunk.streamId);
    if (!stream || stream->hasEnded()) {
        if (!m_unknownAnswered.contains(chunk.streamId)) {
            m_unknownAnswered.append(chunk.streamId);
            if (m_unknownAnswered.size() > kRememberedUnknownStreams)
                m_unknownAnswered.removeFirst();
            ++m_unknownAborts;
            const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("streamId"), ClosureDescriptor::idText(chunk.streamId)},
                                                                 {QStringLiteral("side"), QStringLiteral("relay")},
                                                                 {QStringLiteral("reason"), QString(refusal::closureStreamUnknown)}});
            m_cloudly.call(QString(method::abortServiceDatabaseClosure), body, m_callTimeoutMs, [](const CloudlyConnector::CallResult &) {});
        }
        return dropped(QStringLiteral("a chunk for a stream the relay does not hold"));
    }
    if (chunk.problem != ClosureChunkFrame::Problem::None) {
        stream->endNow(QString(refusal::closureDigestMismatch), QStringLiteral("Cloudly sent %1").arg(ClosureChunkFrame::problemText(chunk.problem)));
        return dropped(ClosureChunkFrame::problemText(chunk.problem));
    }
    stream->chunkArrived(chunk.offset, chunk.payload);
}

void ClosureStreams::dropped(const QString &why)
{
    ++m_droppedFrames;
    // One line per doubling: Cloudly's mistakes cannot fill the log.
    if ((m_droppedFrames & (m_droppedFrames - 1)) == 0)
        qCWarning(logClosures).noquote() << "dropped a binary frame from Cloudly:" << why << QStringLiteral("(%1 so far)").arg(m_droppedFrames);
}

void ClosureStreams::onSessionLost()
{
    const QList<ClosureStream *> streams = m_streams.values();
    for (ClosureStream *stream : streams)
        if (!stream->hasEnded())
            stream->sessionLost(QStringLiteral("the Cloudly session went away mid-stream"));
}

void ClosureStreams::endAll(const QString &refusalName, const QString &reason)
{
    const QList<ClosureStream *> streams = m_streams.values();
    for (ClosureStream *stream : streams)
        if (!stream->hasEnded())
            stream->endNow(refusalName, reason);
}

void ClosureStreams::serveTransfer(const Frame &frame, MethodTable::Reply reply, bool restore)
{
    auto request = readTransferRequest(frame);
    if (!request)
        return reply(MethodTable::refusalFor(frame, request.refusal()));
    const TransferRequest r = request.value();
    const QPointer<ClosureStreams> self(this);
    if (!restore) {
        sendToCloudly(r.nodeId, r.serviceId, r.backupId, [frame, reply](const Result<ClosureReceipt> &result) {
            if (!result)
                return reply(MethodTable::refusalFor(frame, result.refusal()));
            const ClosureReceipt &receipt = result.value();
            const QJsonObject receiptJson{{QStringLiteral("streamId"), receipt.streamId},
                                          {QStringLiteral("storedAt"), double(receipt.storedAtMs)},
                                          {QStringLiteral("sizeBytes"), double(receipt.sizeBytes)},
                                          {QStringLiteral("sha256"), receipt.sha256}};
            reply(MethodTable::responseFor(frame, Envelope::compact(QJsonObject{{QStringLiteral("receipt"), receiptJson}})));
        });
        return;
    }
    restoreFromCloudly(r.nodeId, r.serviceId, r.backupId, [self, frame, reply, r](const Result<ClosureRestored> &result) {
        if (!result)
            return reply(MethodTable::refusalFor(frame, result.refusal()));
        const QJsonObject answer{{QStringLiteral("nodeId"), r.nodeId},
                                 {QStringLiteral("serviceId"), r.serviceId},
                                 {QStringLiteral("backupId"), r.backupId},
                                 {QStringLiteral("restoredBytes"), double(result->restoredBytes)},
                                 {QStringLiteral("sha256"), result->sha256},
                                 {QStringLiteral("completedAt"), double(self ? self->m_clock.nowMs() : 0)}};
        reply(MethodTable::responseFor(frame, Envelope::compact(answer)));
    });
}

void ClosureStreams::serveAbort(const Frame &frame, MethodTable::Reply reply)
{
    auto request = frame.requestObject();
    if (!request)
        return reply(MethodTable::refusalFor(frame, request.refusal()));
    ExactKeyReader r(request.value(), QStringLiteral("request"));
    const QString streamId = r.requiredString(QStringLiteral("streamId"));
    const QString side = r.requiredString(QStringLiteral("side"));
    const QString reason = r.requiredString(QStringLiteral("reason"));
    if (!r.failed() && QUuid::fromString(streamId).isNull())
        r.fail(QStringLiteral("streamId"), QStringLiteral("is not a UUID"));
    if (!r.failed() && side != QLatin1String("node") && side != QLatin1String("cloudly") && side != QLatin1String("relay"))
        r.fail(QStringLiteral("side"), QStringLiteral("is not node, cloudly or relay"));
    if (auto refused = r.finish())
        return reply(MethodTable::refusalFor(frame, *refused));
    reply(MethodTable::responseFor(frame, "{}"));
    if (ClosureStream *stream = m_streams.value(QUuid::fromString(streamId)); stream && !stream->hasEnded())
        stream->abortedByCloudly(side, reason);
}

} // namespace coreflow
