#pragma once
// NoiseIkResponder: the hub's side of Noise_IK_25519_ChaChaPoly_BLAKE2s (Noise spec rev 34, pattern
// IK: "<- s ... -> e, es, s, ss  <- e, ee, se"), docs/contract.md §11.4.
//
// One responder per hub, holding the hub's static key pair (generated at bind, VH-18). respond()
// takes one message 1 (unframed), authenticates it completely (both AEAD tags, so a sender must hold
// the static private key it names) and only then asks the membership check about the initiator's
// static public key; it returns message 2, the member and the transport keys, or a failure:
//   message-malformed (message 1 shorter than 96 bytes), dh-zero, decrypt-failed, member-unknown.
// The payload (the hub's 12-byte timestamp, §11.4) is returned for the hub to judge.
// A failure leaves nothing behind and costs its sender only: the hub closes that connection
// (0x100 member-unknown, else 0x103) and answers nothing on the stream. Every call is independent:
// a rekey is a new message 1 on a new stream.
#include "service/vpn/noiseikresponse.h"
#include "service/vpn/noisekeypair.h"
#include "service/vpn/noiseoutcome.h"

#include <QByteArray>
#include <QByteArrayView>
#include <functional>
#include <optional>

namespace coreflow::vpn {

class NoiseIkResponder {
public:
    using MembershipCheck = std::function<std::optional<VpnMemberRef>(const QByteArray &initiatorStaticKey)>;
    // Where each message 2's ephemeral pair comes from; empty: NoiseKeyPair::generate (tests pass the
    // published vectors' fixed ephemerals).
    using EphemeralSource = std::function<NoiseKeyPair()>;

    NoiseIkResponder(NoiseKeyPair staticKeys, QByteArrayView prologue, EphemeralSource ephemeral = {});

    // The hub's static public key (32 bytes), what relay.vpnHub.publicKey carries in base64.
    const QByteArray &publicKey() const { return m_static.publicKey; }

    NoiseOutcome<NoiseIkResponse> respond(QByteArrayView message1, const MembershipCheck &isMember,
                                          QByteArrayView responderPayload = {}) const;

private:
    NoiseKeyPair m_static;
    QByteArray m_prologue;
    EphemeralSource m_ephemeral;
};

} // namespace coreflow::vpn
