// fuzz_isolated_restore_request: IsolatedRestoreRequest::read (docs/contract.md §14) over any request
// bytes, for each of the five operations (the first input byte picks it). A request that reads keeps
// what the readers promise: the control member's bytes are a slice of the input that parses to the
// same object the input's control member is, its operation is the method's, prepare carries a
// manifest and stage a chunk of at most 524288 decoded bytes whose SHA-256 is chunkSha256; a refusal
// is restore-control-invalid with a reason that never quotes the grant.
#include "fuzz/jsonfuzzinput.h"
#include "service/isolatedrestore/isolatedrestorerequest.h"
#include "shared/contract/refusalnames.h"

#include <QCryptographicHash>

using namespace coreflow;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_isolated_restore_request";
const char *const kOperations[] = {"prepare", "stage", "progress", "execute", "cleanup"};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const QString operation = QString::fromLatin1(kOperations[data[0] % 5]);
    const uint8_t *json = data + 1;
    const size_t jsonSize = size - 1;
    const QByteArrayView raw(reinterpret_cast<const char *>(json), qsizetype(jsonSize));
    const auto read = IsolatedRestoreRequest::read(raw, operation);
    const auto quiet = coreflow::fuzz::objectWithQuietStrings(json, jsonSize, {QStringLiteral("grant"), QStringLiteral("data")});
    if (!read) {
        coreflow::fuzz::checkRefusal(kTarget, read.refusal(), quiet ? quiet->quiet : QStringList{});
        if (read.refusal().name != QLatin1String(contract::refusal::restoreControlInvalid))
            fuzzFailure(kTarget, "a request refused under another name");
        return 0;
    }
    if (!quiet)
        fuzzFailure(kTarget, "a request read from bytes that are not a JSON object");
    if (!raw.contains(QByteArrayView(read->control)))
        fuzzFailure(kTarget, "the control bytes are not a slice of the request");
    QJsonParseError err{};
    const QJsonDocument slice = QJsonDocument::fromJson(read->control, &err);
    const QJsonObject control = quiet->object.value(QStringLiteral("control")).toObject();
    if (err.error != QJsonParseError::NoError || slice.object() != control)
        fuzzFailure(kTarget, "the control bytes are not the request's control");
    if (read->judged.operation != operation || control.value(QStringLiteral("operation")).toString() != operation)
        fuzzFailure(kTarget, "a control of another operation was read");
    if (read->nodeId != quiet->object.value(QStringLiteral("nodeId")).toString() || read->nodeId.isEmpty())
        fuzzFailure(kTarget, "the nodeId read is not the request's");
    if ((operation == QLatin1String("prepare")) != control.contains(QStringLiteral("manifest")))
        fuzzFailure(kTarget, "a manifest outside prepare, or a prepare without one");
    if ((operation == QLatin1String("stage")) != control.contains(QStringLiteral("chunk")))
        fuzzFailure(kTarget, "a chunk outside stage, or a stage without one");
    if (operation == QLatin1String("stage")) {
        const QJsonObject chunk = control.value(QStringLiteral("chunk")).toObject();
        const QByteArray bytes = QByteArray::fromBase64(chunk.value(QStringLiteral("data")).toString().toLatin1());
        if (bytes.size() > IsolatedRestoreControl::kMaxChunkBytes || bytes.size() != read->judged.chunkBytes)
            fuzzFailure(kTarget, "a chunk above the bound, or of another size than read");
        if (QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex()
            != chunk.value(QStringLiteral("chunkSha256")).toString().toLatin1())
            fuzzFailure(kTarget, "a chunk whose digest is not chunkSha256");
    }
    const QJsonValue revision = control.value(QStringLiteral("expectedRevision"));
    if (read->judged.expectedRevision ? qint64(revision.toDouble()) != *read->judged.expectedRevision : !revision.isNull())
        fuzzFailure(kTarget, "the revision read is not the control's");
    return 0;
}
