#include "console/statusclient.h"

#include "console/statuslinereader.h"

#include "console/consolelog.h"
#include "console/serverpeercheck.h"
#include "shared/contract/refusalnames.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>

namespace coreflow::console {

namespace refusal = contract::refusal;

StatusClient::StatusClient(Options options, Clock &clock, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_clock(clock), m_retryTimer(clock.createTimer())
{
    m_backoffMs = m_options.initialBackoffMs;
    connect(m_retryTimer.get(), &ClockTimer::timeout, this, &StatusClient::connectNow);
}

StatusClient::~StatusClient() { stop(); }

QString StatusClient::stateName(State state)
{
    switch (state) {
    case State::Connecting: return QStringLiteral("connecting");
    case State::Connected: return QStringLiteral("connected");
    case State::Disconnected: return QStringLiteral("disconnected");
    case State::Refused: return QStringLiteral("refused");
    }
    return QString();
}

void StatusClient::start()
{
    if (m_running)
        return;
    m_running = true;
    m_backoffMs = m_options.initialBackoffMs;
    setState(State::Connecting, QStringLiteral("connecting to %1").arg(m_options.socketPath));
    connectNow();
}

void StatusClient::stop()
{
    m_running = false;
    m_retryTimer->stop();
    if (m_socket) {
        QLocalSocket *s = m_socket;
        m_socket = nullptr;
        s->disconnect(this);
        s->abort();
        s->deleteLater();
    }
}

void StatusClient::connectNow()
{
    if (!m_running)
        return;
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
        m_socket->deleteLater();
    }
    m_buffer.clear();
    m_refusedOnThisConnection = false;
    auto *socket = new QLocalSocket(this);
    m_socket = socket;
    connect(socket, &QLocalSocket::connected, this, &StatusClient::onConnected);
    connect(socket, &QLocalSocket::readyRead, this, &StatusClient::onReadyRead);
    connect(socket, &QLocalSocket::errorOccurred, this, [this, socket](QLocalSocket::LocalSocketError error) {
        if (socket != m_socket)
            return;
        switch (error) {
        case QLocalSocket::SocketAccessError:
            onSocketGone(QStringLiteral("permission denied on %1 (the status socket admits root, the service user and "
                                        "the operator group)")
                             .arg(m_options.socketPath),
                         State::Refused, false);
            return;
        case QLocalSocket::ServerNotFoundError:
        case QLocalSocket::ConnectionRefusedError:
            onSocketGone(QStringLiteral("no relay listening at %1").arg(m_options.socketPath), State::Disconnected, false);
            return;
        case QLocalSocket::PeerClosedError:
            return; // disconnected() follows
        default:
            if (socket->state() != QLocalSocket::ConnectedState)
                onSocketGone(QStringLiteral("cannot connect to %1: %2").arg(m_options.socketPath, socket->errorString()),
                             State::Disconnected, false);
            return;
        }
    });
    connect(socket, &QLocalSocket::disconnected, this, [this, socket] {
        if (socket != m_socket)
            return;
        if (m_refusedOnThisConnection)
            onSocketGone(m_reason, State::Refused, false);
        else
            onSocketGone(QStringLiteral("the relay closed the status connection"), State::Disconnected, false);
    });
    socket->connectToServer(m_options.socketPath);
}

void StatusClient::onConnected()
{
    // Nothing is said to, or believed from, a server the console cannot trust (contract §18).
    if (auto problem = ServerPeerCheck::problem(m_socket->socketDescriptor(), m_options.socketPath)) {
        onSocketGone(*problem, State::Refused, false);
        return;
    }
    const QByteArray hello = m_options.subscribe ? R"({"type":"hello","version":1,"subscribe":true})"
                                                 : R"({"type":"hello","version":1,"subscribe":false})";
    m_socket->write(hello + '\n');
    // The state turns Connected with the first snapshot, so a refused retry never flickers "connected".
}

void StatusClient::onReadyRead()
{
    QPointer<QLocalSocket> socket = m_socket;
    while (socket && socket == m_socket) {
        m_buffer.append(socket->readAll());
        const qsizetype nl = m_buffer.indexOf('\n');
        if (nl < 0) {
            if (m_buffer.size() > maxLineBytes)
                onSocketGone(QStringLiteral("protocol error: a line above %1 bytes").arg(maxLineBytes), State::Disconnected, true);
            return;
        }
        const QByteArray line = m_buffer.left(nl);
        m_buffer.remove(0, nl + 1);
        handleLine(line);
    }
}

void StatusClient::handleLine(const QByteArray &line)
{
    StatusLine read = StatusLineReader::read(line);
    switch (read.kind) {
    case StatusLine::Kind::Ignore:
        return;
    case StatusLine::Kind::ProtocolError:
        onSocketGone(read.reason, State::Disconnected, true);
        return;
    case StatusLine::Kind::Refusal:
        if (read.refusalName == QLatin1String(refusal::statusAccessDenied)) {
            qCWarning(lcConsole).noquote() << "access refused:" << read.reason;
            m_refusedOnThisConnection = true;
            setState(State::Refused, read.reason);
        } else {
            qCWarning(lcConsole).noquote() << "relay refused:" << read.refusalName << read.reason;
        }
        Q_EMIT refusalReceived(read.refusalName, read.reason);
        return;
    case StatusLine::Kind::Snapshot:
        m_last = std::move(read.status);
        m_backoffMs = m_options.initialBackoffMs;
        m_protocolFailure = false;
        if (m_state != State::Connected)
            qCInfo(lcConsole).noquote() << "connected to" << m_options.socketPath;
        setState(State::Connected, QStringLiteral("connected to %1").arg(m_options.socketPath));
        Q_EMIT snapshotReceived(*m_last);
        return;
    case StatusLine::Kind::Event:
        Q_EMIT eventReceived(read.event);
        return;
    }
}

void StatusClient::onSocketGone(const QString &reason, State next, bool protocol)
{
    if (m_socket) {
        QLocalSocket *s = m_socket;
        m_socket = nullptr;
        s->disconnect(this);
        s->abort();
        s->deleteLater();
    }
    m_protocolFailure = protocol;
    if (m_state != next || m_reason != reason)
        qCInfo(lcConsole).noquote() << StatusClient::stateName(next) + QStringLiteral(":") << reason;
    setState(next, reason);
    scheduleRetry();
}

void StatusClient::scheduleRetry()
{
    if (!m_running || !m_options.autoReconnect)
        return;
    m_retryTimer->start(m_backoffMs);
    m_backoffMs = qMin(m_backoffMs * 2, m_options.maxBackoffMs);
}

void StatusClient::setState(State state, const QString &reason)
{
    if (m_state == state && m_reason == reason)
        return;
    m_state = state;
    m_reason = reason;
    Q_EMIT stateChanged(state, reason);
}

} // namespace coreflow::console
