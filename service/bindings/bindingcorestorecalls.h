#pragma once
// BindingCorestoreCalls: what the bindings lane needs of the Corestore lane (docs/contract.md §12.2,
// §15, §15.1): a POST to a node's Corestore control API with the §12 failure classes, and two facts of
// the cluster document the Corestore lane adopted (the node's corestoreDatabase and its Corestore
// host). CorestoreBindingCalls implements it on CorestoreClient; unit tests give a double.
#include "service/bindings/bindingrequest.h"
#include "service/corestore/corestorecalloutcome.h"
#include "shared/secret.h"

#include <QByteArray>
#include <QString>
#include <functional>
#include <optional>

namespace coreflow {

class BindingCorestoreCalls {
public:
    using Done = std::function<void(const CorestoreCallOutcome &outcome)>;
    virtual ~BindingCorestoreCalls() = default;
    // One POST of jsonBody (Content-Type application/json) to the node's endpoint + route. done() is
    // called exactly once. The caller wipes jsonBody after the call returns (it holds the grant's
    // authority); the implementation keeps no copy beyond the request it sends. An error.code the
    // Corestore answers that repeats withheld (the grant's authority, CS-49) is never quoted: the
    // refusal says "withheld" instead.
    virtual void post(const QString &nodeId, const QByteArray &route, const QByteArray &jsonBody, const Secret &withheld, Done done) = 0;
    // The node's corestoreDatabase { host, port } from the cluster document, when published (§4, CS-30).
    virtual std::optional<DatabaseEndpoint> databaseOf(const QString &nodeId) const = 0;
    // The host of the node's Corestore endpoint ("" when it publishes none): an object-storage
    // binding's networkAlias (§12.5, CS-48).
    virtual QString corestoreHostOf(const QString &nodeId) const = 0;
};

} // namespace coreflow
