#pragma once
// SessionKeepalive: the silence rule shared by a group of WebSocket sessions (docs/contract.md §3.3,
// D-56): the injected Clock, the ping interval and the silence deadline (ms, RelayTiming
// sessionPingIntervalMs / sessionSilenceDeadlineMs), and one DeadlineQueue, so that every session of
// the group costs one queue entry and the group one clock timer (the listener's thousands of node
// sessions included). A session joins with WebSocketSession::startKeepalive(); the session does the
// rest. Held by shared_ptr: a session finishing its closing handshake after its owner left keeps it.
#include "shared/util/clock.h"
#include "shared/util/deadlinequeue.h"

#include <memory>

namespace coreflow {

class SessionKeepalive {
public:
    // pingIntervalMs > 0 and silenceDeadlineMs > 0 (see enabled()).
    SessionKeepalive(Clock &clock, qint64 pingIntervalMs, qint64 silenceDeadlineMs);
    SessionKeepalive(const SessionKeepalive &) = delete;
    SessionKeepalive &operator=(const SessionKeepalive &) = delete;

    // A keepalive for the two RelayTiming values, or nullptr when either is 0 (the rule is off).
    static std::shared_ptr<SessionKeepalive> create(Clock &clock, qint64 pingIntervalMs, qint64 silenceDeadlineMs);

    Clock &clock() const { return m_clock; }
    qint64 pingIntervalMs() const { return m_pingIntervalMs; }
    qint64 silenceDeadlineMs() const { return m_silenceDeadlineMs; }
    DeadlineQueue &deadlines() { return m_deadlines; }

    // Sessions of the group lost to silence so far, and pings sent (status and tests).
    qint64 silentSessions() const { return m_silentSessions; }
    qint64 pingsSent() const { return m_pingsSent; }
    void countSilentSession() { ++m_silentSessions; }
    void countPing() { ++m_pingsSent; }

private:
    Clock &m_clock;
    qint64 m_pingIntervalMs;
    qint64 m_silenceDeadlineMs;
    DeadlineQueue m_deadlines;
    qint64 m_silentSessions = 0;
    qint64 m_pingsSent = 0;
};

} // namespace coreflow
