#pragma once
// NoiseIkInitiator: the member's side of Noise_IK_25519_ChaChaPoly_BLAKE2s (docs/contract.md §11.4).
// The hub never initiates; this class exists so the relay's own tests can drive NoiseIkResponder and
// replay the published vectors (the loopback peers have their own Noise, python3-dissononce).
//
// One object per handshake: writeMessage1() once, then readMessage2() once. Failures: wrong-state
// (out of turn), dh-zero, message-malformed (message 2 shorter than 48 bytes), decrypt-failed.
// The ephemeral private key is wiped when the handshake completes or the object goes.
#include "service/vpn/noiseikcompletion.h"
#include "service/vpn/noisekeypair.h"
#include "service/vpn/noiseoutcome.h"
#include "service/vpn/noisesymmetricstate.h"

#include <QByteArray>
#include <QByteArrayView>
#include <functional>

namespace coreflow::vpn {

class NoiseIkInitiator {
public:
    using EphemeralSource = std::function<NoiseKeyPair()>;

    NoiseIkInitiator(NoiseKeyPair staticKeys, QByteArray responderStaticKey, QByteArrayView prologue,
                     EphemeralSource ephemeral = {});

    NoiseOutcome<QByteArray> writeMessage1(QByteArrayView payload = {});
    NoiseOutcome<NoiseIkCompletion> readMessage2(QByteArrayView message2);

private:
    enum class Step { WriteMessage1, ReadMessage2, Done };
    NoiseKeyPair m_static;
    QByteArray m_responderStatic;
    NoiseKeyPair m_ephemeralKeys;
    EphemeralSource m_ephemeral;
    NoiseSymmetricState m_state;
    Step m_step = Step::WriteMessage1;
};

} // namespace coreflow::vpn
