#include "service/core/epolleventdispatcher.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <QTimerEvent>

#include <cerrno>
#include <ctime>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <vector>

namespace coreflow {

namespace {
qint64 monotonicNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}
constexpr int kMaxEvents = 512;
} // namespace

EpollEventDispatcher::EpollEventDispatcher(QObject *parent) : QAbstractEventDispatcher(parent)
{
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    m_wakeOnly = epoll_create1(EPOLL_CLOEXEC);
    m_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m_epoll >= 0 && m_wakeOnly >= 0 && m_wake >= 0) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = m_wake;
        if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wake, &ev) != 0 || epoll_ctl(m_wakeOnly, EPOLL_CTL_ADD, m_wake, &ev) != 0) {
            ::close(m_wake);
            m_wake = -1;
        }
    }
}

EpollEventDispatcher::~EpollEventDispatcher()
{
    if (m_wake >= 0)
        ::close(m_wake);
    if (m_wakeOnly >= 0)
        ::close(m_wakeOnly);
    if (m_epoll >= 0)
        ::close(m_epoll);
}

void EpollEventDispatcher::updateInterest(int fd, FdNotifiers &entry)
{
    quint32 events = 0;
    if (!entry.read.isEmpty())
        events |= EPOLLIN;
    if (!entry.write.isEmpty())
        events |= EPOLLOUT;
    if (!entry.exception.isEmpty())
        events |= EPOLLPRI;
    if (events == entry.events)
        return;
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (events == 0) {
        epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr); // may already be gone with a closed fd
    } else if (entry.events == 0) {
        if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &ev) != 0 && errno == EEXIST)
            epoll_ctl(m_epoll, EPOLL_CTL_MOD, fd, &ev);
    } else if (epoll_ctl(m_epoll, EPOLL_CTL_MOD, fd, &ev) != 0 && errno == ENOENT) {
        // The fd was closed (and maybe reused) while a notifier still named it.
        epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &ev);
    }
    entry.events = events;
}

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    if (fd < 0)
        return;
    FdNotifiers &entry = m_fds[fd];
    Notifiers &list = notifier->type() == QSocketNotifier::Read    ? entry.read
                      : notifier->type() == QSocketNotifier::Write ? entry.write
                                                                   : entry.exception;
    if (!list.contains(notifier))
        list.append(notifier);
    updateInterest(fd, entry);
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    auto it = m_fds.find(fd);
    if (it == m_fds.end())
        return;
    FdNotifiers &entry = it.value();
    entry.read.removeAll(notifier);
    entry.write.removeAll(notifier);
    entry.exception.removeAll(notifier);
    updateInterest(fd, entry);
    if (entry.read.isEmpty() && entry.write.isEmpty() && entry.exception.isEmpty())
        m_fds.erase(it);
}

void EpollEventDispatcher::activate(int fd, quint32 events)
{
    // Deliver to the notifiers registered when the event arrived, re-checking each one before its
    // delivery: a handler may disable, delete or add notifiers.
    auto deliver = [&](Notifiers FdNotifiers::*member) {
        auto it = m_fds.constFind(fd);
        if (it == m_fds.constEnd())
            return;
        const Notifiers snapshot = it.value().*member;
        for (QSocketNotifier *notifier : snapshot) {
            it = m_fds.constFind(fd);
            if (it == m_fds.constEnd())
                return;
            if (!(it.value().*member).contains(notifier))
                continue;
            QEvent event(QEvent::SockAct);
            QCoreApplication::sendEvent(notifier, &event);
        }
    };
    if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
        deliver(&FdNotifiers::read);
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
        deliver(&FdNotifiers::write);
    if (events & EPOLLPRI)
        deliver(&FdNotifiers::exception);
}

void EpollEventDispatcher::registerTimer(int timerId, qint64 interval, Qt::TimerType timerType, QObject *object)
{
    if (timerId <= 0 || !object)
        return;
    unregisterTimer(timerId);
    Timer t;
    t.intervalMs = qMax<qint64>(0, interval);
    t.type = timerType;
    t.object = object;
    t.deadlineNs = monotonicNs() + t.intervalMs * 1000000;
    m_timers.insert(timerId, t);
    m_deadlines.emplace(std::make_pair(t.deadlineNs, timerId), timerId);
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    auto it = m_timers.find(timerId);
    if (it == m_timers.end())
        return false;
    m_deadlines.erase(std::make_pair(it.value().deadlineNs, timerId));
    m_timers.erase(it);
    return true;
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    bool any = false;
    for (auto it = m_timers.begin(); it != m_timers.end();) {
        if (it.value().object == object) {
            m_deadlines.erase(std::make_pair(it.value().deadlineNs, it.key()));
            it = m_timers.erase(it);
            any = true;
        } else {
            ++it;
        }
    }
    return any;
}

