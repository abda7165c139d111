#pragma once
// NoiseHandshakeFailure: why a Noise IK handshake message was not accepted (docs/contract.md §11.4).
// The hub answers member-unknown with the close code 0x100 and every other failure with 0x103
// (handshake-failed); in both cases nothing is sent back on the stream. The names are value-free:
// they never carry key material or message bytes.
#include <QString>

namespace coreflow::vpn {

enum class NoiseHandshakeFailure {
    MessageMalformed,      // wrong length for the pattern's tokens
    DhZero,                // a DH result was all zero (a small-order public key)
    DecryptFailed,         // an AEAD tag did not authenticate (wrong keys, altered bytes)
    MemberUnknown,         // the initiator's static key is no member of the held network
    WrongState,            // the message was offered out of turn (a second message 1, message 2 first)
};

// "message-malformed", "dh-zero", "decrypt-failed", "member-unknown", "wrong-state".
QString noiseHandshakeFailureName(NoiseHandshakeFailure failure);

} // namespace coreflow::vpn
