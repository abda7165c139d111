#pragma once
// NoiseIkResponse: what the hub's NoiseIkResponder produced from an accepted message 1
// (docs/contract.md §11.4): message 2 to send on the same stream, the member the initiator's static
// key belongs to, and the responder's transport keys.
#include "service/vpn/vpnmemberref.h"
#include "service/vpn/vpntransportkeys.h"

#include <QByteArray>

namespace coreflow::vpn {

struct NoiseIkResponse {
    QByteArray message2;             // unframed (the hub adds the u16 length)
    QByteArray initiatorPayload;     // message 1's payload (empty in the VPN protocol)
    QByteArray initiatorStaticKey;   // 32 bytes, public
    VpnMemberRef member;
    VpnTransportKeys keys;           // sendKey = Split()'s second output, receiveKey = its first
};

} // namespace coreflow::vpn