QList<QAbstractEventDispatcher::TimerInfo> EpollEventDispatcher::registeredTimers(QObject *object) const
{
    QList<TimerInfo> list;
    for (auto it = m_timers.constBegin(); it != m_timers.constEnd(); ++it)
        if (it.value().object == object)
            list.append(TimerInfo(it.key(), int(it.value().intervalMs), it.value().type));
    return list;
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    auto it = m_timers.constFind(timerId);
    if (it == m_timers.constEnd())
        return -1;
    const qint64 left = it.value().deadlineNs - monotonicNs();
    return left <= 0 ? 0 : int((left + 999999) / 1000000);
}

void EpollEventDispatcher::wakeUp()
{
    const quint64 one = 1;
    [[maybe_unused]] const ssize_t n = ::write(m_wake, &one, sizeof one);
}

void EpollEventDispatcher::interrupt()
{
    m_interrupt.store(true);
    wakeUp();
}

int EpollEventDispatcher::waitTimeoutMs() const
{
    if (m_deadlines.empty())
        return -1;
    const qint64 left = m_deadlines.begin()->first.first - monotonicNs();
    if (left <= 0)
        return 0;
    return int(qMin<qint64>((left + 999999) / 1000000, 24 * 3600 * 1000));
}

bool EpollEventDispatcher::fireTimers()
{
    if (m_deadlines.empty())
        return false;
    const qint64 now = monotonicNs();
    // Snapshot the due timers first: a handler may register, restart or kill timers.
    std::vector<int> due;
    for (auto it = m_deadlines.begin(); it != m_deadlines.end() && it->first.first <= now; ++it)
        due.push_back(it->second);
    for (int id : due) {
        auto it = m_timers.find(id);
        if (it == m_timers.end() || it.value().deadlineNs > now)
            continue;
        Timer &t = it.value();
        // Re-arm before delivery (a timer is periodic until it is killed), keeping the cadence.
        m_deadlines.erase(std::make_pair(t.deadlineNs, id));
        qint64 next = t.deadlineNs + t.intervalMs * 1000000;
        if (next <= now)
            next = now + t.intervalMs * 1000000;
        t.deadlineNs = next;
        m_deadlines.emplace(std::make_pair(next, id), id);
        QObject *object = t.object;
        QTimerEvent event(id);
        QCoreApplication::sendEvent(object, &event);
    }
    return !due.empty();
}

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_interrupt.store(false);
    Q_EMIT awake();
    QCoreApplication::sendPostedEvents();

    const bool canWait = (flags & QEventLoop::WaitForMoreEvents) && !m_interrupt.load();
    int timeout = 0;
    if (canWait) {
        timeout = (flags & QEventLoop::X11ExcludeTimers) ? -1 : waitTimeoutMs();
        Q_EMIT aboutToBlock();
    }
    // Without socket notifiers the turn waits for a wake-up or a timer only: ready sockets stay
    // reported (level-triggered) for the next turn that takes them.
    const bool sockets = !(flags & QEventLoop::ExcludeSocketNotifiers);
    epoll_event events[kMaxEvents];
    int n;
    do {
        n = epoll_wait(sockets ? m_epoll : m_wakeOnly, events, kMaxEvents, timeout);
    } while (n < 0 && errno == EINTR && !m_interrupt.load());
    if (canWait)
        Q_EMIT awake();

    bool handled = false;
    for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == m_wake) {
            quint64 value;
            while (::read(m_wake, &value, sizeof value) > 0) {
            }
            // A wake-up counts as handled (as in QEventDispatcherUNIX): it usually means an event was
            // posted, often by a queued call that slices its work (StatusServer, contract §18), and
            // QCoreApplication::processEvents(flags, maxtime) turns again only while a turn reports
            // work. Reporting none made every slice wait out the caller's sleep (issue 16, D-111).
            handled = true;
            continue;
        }
        activate(fd, events[i].events);
        handled = true;
    }
    if (!(flags & QEventLoop::X11ExcludeTimers) && fireTimers())
        handled = true;
    return handled;
}

} // namespace coreflow
