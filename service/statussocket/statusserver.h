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
//                     protocol has no message that changes relay state. After maxRefusals (8) refused
//                     messages on one connection the last refusal says "closing" and the client is closed.
//                     Refusals are logged once per connection (one line with the count and the first
//                     reason, when the client goes), never once per line. At most maxLinesPerWakeup
//                     lines are handled per turn of the event loop; the rest wait for the next turn, so
//                     a flood never stalls the relay.
//   Peer not admitted (StatusAccessPolicy): {"type":"refusal","name":"status-access-denied",
//                     "reason":"uid 1234 is neither root, the service user nor in group <g>"}, then close.
//   No hello within helloTimeoutMs (10 s on the injected Clock): {"type":"refusal",
//                     "name":"status-hello-timeout","reason":"..."}, then close.
//   maxClients (64) admitted clients already connected: {"type":"refusal","name":"status-too-many-clients",
//                     "reason":"..."}, then close.
//   A client line above 1 MiB: a status-read-only refusal, then close.
//   Slow consumer: the bound is maxQueuedBytes of unwritten bytes (QLocalSocket::bytesToWrite) BEYOND
//                     the current snapshot: a message may be queued while unwritten + message <=
//                     maxQueuedBytes + size of the current snapshot line - finalLineReserve, so a relay
//                     whose snapshot alone exceeds maxQueuedBytes can still be shown to a reading client.
//                     A message that would pass the bound is not written; instead the client gets a final
//                     {"type":"refusal","name":"status-consumer-too-slow","reason":"..."} line (the
//                     reserve keeps room for it; best effort: it arrives only if the client ever drains
//                     its queue) and is closed, with one log line (coreflow.status) naming
//                     status-consumer-too-slow. Writes never block, so the relay's own work is never
//                     slowed; other clients are unaffected.
//   Closing: a closed client's queued bytes are flushed, then only the sending half is shut down
//                     (shutdown(SHUT_WR)) and input is read and discarded until the peer closes: a peer
//                     still writing reads every line and then end-of-stream instead of failing with EPIPE
//                     (contract §18, D-111). After closeLingerMs (injected Clock) the socket is aborted; a
//                     socket whose peer is already gone is deleted at once.
//
// Socket place: start() refuses (status-socket-unsafe, shared/status/statussocketplace.h) a path whose
// directory belongs to another uid, is writable by others without the sticky bit, or already holds a
// socket of another uid; the caller logs it and the relay runs without its status socket.
// Socket file: start() chmods it to socketMode (0660) and, when an operator group is configured and
// resolves, chowns it to that group (the relay must be a member of the group to do so unless it is root:
// under systemd, SupplementaryGroups=). Group members must also be able to traverse the socket's
// directory (e.g. RuntimeDirectoryMode=0755, see packaging/coreflow.service).
//
// Events: publishEvent() lines are value-free by the caller's contract; the server keeps the last
// recentEventLimit (200) in a ring and replays it to each new subscriber right after its first snapshot
// (events are not part of RelayStatus, so --json/--text output stays the status model only).
//
// Threading: lives in the thread that runs the relay's event loop; all calls from that thread.
#include "shared/status/relaystatus.h"
#include "shared/util/clock.h"

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
    int maxRefusals = 8;                       // refused messages per connection before it is closed
    int maxLinesPerWakeup = 64;                // client lines handled per turn of the event loop
    qint64 helloTimeoutMs = 10'000;            // a client that says no hello this long is closed, ms
    int maxClients = 64;                       // admitted clients at once; more are refused
    qint64 closeLingerMs = 5'000;              // how long a closed client's queue may still drain, ms
};

class StatusServer : public QObject {
    Q_OBJECT
public:
    static constexpr qint64 maxLineBytes = 1024 * 1024;
    // Room kept below the queue bound for the final status-consumer-too-slow refusal line.
    static constexpr qint64 finalLineReserve = 1024;

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
    // (getgrnam, once), then chowns the socket to the operator group's gid (a failure is logged: only
    // root and the service user can connect then). false + *error (one line, for the caller to log) on failure.
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
    // Clients admitted since start (docs/contract.md §18.1 counters.statusClients).
    qint64 clientsAdmitted() const { return m_admittedTotal; }
    // Admission log lines (§18): each admission is a debug line; at info level the first admission
    // after a quiet minute is one line naming its uid, and the admissions that follow within each
    // admissionSummaryIntervalMs are summed up in one line at its end ("status clients: N more
    // admitted in the last 60000 ms; K connected"). A client going away is a debug line.
    static constexpr qint64 admissionSummaryIntervalMs = 60000;
    // Clients disconnected for being too slow since start (for tests and counters).
    qint64 slowConsumerDisconnects() const { return m_slowDrops; }
    // Sockets closed (refused or retired) but not yet deleted (for tests: none may leak).
    int closingSocketCount() const { return m_closing; }

Q_SIGNALS:
    void clientAdmitted(quint32 uid);
    void clientRefused(quint32 uid, const QString &reason);
    void clientDropped(const QString &reason);

private:
    struct Client;
    void onNewConnection();
    void noteAdmission(quint32 uid, const QString &reason);
    void onReadyRead(QLocalSocket *socket);
    void processInput(const std::shared_ptr<Client> &client);
    void handleLine(Client &client, const QByteArray &line);
    bool send(Client &client, const QByteArray &line); // false: client was dropped
    void sendSnapshot(Client &client, bool fresh);
    void scheduleSnapshot(Client &client);
    void dropClient(QLocalSocket *socket, const QString &logReason);
    // false: not a client. Logs one line when the client had refused messages or `why` is given.
    bool retireClient(QLocalSocket *socket, bool graceful, const QString &why = QString());
    void closeSocket(QLocalSocket *socket, bool graceful); // flush (bounded by closeLingerMs) or abort
    void refuse(Client &client, const QString &reason); // may close the client (maxRefusals)
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
    qint64 m_admittedTotal = 0;
    qint64 m_admissionsNotLogged = 0;
    std::unique_ptr<ClockTimer> m_admissionSummary;
    int m_closing = 0;
};

} // namespace coreflow
