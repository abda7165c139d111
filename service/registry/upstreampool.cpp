#include "upstreampool.h"

#include <QNetworkAccessManager>
#include <QNetworkRequest>

namespace coreflow {

UpstreamPool::UpstreamPool(const QSslConfiguration &tls, QObject *parent) : QObject(parent), m_tls(tls) {}

UpstreamPool::~UpstreamPool() = default;

QNetworkAccessManager *UpstreamPool::acquire()
{
    Slot *best = nullptr;
    for (Slot &s : m_slots) {
        if (!best || s.active < best->active)
            best = &s;
    }
    if ((!best || best->active >= kRequestsPerManager) && m_slots.size() < kMaxManagers) {
        auto *manager = new QNetworkAccessManager(this);
        manager->setRedirectPolicy(QNetworkRequest::ManualRedirectPolicy);
        manager->setAutoDeleteReplies(false);
        manager->setStrictTransportSecurityEnabled(false);
        m_slots.append({manager, 0});
        best = &m_slots.last();
    }
    ++best->active;
    return best->manager;
}

void UpstreamPool::release(QNetworkAccessManager *manager)
{
    for (Slot &s : m_slots) {
        if (s.manager == manager) {
            s.active = qMax(0, s.active - 1);
            return;
        }
    }
}

} // namespace coreflow
