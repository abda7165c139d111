#pragma once
// StatusServer: the relay's read-only status socket (a QLocalServer on an AF_UNIX path).
//
// Protocol (newline-delimited compact JSON, one message per line, a line is at most 1 MiB):
//   client -> server  {"type":"hello","version":1,"subscribe":true|false}
//   server -> client  {"type":"snapshot","version":1,"status":<status::RelayStatus::toJson()>}
//                     then, when subscribed:
//                       the ring of recent events (up to recentEventLimit, oldest first), then live
//                       {"type":"event","version":1,"atMs":<Unix ms>,"kind":"<kind>","line":"<line>"}
//                       and a fresh {"type":"snapshot",...} after statusChanged(), coalesced to at most
//                       one per snapshotCoalesceMs per client (timers from the injected Clock).
//   Anything else a client sends (unknown type, a second hello, a hello of another version, garbage):
//                     {"type":"refusal","name":"status-read-only","reason":"..."} and it is ignored. The
//                     protocol has no message that changes relay state.
//   Peer not admitted (StatusAccessPolicy): {"type":"refusal","name":"status-access-denied",
//                     "reason":"uid 1234 is neither root, the service user nor in group <g>"}, then close.
//   A client line above 1 MiB: a status-read-only refusal, then close.
//   Slow consumer: when a message would take a client's unwritten bytes (QLocalSocket::bytesToWrite)
//                     above maxQueuedBytes, nothing more is written to it and it is aborted, with one
//                     log line (coreflow.status) naming status-consumer-too-slow. Writes never block, so
//                     the relay's own work is never slowed; other clients are unaffected.
//
// Events: publishEvent() lines are value-free by the caller's contract; the server keeps the last
// recentEventLimit (200) in a ring and replays it to each new subscriber right after its first snapshot
// (events are not part of RelayStatus, so --json/--text output stays the status model only).
//
// Threading: lives in the thread that runs the relay's event loop; all calls from that thread.
#include "status/relaystatus.h"
#include "util/clock.h"

#include <QHash>
#include <QObject>
#include <QString>
#include <deque>
#include <functional>
#include <memory>

class QLocalServer;
class QLocalSocket;

namespace coreflow {

class StatusAccessPolicy;

struct StatusServerOptions {
    QString socketPath;                        // empty: StatusServer::defaultSocketPath()
    QString operatorGroup;                     // group name whose members may read; empty: none
    qint64 maxQueuedBytes = 4 * 1024 * 1024;   // per-client unwritten-bytes bound, bytes
    qint64 snapshotCoalesceMs = 250;           // minimum spacing of pushed snapshots per client, ms
    int socketMode = 0660;                     // file mode of the socket (tests widen it to 0666)
    int recentEventLimit = 200;                // events kept for replay to new subscribers
};

class StatusServer : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 maxLineBytes = 1024 * 1024;

    // $RUNTIME_DIRECTORY/status.sock, else /run/coreflow/status.sock when that directory is writable,
    // else $XDG_RUNTIME_DIR/coreflow-status.sock, else /tmp/coreflow-status-<uid>.sock
    // (shared/status/statussocketpath.h, server side).
    static QString defaultSocketPath();

    // snapshotProvider is called on the event loop (never inside statusChanged()/publishEvent()) when a
    // snapshot is due; it must be cheap and must not call back into the server.
    StatusServer(StatusServerOptions options, std::function<status::RelayStatus()> snapshotProvider, Clock &clock,
                 QObject *parent = nullptr);
    ~StatusServer() override;

    // Removes a stale socket file at the path (refuses when a live server answers there or the path is
    // not a socket), listens, chmods the socket to options.socketMode and resolves the operator group
    // (getgrnam, once). false + *error (one line, for the caller to log) on failure.
    bool start(QString *error);
    // Closes every client and removes the socket file. Idempotent.
    void stop();
    bool isListening() const;
    QString socketPath() const { return m_options.socketPath; }

    // The relay says something changed: subscribed clients get a coalesced snapshot. Cheap: arms timers.
    void statusChanged();
    // A value-free event line; sent at once to subscribed clients and kept in the replay ring.
    void publishEvent(const QString &kind, const QString &line);

    // Admitted, still-connected clients (refused peers being closed are not counted).
    int clientCount() const;
    // Clients disconnected for being too slow since start (for tests and counters).
    qint64 slowConsumerDisconnects() const { return m_slowDrops; }

Q_SIGNALS:
    void clientAdmitted(quint32 uid);
    void clientRefused(quint32 uid, const QString &reason);
    void clientDropped(const QString &reason);

private:
    struct Client;
    void onNewConnection();
    void onReadyRead(QLocalSocket *socket);
    void handleLine(Client &client, const QByteArray &line);
    bool send(Client &client, const QByteArray &line); // false: client was dropped
    void sendSnapshot(Client &client, bool fresh);
    void scheduleSnapshot(Client &client);
    void dropClient(QLocalSocket *socket, const QString &logReason);
    bool retireClient(QLocalSocket *socket, bool graceful); // false: not a client
    void refuse(Client &client, const QString &reason);
    QByteArray snapshotLine(bool fresh);

    StatusServerOptions m_options;
    std::function<status::RelayStatus()> m_provider;
    Clock &m_clock;
    QLocalServer *m_server = nullptr;
    std::unique_ptr<StatusAccessPolicy> m_policy; // resolved in start()
    QHash<QLocalSocket *, std::shared_ptr<Client>> m_clients;
    std::deque<QByteArray> m_recentEvents; // serialized event lines
    QByteArray m_cachedSnapshot;
    bool m_snapshotDirty = true;
    qint64 m_slowDrops = 0;
};

} // namespace coreflow
