#pragma once
// WwwAuthenticateRewriter: the one header the pull endpoint rewrites (rules IP-08..IP-12). Pure: no I/O,
// no logging, no state; RegistryExchange feeds it the registry's WWW-Authenticate values and
// RegistryProxy logs the foreign origins it reports.
//
// Input: the WWW-Authenticate header value(s) as received (RFC 9110 §11.6.1: a comma-separated list
// of challenges, each `scheme [ token68 | #auth-param ]`); a value may hold several challenges and
// there may be several values.
// Output: one value per challenge, in order. Every byte of a challenge is kept exactly as the registry
// wrote it (scheme, spacing, service, scope, every other parameter, the realm's path/query/fragment),
// except that a realm whose origin equals Cloudly's origin (scheme, host case-insensitively, effective
// port) has its `scheme://authority` prefix replaced by the relay's origin.
//   Bearer realm="https://cloudly.example/v2/token",service="cloudly.example"
//   -> Bearer realm="https://relay.cluster:8443/v2/token",service="cloudly.example"
// Why one value per challenge: a registry (or a proxy before it) may join several challenges into one
// line with ", ", and the relay cannot always tell that from one challenge's parameters; one line per
// challenge is what every client parses (docker/distribution's client reads one challenge per line).
//
// A realm that is an absolute http(s) URL naming any other origin is left untouched and its origin
// ("scheme://host[:port]") is reported in foreignRealmOrigins (the caller logs each distinct origin
// once). A realm that is not an absolute URL (e.g. Basic realm="registry") is left untouched and not
// reported. A quoted realm containing a backslash escape is left untouched (never re-escaped).
#include <QByteArray>
#include <QList>
#include <QString>
#include <QUrl>

namespace coreflow {

struct WwwAuthenticateRewrite {
    QList<QByteArray> values;              // one header value per challenge, realm origin rewritten
    QList<QString> foreignRealmOrigins;    // distinct origins of realms not rewritten (third party)
    QList<QString> rewrittenRealmPaths;    // path (percent-encoded, no query) of each rewritten realm
};

class WwwAuthenticateRewriter {
public:
    // cloudlyOrigin and relayOrigin: absolute http(s) URLs; only their scheme, host and port are read.
    WwwAuthenticateRewriter(const QUrl &cloudlyOrigin, const QUrl &relayOrigin);

    WwwAuthenticateRewrite rewrite(const QList<QByteArray> &headerValues) const;

    // Splits one header value into its challenges (trimmed of the separating comma and spaces), each
    // byte-identical to its span in the input. Commas inside quoted strings do not split.
    static QList<QByteArray> splitChallenges(const QByteArray &value);

    // "scheme://host[:port]" with the port omitted when it is the scheme's default; empty when the
    // URL is not an absolute http(s) URL with a host. IPv6 hosts are bracketed.
    static QString originString(const QUrl &url);
    // True when both are absolute http(s) URLs with equal scheme, host (case-insensitive) and
    // effective port.
    static bool sameOrigin(const QUrl &a, const QUrl &b);

private:
    QByteArray rewriteChallenge(const QByteArray &challenge, WwwAuthenticateRewrite &out) const;

    QUrl m_cloudly;
    QByteArray m_relayOrigin; // originString(relayOrigin), UTF-8
};

} // namespace coreflow
