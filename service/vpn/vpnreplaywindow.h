#pragma once
// VpnReplayWindow: which datagram counters of one receive key were already opened
// (docs/contract.md §11.5). A ring bitmap of 33 64-bit words in the manner of RFC 6479: the greatest
// authenticated counter and every one of the kVpnReplayWindowCounters (2048) counters below it are
// remembered; older counters are refused as too old.
//
// The caller checks before it authenticates and accepts only after the AEAD tag authenticated, so a
// forged datagram (any counter, bad tag) never moves the window. Memory: 272 bytes, fixed.
#include "service/vpn/vpnwireconstants.h"

#include <array>
#include <cstdint>

namespace coreflow::vpn {

class VpnReplayWindow {
public:
    enum class Verdict { Fresh, Replayed, TooOld };

    Verdict check(std::uint64_t counter) const;
    // Records an authenticated counter; a counter check() did not call Fresh changes nothing.
    void accept(std::uint64_t counter);
    // The greatest accepted counter (meaningful once hasAccepted()).
    bool hasAccepted() const { return m_hasAccepted; }
    std::uint64_t greatest() const { return m_greatest; }

private:
    static constexpr int kWordBits = 64;
    static constexpr int kWords = int(kVpnReplayWindowCounters / kWordBits) + 1;
    std::array<std::uint64_t, kWords> m_bits{};
    std::uint64_t m_greatest = 0;
    bool m_hasAccepted = false;
};

} // namespace coreflow::vpn
