#pragma once
// ClosureStream: one database closure transfer in flight on the Cloudly session (docs/contract.md
// §13.4), either direction (ClosureSend, ClosureReceive). ClosureStreams owns every stream by its id
// and hands it what arrives for it; a stream ends exactly once (its done() called, then ended()), and
// on every way out it has released its Corestore exchange, its buffered bytes and its progress timer
// (CS-73) before ended() is emitted. The owner deletes it later.
//
// The base holds what both directions hold and the one way out they share:
//   adoptStreamStart()  takes CorestoreClient::prepareStream's pool, ticket and bearer generation;
//   endStream()         marks the stream ended, stops the progress watch, cancels Corestore's request
//                       (its connection is closed), releases the pool ticket and the subclass's bytes;
//   endRefused()        endStream(), then abortServiceDatabaseClosure { streamId, side, reason } when
//                       Cloudly knows the stream and an abort side is given, the log line, done(refusal)
//                       and ended();
//   endWell()           endStream(), the log line, done(value) and ended().
// A stream ends:
//   sessionLost(reason) the Cloudly session went away: cloudly-session-lost, no abort (none can travel);
//   endNow(name, reason) the relay ends it (a stop, a malformed frame): Cloudly is told with an abort
//                       (side "relay", the refusal name as reason) while the session is up.
// Observation (status, §18.1 backups.transfers): statusEntry() is value-free: ids, counts, times, words.
#include "shared/contract/refusal.h"
#include "shared/status/relaystatus.h"

#include <QByteArrayView>
#include <QObject>
#include <QString>
#include <QUuid>
#include <memory>

namespace coreflow {

class Clock;
class CloudlyConnector;
class CorestoreClient;
class ClosureProgressWatch;
class HttpClientPool;
class HttpResponseReceiver;

class ClosureStream : public QObject {
    Q_OBJECT
public:
    enum class Direction { Send, Receive };

    ~ClosureStream() override;

    QUuid streamId() const { return m_streamId; }
    Direction direction() const { return m_direction; }
    virtual void start() = 0;
    // A chunk of this stream from Cloudly (receive direction; a send stream refuses it).
    virtual void chunkArrived(quint64 offset, QByteArrayView payload) = 0;
    // Cloudly's abortServiceDatabaseClosure for this stream (side, reason as Cloudly stated them).
    virtual void abortedByCloudly(const QString &side, const QString &reason) = 0;
    // The Cloudly socket took queued bytes.
    virtual void socketDrained() {}
    // The relay ends the stream (a stop, a malformed frame): Cloudly is told while it knows the stream.
    void endNow(const QString &refusalName, const QString &reason);
    // The Cloudly session went away: cloudly-session-lost with reason; no abort can reach Cloudly.
    void sessionLost(const QString &reason);
    bool hasEnded() const { return m_ended; }
    // Whether a progress timer, a Corestore exchange or buffered bytes are still held (tests: every
    // exit releases all of them).
    bool holdsResources() const;

    // Value-free facts for the status (§18.1 backups.transfers).
    status::ClosureTransferStatus statusEntry() const;
    // Once ended: "stored" (send) / "restored" (receive), or the refusal name that ended it.
    const QString &outcome() const { return m_outcome; }
    // The bytes sent to Cloudly (send) or received from it (receive); the closure's size once known.
    virtual qint64 bytesMoved() const = 0;
    virtual std::optional<qint64> knownSizeBytes() const = 0;
    // Closure bytes the relay holds for this stream now (the chunk being filled, or the received bytes
    // Corestore has not taken): at most a chunk (send) or the credit (receive).
    virtual qint64 heldBytes() const = 0;

Q_SIGNALS:
    void ended(coreflow::ClosureStream *stream);

protected:
    ClosureStream(Direction direction, CloudlyConnector &cloudly, CorestoreClient &corestore, Clock &clock, qint64 cloudlyCallTimeoutMs,
                  QString nodeId, QString serviceId, QString backupId, QObject *parent);

    // Set once by the subclass's constructor: the receiver its Corestore request runs with.
    void setReceiver(HttpResponseReceiver *receiver) { m_receiver = receiver; }
    // Takes prepareStream's pool, ticket, bearer generation and line head; false when the stream
    // ended meanwhile (the ticket is released then).
    bool adoptStreamStart(quint64 ticket, HttpClientPool *pool, quint64 tokenGeneration, const QString &lineHead);
    // Corestore answered a stream's request with a non-2xx status: the §15 refusal it is; a 401/403
    // drops the token so the next call reads it again (never repeated: the body cannot be sent twice).
    contract::Refusal corestoreRefusal(int status, const QByteArray &errorBody);
    // "Cloudly refused <method>: <its refusal name>" (closure-refused), quoting the name only when plain.
    static contract::Refusal refusedByCloudly(const QString &what, const contract::Refusal &theirs);
    static QString plainOr(const QString &name, const QString &otherwise);

    void endRefused(const contract::Refusal &refusal, const QString &abortSide, const QString &abortReason);
    // A Cloudly call of the stream was not answered: the session going away is sessionLost() (one
    // refusal line whichever call was pending), any other failure (a timeout) ends it as stated.
    void cloudlyCallFailed(const contract::Refusal &refusal);
    // For the subclass's destructor: releases what is held, calls nothing, logs nothing.
    void endQuietly();
    // Ends the stream successfully: releases everything, logs line, then deliverSuccess() and ended().
    void endWell(const QString &line);

    // Subclass hooks of the way out.
    virtual void releaseBytes() = 0;                       // drops the chunk / buffer / answer bytes
    virtual bool holdsBytes() const = 0;
    virtual void deliverRefusal(const contract::Refusal &refusal) = 0; // moves done() out and calls it
    virtual void deliverSuccess() = 0;
    virtual void quiet() = 0;                              // the progress bound passed
    virtual QString stateWord() const = 0;                 // §18.1 backups.transfers[].state
    virtual QString awaitedSide() const = 0;               // "node" | "cloudly" | ""
    virtual QString refusedWord() const = 0;               // "not sent" | "not restored"

    CloudlyConnector &m_cloudly;
    CorestoreClient &m_corestore;
    qint64 m_callTimeoutMs;
    QString m_nodeId;
    QString m_serviceId;
    QString m_backupId;
    QUuid m_streamId;
    qint64 m_startedAtMs;
    std::unique_ptr<ClosureProgressWatch> m_watch;
    HttpClientPool *m_pool = nullptr; // while Corestore's request runs
    quint64 m_ticket = 0;
    quint64 m_tokenGeneration = 0;
    QString m_lineHead;
    bool m_cloudlyKnows = false;      // Cloudly knows the stream (an abort tells it)
    bool m_ended = false;

private:
    void endStream();

    Direction m_direction;
    HttpResponseReceiver *m_receiver = nullptr;
    QString m_outcome;
};

} // namespace coreflow
