#pragma once
// TlsHttpResponder: the ListenerHttpResponder of one request on a ListenerHttpConnection (docs/
// contract.md §17, D-53): the answer goes straight into the connection's TLS write queue. The
// connection tells it when queued bytes left (connectionWritten) and when the client is gone
// (connectionGone); after that it writes nothing and isConnected() is false.
#include "service/listener/listenerhttpresponder.h"

namespace coreflow {

class ListenerHttpConnection;

class TlsHttpResponder final : public ListenerHttpResponder {
public:
    explicit TlsHttpResponder(ListenerHttpConnection *connection) : m_connection(connection) {}
    ~TlsHttpResponder() override;

    void setObserver(Observer *observer) override { m_observer = observer; }
    bool isConnected() const override { return m_connection != nullptr; }
    void writeHead(int status, const QList<QPair<QByteArray, QByteArray>> &headers) override;
    void writeBody(QByteArrayView bytes) override;
    qint64 pendingBytes() const override;
    void finish() override;
    void abort() override;

    // From the connection.
    void connectionWritten();
    void connectionGone();

private:
    ListenerHttpConnection *m_connection;
    Observer *m_observer = nullptr;
    bool m_headWritten = false;
    bool m_over = false;
};

} // namespace coreflow
