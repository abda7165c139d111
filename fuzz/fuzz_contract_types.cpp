// fuzz_contract_types: the exact-key readers of shared/contract/types.h and ProjectionReference
// (docs/contract.md "Reading bodies", §4, §6, §8) over any JSON object. Byte 0 picks the reader, the
// rest is the body. A read either gives a value or a named refusal that quotes no secret (the identity
// token, the certificate's private key); a value read back from its own toJson() reads the same.
#include "fuzz/jsonfuzzinput.h"
#include "service/escrow/projectionreference.h"
#include "shared/contract/exactkeyreader.h"
#include "shared/contract/types.h"

using namespace coreflow;
using namespace coreflow::contract;
using coreflow::fuzz::checkRefusal;

namespace {
constexpr const char *kTarget = "fuzz_contract_types";

template <typename T>
void expect(const Result<T> &result, const QStringList &secrets = {})
{
    if (!result)
        checkRefusal(kTarget, result.refusal(), secrets);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const auto object = coreflow::fuzz::jsonObjectOf(data + 1, size - 1);
    if (!object)
        return 0;
    const QString path = QStringLiteral("response.x");
    QStringList secrets;
    switch (data[0] % 7) {
    case 0: {
        auto binding = SessionBinding::read(*object, path);
        expect(binding);
        if (binding) {
            auto again = SessionBinding::read(binding->toJson(), path);
            if (!again || !(again.value() == binding.value()))
                coreflow::fuzz::fuzzFailure(kTarget, "a session binding does not read back from its own JSON");
        }
        break;
    }
    case 1:
        coreflow::fuzz::collectStringsUnder(*object, {QStringLiteral("token")}, secrets);
        expect(ClusterIdentity::read(*object, path), secrets);
        break;
    case 2:
        expect(ClusterRelayBlock::read(*object, path));
        break;
    case 3:
        expect(ClusterNode::read(*object, path));
        break;
    case 4:
        expect(ClusterConfig::read(*object, path));
        break;
    case 5:
        coreflow::fuzz::collectStringsUnder(*object, {QStringLiteral("privateKeyPem")}, secrets);
        expect(RelayCertificateMaterial::read(*object, path), secrets);
        break;
    case 6: {
        auto reference = ProjectionReference::read(*object, path);
        expect(reference);
        if (reference) {
            auto again = ProjectionReference::read(reference->toJson(), path);
            if (!again || !(again.value() == reference.value()))
                coreflow::fuzz::fuzzFailure(kTarget, "a projection reference does not read back from its own JSON");
        }
        break;
    }
    }
    return 0;
}
