// fuzz_escrow_run: DnsLeaseRenewalRun::read (docs/contract.md §9.1, §9.2) over any request bytes, at a
// fixed relay time. A run that reads keeps the stated bounds (at most 32 renewals, sequences strictly
// ascending, notBefore < expiresAt, windows of at most 900000 ms, nothing beyond the horizon) and every
// renewal it holds is the exact JSON the request carries at that index; a refusal is
// escrow-run-invalid with a reason.
#include "fuzz/jsonfuzzinput.h"
#include "service/escrow/dnsleaserenewalrun.h"
#include "shared/contract/refusalnames.h"

using namespace coreflow;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_escrow_run";
constexpr qint64 kNowMs = 1764547200000; // 2025-12-01T00:00:00Z
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView raw(reinterpret_cast<const char *>(data), qsizetype(size));
    const auto run = DnsLeaseRenewalRun::read(raw, kNowMs);
    if (!run) {
        coreflow::fuzz::checkRefusal(kTarget, run.refusal());
        if (run.refusal().name != QLatin1String(contract::refusal::escrowRunInvalid))
            fuzzFailure(kTarget, "a run refused under another name");
        return 0;
    }
    const auto object = coreflow::fuzz::jsonObjectOf(data, size);
    if (!object)
        fuzzFailure(kTarget, "a run read from bytes that are not a JSON object");
    const QJsonArray renewals = object->value(QStringLiteral("renewals")).toArray();
    if (run->size() != renewals.size() || run->size() > contract::maximumEscrowedRenewals)
        fuzzFailure(kTarget, "the run holds another number of renewals than the request");
    qint64 last = -1;
    for (int i = 0; i < run->size(); ++i) {
        const auto &r = run->renewals().at(i);
        if (r.sequence <= last || r.notBeforeMs >= r.expiresAtMs || r.expiresAtMs - r.notBeforeMs > DnsLeaseRenewalRun::maximumWindowMs
            || r.expiresAtMs > kNowMs + contract::maximumEscrowHorizonMs)
            fuzzFailure(kTarget, "a held renewal outside the stated bounds");
        last = r.sequence;
        QJsonParseError err{};
        const QJsonDocument slice = QJsonDocument::fromJson(run->rawRenewal(i).toByteArray(), &err);
        if (err.error != QJsonParseError::NoError || slice.object() != renewals.at(i).toObject())
            fuzzFailure(kTarget, "a held renewal's bytes are not the request's renewal");
        const QJsonDocument offer = QJsonDocument::fromJson(run->offerRequest(i, run->session()), &err);
        if (err.error != QJsonParseError::NoError || offer.object().value(QStringLiteral("renewal")) != renewals.at(i))
            fuzzFailure(kTarget, "an offered renewal is not the request's renewal");
        (void)run->bindAcknowledgement(i, *object);
    }
    return 0;
}
