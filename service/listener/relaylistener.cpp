#include "service/listener/relaylistener.h"

#include "service/core/logging.h"
#include "shared/contract/refusalnames.h"
#include "service/listener/listenerhandshake.h"
#include "service/transport/sockethandoffserver.h"
#include "service/transport/tlsservercontext.h"

#include <QHostInfo>

#include <csignal>
#include <unistd.h>

namespace coreflow {

RelayListener::RelayListener(QObject *parent) : QObject(parent) {}

RelayListener::~RelayListener() = default;

std::optional<contract::Refusal> RelayListener::listen(const QString &hostname, quint16 port, const QSslConfiguration &tls)
{
    auto failed = [&](const QString &why) {
        return contract::Refusal{QString(contract::refusal::listenerBindFailed),
                                 QStringLiteral("cannot listen on %1:%2: %3").arg(hostname).arg(port).arg(why)};
    };
    // OpenSSL writes to the node sockets with write(), which raises SIGPIPE when a node has gone;
    // the process must see EPIPE instead. Only a default disposition is changed.
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
        std::signal(SIGPIPE, SIG_IGN);
    auto context = TlsServerContext::create(tls);
    if (!context.ok())
        return failed(context.refusal().reason);
    QHostAddress address(hostname);
    if (address.isNull()) {
        const QHostInfo info = QHostInfo::fromName(hostname);
        if (info.error() != QHostInfo::NoError || info.addresses().isEmpty())
            return failed(QStringLiteral("the name does not resolve"));
        address = info.addresses().first();
    }
    auto *server = new SocketHandoffServer(this);
    if (!server->listen(address, port)) {
        const QString why = server->errorString();
        delete server;
        return failed(why);
    }
    connect(server, &SocketHandoffServer::descriptorAccepted, this, &RelayListener::onDescriptor);
    m_tls = context.value();
    m_server = server;
    m_boundAddress = hostname;
    m_boundPort = server->serverPort();
    qCInfo(logListener).noquote() << "listening on" << QStringLiteral("%1:%2").arg(hostname).arg(m_boundPort);
    return std::nullopt;
}

qint64 RelayListener::droppedAtDescriptorLimit() const { return m_server ? m_server->droppedAtDescriptorLimit() : 0; }

void RelayListener::onDescriptor(int descriptor)
{
    if (m_pendingHandshakes.size() >= m_maxPendingHandshakes) {
        // The oldest pending connection makes room (§3.4, D-110): strangers holding every seat with
        // connections that never finish cannot shut a node out. One log line per doubling of the count.
        ListenerHandshake *oldest = m_pendingHandshakes.takeFirst();
        oldest->drop();
        if (const qint64 n = ++m_droppedHandshakes; (n & (n - 1)) == 0)
            qCWarning(logListener) << "oldest pending connection dropped:" << m_maxPendingHandshakes << "handshakes pending;" << n
                                   << "dropped so far";
    }
    SSL *ssl = m_tls ? m_tls->newConnection(descriptor) : nullptr;
    if (!ssl) {
        ::close(descriptor);
        qCWarning(logListener) << "connection dropped: no TLS state could be made for it";
        return;
    }
    auto *connection = new TlsConnection(descriptor, ssl);
    // The first request is read with the HTTP handler's line bound: a block crossing it goes to the
    // HTTP loop at once, which refuses it by the handler's name (docs/contract.md §17, D-60).
    const qsizetype maxHeadLines = m_httpSide.handler ? m_httpSide.handler->headerLineBound().maxLines : -1;
    auto *handshake = new ListenerHandshake(connection, *m_clock, maxHeadLines, m_httpSide.refusalLog, this);
    m_pendingHandshakes.append(handshake);
    // Compares the address only: the object is being destroyed.
    connect(handshake, &QObject::destroyed, this, [this, handshake] { m_pendingHandshakes.removeOne(handshake); });
    connect(handshake, &ListenerHandshake::upgraded, this, [this](TlsConnection *tls, const QByteArray &rest) {
        auto *session = new WebSocketSession(tls, rest, kUnregisteredMaxMessageBytes, WebSocketFrameDecoder::Role::Server,
                                             m_unregisteredBudget);
        session->setPromotion(kMaxMessageBytes, m_receiveBudget); // taken when its registration is accepted (§3.4)
        if (!m_unregisteredSeats->take()) {
            // The oldest unregistered session makes room (§3.4, D-110); the newcomer is refused only
            // when every holder's first registration is with Cloudly.
            const bool unseated = unseatOldestSession();
            if (const qint64 n = ++m_refusedSessions; (n & (n - 1)) == 0)
                qCWarning(logListener) << (unseated ? "oldest unregistered session closed:" : "session refused:")
                                       << m_unregisteredSeats->limit() << "unregistered sessions open;" << n << "so far";
            if (!unseated || !m_unregisteredSeats->take()) {
                session->close(1013, QByteArrayView(contract::refusal::unregisteredSessionsFull.data(),
                                                    contract::refusal::unregisteredSessionsFull.size()));
                session->releaseWhenClosed();
                return;
            }
        }
        session->holdSeat(m_unregisteredSeats);
        // Bounded: entries that ended or registered are dropped once the list is twice the bound.
        if (m_seatHolders.size() >= 2 * qMax(1, m_unregisteredSeats->limit()))
            m_seatHolders.removeIf([](const QPointer<WebSocketSession> &held) { return !held || !held->holdsSeat(); });
        m_seatHolders.append(QPointer<WebSocketSession>(session));
        session->startKeepalive(m_keepalive); // every node and ingress session (§3.3)
        Q_EMIT nodeSessionAccepted(session);
    });
    connect(handshake, &ListenerHandshake::httpRequest, this, [this](TlsConnection *tls, const QByteArray &bytes) {
        new ListenerHttpConnection(tls, bytes, m_httpSide, this);
    });
}

bool RelayListener::unseatOldestSession()
{
    for (qsizetype i = 0; i < m_seatHolders.size();) {
        WebSocketSession *held = m_seatHolders.at(i).data();
        if (!held || !held->holdsSeat()) {
            m_seatHolders.removeAt(i); // ended or registered since
            continue;
        }
        if (held->isSeatShielded()) {
            ++i; // its first registration is with Cloudly (D-110)
            continue;
        }
        m_seatHolders.removeAt(i);
        held->yieldSeat();
        held->close(1013, QByteArrayView(contract::refusal::unregisteredSessionsFull.data(),
                                         contract::refusal::unregisteredSessionsFull.size()));
        return true;
    }
    return false;
}

void RelayListener::close()
{
    if (m_server) {
        m_server->close();
        m_server->deleteLater();
        m_server = nullptr;
        qCInfo(logListener) << "listener closed";
    }
}

bool RelayListener::isListening() const { return m_server && m_server->isListening(); }

} // namespace coreflow
