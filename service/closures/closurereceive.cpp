#include "service/closures/closurereceive.h"

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
#include "shared/util/clock.h"

#include <QJsonDocument>
#include <QPointer>
#include <QUrl>

#include <cstring>

namespace coreflow {

using namespace contract;

ClosureReceive::ClosureReceive(CloudlyConnector &cloudly, CorestoreClient &corestore, Clock &clock, qint64 cloudlyCallTimeoutMs,
                               QString nodeId, QString serviceId, QString backupId, ClosureTransfer::RestoreDone done, QObject *parent)
    : ClosureStream(Direction::Receive, cloudly, corestore, clock, cloudlyCallTimeoutMs, std::move(nodeId), std::move(serviceId),
                    std::move(backupId), parent),
      m_done(std::move(done)), m_dialTimer(clock.createTimer(this))
{
    setReceiver(this);
    connect(m_dialTimer.get(), &ClockTimer::timeout, this, &ClosureReceive::dialTimedOut);
}

ClosureReceive::~ClosureReceive() { endQuietly(); } // deleted by its owner: done() is not called any more

std::optional<qint64> ClosureReceive::knownSizeBytes() const
{
    return m_phase == Phase::Preparing || m_phase == Phase::Dialing || m_phase == Phase::Opening ? std::nullopt : std::optional<qint64>(m_descriptor.sizeBytes);
}

QString ClosureReceive::stateWord() const
{
    switch (m_phase) {
    case Phase::Opening: return QStringLiteral("opening");
    case Phase::Preparing: return QStringLiteral("preparing");
    case Phase::Dialing: return QStringLiteral("dialing");
    case Phase::Streaming: return QStringLiteral("streaming");
    case Phase::AwaitingCorestore: return QStringLiteral("awaiting-node");
    case Phase::Completing: return QStringLiteral("completing");
    case Phase::Ended: break;
    }
    return QStringLiteral("ended");
}

bool ClosureReceive::awaitingCloudly() const { return m_phase == Phase::Streaming && bufferedBytes() == 0 && m_received < m_granted; }

QString ClosureReceive::awaitedSide() const
{
    switch (m_phase) {
    case Phase::Opening:
    case Phase::Completing: return QStringLiteral("cloudly");
    case Phase::Preparing:
    case Phase::Dialing:
    case Phase::AwaitingCorestore: return QStringLiteral("node");
    case Phase::Streaming: return awaitingCloudly() ? QStringLiteral("cloudly") : QStringLiteral("node");
    case Phase::Ended: break;
    }
    return QString();
}

void ClosureReceive::start()
{
    // Every precondition before anything (CS-64, CS-80; §13.2, §13.6): the Cloudly session, then the
    // node's endpoint and the control credential (CorestoreClient::prepareStream). A refusal here has
    // opened no stream at Cloudly and sent Corestore nothing.
    if (!m_cloudly.isDispatchable())
        return endRefused(Refusal{QString(refusal::cloudlySessionUnavailable),
                                  QStringLiteral("no dispatchable Cloudly session for the closure of backup %1").arg(m_backupId)},
                          {}, {});
    const QByteArray route = QByteArrayLiteral("/control/database-closures/restore?serviceId=") + QUrl::toPercentEncoding(m_serviceId)
        + QByteArrayLiteral("&backupId=") + QUrl::toPercentEncoding(m_backupId);
    const QPointer<ClosureReceive> self(this);
    m_corestore.prepareStream(m_nodeId, "POST", route, [self](CorestoreClient::StreamStart start) {
        if (!self)
            return;
        if (!self->m_ended && start.failure.kind != CorestoreCallOutcome::Kind::Answered)
            return self->endRefused(start.failure.refusal, {}, {}); // Cloudly knows of no stream yet
        if (!self->adoptStreamStart(start.ticket, start.pool, start.tokenGeneration, start.lineHead))
            return;
        self->m_request = std::move(start.request);
        self->dial();
    });
}

void ClosureReceive::dial()
{
    // Reachability is a precondition too (CS-64, D-130): the node's Corestore is dialled before
    // Cloudly is asked for anything, and the request goes on this connection once the descriptor
    // gave its Content-Length.
    m_phase = Phase::Dialing;
    m_dialTimer->start(kDialTimeoutMs);
    m_pool->connectFor(this); // connectionEstablished() or responseFailed(), never from inside
}

void ClosureReceive::connectionEstablished()
{
    if (m_ended || m_phase != Phase::Dialing)
        return;
    m_dialTimer->stop();
    open();
}

void ClosureReceive::dialTimedOut()
{
    if (m_ended || m_phase != Phase::Dialing)
        return;
    // Cloudly knows of no stream yet; ending the stream cancels the dial (its socket is closed).
    endRefused(Refusal{QString(refusal::corestoreUnreachable), m_lineHead + QStringLiteral(": timeout after %1 ms").arg(kDialTimeoutMs)},
               {}, {});
}

void ClosureReceive::open()
{
    m_phase = Phase::Opening;
    // From here Cloudly knows the stream (the open travels ahead of any abort on the one session): a
    // Corestore connection lost while Cloudly answers, or a stop, tells it with an abort.
    m_cloudlyKnows = true;
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("serviceId"), m_serviceId},
                                                         {QStringLiteral("backupId"), m_backupId},
                                                         {QStringLiteral("nodeId"), m_nodeId},
                                                         {QStringLiteral("streamId"), ClosureDescriptor::idText(m_streamId)}});
    const QPointer<ClosureReceive> self(this);
    m_cloudly.call(QString(method::openServiceDatabaseClosure), body, m_callTimeoutMs, [self](const CloudlyConnector::CallResult &r) {
        if (!self || self->m_ended)
            return;
        if (!r.delivered)
            return self->cloudlyCallFailed(r.refusal);
        if (r.answer.hasError())
            return self->endRefused(refusedByCloudly(QStringLiteral("Cloudly refused openServiceDatabaseClosure"), r.answer.errorRefusal()), {}, {});
        self->onDescriptor(r.answer.response.toByteArray());
    });
}

