#include "service/vpn/noiseikresponder.h"

#include "service/vpn/noiseprimitives.h"
#include "service/vpn/noisesymmetricstate.h"
#include "service/vpn/vpnwireconstants.h"

namespace coreflow::vpn {

namespace {
// e (32) + encrypted s (32 + 16) + an empty payload's tag (16).
constexpr int kMessage1MinimumBytes = noise::kDhLength + noise::kDhLength + 2 * noise::kTagLength;
}

NoiseIkResponder::NoiseIkResponder(NoiseKeyPair staticKeys, QByteArrayView prologue, EphemeralSource ephemeral)
    : m_static(std::move(staticKeys))
    , m_prologue(prologue.toByteArray())
    , m_ephemeral(ephemeral ? std::move(ephemeral) : EphemeralSource(&NoiseKeyPair::generate))
{
}

NoiseOutcome<NoiseIkResponse> NoiseIkResponder::respond(QByteArrayView message1, const MembershipCheck &isMember,
                                                        QByteArrayView responderPayload) const
{
    if (message1.size() < kMessage1MinimumBytes || !m_static.isValid())
        return NoiseHandshakeFailure::MessageMalformed;

    NoiseSymmetricState state(kNoiseProtocolName);
    state.mixHash(m_prologue);
    state.mixHash(m_static.publicKey);   // the pre-message "<- s"

    // -> e
    const QByteArray remoteEphemeral = message1.first(noise::kDhLength).toByteArray();
    state.mixHash(remoteEphemeral);
    // -> es
    auto es = noise::x25519(m_static.privateKey, remoteEphemeral);
    if (!es)
        return NoiseHandshakeFailure::DhZero;
    state.mixKey(es->reveal());
    // -> s
    QByteArray remoteStatic;
    if (!state.decryptAndHash(message1.sliced(noise::kDhLength, noise::kDhLength + noise::kTagLength), remoteStatic))
        return NoiseHandshakeFailure::DecryptFailed;
    // -> ss
    auto ss = noise::x25519(m_static.privateKey, remoteStatic);
    if (!ss)
        return NoiseHandshakeFailure::DhZero;
    state.mixKey(ss->reveal());
    // payload: authenticates ss, so the initiator has proven its static private key here.
    NoiseIkResponse response;
    if (!state.decryptAndHash(message1.sliced(2 * noise::kDhLength + noise::kTagLength), response.initiatorPayload))
        return NoiseHandshakeFailure::DecryptFailed;

    std::optional<VpnMemberRef> member = isMember ? isMember(remoteStatic) : std::nullopt;
    if (!member)
        return NoiseHandshakeFailure::MemberUnknown;

    // <- e
    const NoiseKeyPair ephemeral = m_ephemeral();
    if (!ephemeral.isValid())
        return NoiseHandshakeFailure::MessageMalformed;
    response.message2 = ephemeral.publicKey;
    state.mixHash(ephemeral.publicKey);
    // <- ee
    auto ee = noise::x25519(ephemeral.privateKey, remoteEphemeral);
    if (!ee)
        return NoiseHandshakeFailure::DhZero;
    state.mixKey(ee->reveal());
    // <- se
    auto se = noise::x25519(ephemeral.privateKey, remoteStatic);
    if (!se)
        return NoiseHandshakeFailure::DhZero;
    state.mixKey(se->reveal());
    QByteArray sealedPayload;
    state.encryptAndHash(responderPayload, sealedPayload);
    response.message2.append(sealedPayload);

    auto keys = state.split();
    response.keys.receiveKey = std::move(keys[0]);
    response.keys.sendKey = std::move(keys[1]);
    response.keys.handshakeHash = state.handshakeHash();
    response.initiatorStaticKey = remoteStatic;
    response.member = std::move(*member);
    return response;
}

} // namespace coreflow::vpn
