#pragma once
// CredentialPublisher: publishes one binding's credential material to Cloudly, sealed to Cloudly's
// secret ingress recipient (docs/contract.md §12.4; rules CS-34..CS-46). It implements the
// BindingPublication seam that binding reconciliation (§12.2) calls once Corestore answered a
// binding's material.
//
// Order per grant operation (CS-34): getSecretIngressRecipient -> seal { context, material }
// (PublicationEnvelope) -> publishCorestoreCredentialMaterial with mutationId "corestore-publication:"
// + grant operation (CS-37) -> the receipt read and checked by PublicationReceiptValidator against the
// config's cluster, the binding's organization, the service, the binding and the envelope digest
// (CS-35).
//
// Custody, per grant operation, until forget() (the grant left the config push, CS-39): the exact
// request bytes (ciphertext only) and, once one arrives, the verified receipt. Outcomes (the seam's
// kinds; every reason value-free, "<name>: <text>"):
//   Published  a verified receipt; later publish() calls answer it again and seal nothing (CS-40)
//   Retry      the request stays held and the next publish() sends the same bytes (CS-38, CS-42,
//              CS-44), never failed: the answer was lost (cloudly-forward-timeout, cloudly-session-lost,
//              cloudly-session-unavailable), unnamed, INTERNAL_ERROR, or a receipt that fails its
//              reader or the validator, which is logged once at error level
//              (corestore-publication-receipt-refused:) with the grant operation, every reason and
//              each misstated member expected vs received (CS-45)
//   Committed  REPLAY_CONFLICT: Cloudly committed another envelope under this mutation; the grant
//              stays marked committed, nothing is read, sealed or sent under it again, and a warning
//              (corestore-publication-replay-conflict:) naming the grant operation is logged on this
//              and every later attempt (CS-43); never failed
//   Failed     before any request is held (CS-46): publication-unbound (no cluster or organization),
//              publication-material-unusable, the recipient read refused or unreadable (Cloudly's
//              name, publication-answer-invalid, or the call's refusal); or a named refusal other than
//              INTERNAL_ERROR/REPLAY_CONFLICT, which drops the held request so the next attempt seals
//              afresh, to a rotated recipient if any (CS-41)
// done() runs exactly once, from the event loop, never inside publish(). forget() while an attempt
// runs answers it Retry (publication-forgotten); its late answer changes nothing.
// A publish() while one runs for the same grant operation waits for it and gets its outcome.
//
// Secrecy: the material is a Secret (guarded memory) from the caller to the seal and is wiped once the
// sealed bytes exist; the plaintext is composed in guarded memory. No log line, outcome, status or
// error carries material; the only values logged are ids, names and digests.
#include "service/bindings/bindingpublication.h"
#include "service/bindings/publicationreceipt.h"
#include "service/cloudly/cloudlyconnector.h"
#include "shared/contract/timing.h"
#include "shared/secret.h"

#include <QHash>
#include <QObject>
#include <optional>
#include <vector>

namespace coreflow {

struct IngressRecipient;

class CredentialPublisher : public QObject, public BindingPublication {
    Q_OBJECT
public:
    CredentialPublisher(CloudlyConnector &cloudly, const contract::RelayTiming &timing, QObject *parent = nullptr);
    ~CredentialPublisher() override;

    void publish(const BindingPublicationRequest &request, Secret material, Done done) override;
    void forget(const QString &grantOperation) override;
    bool holdsReceipt(const QString &grantOperation) const override;

    // Observation (status, tests): grant operations with a held request or receipt, sealed envelopes
    // made and publish requests sent since start.
    int heldCount() const { return int(m_held.size()); }
    bool holdsRequest(const QString &grantOperation) const;
    bool isMarkedCommitted(const QString &grantOperation) const;
    int sealsMade() const { return m_seals; }
    // Bytes of material plaintext held now (guarded memory): nonzero only while a recipient is read.
    qsizetype materialBytesHeld() const;
    int requestsSent() const { return m_sends; }

private:
    struct Held {
        BindingPublicationRequest request;
        Secret material;            // only while the recipient is read; wiped once sealed
        QByteArray body;            // the exact publish request bytes (ciphertext only)
        QString digest;             // its envelope digest
        std::optional<PublicationReceipt> receipt;
        bool committedElsewhere = false; // REPLAY_CONFLICT
        bool running = false;       // a recipient read or a publish is under way
        quint64 attempt = 0;        // guards answers of a forgotten or replaced attempt
        std::vector<Done> waiting;
    };

    void readRecipient(const QString &grantOperation);
    void sealAndSend(const QString &grantOperation, const IngressRecipient &recipient);
    void send(const QString &grantOperation);
    void onAnswer(const QString &grantOperation, const CloudlyConnector::CallResult &result);
    void finish(const QString &grantOperation, const BindingPublicationOutcome &outcome, bool dropHeld);
    void warnCommitted(const Held &held) const;
    // Runs done(outcome) from the event loop (never inside publish()); dropped if this is destroyed.
    void answer(Done done, const BindingPublicationOutcome &outcome);

    CloudlyConnector &m_cloudly;
    contract::RelayTiming m_timing;
    QHash<QString, Held> m_held; // grant operation -> custody
    quint64 m_nextAttempt = 1;
    int m_seals = 0;
    int m_sends = 0;
};

} // namespace coreflow
