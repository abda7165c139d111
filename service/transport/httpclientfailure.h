#pragma once
// HttpClientFailure: why an exchange of the relay's HTTP client (HttpClientPool,
// HttpClientConnection) ended without a whole answer. The lane names it on its own surface (the
// registry lane: the failure classes of docs/contract.md §17, registryFailureClass).
//   HostNotFound       the origin's name did not resolve (TcpDialer::Failure::HostNotFound)
//   ConnectionRefused  the origin refused the TCP connection
//   Network            any other dial failure
//   TlsHandshake       no TLS client context, or the TLS handshake failed (an untrusted or
//                      misnamed certificate included)
//   RemoteClosed       the peer closed before its answer ended
//   Protocol           the answer is not HTTP/1.1 http_parser accepts, or bytes followed nothing asked
//   HeadersTooLarge    the answer's header block is over http_parser's 80 KiB or the lines bound
//                      (HttpClientLimits::maxHeaderLines)
namespace coreflow {

enum class HttpClientFailure { HostNotFound, ConnectionRefused, Network, TlsHandshake, RemoteClosed, Protocol, HeadersTooLarge };

} // namespace coreflow
