#pragma once
// UpstreamPool: the relay's own outbound HTTPS client(s) to the registry (IP-01), separate from the
// Cloudly WebSocket session.
//
// Why a pool: Qt 6.4 runs at most 6 HTTP/1.1 requests per host in parallel per QNetworkAccessManager
// and queues the rest; a queued pull would wait behind slow clients for its response headers. HTTP/2
// would multiplex but Qt's HTTP/2 path ignores QNetworkReply::setReadBufferSize (no backpressure), so
// the pool uses HTTP/1.1 only and hands out a manager with a free slot, creating one (up to
// kMaxManagers) when all are busy; beyond that the least-loaded manager queues. Managers are kept for
// connection reuse (bounded by kMaxManagers).
//
// Every manager: no cookie jar use, no cache, no redirect following, no credential reuse, no
// automatic decompression (the caller sets Accept-Encoding itself), the given TLS configuration.
#include <QList>
#include <QObject>
#include <QSslConfiguration>

class QNetworkAccessManager;

namespace coreflow {

class UpstreamPool : public QObject {
    Q_OBJECT
public:
    static constexpr int kRequestsPerManager = 6;
    static constexpr int kMaxManagers = 64;

    UpstreamPool(const QSslConfiguration &tls, QObject *parent = nullptr);
    ~UpstreamPool() override;

    const QSslConfiguration &tlsConfiguration() const { return m_tls; }
    // A manager to issue one request on; pair every acquire() with one release().
    QNetworkAccessManager *acquire();
    void release(QNetworkAccessManager *manager);
    int managerCount() const { return int(m_slots.size()); }

private:
    struct Slot {
        QNetworkAccessManager *manager = nullptr;
        int active = 0;
    };
    QSslConfiguration m_tls;
    QList<Slot> m_slots;
};

} // namespace coreflow
