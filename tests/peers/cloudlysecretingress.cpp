#include "tests/peers/cloudlysecretingress.h"

#include <QJsonDocument>
#include <QSet>
#include <sodium.h>

namespace coreflow::peers {

namespace {

const QString kMutationPrefix = QStringLiteral("corestore-publication:");

bool hasExactlyStrings(const QJsonObject &object, const QStringList &keys)
{
    if (object.size() != keys.size())
        return false;
    for (const QString &key : keys)
        if (!object.value(key).isString())
            return false;
    return true;
}

QString sha256Hex(const QByteArray &bytes)
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, reinterpret_cast<const unsigned char *>(bytes.constData()), quint64(bytes.size()));
    return QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(digest), sizeof digest).toHex());
}

} // namespace

CloudlySecretIngress::CloudlySecretIngress(std::function<qint64()> now, std::function<QString()> clusterId)
    : m_now(std::move(now)), m_clusterId(std::move(clusterId))
{
    if (sodium_init() < 0)
        qFatal("libsodium does not start");
    rotateRecipient();
}

CloudlySecretIngress::~CloudlySecretIngress()
{
    sodium_memzero(m_secretKey.data(), size_t(m_secretKey.size()));
}

bool CloudlySecretIngress::serves(const QString &method) const
{
    return method == QLatin1StringView(recipientMethod) || method == QLatin1StringView(publishMethod);
}

void CloudlySecretIngress::rotateRecipient()
{
    if (!m_secretKey.isEmpty())
        sodium_memzero(m_secretKey.data(), size_t(m_secretKey.size()));
    m_publicKey = QByteArray(crypto_box_PUBLICKEYBYTES, '\0');
    m_secretKey = QByteArray(crypto_box_SECRETKEYBYTES, '\0');
    crypto_box_keypair(reinterpret_cast<unsigned char *>(m_publicKey.data()), reinterpret_cast<unsigned char *>(m_secretKey.data()));
    ++m_generation;
}

QString CloudlySecretIngress::recipientKeyId() const { return QStringLiteral("secret-ingress:%1").arg(m_generation); }

Answer CloudlySecretIngress::refused(const char *name, const QString &reason)
{
    m_refusalsAnswered.append(QString::fromLatin1(name));
    return Answer::refuse(QLatin1StringView(name), reason);
}

Answer CloudlySecretIngress::answer(const QString &method, const QJsonObject &request)
{
    if (method == QLatin1StringView(publishMethod))
        return publish(request);
    ++m_recipientReads;
    if (!m_recipientRefusal.isEmpty()) {
        const QByteArray code = m_recipientRefusal.toUtf8();
        return Answer::refuse(QLatin1StringView(code), QStringLiteral("scripted refusal"));
    }
    return Answer::respond({{QStringLiteral("recipient"),
                             QJsonObject{{QStringLiteral("keyId"), recipientKeyId()},
                                         {QStringLiteral("publicKey"), QString::fromLatin1(m_publicKey.toBase64())},
                                         {QStringLiteral("generation"), double(m_generation)}}}});
}

Answer CloudlySecretIngress::receiptAnswer(const QString &mutationId, const QString &serviceId, const QString &bindingName,
                                           const QString &digest, const QJsonObject &replaced)
{
    QJsonObject receipt{{QStringLiteral("mutationId"), mutationId},
                        {QStringLiteral("organizationId"), m_organizations.value(serviceId)},
                        {QStringLiteral("clusterId"), m_clusterId()},
                        {QStringLiteral("serviceId"), serviceId},
                        {QStringLiteral("bindingName"), bindingName},
                        {QStringLiteral("envelopeDigest"), digest},
                        {QStringLiteral("acceptedAt"), double(m_now())}};
    for (auto it = replaced.begin(); it != replaced.end(); ++it)
        receipt.insert(it.key(), it.value());
    return Answer::respond({{QStringLiteral("receipt"), receipt}});
}

