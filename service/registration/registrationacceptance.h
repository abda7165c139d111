#pragma once
// RegistrationAcceptance: Cloudly's answer to registerClusterRelay (docs/contract.md §6.6) read
// exactly and its offer judged (contract::judgeAnsweredOffer, §2.3). Pure: RelayRegistration reads
// every acceptance with it; the fuzz target fuzz_registration_acceptance feeds it any JSON object.
//
// Wire shape (exact keys at every level):
//   { offer: ProtocolOffer, origin: string,
//     credential: { id: string (non-empty), generation: integer >= 0 },
//     registration: { id: string (non-empty), generation: integer >= 0 } }
// The first problem is request-invalid naming the field ("field response.credential.id is empty"),
// checked in this order: the top level's keys and types, credential, registration, unknown top-level
// keys, then the offer. judged.verdict is NotContract with that problem, NotServable, or Served;
// credential and record are set whenever the verdict is not NotContract.
#include "shared/contract/offers.h"

#include <QJsonObject>
#include <QString>
#include <optional>

namespace coreflow {

// A record Cloudly names by id and generation (the relay credential, the registration record).
struct RecordReference {
    QString id;
    qint64 generation = 0;
    bool operator==(const RecordReference &) const = default;
};

struct RegistrationAcceptance {
    contract::AnsweredOffer judged;
    QString origin;
    std::optional<RecordReference> credential;
    std::optional<RecordReference> record;

    // response: the answer's response member; refusals name fields under "response".
    static RegistrationAcceptance read(const QJsonObject &response);
};

} // namespace coreflow
