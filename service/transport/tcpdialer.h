#pragma once
// TcpDialer: opens one outbound TCP connection for the relay's own sessions (the Cloudly session,
// docs/contract.md D-54): resolves the host (QHostInfo, asynchronous), then tries each address in
// the order the resolver gave, with a non-blocking connect watched by a socket notifier on the
// caller's event loop. TCP_NODELAY is set (the session sends small frames and waits for answers), and
// TCP keepalive with TCP_USER_TIMEOUT (applyTcpLiveness; docs/contract.md §3.3).
//
// Outcome, exactly once per dial(): connected(fd) hands over a connected, non-blocking descriptor
// (the receiver owns it), or failed(reason) with a text naming the step and the OS error (host name
// and port only: no path, query or credential of the URL ever reaches the dialer). abort() ends a
// dial in progress silently. Time bounds are the caller's (the Cloudly handshake bound covers it).
#include <QObject>
#include <QHostAddress>
#include <QList>

class QSocketNotifier;
class QHostInfo;

namespace coreflow {

class TcpDialer : public QObject {
    Q_OBJECT
public:
    explicit TcpDialer(QObject *parent = nullptr);
    ~TcpDialer() override;

    enum class Failure { None, HostNotFound, ConnectionRefused, Other };

    void dial(const QString &host, quint16 port);
    void abort();
    // Why the last dial failed (valid after failed(); ConnectionRefused when the last address tried
    // refused, HostNotFound when the name did not resolve).
    Failure failure() const { return m_failure; }

Q_SIGNALS:
    void connected(int fd);
    void failed(const QString &reason);

private:
    void onResolved(const QHostInfo &info);
    void tryNext();
    void onWritable();
    void closeAttempt();

    QString m_host;
    quint16 m_port = 0;
    int m_lookupId = -1;
    QList<QHostAddress> m_addresses;
    qsizetype m_next = 0;
    int m_fd = -1;
    QSocketNotifier *m_notifier = nullptr;
    QString m_lastError;
    quint64 m_generation = 0;
    int m_lastErrno = 0;
    Failure m_failure = Failure::None;
};

} // namespace coreflow
