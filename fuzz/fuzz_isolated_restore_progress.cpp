// fuzz_isolated_restore_progress: IsolatedRestoreProgress::read (docs/contract.md §14 "Response") over
// any Corestore answer bytes, for restore r1 under a fixed grant. An answer that reads is re-composed
// with the routed node: the result is a JSON object with exactly the seven members of §14, nodeId the
// routed one, every other member equal to the answer's, and no member repeating the grant; an answer
// with a nodeId of its own never reads; a refusal is restore-progress-invalid.
#include "fuzz/jsonfuzzinput.h"
#include "service/isolatedrestore/isolatedrestoreprogress.h"
#include "shared/contract/refusalnames.h"

using namespace coreflow;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_isolated_restore_progress";
const QString kGrant = QStringLiteral("grant-0123456789abcdef");
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray body(reinterpret_cast<const char *>(data), qsizetype(size));
    const auto progress = IsolatedRestoreProgress::read(body, QStringLiteral("r1"), kGrant);
    if (!progress) {
        coreflow::fuzz::checkRefusal(kTarget, progress.refusal(), {kGrant});
        if (progress.refusal().name != QLatin1String(contract::refusal::restoreProgressInvalid))
            fuzzFailure(kTarget, "an answer refused under another name");
        return 0;
    }
    const auto input = coreflow::fuzz::jsonObjectOf(data, size);
    if (!input)
        fuzzFailure(kTarget, "an answer read from bytes that are not a JSON object");
    if (input->contains(QStringLiteral("nodeId")))
        fuzzFailure(kTarget, "an answer stating its own node was read");
    QJsonParseError err{};
    const QByteArray composed = progress->answer(QStringLiteral("node-a"));
    const QJsonObject out = QJsonDocument::fromJson(composed, &err).object();
    if (err.error != QJsonParseError::NoError || out.size() != 7)
        fuzzFailure(kTarget, "the composed answer is not the seven members of the progress");
    if (out.value(QStringLiteral("nodeId")).toString() != QLatin1String("node-a"))
        fuzzFailure(kTarget, "the composed answer names another node");
    for (const char *key : {"restoreId", "revision", "phase", "stagedObject", "updatedAt", "failure"})
        if (out.value(QLatin1String(key)) != input->value(QLatin1String(key)))
            fuzzFailure(kTarget, "a member of the composed answer differs from the node's");
    if (QString::fromUtf8(composed).contains(kGrant))
        fuzzFailure(kTarget, "the composed answer repeats the grant");
    return 0;
}
