#pragma once
// The body of every refusal the relay answers on plain HTTP at its listener (contract §17): the
// registry API's error shape (distribution spec "Error Codes"), UTF-8 JSON, served with
// Content-Type: application/json. Pure: no I/O.
//
//   {"errors":[{"code":"<CODE>","message":"<refusal-name>[: <reason>]",
//               "detail":{"name":"<refusal-name>"[,"class":"<FailureClass>"]}}]}
//
// code is the registry error code (UNSUPPORTED, UNAVAILABLE); name a refusal name of
// shared/contract/refusalnames.h; reason and failureClass never carry a header value, a path's
// repository, a query or an error message of a lower layer.
#include <QByteArray>
#include <QLatin1StringView>

namespace coreflow::contract {

QByteArray httpRefusalBody(QLatin1StringView code, QLatin1StringView name, const QByteArray &reason,
                           const QByteArray &failureClass = {});

} // namespace coreflow::contract
