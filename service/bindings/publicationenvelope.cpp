#include "service/bindings/publicationenvelope.h"

#include "shared/contract/envelope.h"
#include "shared/contract/refusalnames.h"

#include <simdjson.h>
#include <sodium.h>

namespace coreflow {

using namespace contract;

QString PublicationEnvelope::contextFor(const QString &clusterId, const QString &organizationId, const QString &serviceId,
                                        const QString &bindingName, const QString &mutationId)
{
    return QStringLiteral("corestore-credential-material|%1|%2|%3|%4|%5").arg(clusterId, organizationId, serviceId, bindingName, mutationId);
}

bool PublicationEnvelope::isJsonObject(const Secret &material)
{
    const QByteArrayView bytes = material.reveal();
    if (bytes.isEmpty())
        return false;
    // simdjson reads a padded buffer: the copy is made in guarded memory and wiped with it.
    static const QByteArray padding(simdjson::SIMDJSON_PADDING, '\0');
    const Secret padded = Secret::concatenated({bytes, padding});
    if (padded.size() != bytes.size() + padding.size())
        return false;
    simdjson::ondemand::parser parser;
    simdjson::ondemand::document doc;
    if (parser.iterate(simdjson::padded_string_view(padded.reveal().data(), size_t(bytes.size()), size_t(padded.size()))).get(doc))
        return false;
    simdjson::ondemand::json_type type;
    if (doc.type().get(type) || type != simdjson::ondemand::json_type::object)
        return false;
    std::string_view raw;
    if (doc.raw_json().get(raw))
        return false;
    // raw may run on over whitespace after the object; nothing else may follow it.
    qsizetype end = qsizetype(raw.data() + raw.size() - padded.reveal().data());
    if (end <= 0 || end > bytes.size())
        return false;
    for (qsizetype i = end; i < bytes.size(); ++i)
        if (!QChar::isSpace(uchar(bytes[i])))
            return false;
    while (end > 0 && QChar::isSpace(uchar(bytes[end - 1])))
        --end;
    return end > 0 && bytes[end - 1] == '}';
}

Result<PublicationEnvelope> PublicationEnvelope::seal(const IngressRecipient &recipient, const QString &context, const Secret &material)
{
    if (!isJsonObject(material))
        return Refusal{QString(refusal::publicationMaterialUnusable), QStringLiteral("the credential material is not one JSON object")};
    if (recipient.publicKey.size() != qsizetype(crypto_box_PUBLICKEYBYTES))
        return Refusal{QString(refusal::publicationAnswerInvalid), QStringLiteral("the recipient key is not 32 bytes")};
    const QByteArray contextJson = Envelope::jsonString(context);
    const Secret plaintext = Secret::concatenated({QByteArrayView("{\"context\":"), contextJson, QByteArrayView(",\"material\":"),
                                                   material.reveal(), QByteArrayView("}")});
    const QByteArrayView plain = plaintext.reveal();
    QByteArray sealed(plain.size() + qsizetype(crypto_box_SEALBYTES), '\0');
    if (crypto_box_seal(reinterpret_cast<unsigned char *>(sealed.data()), reinterpret_cast<const unsigned char *>(plain.data()),
                        quint64(plain.size()), reinterpret_cast<const unsigned char *>(recipient.publicKey.constData()))
        != 0)
        return Refusal{QString(refusal::publicationMaterialUnusable), QStringLiteral("the material could not be sealed")};
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, reinterpret_cast<const unsigned char *>(sealed.constData()), quint64(sealed.size()));
    PublicationEnvelope envelope;
    envelope.recipientKeyId = recipient.keyId;
    envelope.context = context;
    envelope.sealed = sealed.toBase64();
    envelope.digest = QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(digest), sizeof digest).toHex());
    return envelope;
}

} // namespace coreflow