Answer CloudlySecretIngress::publish(const QJsonObject &request)
{
    const QJsonObject envelope = request.value(QStringLiteral("envelope")).toObject();
    QJsonObject outer = request;
    outer.remove(QStringLiteral("envelope"));
    if (!request.value(QStringLiteral("envelope")).isObject()
        || !hasExactlyStrings(outer, {QStringLiteral("mutationId"), QStringLiteral("grantOperation"), QStringLiteral("serviceId"),
                                      QStringLiteral("bindingName"), QStringLiteral("capability")})
        || !hasExactlyStrings(envelope, {QStringLiteral("recipientKeyId"), QStringLiteral("context"), QStringLiteral("sealed"),
                                         QStringLiteral("digest")}))
        return refused("INVALID_REQUEST", QStringLiteral("the request does not have the contract's members"));
    const QString mutationId = request.value(QStringLiteral("mutationId")).toString();
    const QString grantOperation = request.value(QStringLiteral("grantOperation")).toString();
    const QString serviceId = request.value(QStringLiteral("serviceId")).toString();
    const QString bindingName = request.value(QStringLiteral("bindingName")).toString();
    const QString capability = request.value(QStringLiteral("capability")).toString();
    if (capability != QLatin1StringView("database") && capability != QLatin1StringView("objectstorage"))
        return refused("INVALID_REQUEST", QStringLiteral("capability is not database or objectstorage"));
    if (grantOperation.isEmpty() || mutationId != kMutationPrefix + grantOperation)
        return refused("INVALID_REQUEST", QStringLiteral("mutationId is not derived from the grant operation"));
    if (!m_organizations.contains(serviceId))
        return refused("FORBIDDEN", QStringLiteral("the service is not this cluster's"));
    if (envelope.value(QStringLiteral("recipientKeyId")).toString() != recipientKeyId())
        return refused("RECIPIENT_NOT_ACTIVE", QStringLiteral("the envelope is sealed to a recipient that is not active"));
    const QString context = envelope.value(QStringLiteral("context")).toString();
    const QString expectedContext = QStringLiteral("corestore-credential-material|%1|%2|%3|%4|%5")
                                        .arg(m_clusterId(), m_organizations.value(serviceId), serviceId, bindingName, mutationId);
    if (context != expectedContext)
        return refused("INVALID_REQUEST", QStringLiteral("the envelope context is not the publication's"));
    const auto sealed = QByteArray::fromBase64Encoding(envelope.value(QStringLiteral("sealed")).toString().toLatin1(),
                                                       QByteArray::AbortOnBase64DecodingErrors);
    if (!sealed || sealed.decoded.size() <= qsizetype(crypto_box_SEALBYTES))
        return refused("INVALID_REQUEST", QStringLiteral("sealed is not base64 of a sealed box"));
    const QString digest = envelope.value(QStringLiteral("digest")).toString();
    if (digest != sha256Hex(sealed.decoded))
        return refused("INVALID_REQUEST", QStringLiteral("digest is not the SHA-256 of the sealed bytes"));
    QByteArray plaintext(sealed.decoded.size() - qsizetype(crypto_box_SEALBYTES), '\0');
    if (crypto_box_seal_open(reinterpret_cast<unsigned char *>(plaintext.data()), reinterpret_cast<const unsigned char *>(sealed.decoded.constData()),
                             quint64(sealed.decoded.size()), reinterpret_cast<const unsigned char *>(m_publicKey.constData()),
                             reinterpret_cast<const unsigned char *>(m_secretKey.constData()))
        != 0)
        return refused("INVALID_REQUEST", QStringLiteral("the envelope does not open with the active recipient"));
    QJsonParseError parseError;
    const QJsonDocument opened = QJsonDocument::fromJson(plaintext, &parseError);
    const QJsonObject inner = opened.object();
    if (parseError.error != QJsonParseError::NoError || !opened.isObject() || inner.size() != 2
        || inner.value(QStringLiteral("context")).toString() != context || !inner.value(QStringLiteral("material")).isObject())
        return refused("INVALID_REQUEST", QStringLiteral("the opened envelope is not { context, material } under this context"));

    if (const auto it = m_committed.constFind(mutationId); it != m_committed.constEnd()) {
        if (*it != digest)
            return refused("REPLAY_CONFLICT", QStringLiteral("another envelope is committed under this mutation"));
        return receiptAnswer(mutationId, serviceId, bindingName, digest); // the same envelope: the same receipt
    }

    const Scripted scripted = m_script.isEmpty() ? Scripted{} : m_script.takeFirst();
    if (scripted.step == Step::Refuse) {
        const QByteArray code = scripted.code.toUtf8();
        m_refusalsAnswered.append(scripted.code);
        return Answer::refuse(QLatin1StringView(code), QStringLiteral("scripted refusal"));
    }
    if (scripted.step == Step::ReplayConflict)
        return refused("REPLAY_CONFLICT", QStringLiteral("scripted: another envelope is committed under this mutation"));

    m_committed.insert(mutationId, digest);
    m_opened.append(Opened{mutationId, context, digest, plaintext, inner.value(QStringLiteral("material")).toObject()});
    switch (scripted.step) {
    case Step::InternalErrorAfterCommit:
        m_refusalsAnswered.append(QStringLiteral("INTERNAL_ERROR"));
        return Answer::refuse(QLatin1StringView("INTERNAL_ERROR"), QStringLiteral("scripted: the config push after the commit failed"));
    case Step::SilenceAfterCommit:
        return Answer::silence();
    case Step::DropAfterCommit:
        return Answer::dropConnection();
    case Step::BadReceipt:
        return receiptAnswer(mutationId, serviceId, bindingName, digest, scripted.receiptFields);
    default:
        return receiptAnswer(mutationId, serviceId, bindingName, digest);
    }
}

} // namespace coreflow::peers
