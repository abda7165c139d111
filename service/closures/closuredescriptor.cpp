#include "service/closures/closuredescriptor.h"

#include "service/closures/streamingsha256.h"
#include "shared/contract/exactkeyreader.h"

namespace coreflow {

using namespace contract;

contract::Result<ClosureDescriptor> ClosureDescriptor::read(const QJsonObject &object, const QString &path)
{
    ExactKeyReader r(object, path);
    ClosureDescriptor d;
    const QString id = r.requiredString(QStringLiteral("streamId"));
    d.serviceId = r.requiredString(QStringLiteral("serviceId"));
    d.backupId = r.requiredString(QStringLiteral("backupId"));
    d.nodeId = r.requiredString(QStringLiteral("nodeId"));
    d.sizeBytes = r.requiredInteger(QStringLiteral("sizeBytes"));
    const QString sha = r.requiredString(QStringLiteral("sha256"));
    const QString receipt = r.requiredString(QStringLiteral("corestoreReceipt"));
    if (!r.failed()) {
        d.streamId = QUuid::fromString(id);
        d.sha256 = sha.toLatin1();
        d.corestoreReceipt = receipt.toUtf8();
        if (d.streamId.isNull())
            r.fail(QStringLiteral("streamId"), QStringLiteral("is not a UUID"));
        else if (d.sizeBytes < 0)
            r.fail(QStringLiteral("sizeBytes"), QStringLiteral("is negative"));
        else if (!StreamingSha256::isHexDigest(d.sha256))
            r.fail(QStringLiteral("sha256"), QStringLiteral("is not a lowercase hex SHA-256"));
        else if (!isCarriableReceipt(d.corestoreReceipt))
            r.fail(QStringLiteral("corestoreReceipt"), QStringLiteral("is empty, above 1024 bytes or not printable ASCII"));
    }
    if (auto refused = r.finish())
        return *refused;
    return d;
}

QJsonObject ClosureDescriptor::toJson() const
{
    return QJsonObject{{QStringLiteral("streamId"), idText(streamId)},
                       {QStringLiteral("serviceId"), serviceId},
                       {QStringLiteral("backupId"), backupId},
                       {QStringLiteral("nodeId"), nodeId},
                       {QStringLiteral("sizeBytes"), double(sizeBytes)},
                       {QStringLiteral("sha256"), QString::fromLatin1(sha256)},
                       {QStringLiteral("corestoreReceipt"), QString::fromLatin1(corestoreReceipt)}};
}

bool ClosureDescriptor::isCarriableReceipt(QByteArrayView receipt)
{
    if (receipt.isEmpty() || receipt.size() > kMaxReceiptBytes)
        return false;
    for (char c : receipt)
        if (c < 0x20 || c > 0x7e)
            return false;
    return true;
}

} // namespace coreflow
