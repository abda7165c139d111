#include "service/closures/closurestream.h"

#include "service/closures/closuredescriptor.h"
#include "service/closures/closureprogresswatch.h"
#include "service/cloudly/cloudlyconnector.h"
#include "service/core/logging.h"
#include "service/corestore/corestoreclient.h"
#include "service/transport/httpclientpool.h"
#include "shared/contract/envelope.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"
#include "shared/util/clock.h"

#include <QJsonObject>
#include <QPointer>

namespace coreflow {

using namespace contract;

ClosureStream::ClosureStream(Direction direction, CloudlyConnector &cloudly, CorestoreClient &corestore, Clock &clock,
                             qint64 cloudlyCallTimeoutMs, QString nodeId, QString serviceId, QString backupId, QObject *parent)
    : QObject(parent), m_cloudly(cloudly), m_corestore(corestore), m_callTimeoutMs(cloudlyCallTimeoutMs), m_nodeId(std::move(nodeId)),
      m_serviceId(std::move(serviceId)), m_backupId(std::move(backupId)), m_streamId(QUuid::createUuid()), m_startedAtMs(clock.nowMs()),
      m_watch(std::make_unique<ClosureProgressWatch>(clock, [this] { quiet(); })), m_direction(direction)
{
}

// The subclass's destructor ends the stream (its receiver is gone once this runs).
ClosureStream::~ClosureStream() = default;

bool ClosureStream::holdsResources() const { return m_pool != nullptr || m_watch->isRunning() || m_ticket != 0 || holdsBytes(); }

status::ClosureTransferStatus ClosureStream::statusEntry() const
{
    status::ClosureTransferStatus s;
    s.streamId = ClosureDescriptor::idText(m_streamId);
    s.direction = m_direction == Direction::Send ? QStringLiteral("send") : QStringLiteral("receive");
    s.nodeId = m_nodeId;
    s.serviceId = m_serviceId;
    s.backupId = m_backupId;
    s.startedAtMs = m_startedAtMs;
    s.state = stateWord();
    s.bytesMoved = bytesMoved();
    s.sizeBytes = knownSizeBytes();
    s.awaiting = awaitedSide();
    return s;
}

bool ClosureStream::adoptStreamStart(quint64 ticket, HttpClientPool *pool, quint64 tokenGeneration, const QString &lineHead)
{
    if (m_ended) {
        if (ticket)
            m_corestore.releaseStream(ticket);
        return false;
    }
    m_pool = pool;
    m_ticket = ticket;
    m_tokenGeneration = tokenGeneration;
    m_lineHead = lineHead;
    return true;
}

Refusal ClosureStream::corestoreRefusal(int status, const QByteArray &errorBody)
{
    if (status == 401 || status == 403)
        m_corestore.streamRefusedBearer(m_tokenGeneration);
    return m_corestore.streamOutcome(m_lineHead, status, errorBody).refusal;
}

QString ClosureStream::plainOr(const QString &name, const QString &otherwise) { return RefusalQuote::isPlain(name) ? name : otherwise; }

Refusal ClosureStream::refusedByCloudly(const QString &what, const Refusal &theirs)
{
    return Refusal{QString(refusal::closureRefused), QStringLiteral("%1: %2").arg(what, plainOr(theirs.name, QStringLiteral("an unnamed refusal")))};
}

void ClosureStream::endNow(const QString &refusalName, const QString &reason)
{
    endRefused(Refusal{refusalName, reason}, QStringLiteral("relay"), refusalName);
}

void ClosureStream::sessionLost(const QString &reason)
{
    m_cloudlyKnows = false; // nothing can reach Cloudly on a session that went away
    endRefused(Refusal{QString(refusal::cloudlySessionLost), reason}, {}, {});
}

void ClosureStream::endStream()
{
    m_ended = true;
    m_watch->stop();
    if (HttpClientPool *pool = std::exchange(m_pool, nullptr); pool && m_receiver)
        pool->cancel(m_receiver);
    if (m_ticket)
        m_corestore.releaseStream(std::exchange(m_ticket, 0));
    releaseBytes();
}

void ClosureStream::cloudlyCallFailed(const Refusal &refusal)
{
    if (refusal.name == QLatin1String(refusal::cloudlySessionLost))
        return sessionLost(QStringLiteral("the Cloudly session went away mid-stream"));
    endRefused(refusal, {}, {});
}

void ClosureStream::endQuietly()
{
    if (!m_ended)
        endStream();
}

void ClosureStream::endRefused(const Refusal &refusal, const QString &abortSide, const QString &abortReason)
{
    if (m_ended)
        return;
    const bool tellCloudly = m_cloudlyKnows && !abortSide.isEmpty();
    m_outcome = refusal.name;
    endStream();
    // A send's chunks still in the chunk lane are not sent: the abort (an ordinary frame) follows the
    // ones the socket already took, and Cloudly needs no more of a stream that ended (D-112).
    if (m_direction == Direction::Send)
        m_cloudly.dropQueuedChunks(m_streamId);
    if (tellCloudly) {
        const QByteArray body = Envelope::compact(QJsonObject{{QStringLiteral("streamId"), ClosureDescriptor::idText(m_streamId)},
                                                             {QStringLiteral("side"), abortSide},
                                                             {QStringLiteral("reason"), abortReason}});
        m_cloudly.call(QString(method::abortServiceDatabaseClosure), body, m_callTimeoutMs, [](const CloudlyConnector::CallResult &) {});
    }
    qCInfo(logClosures).noquote() << "closure" << ClosureDescriptor::idText(m_streamId) << "of backup" << m_backupId << refusedWord() + QLatin1Char(':')
                                  << refusal.text();
    const QPointer<ClosureStream> self(this);
    deliverRefusal(refusal);
    if (self)
        Q_EMIT ended(this);
}

void ClosureStream::endWell(const QString &line)
{
    if (m_ended)
        return;
    m_outcome = m_direction == Direction::Send ? QStringLiteral("stored") : QStringLiteral("restored");
    endStream();
    qCInfo(logClosures).noquote() << "closure" << ClosureDescriptor::idText(m_streamId) << "of backup" << m_backupId << line;
    const QPointer<ClosureStream> self(this);
    deliverSuccess();
    if (self)
        Q_EMIT ended(this);
}

} // namespace coreflow
