// fuzz_ingress_registration: IngressRegistration::read (docs/contract.md §10.1) over any JSON object.
// A registration reads with the ids the body names, or is refused request-invalid with a reason that
// quotes neither the authorization nor the name of a member the contract does not know.
#include "fuzz/jsonfuzzinput.h"
#include "service/ingress/ingressregistration.h"
#include "shared/contract/refusalnames.h"

using namespace coreflow;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_ingress_registration";
const QStringList kKnownKeys = {"offer", "ingressId", "nodeId", "authorization", "sessionKind", "release"};
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    auto input = coreflow::fuzz::objectWithQuietStrings(data, size, {QStringLiteral("authorization")});
    if (!input)
        return 0;
    const QJsonObject *object = &input->object;
    QStringList &quiet = input->quiet;
    for (const QJsonValue &level : {QJsonValue(*object), object->value(QStringLiteral("offer"))})
        for (const QString &key : level.toObject().keys())
            if (!kKnownKeys.contains(key))
                quiet.append(key);
    const auto registration = IngressRegistration::read(*object, QStringLiteral("request"));
    if (!registration) {
        coreflow::fuzz::checkRefusal(kTarget, registration.refusal(), quiet);
        if (registration.refusal().name != QLatin1String(contract::refusal::requestInvalid))
            fuzzFailure(kTarget, "a registration refused under another name");
        return 0;
    }
    if (registration->ingressId() != object->value(QStringLiteral("ingressId")).toString()
        || registration->nodeId() != object->value(QStringLiteral("nodeId")).toString())
        fuzzFailure(kTarget, "a registration read with ids the body does not name");
    return 0;
}
