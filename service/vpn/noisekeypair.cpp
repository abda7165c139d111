#include "service/vpn/noisekeypair.h"

#include "service/vpn/noiseprimitives.h"

namespace coreflow::vpn {

NoiseKeyPair NoiseKeyPair::generate()
{
    return fromPrivateKey(noise::randomPrivateKey());
}

NoiseKeyPair NoiseKeyPair::fromPrivateKey(Secret privateKey)
{
    if (privateKey.size() != noise::kDhLength)
        return {};
    NoiseKeyPair pair;
    pair.publicKey = noise::x25519PublicKey(privateKey);
    pair.privateKey = std::move(privateKey);
    return pair;
}

} // namespace coreflow::vpn
