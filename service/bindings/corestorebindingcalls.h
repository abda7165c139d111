#pragma once
// CorestoreBindingCalls: BindingCorestoreCalls on the relay's CorestoreClient (docs/contract.md §12,
// §15): post() is CorestoreClient::post (endpoint judged first, the control credential, one 401/403
// re-read, the failure classes); the two facts come from the endpoints the client adopted.
#include "service/bindings/bindingcorestorecalls.h"

namespace coreflow {

class CorestoreClient;

class CorestoreBindingCalls final : public BindingCorestoreCalls {
public:
    explicit CorestoreBindingCalls(CorestoreClient &client) : m_client(client) {}
    void post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, const Secret &withheld, Done done) override;
    std::optional<DatabaseEndpoint> databaseOf(const QString &nodeId) const override;
    QString corestoreHostOf(const QString &nodeId) const override;

private:
    CorestoreClient &m_client;
};

} // namespace coreflow
