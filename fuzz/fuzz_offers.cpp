// fuzz_offers: the protocol offer readers (shared/contract/offers.h, docs/contract.md §2) over any JSON
// object: ProtocolOffer::read, judgePeerOffer for both served kinds, answerNamesServableOffer and
// Release::parse. A judged offer is either servable (nullopt) or refused protocol-offer-refused; an
// offer that reads and is judged servable names the kind it was judged for.
#include "fuzz/jsonfuzzinput.h"
#include "shared/contract/offers.h"
#include "shared/contract/refusalnames.h"

using namespace coreflow::contract;

namespace {
constexpr const char *kTarget = "fuzz_offers";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const auto object = coreflow::fuzz::jsonObjectOf(data, size);
    if (!object) {
        // Not an object: the bytes as a release text.
        const auto release = Release::parse(QString::fromUtf8(reinterpret_cast<const char *>(data), qsizetype(size)));
        if (release && Release::parse(release->toString()) != release)
            coreflow::fuzz::fuzzFailure(kTarget, "a release does not parse back from its own text");
        return 0;
    }
    const auto offer = ProtocolOffer::read(*object, QStringLiteral("request.offer"));
    if (!offer)
        coreflow::fuzz::checkRefusal(kTarget, offer.refusal());
    for (QLatin1StringView kind : {sessionKind::palletRuntime, sessionKind::clusterIngress}) {
        for (const QJsonValue &value : {QJsonValue(*object), object->value(QStringLiteral("offer"))}) {
            const auto judged = judgePeerOffer(value, kind);
            if (judged) {
                coreflow::fuzz::checkRefusal(kTarget, *judged);
                if (judged->name != QLatin1String(refusal::protocolOfferRefused))
                    coreflow::fuzz::fuzzFailure(kTarget, "an offer refused under another name");
            } else {
                const auto read = value.isObject() ? ProtocolOffer::read(value.toObject(), QStringLiteral("offer"))
                                                   : Result<ProtocolOffer>(Refusal{QStringLiteral("x"), QStringLiteral("x")});
                if (!read || read->sessionKind != kind)
                    coreflow::fuzz::fuzzFailure(kTarget, "an offer judged servable that does not read as the kind");
            }
        }
    }
    (void)answerNamesServableOffer(*object);
    if (offer)
        (void)servesCloudlyOffer(offer.value());
    return 0;
}
