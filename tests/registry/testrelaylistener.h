#pragma once
// TestRelayListener: a stand-in for the relay's TLS listener in the registry tests. A
// QAbstractHttpServer with the test certificate: a WebSocket upgrade at "/" is accepted and echoed
// (text and binary), every other request is handed to the ListenerHttpHandler through
// makeResponder(), exactly as the relay listener does.
#include <QAbstractHttpServer>
#include <QList>
#include <QSslCertificate>
#include <QSslKey>
#include <memory>

class QWebSocket;

namespace coreflow {
class ListenerHttpHandler;
}

namespace coreflow::test {

class TestRelayListener : public QAbstractHttpServer {
    Q_OBJECT
public:
    // Listens on 127.0.0.1 at an ephemeral port at once; requests before setHandler() get no answer.
    TestRelayListener(const QSslCertificate &certificate, const QSslKey &key, QObject *parent = nullptr);
    void setHandler(ListenerHttpHandler *handler) { m_handler = handler; }
    ~TestRelayListener() override;
    quint16 port() const { return m_port; }
    int webSocketCount() const { return int(m_webSockets.size()); }

protected:
    bool handleRequest(const QHttpServerRequest &request, QTcpSocket *socket) override;
    void missingHandler(const QHttpServerRequest &request, QTcpSocket *socket) override;

private:
    void acceptWebSockets();
    ListenerHttpHandler *m_handler = nullptr;
    quint16 m_port = 0;
    std::vector<std::unique_ptr<QWebSocket>> m_webSockets;
};

} // namespace coreflow::test
