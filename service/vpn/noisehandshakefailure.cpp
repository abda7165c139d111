#include "service/vpn/noisehandshakefailure.h"

namespace coreflow::vpn {

QString noiseHandshakeFailureName(NoiseHandshakeFailure failure)
{
    switch (failure) {
    case NoiseHandshakeFailure::MessageMalformed: return QStringLiteral("message-malformed");
    case NoiseHandshakeFailure::DhZero: return QStringLiteral("dh-zero");
    case NoiseHandshakeFailure::DecryptFailed: return QStringLiteral("decrypt-failed");
    case NoiseHandshakeFailure::MemberUnknown: return QStringLiteral("member-unknown");
    case NoiseHandshakeFailure::WrongState: return QStringLiteral("wrong-state");
    }
    return QStringLiteral("unknown");
}

} // namespace coreflow::vpn
