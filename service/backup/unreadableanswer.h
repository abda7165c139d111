#pragma once
// UnreadableAnswer: the refusal for a node Corestore's 2xx answer that a backup-lane reader refused
// (docs/contract.md §15 "Answers"):
//   CORESTORE_UNREACHABLE: POST <request target> on node <id>: unreadable answer (<problem>)
// where the request target is the node's endpoint path followed by the route (§15 "Paths").
#include "shared/contract/refusal.h"

#include <QByteArray>
#include <QString>

namespace coreflow {

class CorestoreClient;

class UnreadableAnswer {
public:
    static contract::Refusal refusal(const CorestoreClient &client, const QString &nodeId, const QByteArray &route,
                                     const QString &problem);
};

} // namespace coreflow
