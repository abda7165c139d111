#include "service/bindings/corestorebindingcalls.h"

#include "service/corestore/corestoreclient.h"

#include <algorithm>

namespace coreflow {

namespace {
// A window this long of the withheld secret inside a quoted code counts as a repeat of it.
constexpr qsizetype kWithheldWindowBytes = 12;

bool repeats(QByteArrayView code, QByteArrayView secret)
{
    if (secret.isEmpty() || code.isEmpty())
        return false;
    if (code.contains(secret))
        return true;
    const qsizetype window = std::min(kWithheldWindowBytes, secret.size());
    for (qsizetype i = 0; i + window <= code.size(); ++i)
        if (secret.contains(code.sliced(i, window)))
            return true;
    return false;
}
} // namespace

void CorestoreBindingCalls::post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, const Secret &withheld,
                                 Done done)
{
    CorestoreClient::Options options;
    // CS-49: the grant's authority is Secret-like; a Corestore echoing it as error.code is not quoted.
    options.withholds = [withheld](QStringView code) { return repeats(code.toUtf8(), withheld.reveal()); };
    m_client.post(nodeId, route, jsonBody, options, std::move(done));
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
