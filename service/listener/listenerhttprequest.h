#pragma once
// ListenerHttpRequest: one plain HTTP/1.1 request read by the relay listener (ListenerHttpConnection,
// parsed with http_parser), as the ListenerHttpHandler receives it (docs/contract.md §17, D-53).
//
// Shapes: method as sent ("GET", "HEAD", ...); url built from the request target the way a server
// reads it (path and query percent-encoded as sent, a malformed escape re-encoded by QUrl's tolerant
// mode); headers in arrival order, names as sent, values without surrounding whitespace, repeated
// lines kept apart. hasBody: the request announced a body (Content-Length other than 0 or any
// Transfer-Encoding); the listener refuses such a request itself (413/405) before it reaches a
// handler, so a handler sees it set only when called directly (tests).
#include <QByteArray>
#include <QList>
#include <QPair>
#include <QUrl>

namespace coreflow {

struct ListenerHttpRequest {
    QByteArray method;
    QUrl url;
    QList<QPair<QByteArray, QByteArray>> headers;
    bool hasBody = false;
};

} // namespace coreflow
