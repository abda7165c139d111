#pragma once
// RegistryPathFilter: which request paths the pull endpoint forwards (docs/contract.md §17, "Refused
// paths"). Pure: RegistryProxy asks it per request; the fuzz target fuzz_http_request feeds it the
// paths http_parser and QUrl make of any request.
//
// Input: the request path as QUrl gives it FullyEncoded. Served: "/v2", a path under "/v2/", or one of
// the token realm paths Cloudly's challenges named (isTokenPath), unless a segment decodes to "." or
// "..", or the path holds %2F or %5C (any case), an encoded control character (%00-%1F, %7F), a
// truncated or malformed escape, a raw control character or a backslash. Everything else is
// 404 path-not-served, and nothing is forwarded.
#include <QString>

namespace coreflow {

class RegistryPathFilter {
public:
    static bool isServed(const QString &encodedPath, bool isTokenPath);
    static bool isUnderV2(const QString &encodedPath);
    static bool hasDotSegment(const QString &encodedPath);
    static bool hasRefusedEncoding(const QString &encodedPath);
};

} // namespace coreflow
