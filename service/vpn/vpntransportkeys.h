#pragma once
// VpnTransportKeys: what a completed Noise IK handshake hands the data plane (docs/contract.md §11.5):
// Noise's Split() seen from one side. The initiator seals with the first HKDF output and opens with
// the second; the responder the other way round. handshakeHash is Noise's h after the last message
// (public: it identifies the session and is what the test vectors pin).
#include "shared/secret.h"

#include <QByteArray>

namespace coreflow::vpn {

struct VpnTransportKeys {
    Secret sendKey;          // 32 bytes: seals what this side sends
    Secret receiveKey;       // 32 bytes: opens what this side receives
    QByteArray handshakeHash; // 32 bytes
};

} // namespace coreflow::vpn
