#include "service/vpn/vpnrekeyclock.h"

#include "service/vpn/vpnwireconstants.h"

namespace coreflow::vpn {

VpnRekeyClock::VpnRekeyClock(const Clock &clock)
    : m_clock(clock)
    , m_establishedAtMs(clock.nowMs())
{
}

qint64 VpnRekeyClock::ageMs() const
{
    return m_clock.nowMs() - m_establishedAtMs;
}

bool VpnRekeyClock::rekeyDue(std::uint64_t messagesSealed) const
{
    return ageMs() >= kVpnRekeyAfterMs || messagesSealed >= kVpnRekeyAfterMessages;
}

bool VpnRekeyClock::expired() const
{
    return ageMs() >= kVpnRejectAfterMs;
}

qint64 VpnRekeyClock::rekeyAtMs() const
{
    return m_establishedAtMs + kVpnRekeyAfterMs;
}

qint64 VpnRekeyClock::rejectAtMs() const
{
    return m_establishedAtMs + kVpnRejectAfterMs;
}

} // namespace coreflow::vpn
