#include "service/vpn/noiseikinitiator.h"

#include "service/vpn/noiseprimitives.h"
#include "service/vpn/vpnwireconstants.h"

namespace coreflow::vpn {

NoiseIkInitiator::NoiseIkInitiator(NoiseKeyPair staticKeys, QByteArray responderStaticKey, QByteArrayView prologue,
                                   EphemeralSource ephemeral)
    : m_static(std::move(staticKeys))
    , m_responderStatic(std::move(responderStaticKey))
    , m_ephemeral(ephemeral ? std::move(ephemeral) : EphemeralSource(&NoiseKeyPair::generate))
    , m_state(kNoiseProtocolName)
{
    m_state.mixHash(prologue);
    m_state.mixHash(m_responderStatic);   // the pre-message "<- s"
}

NoiseOutcome<QByteArray> NoiseIkInitiator::writeMessage1(QByteArrayView payload)
{
    if (m_step != Step::WriteMessage1)
        return NoiseHandshakeFailure::WrongState;
    m_step = Step::Done;   // a failure below ends this handshake
    if (!m_static.isValid() || m_responderStatic.size() != noise::kDhLength)
        return NoiseHandshakeFailure::MessageMalformed;
    m_ephemeralKeys = m_ephemeral();
    if (!m_ephemeralKeys.isValid())
        return NoiseHandshakeFailure::MessageMalformed;
    // -> e
    QByteArray message = m_ephemeralKeys.publicKey;
    m_state.mixHash(m_ephemeralKeys.publicKey);
    // -> es
    auto es = noise::x25519(m_ephemeralKeys.privateKey, m_responderStatic);
    if (!es)
        return NoiseHandshakeFailure::DhZero;
    m_state.mixKey(es->reveal());
    // -> s
    QByteArray sealed;
    m_state.encryptAndHash(m_static.publicKey, sealed);
    message.append(sealed);
    // -> ss
    auto ss = noise::x25519(m_static.privateKey, m_responderStatic);
    if (!ss)
        return NoiseHandshakeFailure::DhZero;
    m_state.mixKey(ss->reveal());
    m_state.encryptAndHash(payload, sealed);
    message.append(sealed);
    m_step = Step::ReadMessage2;
    return message;
}

NoiseOutcome<NoiseIkCompletion> NoiseIkInitiator::readMessage2(QByteArrayView message2)
{
    if (m_step != Step::ReadMessage2)
        return NoiseHandshakeFailure::WrongState;
    m_step = Step::Done;
    const NoiseKeyPair ephemeral = std::move(m_ephemeralKeys);
    m_ephemeralKeys = {};
    if (message2.size() < noise::kDhLength + noise::kTagLength)
        return NoiseHandshakeFailure::MessageMalformed;
    // <- e
    const QByteArray remoteEphemeral = message2.first(noise::kDhLength).toByteArray();
    m_state.mixHash(remoteEphemeral);
    // <- ee
    auto ee = noise::x25519(ephemeral.privateKey, remoteEphemeral);
    if (!ee)
        return NoiseHandshakeFailure::DhZero;
    m_state.mixKey(ee->reveal());
    // <- se
    auto se = noise::x25519(m_static.privateKey, remoteEphemeral);
    if (!se)
        return NoiseHandshakeFailure::DhZero;
    m_state.mixKey(se->reveal());
    NoiseIkCompletion completion;
    if (!m_state.decryptAndHash(message2.sliced(noise::kDhLength), completion.responderPayload))
        return NoiseHandshakeFailure::DecryptFailed;
    auto keys = m_state.split();
    completion.keys.sendKey = std::move(keys[0]);
    completion.keys.receiveKey = std::move(keys[1]);
    completion.keys.handshakeHash = m_state.handshakeHash();
    return completion;
}

} // namespace coreflow::vpn
