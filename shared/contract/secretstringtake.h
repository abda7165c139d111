#pragma once
// takeSecretString: a secret string member read out of a JSON text without a QString or
// QJsonDocument copy (docs/contract.md §19.4). The string at `path` (object keys, outermost first)
// is unescaped by simdjson straight into a buffer that is wiped once the Secret holds it, and the
// member's bytes in `json` are overwritten with 'x' (the text stays valid JSON with a string of the
// same length), so a QJsonDocument built from `json` afterwards holds no copy of the secret. The
// padded copy simdjson reads is wiped too. nullopt (json unchanged) when the text is not JSON or no
// string lies at path; the caller's own reader then refuses it by name.
#include "shared/secret.h"

#include <QByteArray>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace coreflow::contract {

std::optional<Secret> takeSecretString(QByteArray &json, std::initializer_list<std::string_view> path);

// The same for the string member `key` of every element of the array at arrayPath (e.g. every
// certificate's privateKeyPem in a route table), in array order; an element that is not an object
// or has no string there gives an empty Secret (and is left as it was). nullopt: not JSON, or no
// array at arrayPath.
std::optional<QList<Secret>> takeSecretStrings(QByteArray &json, std::initializer_list<std::string_view> arrayPath,
                                               std::string_view key);

// The same with the string at elementPath inside each element (e.g. {"grant", "authority"}); an
// element where a step is missing or null gives an empty Secret.
std::optional<QList<Secret>> takeSecretStrings(QByteArray &json, std::initializer_list<std::string_view> arrayPath,
                                               std::initializer_list<std::string_view> elementPath);

// A whole object member (e.g. Corestore's answered credential material, §15.2) as its JSON text in a
// Secret, byte for byte as it arrived; in `json` the object is replaced by `{}` padded with spaces
// (same length, still valid JSON). nullopt (json unchanged): not JSON, or no object at path.
std::optional<Secret> takeSecretObject(QByteArray &json, std::initializer_list<std::string_view> path);

} // namespace coreflow::contract
