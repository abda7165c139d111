#pragma once
// IngressRecipient: Cloudly's active secret ingress recipient, the answer of getSecretIngressRecipient
// (docs/contract.md §12.4): { recipient: { keyId: string, publicKey: string /* base64 X25519 */,
// generation: integer } }. read() takes the response object exactly (every member required, nothing
// else); keyId must be non-empty, publicKey standard base64 of exactly 32 bytes (crypto_box), generation
// an integer >= 0. Anything else is the refusal publication-answer-invalid naming the field, never a
// value. Nothing here is secret: the public key is what the relay seals to.
#include "shared/contract/result.h"

#include <QByteArray>
#include <QJsonObject>
#include <QString>

namespace coreflow {

struct IngressRecipient {
    QString keyId;
    QByteArray publicKey; // 32 bytes, decoded
    qint64 generation = 0;

    static contract::Result<IngressRecipient> read(const QJsonObject &response);
};

} // namespace coreflow
