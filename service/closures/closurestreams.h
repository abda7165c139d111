#pragma once
// ClosureStreams: the database closure streams of the relay's Cloudly session (docs/contract.md
// §13.4–§13.6; CS-65..CS-73). It implements ClosureTransfer for the backup lane and serves, on the
// Cloudly-facing MethodTable:
//   backupServiceDatabaseClosure { nodeId, serviceId, backupId }
//       -> { receipt: { streamId, storedAt, sizeBytes, sha256 } }       (a ClosureSend, §13.5)
//   restoreServiceDatabaseClosure { nodeId, serviceId, backupId }
//       -> { nodeId, serviceId, backupId, restoredBytes, sha256, completedAt } (a ClosureReceive, §13.6)
//   abortServiceDatabaseClosure { streamId, side, reason } -> {}  (Cloudly ends a stream; an unknown
//       stream is answered {} as well: the abort may cross the stream's own end)
// A request that is not the shape (ids plain names, D-96) is refused request-invalid; a transfer's refusal is
// the answer (closure-absent, closure-transfer-stalled, closure-digest-mismatch, closure-refused,
// cloudly-session-unavailable, cloudly-session-lost, the §12 failure classes).
//
// Binary frames from Cloudly (CloudlyConnector::binaryFrame) are read with ClosureChunkFrame and
// handed to the stream they name. A frame whose header is unreadable is dropped; one naming a known
// stream but otherwise malformed ends that stream (closure-digest-mismatch). A chunk for an unknown
// stream is dropped and answered with abortServiceDatabaseClosure { streamId, side: "relay",
// reason: "closure-stream-unknown" } once per stream id (the last kRememberedUnknownStreams ids are
// remembered, so a flood of one stale stream's chunks costs one abort); dropped frames are logged one
// line per doubling of their count.
// The session lost: every stream ends cloudly-session-lost (ClosureStream::sessionLost: no abort can
// travel). stop(): every stream ends cloudly-session-lost "the relay is stopping", Cloudly told with
// abortServiceDatabaseClosure { side: "relay", reason: "cloudly-session-lost" } while the session is
// up (ClosureStream::endNow, D-97).
// Streams are started on the next event-loop turn, so done() never runs inside the call.
#include "service/closures/closuretransfer.h"
#include "service/core/methodtable.h"
#include "shared/status/relaystatus.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QUuid>

namespace coreflow {

class Clock;
class CloudlyConnector;
class CorestoreClient;
class ClosureStream;

class ClosureStreams : public QObject, public ClosureTransfer {
    Q_OBJECT
public:
    static constexpr int kRememberedUnknownStreams = 64;

    ClosureStreams(CloudlyConnector &cloudly, CorestoreClient &corestore, MethodTable &cloudlyMethods, Clock &clock,
                   qint64 cloudlyCallTimeoutMs, QObject *parent = nullptr);
    ~ClosureStreams() override;

    void attach();
    void detach();
    void stop();

    // ClosureTransfer
    void sendToCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, SendDone done) override;
    void restoreFromCloudly(const QString &nodeId, const QString &serviceId, const QString &backupId, RestoreDone done) override;
    bool sessionDispatchable() const override;

    // Observation (status, tests): streams in flight; any of them (or an ended one not yet deleted)
    // still holding a timer, an exchange or bytes; frames dropped; aborts sent for unknown streams.
    int streamsInFlight() const { return int(m_streams.size()); }
    bool holdsResources() const;
    qint64 droppedFrames() const { return m_droppedFrames; }
    qint64 unknownStreamAborts() const { return m_unknownAborts; }
    // Closure bytes held by every stream now (tests: bounded by a chunk or the credit, never the size).
    qint64 heldBytes() const;
    // §18.1 backups: the transfers in flight (oldest first), the last kRecentTransfers that ended,
    // closure bytes moved since start and transfers ended by outcome. operations stays empty here.
    status::BackupLaneStatus statusLane() const;

Q_SIGNALS:
    void streamEnded();
    void statusChanged(); // a stream started or ended

private:
    void adopt(ClosureStream *stream);
    void record(const ClosureStream &stream);
    void onBinaryFrame(const QByteArray &payload);
    void onSessionLost();
    void endAll(const QString &refusalName, const QString &reason);
    void dropped(const QString &why);
    void serveTransfer(const contract::Frame &frame, MethodTable::Reply reply, bool restore);
    void serveAbort(const contract::Frame &frame, MethodTable::Reply reply);

    CloudlyConnector &m_cloudly;
    CorestoreClient &m_corestore;
    MethodTable &m_methods;
    Clock &m_clock;
    qint64 m_callTimeoutMs;
    QHash<QUuid, ClosureStream *> m_streams;
    QList<QUuid> m_unknownAnswered; // the last kRememberedUnknownStreams ids aborted
    QList<status::ClosureOutcomeStatus> m_recent;
    QMap<QString, qint64> m_outcomes;
    qint64 m_endedBytesSent = 0;
    qint64 m_endedBytesReceived = 0;
    qint64 m_droppedFrames = 0;
    qint64 m_unknownAborts = 0;
    bool m_attached = false;
    bool m_stopped = false;
};

} // namespace coreflow
