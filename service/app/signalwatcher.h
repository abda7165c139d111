#pragma once
// SignalWatcher: SIGTERM/SIGINT delivered to the event loop through a self-pipe and a QSocketNotifier;
// no Qt call runs inside the signal handler. The first signal is reported with signalReceived(); a
// second one ends the process at once with exit code 1 (docs/contract.md §19.3, ST-07), from the
// handler itself, so a stuck stop cannot hold it.
#include <QObject>
#include <QSocketNotifier>
#include <memory>

namespace coreflow {

class SignalWatcher : public QObject {
    Q_OBJECT
public:
    explicit SignalWatcher(QObject *parent = nullptr);
    ~SignalWatcher() override;
    // Installs the handlers; false when the self-pipe cannot be created.
    bool install();
    // Restores default handling (stop() of a caller that owns the process releases both signals).
    void release();

Q_SIGNALS:
    void signalReceived(int signal);

private:
    std::unique_ptr<QSocketNotifier> m_notifier;
};

} // namespace coreflow
