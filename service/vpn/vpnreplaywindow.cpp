#include "service/vpn/vpnreplaywindow.h"

namespace coreflow::vpn {

VpnReplayWindow::Verdict VpnReplayWindow::check(std::uint64_t counter) const
{
    if (!m_hasAccepted || counter > m_greatest)
        return Verdict::Fresh;
    if (m_greatest - counter >= kVpnReplayWindowCounters)
        return Verdict::TooOld;
    const std::uint64_t word = (counter / kWordBits) % kWords;
    const std::uint64_t bit = std::uint64_t(1) << (counter % kWordBits);
    return (m_bits[word] & bit) ? Verdict::Replayed : Verdict::Fresh;
}

void VpnReplayWindow::accept(std::uint64_t counter)
{
    if (check(counter) != Verdict::Fresh)
        return;
    if (!m_hasAccepted || counter > m_greatest) {
        // Clear the words the window slides over (at most the whole ring).
        const std::uint64_t newWord = counter / kWordBits;
        std::uint64_t word = m_hasAccepted ? m_greatest / kWordBits + 1 : newWord;
        if (!m_hasAccepted)
            m_bits.fill(0);
        else if (newWord - (word - 1) > std::uint64_t(kWords))
            word = newWord - kWords + 1;
        for (; word <= newWord; ++word)
            m_bits[word % kWords] = 0;
        m_greatest = counter;
        m_hasAccepted = true;
    }
    m_bits[(counter / kWordBits) % kWords] |= std::uint64_t(1) << (counter % kWordBits);
}

} // namespace coreflow::vpn
