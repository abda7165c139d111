#pragma once
// AdmissionSeats: a count bound shared by a group of connections (docs/contract.md §3.4, D-59): the
// listener's unregistered WebSocket sessions hold one seat each from their upgrade until they
// register or end. take() fails when all seats are held; release() gives one back (never below 0).
#include <QtGlobal>

namespace coreflow {

class AdmissionSeats {
public:
    explicit AdmissionSeats(int limit) : m_limit(limit) {}
    bool take()
    {
        if (m_taken >= m_limit)
            return false;
        ++m_taken;
        return true;
    }
    void release() { m_taken = qMax(0, m_taken - 1); }
    int taken() const { return m_taken; }
    int limit() const { return m_limit; }

private:
    int m_limit;
    int m_taken = 0;
};

} // namespace coreflow
