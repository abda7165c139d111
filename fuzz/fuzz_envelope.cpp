// fuzz_envelope: Envelope::parse (docs/contract.md "Envelope") over any frame, checked against Qt's
// JSON reader on the same bytes: a frame that parses is a JSON object for QJsonDocument too, with the
// same method and correlation id; the request/response/error views are the members' exact bytes;
// requestMember() finds the member requestObject() holds. A frame refused is request-invalid.
#include "fuzz/jsonfuzzinput.h"
#include "shared/contract/envelope.h"
#include "shared/contract/refusalnames.h"

using namespace coreflow::contract;
using coreflow::fuzz::fuzzFailure;

namespace {
constexpr const char *kTarget = "fuzz_envelope";

QJsonValue valueOf(QByteArrayView raw)
{
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson("[" + raw.toByteArray() + "]", &err);
    if (err.error != QJsonParseError::NoError || doc.array().size() != 1)
        fuzzFailure(kTarget, "a member view is not one JSON value");
    return doc.array().at(0);
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char *>(data), qsizetype(size));
    const auto frame = Envelope::parse(bytes);
    if (!frame) {
        coreflow::fuzz::checkRefusal(kTarget, frame.refusal());
        if (frame.refusal().name != QLatin1String(refusal::requestInvalid))
            fuzzFailure(kTarget, "a frame refused under another name");
        return 0;
    }
    if (frame->raw != bytes)
        fuzzFailure(kTarget, "the frame's raw bytes are not the bytes received");
    const auto object = coreflow::fuzz::jsonObjectOf(data, size);
    if (!object)
        fuzzFailure(kTarget, "a frame parsed that QJsonDocument does not read as an object");
    if (object->value(QStringLiteral("method")).toString() != frame->method)
        fuzzFailure(kTarget, "the method differs from QJsonDocument's");
    const QJsonObject correlation = object->value(QStringLiteral("correlation")).toObject();
    if (correlation.value(QStringLiteral("id")).toString() != frame->correlationId)
        fuzzFailure(kTarget, "the correlation id differs from QJsonDocument's");
    const QString phase = correlation.value(QStringLiteral("phase")).toString();
    if ((phase == QLatin1String("response")) != (frame->phase == Phase::Response))
        fuzzFailure(kTarget, "the phase differs from QJsonDocument's");
    if (object->contains(QStringLiteral("request")) && valueOf(frame->request) != object->value(QStringLiteral("request")))
        fuzzFailure(kTarget, "the request view is not the request member");
    if (!frame->response.isEmpty() && valueOf(frame->response) != object->value(QStringLiteral("response")))
        fuzzFailure(kTarget, "the response view is not the response member");
    if (!frame->error.isEmpty()) {
        if (valueOf(frame->error) != object->value(QStringLiteral("error")))
            fuzzFailure(kTarget, "the error view is not the error member");
        const Refusal r = frame->errorRefusal();
        (void)r;
    }
    if (!frame->retry.isEmpty() && valueOf(frame->retry) != object->value(QStringLiteral("retry")))
        fuzzFailure(kTarget, "the retry view is not the retry member");

    const auto request = frame->requestObject();
    for (const char *key : {"session", "offer", "request"}) {
        bool readable = false;
        const auto member = frame->requestMember(key, &readable);
        if (!readable || !request)
            continue;
        const QJsonValue held = request.value().value(QLatin1String(key));
        if (member.has_value() != !held.isUndefined())
            fuzzFailure(kTarget, "requestMember() and requestObject() disagree on a member's presence");
        if (member && valueOf(*member) != held)
            fuzzFailure(kTarget, "requestMember() and requestObject() disagree on a member's value");
    }
    (void)frame->responseObject();
    return 0;
}
