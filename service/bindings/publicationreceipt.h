#pragma once
// PublicationReceipt: Cloudly's receipt for one published envelope, the answer of
// publishCorestoreCredentialMaterial (docs/contract.md §12.4): { receipt: { mutationId, organizationId,
// clusterId, serviceId, bindingName, envelopeDigest: string, acceptedAt: integer Unix ms } }.
// read() takes the response object exactly (every member required, nothing else); a shape failure is
// the refusal publication-answer-invalid naming the field. Whether the receipt is the one the relay
// expects is PublicationReceiptValidator's question, not the reader's. Nothing here is secret.
#include "shared/contract/result.h"

#include <QJsonObject>
#include <QString>

namespace coreflow {

struct PublicationReceipt {
    QString mutationId;
    QString organizationId;
    QString clusterId;
    QString serviceId;
    QString bindingName;
    QString envelopeDigest; // lowercase hex SHA-256 of the sealed bytes
    qint64 acceptedAtMs = 0;

    static contract::Result<PublicationReceipt> read(const QJsonObject &response);
};

} // namespace coreflow
