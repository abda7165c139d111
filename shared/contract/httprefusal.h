#pragma once
// HttpRefusal: the one shape of every refusal the relay answers on plain HTTP at its listener
// (docs/contract.md §3 listener handshake, §17 listener HTTP surface): status, header lines and the
// registry-API error body (httpRefusalBody). Pure: no I/O; the writer of the bytes is the caller's
// (a ListenerHttpResponder, or httpResponseHead for an answer that closes the connection).
//
// Header lines, in order: Content-Type: application/json, Content-Length (the body's, bytes),
// Docker-Distribution-API-Version: registry/2.0, then `extraHeaders` as given (Allow, Retry-After).
// The body's code is UNAVAILABLE for a 5xx status (502 registry-unreachable, 503 listener-busy),
// UNSUPPORTED otherwise. name: a refusal name of shared/contract/refusalnames.h; reason and
// failureClass as httpRefusalBody takes them (never a header value, a repository, a query).
#include <QByteArray>
#include <QLatin1StringView>
#include <QList>
#include <QPair>

namespace coreflow::contract {

struct HttpRefusal {
    int status = 0;
    QList<QPair<QByteArray, QByteArray>> headers;
    QByteArray body;
};

HttpRefusal httpRefusal(int status, QLatin1StringView name, const QByteArray &reason, const QByteArray &failureClass = {},
                        const QList<QPair<QByteArray, QByteArray>> &extraHeaders = {});

} // namespace coreflow::contract
