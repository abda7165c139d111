#pragma once
// QuitOnSignal: makes SIGTERM and SIGINT end the Qt event loop cleanly (QCoreApplication::exit(0)) via a
// self-pipe, so the peer executables exit 0 when a demo script or a test harness stops them.
#include <QObject>

class QSocketNotifier;

namespace coreflow::peers {

class QuitOnSignal : public QObject {
    Q_OBJECT
public:
    // Installs the handlers; one instance per process. autoQuit false: only aboutToQuit() is emitted and
    // the receiver ends the event loop itself (e.g. after a clean WebSocket close).
    explicit QuitOnSignal(bool autoQuit = true, QObject *parent = nullptr);
    ~QuitOnSignal() override;

Q_SIGNALS:
    // Emitted (in the event loop) before the application is asked to quit; signalNumber is SIGTERM/SIGINT.
    void aboutToQuit(int signalNumber);

private:
    QSocketNotifier *m_notifier = nullptr;
};

} // namespace coreflow::peers
