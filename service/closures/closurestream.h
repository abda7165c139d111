#pragma once
// ClosureStream: one database closure transfer in flight on the Cloudly session (docs/contract.md
// §13.4), either direction (ClosureSend, ClosureReceive). ClosureStreams owns every stream by its id
// and hands it what arrives for it; a stream ends exactly once (its done() called, then ended()), and
// on every way out it has released its Corestore exchange, its buffered bytes and its progress timer
// (CS-73) before ended() is emitted. The owner deletes it later.
#include <QByteArrayView>
#include <QObject>
#include <QString>
#include <QUuid>

namespace coreflow {

class ClosureStream : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~ClosureStream() override = default;

    virtual QUuid streamId() const = 0;
    virtual void start() = 0;
    // A chunk of this stream from Cloudly (receive direction; a send stream refuses it).
    virtual void chunkArrived(quint64 offset, QByteArrayView payload) = 0;
    // Cloudly's abortServiceDatabaseClosure for this stream (side, reason as Cloudly stated them).
    virtual void abortedByCloudly(const QString &side, const QString &reason) = 0;
    // The Cloudly socket took queued bytes.
    virtual void socketDrained() {}
    // The Cloudly session was lost, or the relay stops: the stream ends with that refusal.
    virtual void endNow(const QString &refusalName, const QString &reason) = 0;
    virtual bool hasEnded() const = 0;
    // Whether a progress timer or a Corestore exchange is still held (tests: every exit releases both).
    virtual bool holdsResources() const = 0;

Q_SIGNALS:
    void ended(coreflow::ClosureStream *stream);
};

} // namespace coreflow
