#include "service/backup/unreadableanswer.h"

#include "service/corestore/corestoreclient.h"
#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

Refusal UnreadableAnswer::refusal(const CorestoreClient &client, const QString &nodeId, const QByteArray &route,
                                  const QString &problem)
{
    const auto endpoint = client.endpointOf(nodeId);
    const QString path = QString::fromUtf8(endpoint ? endpoint->targetFor(route) : route);
    return Refusal{QString(refusal::corestoreUnreachable),
                   QStringLiteral("POST %1 on node %2: unreadable answer (%3)").arg(path, nodeId, problem)};
}

} // namespace coreflow
