#pragma once
// BindingPublication: the seam between binding reconciliation (docs/contract.md §12.2, §12.5) and the
// publication of a binding's answered credential material to Cloudly (§12.4, CS-34..46).
// Implemented by the publisher; reconciliation never sees a recipient, an envelope or ciphertext.
//
// publish(request, material, done): material is Corestore's answered CredentialMaterial (§15.2) as
// UTF-8 JSON, taken by the publisher (sealed to Cloudly's recipient, then wiped; never logged).
// done() is called exactly once, never from inside publish():
//   Published  a verified receipt is held for request.grantOperation (ready may be reported, CS-36)
//   Committed  Cloudly answered REPLAY_CONFLICT: nothing more is sent under this grant (CS-43)
//   Retry      a lost answer, INTERNAL_ERROR or a receipt the validator refused: the held request is
//              resent unchanged on the next publish() of the same grant (never reported failed)
//   Failed     another named refusal (reason: its name and text, value-free): reported failed
// A grant already Published answers Published again without sealing anything (CS-40).
// forget(grantOperation): the grant left the config; the held ciphertext and receipt are dropped.
#include "shared/secret.h"

#include <QString>
#include <functional>

namespace coreflow {

struct BindingPublicationRequest {
    QString grantOperation;
    qint64 grantGeneration = 0;
    QString nodeId;
    QString serviceId;
    QString bindingName;
    QString capability;      // "database" | "objectstorage"
    QString organizationId;  // the binding's organisation (receipt check, CS-35)
    QString clusterId;       // the config's cluster id (receipt check, CS-35)
};

struct BindingPublicationOutcome {
    enum class Kind { Published, Committed, Retry, Failed };
    Kind kind = Kind::Retry;
    QString reason; // value-free; empty for Published
};

class BindingPublication {
public:
    using Done = std::function<void(const BindingPublicationOutcome &outcome)>;

    virtual ~BindingPublication() = default;
    virtual void publish(const BindingPublicationRequest &request, Secret material, Done done) = 0;
    virtual void forget(const QString &grantOperation) = 0;
    virtual bool holdsReceipt(const QString &grantOperation) const = 0;
};

} // namespace coreflow
