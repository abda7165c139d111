#pragma once
// CorestoreInventory: the two Corestore inventories Cloudly reads through the relay, served on the
// Cloudly-facing MethodTable (docs/contract.md §12.6, §12.7; CS-56..CS-62).
//
//   getClusterCorestoreInventory { nodeId }        -> GET /control/inventory
//   getClusterCorestoreLegacyResources { nodeId }  -> GET /control/legacy-resources
//
// Answer when Corestore answered a shape the readers accept (CorestoreAnswerReader):
//   { nodeId, checkedAt, reachable: true, services: <Corestore's bytes, spliced verbatim> }
// otherwise, always an answer and never a refusal:
//   { nodeId, checkedAt, reachable: false, code: "CORESTORE_ENDPOINT_UNKNOWN" | "CORESTORE_UNREACHABLE",
//     reason: <the refusal line> }   — listing nothing. A credential failure and a corestore-refused
// answer are CORESTORE_UNREACHABLE with their own line as reason; an unreadable 2xx is
// "CORESTORE_UNREACHABLE: GET <path> on node <id>: unreadable answer (<field>)".
// A request that is not { nodeId: non-empty string } is refused request-invalid.
// checkedAt: the Clock's ms when the answer was composed.
#include "service/core/methodtable.h"

#include <QObject>

namespace coreflow {

class Clock;
class CorestoreClient;

class CorestoreInventory : public QObject {
    Q_OBJECT
public:
    CorestoreInventory(CorestoreClient &client, MethodTable &cloudlyMethods, Clock &clock, QObject *parent = nullptr);
    ~CorestoreInventory() override;

    void attach();
    void detach();

private:
    void serve(const contract::Frame &frame, MethodTable::Reply reply, bool legacy);

    CorestoreClient &m_client;
    MethodTable &m_methods;
    Clock &m_clock;
    bool m_attached = false;
};

} // namespace coreflow
