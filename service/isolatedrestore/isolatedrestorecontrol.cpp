#include "service/isolatedrestore/isolatedrestorecontrol.h"

#include "shared/contract/exactkeyreader.h"
#include "shared/contract/ids.h"
#include "shared/contract/methods.h"
#include "shared/contract/refusalnames.h"
#include "shared/contract/refusalquote.h"

#include <QJsonArray>
#include <QSet>
#include <sodium.h>

namespace coreflow {

using namespace contract;

namespace {

const QString kInvalid = QString(refusal::restoreControlInvalid);

Refusal invalid(const QString &path, const QString &problem)
{
    return Refusal{kInvalid, QStringLiteral("field %1 %2").arg(path, problem)};
}

// The first member of `object` outside `known`, reported without its name (D-42).
std::optional<Refusal> unnamedMemberOf(const QJsonObject &object, const QString &path, const QSet<QString> &known)
{
    for (auto it = object.begin(); it != object.end(); ++it)
        if (!known.contains(it.key()))
            return Refusal{kInvalid, RefusalQuote::unnamedMember(path)};
    return std::nullopt;
}

bool isLowerHexSha256(const QString &text)
{
    if (text.size() != 64)
        return false;
    for (const QChar c : text)
        if (!((c >= QLatin1Char('0') && c <= QLatin1Char('9')) || (c >= QLatin1Char('a') && c <= QLatin1Char('f'))))
            return false;
    return true;
}

// RFC 4648 standard alphabet with padding, strictly: a multiple of 4 characters, '=' only as the last
// one or two. Decoded size without decoding (the bound is judged before any allocation of that size).
// `latin1` is the text's Latin-1 form (a character outside Latin-1 became '?', which is refused).
std::optional<qsizetype> paddedBase64DecodedSize(const QByteArray &latin1)
{
    const qsizetype n = latin1.size();
    if (n % 4 != 0)
        return std::nullopt;
    const char *p = latin1.constData();
    qsizetype padding = 0;
    for (qsizetype i = 0; i < n; ++i) {
        const unsigned char c = static_cast<unsigned char>(p[i]);
        const bool alphabet = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
        if (alphabet) {
            if (padding > 0)
                return std::nullopt;
            continue;
        }
        if (c != '=' || i < n - 2)
            return std::nullopt;
        ++padding;
    }
    return n / 4 * 3 - padding;
}

QString hexSha256(const QByteArray &bytes)
{
    unsigned char digest[crypto_hash_sha256_BYTES];
    crypto_hash_sha256(digest, reinterpret_cast<const unsigned char *>(bytes.constData()), quint64(bytes.size()));
    return QString::fromLatin1(QByteArray(reinterpret_cast<const char *>(digest), int(sizeof digest)).toHex());
}

std::optional<Refusal> readManifest(const QJsonObject &manifest, const QString &path)
{
    if (auto unknown = unnamedMemberOf(manifest, path, {QStringLiteral("objects")}))
        return unknown;
    ExactKeyReader r(manifest, path, kInvalid);
    const QJsonArray objects = r.requiredArray(QStringLiteral("objects"));
    if (auto refused = r.finish())
        return refused;
    QSet<QString> keys;
    for (qsizetype i = 0; i < objects.size(); ++i) {
        const QString at = QStringLiteral("%1.objects[%2]").arg(path).arg(i);
        if (!objects.at(i).isObject())
            return invalid(at, QStringLiteral("is not an object"));
        const QJsonObject object = objects.at(i).toObject();
        if (auto unknown = unnamedMemberOf(object, at, {QStringLiteral("key"), QStringLiteral("sizeBytes"), QStringLiteral("sha256")}))
            return unknown;
        ExactKeyReader o(object, at, kInvalid);
        const QString key = o.requiredString(QStringLiteral("key"));
        const qint64 size = o.requiredInteger(QStringLiteral("sizeBytes"));
        const QString sha256 = o.requiredString(QStringLiteral("sha256"));
        if (auto refused = o.finish())
            return refused;
        if (!isId(key))
            return invalid(at + QStringLiteral(".key"), notAnIdReason());
        if (keys.contains(key))
            return invalid(at + QStringLiteral(".key"), QStringLiteral("names an object an earlier entry names"));
        keys.insert(key);
        if (size < 0)
            return invalid(at + QStringLiteral(".sizeBytes"), QStringLiteral("is negative"));
        if (!isLowerHexSha256(sha256))
            return invalid(at + QStringLiteral(".sha256"), QStringLiteral("is not 64 lowercase hex digits"));
    }
    return std::nullopt;
}

std::optional<Refusal> readChunk(const QJsonObject &chunk, const QString &path, qsizetype *decodedBytes)
{
    if (auto unknown = unnamedMemberOf(chunk, path, {QStringLiteral("objectKey"), QStringLiteral("offset"), QStringLiteral("data"),
                                                     QStringLiteral("chunkSha256")}))
        return unknown;
    ExactKeyReader r(chunk, path, kInvalid);
    const QString objectKey = r.requiredString(QStringLiteral("objectKey"));
    const qint64 offset = r.requiredInteger(QStringLiteral("offset"));
    const QString data = r.requiredString(QStringLiteral("data"));
    const QString chunkSha256 = r.requiredString(QStringLiteral("chunkSha256"));
    if (auto refused = r.finish())
        return refused;
    if (!isId(objectKey))
        return invalid(path + QStringLiteral(".objectKey"), notAnIdReason());
    if (offset < 0)
        return invalid(path + QStringLiteral(".offset"), QStringLiteral("is negative"));
    if (data.size() > (IsolatedRestoreControl::kMaxChunkBytes + 2) / 3 * 4 + 4)
        return invalid(path + QStringLiteral(".data"), QStringLiteral("decodes to more than the %1 bytes a staged chunk may hold")
                                                           .arg(IsolatedRestoreControl::kMaxChunkBytes));
    const QByteArray latin1 = data.toLatin1();
    const auto size = paddedBase64DecodedSize(latin1);
    if (!size)
        return invalid(path + QStringLiteral(".data"), QStringLiteral("is not base64 (standard alphabet, padded)"));
    if (*size > IsolatedRestoreControl::kMaxChunkBytes)
        return invalid(path + QStringLiteral(".data"), QStringLiteral("decodes to %1 bytes, above the %2 a staged chunk may hold")
                                                           .arg(*size)
                                                           .arg(IsolatedRestoreControl::kMaxChunkBytes));
    if (!isLowerHexSha256(chunkSha256))
        return invalid(path + QStringLiteral(".chunkSha256"), QStringLiteral("is not 64 lowercase hex digits"));
    const auto decoded = QByteArray::fromBase64Encoding(latin1, QByteArray::AbortOnBase64DecodingErrors);
    if (!decoded || decoded.decoded.size() != *size)
        return invalid(path + QStringLiteral(".data"), QStringLiteral("is not base64 (standard alphabet, padded)"));
    if (hexSha256(decoded.decoded) != chunkSha256)
        return invalid(path + QStringLiteral(".chunkSha256"), QStringLiteral("is not the SHA-256 of the %1 decoded bytes of data").arg(*size));
    *decodedBytes = *size;
    return std::nullopt;
}

} // namespace

QString IsolatedRestoreControl::operationOf(const QString &method)
{
    if (method == QLatin1String(method::prepareIsolatedRestoreOnNode))
        return QStringLiteral("prepare");
    if (method == QLatin1String(method::stageIsolatedRestoreArchive))
        return QStringLiteral("stage");
    if (method == QLatin1String(method::getIsolatedRestoreProgressOnNode))
        return QStringLiteral("progress");
    if (method == QLatin1String(method::executeIsolatedRestoreOnNode))
        return QStringLiteral("execute");
    if (method == QLatin1String(method::cleanupIsolatedRestoreOnNode))
        return QStringLiteral("cleanup");
    return {};
}

Result<IsolatedRestoreControl> IsolatedRestoreControl::read(const QJsonObject &control, const QString &path, const QString &operation)
{
    if (auto unknown = unnamedMemberOf(control, path, {QStringLiteral("operation"), QStringLiteral("restoreId"), QStringLiteral("grant"),
                                                       QStringLiteral("expectedRevision"), QStringLiteral("manifest"), QStringLiteral("chunk")}))
        return *unknown;
    const auto at = [&path](const char *key) { return path + QLatin1Char('.') + QLatin1String(key); };

    ExactKeyReader r(control, path, kInvalid);
    IsolatedRestoreControl out;
    out.operation = r.requiredString(QStringLiteral("operation"));
    out.restoreId = r.requiredString(QStringLiteral("restoreId"));
    out.grant = r.requiredString(QStringLiteral("grant"));
    const QJsonValue revision = r.requiredAny(QStringLiteral("expectedRevision"));
    const std::optional<QJsonObject> manifest = r.optionalObject(QStringLiteral("manifest"));
    const std::optional<QJsonObject> chunk = r.optionalObject(QStringLiteral("chunk"));
    if (auto refused = r.finish())
        return *refused;

    static const QSet<QString> operations{QStringLiteral("prepare"), QStringLiteral("stage"), QStringLiteral("progress"),
                                          QStringLiteral("execute"), QStringLiteral("cleanup")};
    if (!operations.contains(out.operation))
        return invalid(at("operation"), QStringLiteral("is not one of prepare, stage, progress, execute, cleanup"));
    if (out.operation != operation)
        return invalid(at("operation"), QStringLiteral("is not %1, the operation of this method").arg(operation));
    if (!isId(out.restoreId))
        return invalid(at("restoreId"), notAnIdReason());
    if (out.grant.isEmpty())
        return invalid(at("grant"), QStringLiteral("is empty"));

    if (!revision.isNull()) {
        ExactKeyReader number(QJsonObject{{QStringLiteral("expectedRevision"), revision}}, path, kInvalid);
        const qint64 value = number.requiredInteger(QStringLiteral("expectedRevision"));
        if (number.failed())
            return invalid(at("expectedRevision"), QStringLiteral("is not an integer or null"));
        if (value < 0)
            return invalid(at("expectedRevision"), QStringLiteral("is negative"));
        out.expectedRevision = value;
    }
    if (operation == QLatin1String("prepare") && out.expectedRevision)
        return invalid(at("expectedRevision"), QStringLiteral("is not null (a restore being prepared has no revision yet)"));
    const bool needsRevision = operation == QLatin1String("stage") || operation == QLatin1String("execute")
        || operation == QLatin1String("cleanup");
    if (needsRevision && !out.expectedRevision)
        return invalid(at("expectedRevision"), QStringLiteral("is null (%1 needs the revision of the node's last answer)").arg(operation));

    if (operation == QLatin1String("prepare")) {
        if (!manifest)
            return invalid(at("manifest"), QStringLiteral("is missing (prepare states the archive's manifest)"));
        if (auto refused = readManifest(*manifest, at("manifest")))
            return *refused;
    } else if (manifest) {
        return invalid(at("manifest"), QStringLiteral("is for prepare only"));
    }
    if (operation == QLatin1String("stage")) {
        if (!chunk)
            return invalid(at("chunk"), QStringLiteral("is missing (stage carries one chunk)"));
        if (auto refused = readChunk(*chunk, at("chunk"), &out.chunkBytes))
            return *refused;
    } else if (chunk) {
        return invalid(at("chunk"), QStringLiteral("is for stage only"));
    }
    return out;
}

} // namespace coreflow
