#pragma once
// ClosureDescriptor: what a closure stream states about its bytes (docs/contract.md §13.4):
//   { streamId: UUID, serviceId, backupId, nodeId, sizeBytes: integer ≥ 0, sha256: lowercase hex,
//     corestoreReceipt: string (opaque) }
// read() is the exact-key reader of Cloudly's descriptor (openServiceDatabaseClosure's answer);
// toJson() the relay's own (offerServiceDatabaseClosure's request). The receipt is carried to
// Corestore as a header value, so read() refuses one that is empty, above kMaxReceiptBytes or holds
// a control character (it could not travel in a header line).
#include "shared/contract/result.h"

#include <QJsonObject>
#include <QString>
#include <QUuid>

namespace coreflow {

struct ClosureDescriptor {
    static constexpr qsizetype kMaxReceiptBytes = 1024;

    QUuid streamId;
    QString serviceId;
    QString backupId;
    QString nodeId;
    qint64 sizeBytes = 0;
    QByteArray sha256;
    QByteArray corestoreReceipt;

    static contract::Result<ClosureDescriptor> read(const QJsonObject &object, const QString &path);
    QJsonObject toJson() const;
    // A receipt that may travel in a header line (printable ASCII, 1..kMaxReceiptBytes).
    static bool isCarriableReceipt(QByteArrayView receipt);
    // The contract's text form of a stream id (lowercase, no braces).
    static QString idText(const QUuid &id) { return id.toString(QUuid::WithoutBraces); }
};

} // namespace coreflow