void ClosureReceive::onDescriptor(const QByteArray &response)
{
    m_cloudlyKnows = true;
    ExactKeyReader r(QJsonDocument::fromJson(response).object(), QStringLiteral("response"));
    const QJsonObject descriptorJson = r.requiredObject(QStringLiteral("descriptor"));
    std::optional<Refusal> refused = r.finish();
    if (!refused) {
        auto descriptor = ClosureDescriptor::read(descriptorJson, QStringLiteral("response.descriptor"));
        if (!descriptor)
            refused = descriptor.refusal();
        else if (descriptor->streamId != m_streamId)
            refused = Refusal{QString(refusal::requestInvalid), QStringLiteral("field response.descriptor.streamId names another stream")};
        else if (descriptor->serviceId != m_serviceId || descriptor->backupId != m_backupId || descriptor->nodeId != m_nodeId)
            refused = Refusal{QString(refusal::requestInvalid), QStringLiteral("the descriptor names another service, backup or node")};
        else
            m_descriptor = std::move(descriptor).value();
    }
    if (refused)
        return endRefused(Refusal{QString(refusal::closureRefused), QStringLiteral("Cloudly's descriptor is not the contract's: %1").arg(refused->reason)},
                    QStringLiteral("relay"), QString(refusal::closureRefused));
    if (m_descriptor.sizeBytes == 0) {
        // Nothing will cross: the empty closure's digest is judged now.
        if (m_sha.hexDigest() != m_descriptor.sha256)
            return endRefused(Refusal{QString(refusal::closureDigestMismatch), QStringLiteral("an empty closure does not hash to the descriptor's SHA-256")},
                        QStringLiteral("relay"), QString(refusal::closureDigestMismatch));
        m_digestChecked = true;
    }
    HttpClientRequest request = std::move(m_request);
    m_request = HttpClientRequest();
    // Exactly the descriptor's length, identity encodings (no Transfer-Encoding, no Content-Encoding).
    request.headers.append({QByteArrayLiteral("Content-Type"), QByteArrayLiteral("application/octet-stream")});
    request.headers.append({QByteArrayLiteral("X-Corestore-Closure-Sha256"), m_descriptor.sha256});
    request.headers.append({QByteArrayLiteral("X-Corestore-Closure-Receipt"), m_descriptor.corestoreReceipt});
    request.headers.append({QByteArrayLiteral("Accept"), QByteArrayLiteral("application/json")});
    request.bodyStream = this;
    request.bodyStreamBytes = m_descriptor.sizeBytes;
    m_phase = Phase::Streaming;
    m_watch->start();
    const QPointer<ClosureReceive> self(this);
    m_pool->submit(this, request);
    if (self && !m_ended)
        grantCredit();
    if (self && !m_ended && m_descriptor.sizeBytes == 0)
        m_phase = Phase::AwaitingCorestore;
}

