#include "service/vpn/vpnhandshaketimestamps.h"

#include <cstring>

namespace coreflow::vpn {

VpnHandshakeTimestamps::Verdict VpnHandshakeTimestamps::admit(const QByteArray &staticKey, QByteArrayView payload)
{
    if (payload.size() != kTimestampBytes)
        return Verdict::Malformed;
    auto it = m_greatest.find(staticKey);
    // Big-endian fields: byte order is numeric order, so memcmp compares the 96-bit values.
    if (it != m_greatest.end() && std::memcmp(payload.data(), it->constData(), kTimestampBytes) <= 0)
        return Verdict::NotNewer;
    if (it == m_greatest.end())
        m_greatest.insert(staticKey, payload.toByteArray());
    else
        std::memcpy(it->data(), payload.data(), kTimestampBytes);
    return Verdict::Accepted;
}

} // namespace coreflow::vpn
