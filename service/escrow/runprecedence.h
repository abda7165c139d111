#pragma once
// RunPrecedence: whether an incoming run may replace the run held for the same node (docs/contract.md
// §9.3; rules ES-13..ES-17). A pure function.
//
//   nothing held                                              -> replaces
//   different projection id, or same id and generation with
//   another digest                                            -> escrow-run-unordered (never guessed)
//   same id, later generation                                 -> replaces (ES-13)
//   same id, earlier generation                               -> escrow-run-stale (ES-14)
//   same projection, incoming holds nothing                   -> replaces: giving custody up only
//                                                                shortens what a detached node keeps (ES-16)
//   same projection, held holds nothing                       -> replaces
//   same projection, incoming last sequence lower             -> escrow-run-stale (ES-15)
//   same projection, incoming last sequence equal or higher   -> replaces (equal: the same top-up again)
#include "service/escrow/dnsleaserenewalrun.h"

#include <optional>

namespace coreflow {

class RunPrecedence {
public:
    // nullopt: incoming replaces held (or is simply held when held is null); else the named refusal.
    static std::optional<contract::Refusal> judge(const DnsLeaseRenewalRun *held, const DnsLeaseRenewalRun &incoming);
};

} // namespace coreflow