void ClosureReceive::grantCredit()
{
    const qint64 outstanding = m_granted - m_consumed;
    if (outstanding > kGrantBelowBytes || m_granted >= m_descriptor.sizeBytes)
        return;
    const qint64 grant = qMin(kMaxOutstandingCreditBytes - outstanding, m_descriptor.sizeBytes - m_granted);
    if (grant <= 0)
        return;
    m_granted += grant;
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("streamId"), ClosureDescriptor::idText(m_streamId)},
                                                         {QStringLiteral("creditBytes"), double(grant)}});
    const QPointer<ClosureReceive> self(this);
    m_cloudly.call(QString(method::grantServiceDatabaseClosureCredit), body, m_callTimeoutMs, [self](const CloudlyConnector::CallResult &r) {
        if (!self || self->m_ended)
            return;
        if (!r.delivered)
            return self->cloudlyCallFailed(r.refusal);
        if (r.answer.hasError())
            self->endRefused(refusedByCloudly(QStringLiteral("Cloudly refused grantServiceDatabaseClosureCredit"), r.answer.errorRefusal()),
                             QStringLiteral("relay"), QString(refusal::closureRefused));
    });
}

void ClosureReceive::chunkArrived(quint64 offset, QByteArrayView payload)
{
    if (m_ended)
        return;
    const auto invalid = [this](const QString &what) {
        endRefused(Refusal{QString(refusal::closureDigestMismatch), what}, QStringLiteral("relay"), QString(refusal::closureDigestMismatch));
    };
    if (m_phase == Phase::Opening || m_phase == Phase::Dialing || m_phase == Phase::Preparing)
        return invalid(QStringLiteral("Cloudly sent a chunk before the relay granted credit"));
    if (offset != quint64(m_received))
        return invalid(QStringLiteral("a chunk at offset %1 does not follow the %2 bytes received").arg(offset).arg(m_received));
    if (m_received + payload.size() > m_descriptor.sizeBytes)
        return invalid(QStringLiteral("Cloudly sent more than the descriptor's %1 bytes").arg(m_descriptor.sizeBytes));
    if (m_received + payload.size() > m_granted)
        return invalid(QStringLiteral("Cloudly sent %1 bytes beyond the credit granted").arg(m_received + payload.size() - m_granted));
    m_watch->moved();
    m_sha.update(payload);
    m_received += payload.size();
    if (m_bufferOffset > 0 && m_bufferOffset == m_buffer.size()) {
        m_buffer.resize(0);
        m_bufferOffset = 0;
    }
    m_buffer.append(payload.data(), payload.size());
    if (m_received == m_descriptor.sizeBytes) {
        // The last bytes reach Corestore only once the whole closure hashed to the descriptor's digest.
        if (m_sha.hexDigest() != m_descriptor.sha256)
            return invalid(QStringLiteral("the %1 bytes from Cloudly do not hash to the descriptor's SHA-256").arg(m_received));
        m_digestChecked = true;
    }
    if (m_pool)
        m_pool->resumeBody(this);
}

qsizetype ClosureReceive::requestBodyRead(char *out, qsizetype max)
{
    const qsizetype available = m_buffer.size() - m_bufferOffset;
    const qsizetype n = qMin(max, available);
    if (n <= 0)
        return 0;
    memcpy(out, m_buffer.constData() + m_bufferOffset, size_t(n));
    m_bufferOffset += n;
    m_consumed += n;
    m_watch->moved();
    if (m_bufferOffset == m_buffer.size()) {
        m_buffer.resize(0);
        m_bufferOffset = 0;
    } else if (m_bufferOffset >= kGrantBelowBytes) {
        m_buffer.remove(0, m_bufferOffset);
        m_bufferOffset = 0;
    }
    if (m_consumed == m_descriptor.sizeBytes && m_phase == Phase::Streaming)
        m_phase = Phase::AwaitingCorestore;
    return n;
}

void ClosureReceive::requestBodyDrained()
{
    if (m_phase == Phase::Streaming)
        grantCredit();
}

void ClosureReceive::responseHead(int status, const HttpHeaderPairs &)
{
    m_watch->moved();
    m_status = status;
}

void ClosureReceive::responseBody(const char *data, qsizetype size)
{
    m_watch->moved();
    m_answer.append(data, qMin(size, kMaxAnswerBytes - m_answer.size()));
}

