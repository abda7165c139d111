// fuzz_registration_acceptance: RegistrationAcceptance::read (docs/contract.md §6.6) over any JSON
// object. An acceptance reads (its offer Served or NotServable) with non-empty ids, generations >= 0
// and the values the body names, or is NotContract with a named problem.
#include "fuzz/jsonfuzzinput.h"
#include "service/registration/registrationacceptance.h"

using namespace coreflow;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_registration_acceptance";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const auto object = coreflow::fuzz::jsonObjectOf(data, size);
    if (!object)
        return 0;
    const RegistrationAcceptance acceptance = RegistrationAcceptance::read(*object);
    const contract::AnsweredOffer &judged = acceptance.judged;
    if (judged.verdict == contract::AnsweredOffer::Verdict::NotContract) {
        if (!judged.problem)
            fuzzFailure(kTarget, "an answer not the contract's without a problem");
        coreflow::fuzz::checkRefusal(kTarget, *judged.problem);
        return 0;
    }
    if (!judged.offer || !acceptance.credential || !acceptance.record)
        fuzzFailure(kTarget, "an acceptance judged without its offer, credential or record");
    for (const RecordReference &ref : {*acceptance.credential, *acceptance.record})
        if (ref.id.isEmpty() || ref.generation < 0)
            fuzzFailure(kTarget, "an acceptance read with an empty id or a negative generation");
    if (acceptance.origin != object->value(QStringLiteral("origin")).toString()
        || acceptance.credential->id != object->value(QStringLiteral("credential")).toObject().value(QStringLiteral("id")).toString()
        || acceptance.record->id != object->value(QStringLiteral("registration")).toObject().value(QStringLiteral("id")).toString())
        fuzzFailure(kTarget, "an acceptance read with values the body does not name");
    return 0;
}
