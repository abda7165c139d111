#pragma once
// EpollEventDispatcher: the relay's main-thread event dispatcher (Linux epoll).
//
// Why: Qt's default dispatchers (glib, and QEventDispatcherUNIX) hand every registered socket
// notifier to poll() on every turn of the loop and keep notifiers in lists, so each loop turn and
// each write-notifier toggle costs O(open sockets). With thousands of node sessions that dominated
// the relay's CPU per forwarded frame (bench/README.md: glib poll, sock_poll, tcp_poll and
// unregisterSocketNotifier at the top of the profile). Here a notifier change is one epoll_ctl and a
// loop turn costs O(ready sockets + due timers).
//
// Semantics follow QEventDispatcherUNIX: level-triggered socket activation (QEvent::SockAct sent to
// the notifier), timers fired by sending QTimerEvent (all timer types treated as precise, ms
// resolution), posted events sent at the start of each turn, wakeUp() through an eventfd; a turn that
// read a wake-up reports it as handled, as QEventDispatcherUNIX does, so a time-bounded
// QCoreApplication::processEvents (and QTest::qWait) keeps turning while queued calls repost
// themselves (D-111). Several
// notifiers of one type on one fd are all kept and all activated (QEventDispatcherUNIX warns and keeps
// the last only). A turn with ExcludeSocketNotifiers waits on the wake-up eventfd and the timers only
// (a second epoll set), so ready sockets do not make a loop run with that flag spin; they are
// reported on the next turn without it (level-triggered).
// Installed by main() for the main thread only (COREFLOW_EVENT_DISPATCHER=qt keeps Qt's default).
#include <QAbstractEventDispatcher>
#include <QHash>
#include <QVarLengthArray>

#include <atomic>
#include <map>
#include <utility>

namespace coreflow {

class EpollEventDispatcher final : public QAbstractEventDispatcher {
    Q_OBJECT
public:
    explicit EpollEventDispatcher(QObject *parent = nullptr);
    ~EpollEventDispatcher() override;

    bool isValid() const { return m_epoll >= 0 && m_wakeOnly >= 0 && m_wake >= 0; }
    // Timers registered now (every QTimer, QObject::startTimer and single shot of this thread): the
    // status counter `timers` (contract §18.1, D-103), sampled by the soak to show none is left behind.
    qsizetype timerCount() const { return m_timers.size(); }

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;
    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;
    void registerTimer(int timerId, qint64 interval, Qt::TimerType timerType, QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;
    void wakeUp() override;
    void interrupt() override;

private:
    using Notifiers = QVarLengthArray<QSocketNotifier *, 1>;
    struct FdNotifiers {
        Notifiers read;
        Notifiers write;
        Notifiers exception;
        quint32 events = 0; // the epoll interest last set
    };
    struct Timer {
        qint64 intervalMs = 0;
        Qt::TimerType type = Qt::CoarseTimer;
        QObject *object = nullptr;
        qint64 deadlineNs = 0;
    };

    void updateInterest(int fd, FdNotifiers &entry);
    void activate(int fd, quint32 events);
    bool fireTimers();
    int waitTimeoutMs() const;

    int m_epoll = -1;    // the wake-up eventfd and every notifier's fd
    int m_wakeOnly = -1; // the wake-up eventfd alone (turns with ExcludeSocketNotifiers)
    int m_wake = -1;
    std::atomic<bool> m_interrupt{false};
    QHash<int, FdNotifiers> m_fds;
    QHash<int, Timer> m_timers;
    std::map<std::pair<qint64, int>, int> m_deadlines; // (deadlineNs, timerId) -> timerId
};

} // namespace coreflow
