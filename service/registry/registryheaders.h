#pragma once
// RegistryHeaders: the allow-lists and bounds of the headers that cross the pull endpoint (rules
// IP-15..IP-19). Pure: no I/O, no logging.
//
// Request (node -> registry), forwardRequest():
//   allowed: Authorization (untouched, IP-04; at most one line), Accept (several lines are merged into
//   one value joined by ", " in arrival order), Range, If-Range, If-None-Match, If-Modified-Since,
//   User-Agent, Docker-Distribution-API-Version. Accept-Encoding is always sent as "identity" whatever the node sent (IP-15). Every
//   other header is dropped: Host (the upstream's own is used), Cookie, Connection, Keep-Alive, TE,
//   Trailer, Transfer-Encoding, Upgrade, Proxy-*, Content-Length, X-Forwarded-*, ...
//   bounds (docs/contract.md §17, D-11): at most kMaxLines (32) header lines read from the node, all
//   kept values together at most kMaxTotalBytes (32768 bytes), each at most kMaxValueBytes (16384). A
//   request over a bound is refused (ok == false, tooLarge: 431 registry-headers-too-large), never
//   forwarded with a header silently missing.
//   control characters: a value of ANY node header (kept or not) holding a control character other
//   than HTAB (0x00-0x08, 0x0A-0x1F, 0x7F; a bare CR or LF included) is refused (ok == false): such a
//   value can split a header line on a later hop.
//   The relay's own connection adds Host, Connection and Accept-Language; Accept-Language is always
//   the fixed "*" (kRelayAcceptLanguage) so nothing of the relay's locale travels (IP-18).
// Response (registry -> node), returnResponse():
//   allowed: Content-Type, Content-Length, Content-Range, Content-Encoding, Accept-Ranges, ETag,
//   Last-Modified, Location, Link, Date, Cache-Control, Expires, Vary, Retry-After,
//   X-Content-Type-Options, Docker-Content-Digest, Docker-Distribution-API-Version; WWW-Authenticate is
//   returned separately (wwwAuthenticate) for the realm rewrite. Set-Cookie, Connection,
//   Transfer-Encoding, Keep-Alive, Strict-Transport-Security, Server and everything else are dropped.
//   Content-Length is returned only for an identity answer (IP-16); an answer with a Content-Encoding
//   other than identity loses its Content-Length (IP-17) and keeps its Content-Encoding, so the node
//   can decode the registry's own bytes (decision "IP-17/ambiguity 24").
//   bounds: the same as the request's; over a bound the answer is not relayed (ok == false,
//   failureClass HeadersTooLarge).
//   control characters (as for the request): an allowed header holding one is dropped (never relayed);
//   a WWW-Authenticate holding one fails the answer (ok == false, failureClass Protocol), since the
//   node could not authenticate without it and a rewritten realm must never carry one.
//   (Behind the relay's upstream client such an answer never gets here: http_parser refuses control
//   characters in header values, HttpResponseParser fails it as Protocol. These checks stay as the
//   rule's second line.)
#include "service/transport/httpheaderpairs.h"

#include <QByteArray>

namespace coreflow {

using HeaderPairs = HttpHeaderPairs;

struct ForwardedRequestHeaders {
    bool ok = false;
    QByteArray why;          // when !ok: which bound was exceeded (no header value)
    bool tooLarge = false;   // when !ok: a size bound (not a control character or a second Authorization)
    HeaderPairs headers;     // canonical names, values untouched
};

struct ReturnedResponseHeaders {
    bool ok = false;
    QByteArray why;          // when !ok: which bound was exceeded (no header value)
    QByteArray failureClass; // when !ok: HeadersTooLarge or Protocol
    int droppedForControlCharacters = 0;
    HeaderPairs headers;     // allowed headers except WWW-Authenticate, Content-Length already decided
    QList<QByteArray> wwwAuthenticate; // raw WWW-Authenticate values, in order
    qint64 contentLength = -1;         // the registry's Content-Length when it is returned, else -1
    bool encoded = false;              // Content-Encoding present and not identity
};

class RegistryHeaders {
public:
    static constexpr qsizetype kMaxLines = 32;
    static constexpr qsizetype kMaxValueBytes = 16 * 1024;
    static constexpr qsizetype kMaxTotalBytes = 32 * 1024;
    static constexpr const char *kRelayAcceptLanguage = "*";

    // True when `value` holds a byte below 0x20 other than HTAB, or 0x7F.
    static bool hasControlCharacter(const QByteArray &value);

    static ForwardedRequestHeaders forwardRequest(const HeaderPairs &nodeHeaders);
    static ReturnedResponseHeaders returnResponse(const HeaderPairs &upstreamHeaders);
};

} // namespace coreflow
