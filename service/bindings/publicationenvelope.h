#pragma once
// PublicationEnvelope: one binding's credential material sealed to Cloudly's secret ingress recipient
// (docs/contract.md §12.4, CS-34). The plaintext is the UTF-8 JSON { "context": <context>,
// "material": <material> }, composed in guarded memory around the material's own bytes (verbatim), and
// sealed with crypto_box_seal to the recipient's X25519 public key; the plaintext is wiped as soon as
// the sealed bytes exist. What remains is ciphertext only:
//   recipientKeyId  the recipient's keyId
//   context         "corestore-credential-material|<clusterId>|<organizationId>|<serviceId>|
//                    <bindingName>|<mutationId>" (contextFor(); createPublishCorestoreCredential-
//                    MaterialEnvelopeContext upstream)
//   sealed          base64 (standard alphabet, padded) of the sealed bytes
//   digest          lowercase hex SHA-256 (crypto_hash_sha256) of the sealed bytes
// seal() refuses publication-material-unusable when the material is not one JSON object (read by
// simdjson over a guarded copy: no decoded string of it is made); the refusal names no value.
#include "service/bindings/ingressrecipient.h"
#include "shared/contract/result.h"
#include "shared/secret.h"

#include <QByteArray>
#include <QString>

namespace coreflow {

struct PublicationEnvelope {
    QString recipientKeyId;
    QString context;
    QByteArray sealed; // base64
    QString digest;    // hex SHA-256 of the decoded sealed bytes

    static QString contextFor(const QString &clusterId, const QString &organizationId, const QString &serviceId,
                              const QString &bindingName, const QString &mutationId);
    // True when material is exactly one JSON object (surrounding whitespace allowed).
    static bool isJsonObject(const Secret &material);
    static contract::Result<PublicationEnvelope> seal(const IngressRecipient &recipient, const QString &context, const Secret &material);
};

} // namespace coreflow
