#include "service/bindings/ingressrecipient.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/refusalnames.h"

#include <sodium.h>

namespace coreflow {

using namespace contract;

Result<IngressRecipient> IngressRecipient::read(const QJsonObject &response)
{
    const QString name(refusal::publicationAnswerInvalid);
    ExactKeyReader outer(response, QStringLiteral("response"), name);
    const QJsonObject recipient = outer.requiredObject(QStringLiteral("recipient"));
    if (auto refused = outer.finish())
        return *refused;
    ExactKeyReader r(recipient, QStringLiteral("response.recipient"), name);
    IngressRecipient read;
    read.keyId = r.requiredString(QStringLiteral("keyId"));
    const QString publicKey = r.requiredString(QStringLiteral("publicKey"));
    read.generation = r.requiredInteger(QStringLiteral("generation"));
    if (!r.failed() && read.keyId.isEmpty())
        r.fail(QStringLiteral("keyId"), QStringLiteral("is empty"));
    if (!r.failed() && read.generation < 0)
        r.fail(QStringLiteral("generation"), QStringLiteral("is negative"));
    if (!r.failed()) {
        const auto decoded = QByteArray::fromBase64Encoding(publicKey.toLatin1(), QByteArray::AbortOnBase64DecodingErrors);
        if (!decoded || decoded.decoded.size() != qsizetype(crypto_box_PUBLICKEYBYTES))
            r.fail(QStringLiteral("publicKey"), QStringLiteral("is not base64 of a 32-byte X25519 key"));
        else
            read.publicKey = *decoded;
    }
    if (auto refused = r.finish())
        return *refused;
    return read;
}

} // namespace coreflow
