#pragma once
// NamedRefusals: the one registrar for every method Cloudly may dispatch that this relay answers with a
// named refusal instead of a service (docs/contract.md §16; PF-01..PF-06,
// CS-83, OV-04, D-14, D-35).
//
// Two sets, registered on the Cloudly-facing MethodTable at construction (they answer on any relay,
// with or without a listener, from the first dispatch on) and removed at destruction:
//  - the retired Swarm reconciler methods (method::retiredSwarmMethods, §16.1):
//      error.text = "retired-swarm-method: <method> belonged to the retired Swarm reconciler
//                    (<capability>); <owner> owns it now"
//      error.data = { name: "retired-swarm-method", method, capability, owner }
//  - the pending relay functions (method::pendingFunctionMethods, §16.3):
//      error.text = "relay-function-pending: <function> is not built: <reason>"
//      error.data = { name: "relay-function-pending", function }
// Each is answered at once and never with silence or an empty result; request bodies are not read.
// The removed methods (method::removedMethods, §16.2: coreflowGetTrafficStats and the four node-tag
// Corestore methods) are deliberately not registered: they answer method-not-served like any unknown
// method. One log line per refused dispatch, naming the method and the refusal.
#include "service/core/methodtable.h"
#include "service/core/relaycounters.h"

#include <QJsonObject>
#include <QList>

namespace coreflow {

class NamedRefusals {
public:
    struct Entry {
        QString method;
        contract::Refusal refusal;  // name, reason line and the members of error.data beside name
    };

    NamedRefusals(MethodTable &cloudlyMethods, RelayCounters &counters);
    ~NamedRefusals();
    NamedRefusals(const NamedRefusals &) = delete;
    NamedRefusals &operator=(const NamedRefusals &) = delete;

    // The two sets, in the order of docs/contract.md §16.1 and §16.3.
    static QList<Entry> retiredSwarmEntries();
    static QList<Entry> pendingFunctionEntries();
    QStringList methods() const;

private:
    void add(const Entry &entry);

    MethodTable &m_methods;
    RelayCounters &m_counters;
    QStringList m_registered;
};

} // namespace coreflow
