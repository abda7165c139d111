#pragma once
// RegistrationAcceptance: Cloudly's answer to registerClusterRelay (docs/contract.md §6.6) read
// exactly. Pure: RelayRegistration reads every acceptance with it; the fuzz target
// fuzz_registration_acceptance feeds it any JSON object.
//
// Wire shape (exact keys at every level):
//   { offer: ProtocolOffer, origin: string,
//     credential: { id: string (non-empty), generation: integer >= 0 },
//     registration: { id: string (non-empty), generation: integer >= 0 } }
// The first problem is request-invalid naming the field ("field response.credential.id is empty"),
// checked in this order: the top level's keys and types, credential, registration, unknown top-level
// keys, then the offer's shape. Whether the offer is servable is the caller's judgement.
#include "shared/contract/offers.h"
#include "shared/contract/result.h"

#include <QJsonObject>
#include <QString>

namespace coreflow {

// A record Cloudly names by id and generation (the relay credential, the registration record).
struct RecordReference {
    QString id;
    qint64 generation = 0;
    bool operator==(const RecordReference &) const = default;
};

struct RegistrationAcceptance {
    contract::ProtocolOffer offer;
    QString origin;
    RecordReference credential;
    RecordReference record;

    // response: the answer's response member; refusals name fields under "response".
    static contract::Result<RegistrationAcceptance> read(const QJsonObject &response);
};

} // namespace coreflow
