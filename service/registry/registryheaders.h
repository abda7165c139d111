#pragma once
// RegistryHeaders: the allow-lists and bounds of the headers that cross the pull endpoint (rules
// IP-15..IP-19). Pure: no I/O, no logging.
//
// Request (node -> registry), forwardRequest():
//   allowed: Authorization (untouched, IP-04; at most one line), Accept (several lines are merged into
//   one value joined by ", " in arrival order), Range, If-Range, If-None-Match, If-Modified-Since,
//   User-Agent. Accept-Encoding is always sent as "identity" whatever the node sent (IP-15). Every
//   other header is dropped: Host (the upstream's own is used), Cookie, Connection, Keep-Alive, TE,
//   Trailer, Transfer-Encoding, Upgrade, Proxy-*, Content-Length, X-Forwarded-*, ...
//   bounds: at most kMaxLines header lines read from the node, each kept value at most kMaxValueBytes,
//   all kept values together at most kMaxTotalBytes. A request over a bound is refused (ok == false),
//   never forwarded with a header silently missing.
// Response (registry -> node), returnResponse():
//   allowed: Content-Type, Content-Length, Content-Range, Content-Encoding, Accept-Ranges, ETag,
//   Last-Modified, Location, Link, Date, Cache-Control, Expires, Vary, Retry-After,
//   X-Content-Type-Options, Docker-Content-Digest, Docker-Distribution-API-Version; WWW-Authenticate is
//   returned separately (wwwAuthenticate) for the realm rewrite. Set-Cookie, Connection,
//   Transfer-Encoding, Keep-Alive, Strict-Transport-Security, Server and everything else are dropped.
//   Content-Length is returned only for an identity answer (IP-16); an answer with a Content-Encoding
//   other than identity loses its Content-Length (IP-17) and keeps its Content-Encoding, so the node
//   can decode the registry's own bytes (decision "IP-17/ambiguity 24").
//   bounds: the same as the request's; over a bound the answer is not relayed (ok == false).
#include <QByteArray>
#include <QList>
#include <QPair>

namespace coreflow {

using HeaderPairs = QList<QPair<QByteArray, QByteArray>>;

struct ForwardedRequestHeaders {
    bool ok = false;
    QByteArray why;          // when !ok: which bound was exceeded (no header value)
    HeaderPairs headers;     // canonical names, values untouched
};

struct ReturnedResponseHeaders {
    bool ok = false;
    QByteArray why;          // when !ok: which bound was exceeded (no header value)
    HeaderPairs headers;     // allowed headers except WWW-Authenticate, Content-Length already decided
    QList<QByteArray> wwwAuthenticate; // raw WWW-Authenticate values, in order
    qint64 contentLength = -1;         // the registry's Content-Length when it is returned, else -1
    bool encoded = false;              // Content-Encoding present and not identity
};

class RegistryHeaders {
public:
    static constexpr qsizetype kMaxLines = 100;
    static constexpr qsizetype kMaxValueBytes = 16 * 1024;
    static constexpr qsizetype kMaxTotalBytes = 64 * 1024;

    static ForwardedRequestHeaders forwardRequest(const HeaderPairs &nodeHeaders);
    static ReturnedResponseHeaders returnResponse(const HeaderPairs &upstreamHeaders);
};

} // namespace coreflow
