#pragma once
// NoiseIkCompletion: what NoiseIkInitiator produced from the responder's message 2
// (docs/contract.md §11.4): message 2's payload and the initiator's transport keys.
#include "service/vpn/vpntransportkeys.h"

#include <QByteArray>

namespace coreflow::vpn {

struct NoiseIkCompletion {
    QByteArray responderPayload;   // empty in the VPN protocol
    VpnTransportKeys keys;         // sendKey = Split()'s first output, receiveKey = its second
};

} // namespace coreflow::vpn
