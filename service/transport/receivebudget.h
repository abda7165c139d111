#pragma once
// ReceiveBudget: one bound on the bytes all node sessions of a listener hold for frames and messages
// not yet complete (docs/contract.md §3, D-53). A single session may hold up to one maximal message
// (16 MiB) while it arrives; without a shared bound, many connections each dripping most of a
// maximal frame would hold that much each, registered or not. Sessions charge what their decoder
// buffers and release it as messages complete or the session ends; a session whose growth would
// take the total past the limit is closed (1008, "relay-receive-budget").
#include <QtGlobal>

namespace coreflow {

class ReceiveBudget {
public:
    explicit ReceiveBudget(qint64 limitBytes) : m_limit(limitBytes) {}
    // Applies a change of one session's buffered bytes; false when growth would pass the limit
    // (the change is then not applied).
    bool adjust(qint64 delta)
    {
        if (delta > 0 && m_used + delta > m_limit)
            return false;
        m_used += delta;
        return true;
    }
    qint64 used() const { return m_used; }
    qint64 limit() const { return m_limit; }

private:
    qint64 m_limit;
    qint64 m_used = 0;
};

} // namespace coreflow
