#include "service/namedrefusals/namedrefusals.h"

#include "service/core/logging.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

namespace {
struct Retired {
    QLatin1StringView method;
    const char *capability;
    const char *owner;
};

// docs/contract.md §16.1 (D-14): the retired capability and its new owner.
const Retired kRetired[] = {
    {method::getServices, "listing the cluster's Swarm services",
     "Cloudly (from Pallet's reportRuntimeAssignmentObservation)"},
    {method::updateServices, "reconciling Swarm services to the desired set",
     "Pallet (applyRuntimeAssignment, decided by Cloudly)"},
    {method::deleteService, "removing a Swarm service", "Pallet (an assignment Cloudly withdraws)"},
    {method::restartService, "restarting a Swarm service's tasks", "Pallet (a new assignment generation from Cloudly)"},
    {method::getServiceLogs, "reading a Swarm service's task logs", "Pallet on the node running the workload"},
    {method::getSwarmNodes, "listing Swarm nodes and their state", "Cloudly (node records, enrolled by Spark)"},
    {method::updateSwarmNetworks, "creating overlay networks", "Cloudly's network compiler and Pallet's runtime network"},
    {method::updateTrafficRoutes, "pushing routes to Coretraffic", "the cluster ingress (getClusterIngressRouteTable)"},
};

struct Pending {
    QLatin1StringView method;
    const char *function;
    const char *reason;
};

// docs/contract.md §16.3 (D-35): the pending function and why it is not built.
const Pending kPending[] = {
    {method::renewClusterRelayCertificate, "relay certificate renewal",
     "the listener's TLS material is fixed at start and a restart would drop every node socket; renewal needs live rotation first"},
    {method::replayClusterDesiredState, "desired-state cache and idempotent replay on reconnect",
     "the relay caches no desired state; Cloudly and the nodes own idempotency"},
    {method::delegateRuntimeNetworkSigning, "signing new network state during a Cloudly outage",
     "the relay holds no signing key; DNS continuity comes from renewals Cloudly signs ahead (holdRuntimeNetworkDnsLeaseRenewals)"},
    {method::getClusterRelayServedNodes, "served-node roster and readiness publication",
     "registerClusterRelay carries no roster and no contract has a place for one"},
};

static_assert(std::size(kRetired) == method::retiredSwarmMethods.size());
static_assert(std::size(kPending) == method::pendingFunctionMethods.size());
} // namespace

QList<NamedRefusals::Entry> NamedRefusals::retiredSwarmEntries()
{
    QList<Entry> out;
    for (const Retired &r : kRetired) {
        const QString method(r.method);
        const QString capability = QString::fromUtf8(r.capability);
        const QString owner = QString::fromUtf8(r.owner);
        out.append(Entry{method,
                         Refusal{QString(refusal::retiredSwarmMethod),
                                 QStringLiteral("%1 belonged to the retired Swarm reconciler (%2); %3 owns it now").arg(method, capability, owner),
                                 QJsonObject{{QStringLiteral("method"), method},
                                             {QStringLiteral("capability"), capability},
                                             {QStringLiteral("owner"), owner}}}});
    }
    return out;
}

QList<NamedRefusals::Entry> NamedRefusals::pendingFunctionEntries()
{
    QList<Entry> out;
    for (const Pending &p : kPending) {
        const QString function = QString::fromUtf8(p.function);
        out.append(Entry{QString(p.method),
                         Refusal{QString(refusal::relayFunctionPending),
                                 QStringLiteral("%1 is not built: %2").arg(function, QString::fromUtf8(p.reason)),
                                 QJsonObject{{QStringLiteral("function"), function}}}});
    }
    return out;
}

NamedRefusals::NamedRefusals(MethodTable &cloudlyMethods, RelayCounters &counters)
    : m_methods(cloudlyMethods), m_counters(counters)
{
    for (const Entry &entry : retiredSwarmEntries())
        add(entry);
    for (const Entry &entry : pendingFunctionEntries())
        add(entry);
}

NamedRefusals::~NamedRefusals()
{
    for (const QString &method : std::as_const(m_registered))
        m_methods.remove(method);
}

QStringList NamedRefusals::methods() const { return m_registered; }

void NamedRefusals::add(const Entry &entry)
{
    const Refusal refusal = entry.refusal;
    m_methods.add(entry.method, [this, refusal](const Frame &frame, const Caller &, MethodTable::Reply reply) {
        m_counters.countRefusal(refusal.name);
        qCInfo(logApp).noquote() << "answered" << frame.method << "from Cloudly with" << refusal.name;
        reply(MethodTable::refusalFor(frame, refusal));
    });
    m_registered.append(entry.method);
}

} // namespace coreflow
