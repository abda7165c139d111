#pragma once
// StatusClient: the console's side of the status socket (see service/status/statusserver.h for the
// protocol). Connects, says {"type":"hello","version":1,"subscribe":<subscribe>}, turns the lines it
// receives into snapshots and events, and — with autoReconnect — reconnects with exponential backoff
// (initialBackoffMs doubling up to maxBackoffMs, reset by every snapshot) when the relay restarts.
//
// States:
//   Connecting    first attempt in progress (only before the first outcome);
//   Connected     the first snapshot arrived on the open connection (more follow when subscribed);
//   Disconnected  no relay at the path, the connection dropped, or the peer broke the protocol
//                 (reason says which; protocolFailure() is true for the last case); retries continue
//                 silently in this state when autoReconnect is on;
//   Refused       access refused: the socket file's permissions (EACCES) or a status-access-denied
//                 refusal (reason is the relay's one-line reason), or the console refused the server:
//                 its SO_PEERCRED uid is not trusted for the path (ServerPeerCheck,
//                 status-server-untrusted; nothing is sent or read). Retries continue in this state too.
// The client never sends anything but its hello, so it cannot change the relay.
#include "console/statusevent.h"
#include "shared/status/relaystatus.h"
#include "shared/util/clock.h"

#include <QObject>
#include <QPointer>
#include <memory>
#include <optional>

class QLocalSocket;

namespace coreflow::console {

class StatusClient : public QObject {
    Q_OBJECT
public:
    enum class State { Connecting, Connected, Disconnected, Refused };
    Q_ENUM(State)

    struct Options {
        QString socketPath;
        bool subscribe = true;
        bool autoReconnect = true;
        qint64 initialBackoffMs = 250;
        qint64 maxBackoffMs = 5000;
    };

    static constexpr qint64 maxLineBytes = 1024 * 1024 * 8; // a snapshot line; the server caps client lines at 1 MiB

    StatusClient(Options options, Clock &clock, QObject *parent = nullptr);
    ~StatusClient() override;

    void start();
    void stop();

    State state() const { return m_state; }
    QString stateReason() const { return m_reason; }
    bool protocolFailure() const { return m_protocolFailure; }
    const std::optional<status::RelayStatus> &lastSnapshot() const { return m_last; }
    const Options &options() const { return m_options; }
    static QString stateName(State state);

Q_SIGNALS:
    void stateChanged(coreflow::console::StatusClient::State state, const QString &reason);
    void snapshotReceived(const coreflow::status::RelayStatus &status);
    void eventReceived(const coreflow::console::StatusEvent &event);
    // The server answered with a refusal other than access-denied (never expected: the client only
    // says hello). Logged and reported; the connection stays.
    void refusalReceived(const QString &name, const QString &reason);

private:
    void connectNow();
    void onConnected();
    void onReadyRead();
    void onSocketGone(const QString &reason, State next, bool protocol);
    void handleLine(const QByteArray &line);
    void setState(State state, const QString &reason);
    void scheduleRetry();

    Options m_options;
    Clock &m_clock;
    QPointer<QLocalSocket> m_socket;
    std::unique_ptr<ClockTimer> m_retryTimer;
    QByteArray m_buffer;
    State m_state = State::Connecting;
    QString m_reason;
    bool m_protocolFailure = false;
    bool m_refusedOnThisConnection = false;
    bool m_running = false;
    qint64 m_backoffMs = 0;
    std::optional<status::RelayStatus> m_last;
};

} // namespace coreflow::console
