#include "service/escrow/runprecedence.h"

#include "shared/contract/refusalnames.h"

namespace coreflow {

using namespace contract;

std::optional<Refusal> RunPrecedence::judge(const DnsLeaseRenewalRun *held, const DnsLeaseRenewalRun &incoming)
{
    if (!held)
        return std::nullopt;
    const ProjectionReference &h = held->projection();
    const ProjectionReference &in = incoming.projection();
    if (in.id != h.id || (in.generation == h.generation && in.digest != h.digest))
        return Refusal{QString(refusal::escrowRunUnordered),
                       QStringLiteral("projection %1 cannot be ordered against the held %2").arg(in.describe(), h.describe())};
    if (in.generation > h.generation)
        return std::nullopt;
    if (in.generation < h.generation)
        return Refusal{QString(refusal::escrowRunStale), QStringLiteral("projection %1 generation %2 is older than the held %3")
                                                             .arg(in.id)
                                                             .arg(in.generation)
                                                             .arg(h.generation)};
    if (incoming.isEmpty() || held->isEmpty())
        return std::nullopt;
    if (incoming.lastSequence() < held->lastSequence())
        return Refusal{QString(refusal::escrowRunStale),
                       QStringLiteral("run ends at sequence %1, the held run at %2").arg(incoming.lastSequence()).arg(held->lastSequence())};
    return std::nullopt;
}

} // namespace coreflow
