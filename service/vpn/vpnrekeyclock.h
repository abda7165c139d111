#pragma once
// VpnRekeyClock: the age rules of one pair of transport keys, on the injected clock
// (docs/contract.md §11.6, WireGuard's timers): the member starts a new handshake once its keys are
// kVpnRekeyAfterMs (120000 ms) old or have sealed kVpnRekeyAfterMessages (2^60) datagrams; keys
// kVpnRejectAfterMs (180000 ms) old seal and open nothing (the hub closes a member still on them with
// 0x104 rekey-required). The age starts when the handshake that made the keys completed.
#include "shared/util/clock.h"

#include <cstdint>

namespace coreflow::vpn {

class VpnRekeyClock {
public:
    // The keys are born now (clock.nowMs()); clock must outlive this object.
    explicit VpnRekeyClock(const Clock &clock);

    qint64 establishedAtMs() const { return m_establishedAtMs; }
    qint64 ageMs() const;
    // True once a new handshake is due: age >= 120000 ms or messagesSealed >= 2^60.
    bool rekeyDue(std::uint64_t messagesSealed) const;
    // True once the keys must not be used any more: age >= 180000 ms.
    bool expired() const;
    // The clock time (ms) at which rekeyDue() turns true by age, and at which expired() does.
    qint64 rekeyAtMs() const;
    qint64 rejectAtMs() const;

private:
    const Clock &m_clock;
    qint64 m_establishedAtMs;
};

} // namespace coreflow::vpn
