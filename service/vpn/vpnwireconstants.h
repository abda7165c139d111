#pragma once
// The node-facing VPN wire protocol's constants (docs/contract.md §11.3..§11.6): QUIC ALPN, the Noise
// protocol name and prologue, the data plane's timers and limits, the application close codes.
// Both the hub's transport (VpnQuicServer) and its cryptography (NoiseIkResponder, VpnDatagramSealer,
// VpnDatagramOpener) read them from here; the test peers spell them on their own, from the contract.
#include <QByteArrayView>
#include <cstdint>

namespace coreflow::vpn {

// §11.3: TLS 1.3 ALPN of the hub's QUIC listener.
inline constexpr QByteArrayView kVpnAlpn = "coreflow-vpn/1";
// §11.3: transport parameter max_datagram_frame_size (RFC 9221), both sides, bytes.
inline constexpr std::uint64_t kVpnMaxDatagramFrameSize = 65535;
// §11.4: the handshake pattern and its prologue (the ASCII of the ALPN).
inline constexpr QByteArrayView kNoiseProtocolName = "Noise_IK_25519_ChaChaPoly_BLAKE2s";
inline constexpr QByteArrayView kVpnNoisePrologue = "coreflow-vpn/1";
// §11.4: each handshake message on its stream is a u16 big-endian length, then that many bytes.
inline constexpr int kVpnHandshakeLengthPrefixBytes = 2;

// §11.5: a datagram is an 8-byte big-endian counter, then the AEAD ciphertext (packet + 16-byte tag).
inline constexpr int kVpnDatagramCounterBytes = 8;
inline constexpr int kVpnDatagramTagBytes = 16;
inline constexpr int kVpnDatagramOverheadBytes = kVpnDatagramCounterBytes + kVpnDatagramTagBytes;
// §11.5: counters accepted behind the greatest authenticated one (the replay window), counters.
inline constexpr std::uint64_t kVpnReplayWindowCounters = 2048;

// §11.6, WireGuard's timers: the member starts a new handshake once its keys are this old (ms) or
// have sealed this many messages; keys older than kVpnRejectAfterMs seal and open nothing.
inline constexpr qint64 kVpnRekeyAfterMs = 120'000;
inline constexpr qint64 kVpnRejectAfterMs = 180'000;
inline constexpr std::uint64_t kVpnRekeyAfterMessages = std::uint64_t(1) << 60;
// The first counter that is never used (WireGuard's REJECT_AFTER_MESSAGES, 2^64 - 2^13 - 1): far
// below Noise's reserved nonce 2^64 - 1.
inline constexpr std::uint64_t kVpnRejectAfterMessages = ~std::uint64_t(0) - (std::uint64_t(1) << 13);

// §11.7: QUIC CONNECTION_CLOSE application error codes.
inline constexpr std::uint64_t kVpnCloseMemberUnknown = 0x100;
inline constexpr std::uint64_t kVpnCloseMemberWithdrawn = 0x101;
inline constexpr std::uint64_t kVpnCloseMemberExpired = 0x102;
inline constexpr std::uint64_t kVpnCloseHandshakeFailed = 0x103;
inline constexpr std::uint64_t kVpnCloseRekeyRequired = 0x104;
inline constexpr std::uint64_t kVpnCloseHandshakeReplayed = 0x105;

} // namespace coreflow::vpn
