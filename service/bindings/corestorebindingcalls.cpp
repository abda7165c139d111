#include "service/bindings/corestorebindingcalls.h"

#include "service/corestore/corestoreclient.h"

namespace coreflow {

void CorestoreBindingCalls::post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, Done done)
{
    m_client.post(nodeId, route, jsonBody, std::move(done));
}

std::optional<DatabaseEndpoint> CorestoreBindingCalls::databaseOf(const QString &nodeId) const
{
    const auto database = m_client.databaseOf(nodeId);
    if (!database)
        return std::nullopt;
    return DatabaseEndpoint{database->first, database->second};
}

QString CorestoreBindingCalls::corestoreHostOf(const QString &nodeId) const
{
    const auto endpoint = m_client.endpointOf(nodeId);
    return endpoint ? endpoint->url().host() : QString();
}

} // namespace coreflow
