#pragma once
// ListenerHttpHandler: what the relay listener hands a plain HTTP request to (everything on the one TLS
// port that is not the WebSocket upgrade at "/"). docs/contract.md §5, §17: the listener's whole HTTP
// surface beside the upgrade is the image pull endpoint at /v2 and under /v2/.
//
// The handler owns the exchange from here: it answers through the responder now or later (see
// ListenerHttpResponder). The listener hands out a connection's next request only after the
// responder's finish(); bounds, refusals of request bodies and pipelining are the listener's
// (ListenerHttpConnection).
#include "service/listener/listenerhttprequest.h"
#include "service/listener/listenerhttpresponder.h"

#include <QByteArray>
#include <QLatin1StringView>

#include <memory>

namespace coreflow {

// The header line bound a handler's requests are read with, and what a request crossing it is
// answered while its header block is still arriving (docs/contract.md §17, D-60): the listener
// refuses the piece that would begin line maxLines + 1, before anything more of the block is kept.
struct ListenerHeaderLineBound {
    qsizetype maxLines = -1; // lines per request (negative: only the listener's byte bound)
    int status = 431;
    QLatin1StringView name;
    QByteArray reason;
};

class ListenerHttpHandler {
public:
    virtual ~ListenerHttpHandler() = default;
    virtual ListenerHeaderLineBound headerLineBound() const { return {}; }
    virtual void handleHttp(const ListenerHttpRequest &request, std::unique_ptr<ListenerHttpResponder> responder) = 0;
};

} // namespace coreflow
