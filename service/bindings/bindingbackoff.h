#pragma once
// BindingBackoff: the wait before a failed binding is tried again under the same grant (docs/contract.md
// §12.2; rules CS-21..CS-25): 5000 ms after the first failure, then doubling, capped at 300000 ms after
// a Corestore refusal (a 4xx other than 401/403/408/425/429, or the relay's own refusal of what
// Corestore answered) and at 60000 ms after any other failure. A new grant starts again at the first
// wait (and is tried at once). Pure arithmetic; the timer is the reconciler's, on the injected clock.

namespace coreflow {

class BindingBackoff {
public:
    static constexpr long long kFirstWaitMs = 5000;
    static constexpr long long kRefusalCapMs = 300000;
    static constexpr long long kFailureCapMs = 60000;

    // The wait after a failure, given the wait before it (0: none yet, the first failure).
    static long long nextWaitMs(long long previousWaitMs, bool refusal)
    {
        const long long cap = refusal ? kRefusalCapMs : kFailureCapMs;
        const long long next = previousWaitMs <= 0 ? kFirstWaitMs : previousWaitMs * 2;
        return next < cap ? next : cap;
    }
    // Whether an HTTP status Corestore answered is a refusal (the same request under the same grant
    // gets the same answer), CS-21.
    static bool isRefusalStatus(int status)
    {
        return status >= 400 && status < 500 && status != 401 && status != 403 && status != 408 && status != 425 && status != 429;
    }
};

} // namespace coreflow
