#pragma once
// ClusterConfigPush: reads a pushClusterConfig request (docs/contract.md §7.1) and composes its
// answer. Pure functions, no state.
//
// Request { cluster: ClusterConfig, desiredState: PlatformDesiredState | null }: `cluster` through
// ClusterConfig::read, `desiredState` whole through PlatformDesiredState::read (§12.3), its grants'
// authorities given by the caller, who lifted them out of the request's text before it was parsed
// (PlatformDesiredState::takeAuthorities). Anything else: request-invalid naming the field.
#include "service/bindings/platformdesiredstate.h"
#include "shared/contract/result.h"
#include "shared/contract/types.h"

#include <QByteArray>
#include <QJsonObject>
#include <optional>

namespace coreflow {

class ClusterConfigPush {
public:
    struct Read {
        contract::ClusterConfig cluster;
        std::optional<PlatformDesiredState> desiredState; // nullopt: null, unchanged by this push
        int grants = 0;
    };
    static contract::Result<Read> read(const QJsonObject &request, const QList<Secret> &authorities = {});

    // "unchanged" | "changed-not-adopted" | "removed-not-adopted" | "added-not-adopted"
    static QString relayBlockWord(const std::optional<contract::ClusterRelayBlock> &held,
                                  const std::optional<contract::ClusterRelayBlock> &pushed);
    static QByteArray answer(int nodes, int corestoreEndpoints, int grants, const QString &relayBlock, bool reconciling);
};

} // namespace coreflow
