#pragma once
// RegistryRefusal: the answers the pull endpoint gives itself, in the registry API's error shape
// (distribution spec "Error Codes"), and the failure classes of an upstream that could not answer.
// Pure: no I/O.
//
// Body shape (UTF-8 JSON, Content-Type application/json):
//   {"errors":[{"code":"<CODE>","message":"<refusal-name>: <reason>","detail":{"name":"<refusal-name>"[,"class":"<Class>"]}}]}
// Answers:
//   404 UNSUPPORTED  path-not-served          path outside /v2/ and not a token realm path (IP-03)
//   405 UNSUPPORTED  registry-method-refused  method other than GET/HEAD (IP-02); Allow: GET, HEAD
//   400 UNSUPPORTED  request-invalid          a malformed request, a control character in a header,
//                                             a second Authorization (a body: 413 from the listener)
//   431 UNSUPPORTED  registry-headers-too-large  request headers over the §17 bounds (IP-18)
//   502 UNAVAILABLE  registry-unreachable     upstream failed before answering (IP-21); detail.class
//                                             names the failure class only, never its message (IP-22)
//   502 UNAVAILABLE  registry-headers-too-large  the answer's headers over the bounds (IP-19; class
//                                             HeadersTooLarge)
#include <QByteArray>
#include <QLatin1StringView>
#include <QAbstractSocket>

namespace coreflow {

class RegistryRefusal {
public:
    // The JSON body; `reason` and `failureClass` must never contain a header value or an error message.
    static QByteArray body(QLatin1StringView code, QLatin1StringView name, const QByteArray &reason,
                           const QByteArray &failureClass = {});

    // Failure classes (stable words, usable in logs and bodies):
    //   ConnectionRefused, HostNotFound, Timeout, TlsHandshake, RemoteClosed, Proxy, Protocol,
    //   HeadersTooLarge, Network
    // The first six and Network come from the upstream socket's error (this function); Protocol and
    // HeadersTooLarge from the answer's parsing (UpstreamResponseParser, RegistryHeaders); Timeout also
    // from the exchange's header timeout. An HTTP error status is not a failure: it is relayed as it is.
    static QByteArray failureClass(QAbstractSocket::SocketError error);
};

} // namespace coreflow
