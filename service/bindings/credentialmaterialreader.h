#pragma once
// CredentialMaterialReader: checks Corestore's answered CredentialMaterial (docs/contract.md §15.2)
// without letting any of it out of guarded memory, and tells the value-free facts the relay acts on.
//
//   database:      { capability: "database", endpoint: { host: string, port: integer },
//                    database: string, username: string, password: string, uri: string }
//   objectstorage: { capability: "objectstorage", endpoint: string, bucket: string,
//                    accessKeyId: string, secretAccessKey: string, region: string }
//
// Exact keys (every member required, nothing else, each of its type; strings non-empty). The text is
// read by simdjson from a copy that is wiped when read() returns; no QString or QJson value of it is
// made. A refusal's reason names the member (`material.password is missing`), never a value, and
// never an unknown member's name (secret-bearing body, D-42).
#include "service/bindings/bindingrequest.h"
#include "shared/secret.h"

#include <QString>
#include <optional>
#include <variant>

namespace coreflow {

struct CredentialMaterialFacts {
    QString capability;                       // "database" | "objectstorage"
    std::optional<DatabaseEndpoint> endpoint; // database material: where it is addressed
};

class CredentialMaterialReader {
public:
    // The facts, or the problem (value-free).
    static std::variant<CredentialMaterialFacts, QString> read(const Secret &material);
};

} // namespace coreflow
