#include "service/statussocket/statusserver.h"

#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"
#include "shared/status/statussocketpath.h"
#include "shared/status/statussocketplace.h"
#include "service/statussocket/statusaccesspolicy.h"
#include "service/statussocket/statushelloreader.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalServer>
#include <QLocalSocket>
#include <QLoggingCategory>
#include <QPointer>

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

Q_LOGGING_CATEGORY(lcStatusServer, "coreflow.status")

namespace coreflow {

namespace refusal = contract::refusal;

struct StatusServer::Client {
    QLocalSocket *socket = nullptr;
    quint32 uid = 0;
    QByteArray inBuffer;
    bool helloed = false;
    bool subscribed = false;
    qint64 lastSnapshotAtMs = 0;
    std::unique_ptr<ClockTimer> snapshotTimer;
    std::unique_ptr<ClockTimer> helloTimer;
    int refusals = 0;          // refused messages on this connection
    QString firstRefusal;      // the first refusal's reason (logged once, when the client goes)
    bool continuationPending = false; // a queued processInput() will handle the rest of the input
};

namespace {

// (project) Refusal names of the status socket's own lifecycle; see statusserver.h.
constexpr QLatin1StringView statusHelloTimeout{"status-hello-timeout"};
constexpr QLatin1StringView statusTooManyClients{"status-too-many-clients"};

QByteArray compact(const QJsonObject &o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

QByteArray refusalLine(QLatin1StringView name, const QString &reason)
{
    return compact(QJsonObject{{QStringLiteral("type"), QStringLiteral("refusal")},
                               {QStringLiteral("name"), QString(name)},
                               {QStringLiteral("reason"), reason}});
}

// A live server answers connect(); a stale socket file gives ECONNREFUSED.
bool liveServerAt(const QString &path)
{
    const QByteArray p = QFile::encodeName(path);
    sockaddr_un addr{};
    if (size_t(p.size()) >= sizeof(addr.sun_path))
        return false;
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, p.constData(), size_t(p.size()));
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    const bool live = ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    return live;
}

} // namespace

QString StatusServer::defaultSocketPath() { return status::defaultStatusSocketPath(status::StatusSocketSide::Server); }

StatusServer::StatusServer(StatusServerOptions options, std::function<status::RelayStatus()> snapshotProvider,
                           Clock &clock, QObject *parent)
    : QObject(parent), m_options(std::move(options)), m_provider(std::move(snapshotProvider)), m_clock(clock)
{
    if (m_options.socketPath.isEmpty())
        m_options.socketPath = defaultSocketPath();
    if (m_options.recentEventLimit < 0)
        m_options.recentEventLimit = 0;
}

StatusServer::~StatusServer() { stop(); }

bool StatusServer::start(QString *error)
{
    auto fail = [&](const QString &why) {
        if (error)
            *error = why; // the caller logs it (one line per event)
        return false;
    };
    if (m_server)
        return fail(QStringLiteral("already listening on %1").arg(m_options.socketPath));
    const QString path = m_options.socketPath;
    const QByteArray encoded = QFile::encodeName(path);
    // A place another local user could have squatted is refused, never reused (contract §18).
    if (auto problem = status::StatusSocketPlace::judge(status::StatusSocketPlace::inspect(path), ::geteuid()))
        return fail(QStringLiteral("%1: %2").arg(QLatin1String(refusal::statusSocketUnsafe), *problem));
    struct stat st{};
    if (::lstat(encoded.constData(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return fail(QStringLiteral("%1 exists and is not a socket; not removing it").arg(path));
        if (liveServerAt(path))
            return fail(QStringLiteral("another server is listening on %1").arg(path));
        if (::unlink(encoded.constData()) != 0)
            return fail(QStringLiteral("cannot remove stale socket %1: %2").arg(path, QString::fromLocal8Bit(std::strerror(errno))));
        qCInfo(lcStatusServer).noquote() << "removed stale status socket" << path;
    }
    auto *server = new QLocalServer(this);
    server->setMaxPendingConnections(64);
    if (!server->listen(path)) {
        const QString why = QStringLiteral("cannot listen on %1: %2").arg(path, server->errorString());
        delete server;
        return fail(why);
    }
    // Resolved once here, not per connection: a slow NSS lookup must never stall the relay's loop.
    auto policy = std::make_unique<StatusAccessPolicy>(StatusAccessPolicy::forCurrentProcess(m_options.operatorGroup));
    if (!m_options.operatorGroup.isEmpty() && !policy->operatorGid())
        qCWarning(lcStatusServer).noquote() << "operator group" << m_options.operatorGroup
                                            << "does not exist on this host; only root and the service user are admitted";
    // The file mode is the first gate: with 0660 only the owner and the socket's group can connect(2),
    // so the socket must belong to the operator group for its members to reach the SO_PEERCRED check.
    if (const auto gid = policy->operatorGid(); gid && ::lchown(encoded.constData(), uid_t(-1), *gid) != 0)
        qCWarning(lcStatusServer).noquote() << "cannot give the status socket to operator group" << m_options.operatorGroup
                                            << "(" + QString::fromLocal8Bit(std::strerror(errno)) + ");"
                                            << "its members cannot connect; the relay must be root or a member of the group"
                                               " (systemd: SupplementaryGroups=)";
    if (::chmod(encoded.constData(), mode_t(m_options.socketMode)) != 0) {
        const QString why = QStringLiteral("cannot chmod %1 to %2: %3")
                                .arg(path, QString::number(m_options.socketMode, 8), QString::fromLocal8Bit(std::strerror(errno)));
        server->close();
        delete server;
        return fail(why);
    }
    m_server = server;
    m_policy = std::move(policy);
    connect(m_server, &QLocalServer::newConnection, this, &StatusServer::onNewConnection);
    qCInfo(lcStatusServer).noquote() << "status socket listening on" << path << "mode"
                                     << QString::number(m_options.socketMode, 8) << "operator group"
                                     << (m_options.operatorGroup.isEmpty() ? QStringLiteral("(none)") : m_options.operatorGroup);
    return true;
}

void StatusServer::stop()
{
    const auto sockets = m_clients.keys();
    for (QLocalSocket *s : sockets)
        retireClient(s, false);
    if (!sockets.isEmpty())
        qCInfo(lcStatusServer).noquote() << "status clients closed: server stopping (" << sockets.size() << ")";
    if (m_server) {
        m_server->close(); // QLocalServer::close() removes the socket file it created
        delete m_server;
        m_server = nullptr;
        qCInfo(lcStatusServer).noquote() << "status socket closed" << m_options.socketPath;
    }
}

bool StatusServer::isListening() const { return m_server && m_server->isListening(); }

int StatusServer::clientCount() const { return int(m_clients.size()); }

void StatusServer::onNewConnection()
{
    const StatusAccessPolicy &policy = *m_policy;
    while (QLocalSocket *socket = m_server->nextPendingConnection()) {
        QString credError;
        const auto peer = StatusAccessPolicy::readPeerCredentials(socket->socketDescriptor(), &credError);
        const AccessDecision decision = peer ? policy.decide(*peer)
                                             : AccessDecision{false, QStringLiteral("peer credentials unavailable (%1)").arg(credError)};
        if (!decision.admitted) {
            const quint32 uid = peer ? quint32(peer->uid) : quint32(-1);
            qCWarning(lcStatusServer).noquote() << "status client refused:" << decision.reason;
            // The refused peer is never read from; it gets one line and the socket is closed.
            socket->write(refusalLine(refusal::statusAccessDenied, decision.reason) + '\n');
            closeSocket(socket, true);
            Q_EMIT clientRefused(uid, decision.reason);
            continue;
        }
        if (m_clients.size() >= m_options.maxClients) {
            const QString reason = QStringLiteral("%1 status clients are connected, the most this relay admits; try again later")
                                       .arg(m_options.maxClients);
            qCWarning(lcStatusServer).noquote() << "status client uid" << peer->uid << "refused:" << reason;
            socket->write(refusalLine(statusTooManyClients, reason) + '\n');
            closeSocket(socket, true);
            Q_EMIT clientRefused(quint32(peer->uid), reason);
            continue;
        }
        auto client = std::make_shared<Client>();
        client->socket = socket;
        socket->setReadBufferSize(maxLineBytes + 64 * 1024); // a flood is never buffered beyond one line
        client->uid = quint32(peer->uid);
        client->snapshotTimer = m_clock.createTimer(this);
        connect(client->snapshotTimer.get(), &ClockTimer::timeout, this, [this, socket] {
            const auto it = m_clients.constFind(socket);
            if (it != m_clients.constEnd())
                sendSnapshot(**it, false);
        });
        client->helloTimer = m_clock.createTimer(this);
        connect(client->helloTimer.get(), &ClockTimer::timeout, this, [this, socket] {
            const auto it = m_clients.constFind(socket);
            if (it == m_clients.constEnd() || (*it)->helloed)
                return;
            const QString reason = QStringLiteral("no hello within %1 ms; closing").arg(m_options.helloTimeoutMs);
            send(**it, refusalLine(statusHelloTimeout, reason));
            retireClient(socket, true, QStringLiteral("%1: %2").arg(QString(statusHelloTimeout), reason));
        });
        client->helloTimer->start(m_options.helloTimeoutMs);
        m_clients.insert(socket, client);
        connect(socket, &QLocalSocket::readyRead, this, [this, socket] { onReadyRead(socket); });
        // Queued, so a disconnect noticed inside a write never re-enters the caller's loop.
        connect(socket, &QLocalSocket::disconnected, this, [this, guard = QPointer<QLocalSocket>(socket)] {
            if (guard && retireClient(guard, false))
                qCDebug(lcStatusServer).noquote() << "status client went away;" << m_clients.size() << "remain";
        }, Qt::QueuedConnection);
        noteAdmission(client->uid, decision.reason);
        Q_EMIT clientAdmitted(client->uid);
        if (socket->bytesAvailable() > 0)
            onReadyRead(socket);
    }
}

void StatusServer::noteAdmission(quint32 uid, const QString &reason)
{
    ++m_admittedTotal;
    qCDebug(lcStatusServer).noquote() << "status client admitted: uid" << uid << "(" + reason + ")";
    if (!m_admissionSummary) {
        m_admissionSummary = m_clock.createTimer(this);
        connect(m_admissionSummary.get(), &ClockTimer::timeout, this, [this] {
            if (m_admissionsNotLogged == 0)
                return; // a quiet minute: the next admission is logged by itself again
            qCInfo(lcStatusServer).noquote() << "status clients:" << m_admissionsNotLogged << "more admitted in the last"
                                             << admissionSummaryIntervalMs << "ms;" << m_clients.size() << "connected";
            m_admissionsNotLogged = 0;
            m_admissionSummary->start(admissionSummaryIntervalMs);
        });
    }
    if (m_admissionSummary->isActive()) {
        ++m_admissionsNotLogged;
        return;
    }
    qCInfo(lcStatusServer).noquote() << "status client admitted: uid" << uid << "(" + reason + ");"
                                     << "further admissions are summed up every" << admissionSummaryIntervalMs << "ms";
    m_admissionSummary->start(admissionSummaryIntervalMs);
}

void StatusServer::onReadyRead(QLocalSocket *socket)
{
    const auto it = m_clients.constFind(socket);
    if (it == m_clients.constEnd() || (*it)->continuationPending)
        return; // a queued continuation reads the rest
    processInput(*it);
}

void StatusServer::processInput(const std::shared_ptr<Client> &clientRef)
{
    const std::shared_ptr<Client> client = clientRef; // keeps the state alive while lines are handled
    QLocalSocket *socket = client->socket;
    const auto closeOversized = [&] {
        const QString reason = QStringLiteral("line above %1 bytes; closing").arg(maxLineBytes);
        send(*client, refusalLine(refusal::statusReadOnly, reason));
        retireClient(socket, true, QStringLiteral("sent a line above 1 MiB"));
    };
    // Input is taken from the socket only while less than one line is buffered; the socket's own read
    // buffer is bounded too, so a flood meets the kernel's backpressure instead of filling memory.
    if (client->inBuffer.size() <= maxLineBytes)
        client->inBuffer.append(socket->readAll());
    qsizetype pos = 0;
    for (int handled = 0; handled < m_options.maxLinesPerWakeup; ++handled) {
        const qsizetype nl = client->inBuffer.indexOf('\n', pos);
        if (nl < 0)
            break;
        if (nl - pos > maxLineBytes)
            return closeOversized();
        const QByteArray line = client->inBuffer.mid(pos, nl - pos);
        pos = nl + 1;
        handleLine(*client, line);
        if (m_clients.value(socket) != client)
            return;
    }
    client->inBuffer.remove(0, pos); // once per turn: never quadratic in the number of lines
    if (client->inBuffer.contains('\n') || (socket->bytesAvailable() > 0 && client->inBuffer.size() <= maxLineBytes)) {
        // More to do: yield to the event loop (the relay's own work) and continue on the next turn.
        client->continuationPending = true;
        QMetaObject::invokeMethod(this, [this, weak = std::weak_ptr<Client>(client)] {
            const std::shared_ptr<Client> c = weak.lock();
            if (!c || m_clients.value(c->socket) != c)
                return;
            c->continuationPending = false;
            processInput(c);
        }, Qt::QueuedConnection);
        return;
    }
    if (client->inBuffer.size() > maxLineBytes)
        closeOversized();
}

void StatusServer::handleLine(Client &client, const QByteArray &rawLine)
{
    const StatusHelloOutcome outcome = StatusHelloReader::read(rawLine, client.helloed);
    if (outcome.kind == StatusHelloOutcome::Kind::Ignore)
        return;
    if (outcome.kind == StatusHelloOutcome::Kind::Refuse) {
        refuse(client, outcome.reason);
        return;
    }
    client.helloed = true;
    client.helloTimer->stop();
    client.subscribed = outcome.subscribe;
    QLocalSocket *socket = client.socket;
    sendSnapshot(client, true);
    if (!m_clients.contains(socket) || !client.subscribed)
        return;
    for (const QByteArray &event : m_recentEvents)
        if (!send(client, event))
            return;
}

QByteArray StatusServer::snapshotLine(bool fresh)
{
    if (fresh || m_snapshotDirty || m_cachedSnapshot.isEmpty()) {
        const status::RelayStatus s = m_provider ? m_provider() : status::RelayStatus{};
        m_cachedSnapshot = compact(QJsonObject{{QStringLiteral("type"), QStringLiteral("snapshot")},
                                               {QStringLiteral("version"), status::statusProtocolVersion},
                                               {QStringLiteral("status"), s.toJson()}});
        m_snapshotDirty = false;
    }
    return m_cachedSnapshot;
}

void StatusServer::sendSnapshot(Client &client, bool fresh)
{
    client.snapshotTimer->stop();
    client.lastSnapshotAtMs = m_clock.nowMs();
    send(client, snapshotLine(fresh));
}

void StatusServer::scheduleSnapshot(Client &client)
{
    if (!client.subscribed || client.snapshotTimer->isActive())
        return; // not subscribed, or a snapshot is already due and will carry this change too
    const qint64 wait = client.lastSnapshotAtMs + m_options.snapshotCoalesceMs - m_clock.nowMs();
    client.snapshotTimer->start(qMax<qint64>(0, wait));
}

void StatusServer::statusChanged()
{
    m_snapshotDirty = true;
    for (const auto &client : std::as_const(m_clients))
        scheduleSnapshot(*client);
}

void StatusServer::publishEvent(const QString &kind, const QString &line)
{
    const QByteArray message = compact(QJsonObject{{QStringLiteral("type"), QStringLiteral("event")},
                                                   {QStringLiteral("version"), status::statusProtocolVersion},
                                                   {QStringLiteral("atMs"), double(m_clock.nowMs())},
                                                   {QStringLiteral("kind"), kind},
                                                   {QStringLiteral("line"), line}});
    if (m_options.recentEventLimit > 0) {
        m_recentEvents.push_back(message);
        while (m_recentEvents.size() > size_t(m_options.recentEventLimit))
            m_recentEvents.pop_front();
    }
    const auto clients = m_clients.values(); // send() may drop a client
    for (const auto &client : clients)
        if (client->subscribed && m_clients.contains(client->socket))
            send(*client, message);
}

bool StatusServer::send(Client &client, const QByteArray &line)
{
    QLocalSocket *socket = client.socket;
    const qint64 queued = socket->bytesToWrite();
    // The bound applies to what is queued beyond the current snapshot, so a snapshot larger than
    // maxQueuedBytes still reaches a reading client; the reserve keeps room for the final refusal line.
    const qint64 snapshotAllowance = m_cachedSnapshot.size() + 1;
    const qint64 bound = m_options.maxQueuedBytes + snapshotAllowance;
    if (queued + line.size() + 1 > bound - finalLineReserve) {
        ++m_slowDrops;
        dropClient(socket, QStringLiteral("%1: %2 bytes unwritten and a %3-byte message due, bound %4 bytes beyond the %5-byte snapshot")
                               .arg(QString(refusal::statusConsumerTooSlow))
                               .arg(queued)
                               .arg(line.size() + 1)
                               .arg(m_options.maxQueuedBytes)
                               .arg(snapshotAllowance));
        return false;
    }
    socket->write(line);
    socket->write("\n", 1);
    return true;
}

void StatusServer::refuse(Client &client, const QString &reason)
{
    ++client.refusals;
    if (client.firstRefusal.isEmpty())
        client.firstRefusal = reason;
    if (client.refusals < m_options.maxRefusals) {
        send(client, refusalLine(refusal::statusReadOnly, reason));
        return;
    }
    QLocalSocket *socket = client.socket;
    if (!send(client, refusalLine(refusal::statusReadOnly,
                                  QStringLiteral("%1; %2 messages refused on this connection, closing").arg(reason).arg(client.refusals))))
        return;
    retireClient(socket, true, QStringLiteral("closed after %1 refused messages").arg(client.refusals));
}

void StatusServer::dropClient(QLocalSocket *socket, const QString &logReason)
{
    if (!m_clients.contains(socket))
        return;
    // Best effort: the final line is queued behind what the client has not read; it arrives only if
    // the client drains its queue within closeLingerMs. Never blocks.
    socket->write(refusalLine(refusal::statusConsumerTooSlow,
                              QStringLiteral("this client read too slowly: more than %1 bytes beyond the current snapshot were "
                                             "waiting for it; closing")
                                  .arg(m_options.maxQueuedBytes))
                  + '\n');
    if (!retireClient(socket, true))
        return;
    qCWarning(lcStatusServer).noquote() << "status client disconnected:" << logReason;
    Q_EMIT clientDropped(logReason);
}

bool StatusServer::retireClient(QLocalSocket *socket, bool graceful, const QString &why)
{
    const auto it = m_clients.find(socket);
    if (it == m_clients.end())
        return false;
    const std::shared_ptr<Client> client = *it;
    m_clients.erase(it);
    // The timers may be the one emitting right now; never delete them synchronously.
    for (std::unique_ptr<ClockTimer> *timer : {&client->snapshotTimer, &client->helloTimer}) {
        (*timer)->stop();
        timer->release()->deleteLater();
    }
    socket->disconnect(this);
    if (client->refusals > 0)
        qCInfo(lcStatusServer).noquote() << "status client uid" << client->uid << (why.isEmpty() ? QStringLiteral("went away") : why)
                                         << QStringLiteral("(%1 messages refused, status-read-only; first: %2)")
                                                .arg(client->refusals)
                                                .arg(client->firstRefusal);
    else if (!why.isEmpty())
        qCInfo(lcStatusServer).noquote() << "status client uid" << client->uid << "closed:" << why;
    closeSocket(socket, graceful);
    return true;
}

void StatusServer::closeSocket(QLocalSocket *socket, bool graceful)
{
    ++m_closing;
    connect(socket, &QObject::destroyed, this, [this] { --m_closing; });
    if (!graceful || socket->state() == QLocalSocket::UnconnectedState) {
        // The peer is gone (no disconnected() will ever come) or nothing needs flushing.
        socket->abort();
        socket->deleteLater();
        return;
    }
    connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
    // A peer that never reads would keep the socket (and its queue) forever: bound the flush.
    ClockTimer *linger = m_clock.createTimer(socket).release(); // owned by the socket
    connect(linger, &ClockTimer::timeout, socket, [socket] {
        socket->abort();
        socket->deleteLater();
    });
    linger->start(m_options.closeLingerMs);
    // Lingering close (contract §18, D-111): closing an AF_UNIX socket with unread input makes the
    // peer's next write fail (EPIPE), and a Qt peer then aborts and loses the refusal lines it has not
    // read yet. So the queue is flushed, then only the sending half is shut down; input is read and
    // discarded until the peer closes (disconnected) or the linger above ends it.
    connect(socket, &QLocalSocket::readyRead, socket, [socket] { socket->readAll(); });
    const auto shutDownSendingHalf = [socket] {
        if (socket->bytesToWrite() == 0 && socket->state() == QLocalSocket::ConnectedState)
            ::shutdown(int(socket->socketDescriptor()), SHUT_WR);
    };
    connect(socket, &QLocalSocket::bytesWritten, socket, shutDownSendingHalf);
    socket->flush();
    shutDownSendingHalf();
    socket->readAll();
    if (socket->state() == QLocalSocket::UnconnectedState)
        socket->deleteLater();
}

} // namespace coreflow
