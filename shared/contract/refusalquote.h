#pragma once
// RefusalQuote: what a refusal reason may repeat of a name the peer chose (an unknown member's key, an
// unknown method, a status message type). docs/contract.md §1 "Exact keys" and §3.1 "Refusals".
//
// A peer-chosen name is quoted only when it is plain: 1 to maxQuotedChars (64) characters, each an
// ASCII letter, digit, '_', '-' or '.'. Every name of the contract is plain (camelCase keys, method
// names, lowercase words). Anything else (control characters, quotes, spaces, non-ASCII, longer
// names) is never repeated: the reason describes it by its length instead, so a reason stays one short
// line whatever the peer sent, and a terminal or log that shows it cannot be steered by it.
//
// Readers that hold secrets (the route table, the ingress registration: D-42) never name an unknown
// member at all and use unnamedMember(). Pure functions, no state.
#include <QString>
#include <QStringView>

namespace coreflow::contract {

class RefusalQuote {
public:
    static constexpr qsizetype maxQuotedChars = 64;

    // True when name may be repeated in a refusal reason (see above).
    static bool isPlain(QStringView name);
    // name itself when plain, else "a name of <n> characters".
    static QString nameOrLength(QStringView name);
    // "field <path> is unknown" for a plain key, else unnamedMember(path).
    static QString unknownMember(const QString &path, QStringView key);
    // "field <path> has a member the contract does not name" (D-42: the name is not repeated).
    static QString unnamedMember(const QString &path);
};

} // namespace coreflow::contract
