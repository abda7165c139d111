#pragma once
// Contract ids (docs/contract.md §1 "Strings"): an `id` string is non-empty, at most 256 characters,
// and carries no control characters.
#include <QString>

namespace coreflow::contract {

// Whether text is an id by that rule.
bool isId(const QString &text);
// The reason a reader gives for a member that is not an id.
QString notAnIdReason();

} // namespace coreflow::contract
