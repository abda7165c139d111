#pragma once
// registryFailureClass: the name the registry lane gives a failure of its upstream HTTP client
// (docs/contract.md §17, the failure classes of registry-unreachable): the enumerator's own name
// (ConnectionRefused, HostNotFound, TlsHandshake, RemoteClosed, Protocol, HeadersTooLarge,
// Network). The lane's own Timeout class is not a client failure (RegistryExchange measures it).
#include "service/transport/httpclientfailure.h"

#include <QByteArray>

namespace coreflow {

QByteArray registryFailureClass(HttpClientFailure failure);

} // namespace coreflow
