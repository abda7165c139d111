#include "service/registry/registryfailureclass.h"

namespace coreflow {

QByteArray registryFailureClass(HttpClientFailure failure)
{
    switch (failure) {
    case HttpClientFailure::HostNotFound: return QByteArrayLiteral("HostNotFound");
    case HttpClientFailure::ConnectionRefused: return QByteArrayLiteral("ConnectionRefused");
    case HttpClientFailure::Network: return QByteArrayLiteral("Network");
    case HttpClientFailure::TlsHandshake: return QByteArrayLiteral("TlsHandshake");
    case HttpClientFailure::RemoteClosed: return QByteArrayLiteral("RemoteClosed");
    case HttpClientFailure::Protocol: return QByteArrayLiteral("Protocol");
    case HttpClientFailure::HeadersTooLarge: return QByteArrayLiteral("HeadersTooLarge");
    }
    return QByteArrayLiteral("Protocol");
}

} // namespace coreflow
