#pragma once
// PublicationReceiptValidator: the relay's validateCorestoreCredentialPublicationReceipt
// (docs/contract.md §12.4, CS-35, CS-44, CS-45). A receipt is the relay's only when every member of its
// scope matches what the relay published: the mutation id ("corestore-publication:" + grant operation),
// the binding's organization, the config's cluster, the service, the binding name and the digest of
// the envelope it sent. check() returns every reason the receipt fails (one per member, in that order)
// and, for each misstated member, "<member> expected <value> received <value>"; a value is repeated
// only when it is 1..128 printable ASCII characters without space, quote or backslash (ids, mutation
// ids, hex digests), else described by its length. Pure, no state;
// nothing checked here is secret.
#include "service/bindings/publicationreceipt.h"

#include <QStringList>

namespace coreflow {

class PublicationReceiptValidator {
public:
    struct Expected {
        QString mutationId;
        QString organizationId;
        QString clusterId;
        QString serviceId;
        QString bindingName;
        QString envelopeDigest;
    };
    struct Verdict {
        QStringList reasons;       // empty: the receipt is valid
        QStringList misstatements; // "<member> expected <e> received <r>"
        bool valid() const { return reasons.isEmpty(); }
    };

    static Verdict check(const Expected &expected, const PublicationReceipt &receipt);
};

} // namespace coreflow