void ClosureReceive::responseComplete()
{
    m_pool = nullptr;
    if (m_ended)
        return;
    if (m_status < 200 || m_status >= 300) {
        const Refusal refusal = corestoreRefusal(m_status, m_answer);
        return endRefused(refusal, QStringLiteral("node"), refusal.name);
    }
    ExactKeyReader r(QJsonDocument::fromJson(m_answer).object(), QStringLiteral("answer"));
    const bool restored = r.requiredBool(QStringLiteral("restored"));
    const qint64 size = r.requiredInteger(QStringLiteral("sizeBytes"));
    const QString sha = r.requiredString(QStringLiteral("sha256"));
    std::optional<Refusal> refused = r.finish();
    const auto unreadable = [this](const QString &what) {
        const Refusal refusal{QString(refusal::corestoreUnreachable), m_lineHead + QStringLiteral(": unreadable answer (%1)").arg(what)};
        endRefused(refusal, QStringLiteral("node"), refusal.name);
    };
    if (refused)
        return unreadable(refused->reason);
    if (!restored)
        return unreadable(QStringLiteral("restored is false"));
    if (m_consumed != m_descriptor.sizeBytes || !m_digestChecked)
        return unreadable(QStringLiteral("answered after %1 of %2 bytes").arg(m_consumed).arg(m_descriptor.sizeBytes));
    if (size != m_descriptor.sizeBytes || sha.toLatin1() != m_descriptor.sha256) {
        const Refusal refusal{QString(refusal::closureDigestMismatch),
                              QStringLiteral("node %1 restored another size or SHA-256 than the %2 bytes sent").arg(m_nodeId).arg(m_consumed)};
        return endRefused(refusal, QStringLiteral("node"), refusal.name);
    }
    complete(m_descriptor.sha256);
}

void ClosureReceive::responseFailed(HttpClientFailure failure)
{
    m_pool = nullptr;
    if (m_ended)
        return;
    const Refusal refusal{QString(refusal::corestoreUnreachable), m_lineHead + QStringLiteral(": ") + CorestoreHttpExchange::failureWord(failure)};
    // While dialling, Cloudly knows of no stream: nothing is aborted (endRefused tells only a Cloudly
    // that knows it).
    endRefused(refusal, QStringLiteral("node"), refusal.name);
}

void ClosureReceive::complete(const QByteArray &sha256)
{
    m_phase = Phase::Completing;
    m_watch->stop();
    m_buffer = QByteArray();
    m_bufferOffset = 0;
    if (m_ticket)
        m_corestore.releaseStream(std::exchange(m_ticket, 0));
    const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("streamId"), ClosureDescriptor::idText(m_streamId)},
                                                         {QStringLiteral("sizeBytes"), double(m_descriptor.sizeBytes)},
                                                         {QStringLiteral("sha256"), QString::fromLatin1(sha256)},
                                                         {QStringLiteral("outcome"), QStringLiteral("restored")}});
    const QPointer<ClosureReceive> self(this);
    m_cloudly.call(QString(method::completeServiceDatabaseClosure), body, m_callTimeoutMs, [self](const CloudlyConnector::CallResult &r) {
        if (!self || self->m_ended)
            return;
        if (!r.delivered)
            return self->cloudlyCallFailed(r.refusal);
        if (r.answer.hasError())
            return self->endRefused(refusedByCloudly(QStringLiteral("Cloudly did not accept the restore's completion"), r.answer.errorRefusal()),
                                    {}, {});
        self->endWell(QStringLiteral("restored into node %1 : %2 bytes").arg(self->m_nodeId).arg(self->m_descriptor.sizeBytes));
    });
}

void ClosureReceive::abortedByCloudly(const QString &side, const QString &reason)
{
    m_cloudlyKnows = false; // Cloudly ended it: nothing to tell it
    endRefused(Refusal{QString(refusal::closureRefused), QStringLiteral("Cloudly aborted the stream after %1 of %2 bytes (side %3: %4)")
                                                      .arg(m_received)
                                                      .arg(m_descriptor.sizeBytes)
                                                      .arg(plainOr(side, QStringLiteral("unnamed")), plainOr(reason, QStringLiteral("unnamed")))},
         {}, {});
}

void ClosureReceive::quiet()
{
    const QString side = awaitingCloudly() ? QStringLiteral("cloudly") : QStringLiteral("node");
    endRefused(Refusal{QString(refusal::closureTransferStalled),
                 QStringLiteral("%1 went quiet after %2 of %3 bytes").arg(side).arg(m_received).arg(m_descriptor.sizeBytes)},
         QStringLiteral("relay"), QString(refusal::closureTransferStalled));
}

void ClosureReceive::deliverRefusal(const Refusal &refusal)
{
    if (auto done = std::move(m_done))
        done(refusal);
}

void ClosureReceive::deliverSuccess()
{
    ClosureRestored restored;
    restored.restoredBytes = m_descriptor.sizeBytes;
    restored.sha256 = QString::fromLatin1(m_descriptor.sha256);
    if (auto done = std::move(m_done))
        done(restored);
}

void ClosureReceive::releaseBytes()
{
    m_phase = Phase::Ended;
    m_dialTimer->stop();
    m_buffer = QByteArray();
    m_bufferOffset = 0;
    m_answer = QByteArray();
    m_request = HttpClientRequest(); // its bearer goes with it
}

} // namespace coreflow
