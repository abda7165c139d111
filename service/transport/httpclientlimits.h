#pragma once
// HttpClientLimits: the bounds of one HttpClientPool, supplied by the lane that owns the pool (the
// registry lane: RegistryProxy::kUpstreamLimits, docs/contract.md §17). No defaults: every lane
// states its own.
#include <QtGlobal>

namespace coreflow {

struct HttpClientLimits {
    int maxConnections;         // open or opening connections to the origin, idle ones included
    int maxIdleConnections;     // kept-alive idle connections at most (more are closed)
    int idleTimeoutMs;          // an idle connection is closed after this long (ms, on the pool's Clock)
    qsizetype maxHeaderLines;   // header lines of one answer at most; past it HeadersTooLarge
};

} // namespace coreflow
