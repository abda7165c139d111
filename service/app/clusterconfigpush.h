#pragma once
// ClusterConfigPush: reads a pushClusterConfig request (docs/contract.md §7.1) and composes its
// answer. Pure functions, no state.
//
// Request { cluster: ClusterConfig, desiredState: PlatformDesiredState | null }: `cluster` through
// ClusterConfig::read; `desiredState`, until the bindings lane reads it whole, as null or
// { bindings: [ { nodeId: string | null, binding: object, grant: object | null } ] } with exact keys
// to that depth, of which only the grants are counted. Anything else: request-invalid naming the field.
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
        int grants = 0;
    };
    static contract::Result<Read> read(const QJsonObject &request);

    // "unchanged" | "changed-not-adopted" | "removed-not-adopted" | "added-not-adopted"
    static QString relayBlockWord(const std::optional<contract::ClusterRelayBlock> &held,
                                  const std::optional<contract::ClusterRelayBlock> &pushed);
    static QByteArray answer(int nodes, int corestoreEndpoints, int grants, const QString &relayBlock, bool reconciling);
};

} // namespace coreflow
