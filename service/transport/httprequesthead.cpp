#include "service/transport/httprequesthead.h"

namespace coreflow {

QByteArray httpRequestHead(const HttpClientRequest &request, QByteArrayView host, QByteArrayView connection)
{
    QByteArray head;
    head.reserve(256 + request.target.size());
    head += request.method + ' ' + request.target + " HTTP/1.1\r\nHost: ";
    head += host;
    head += "\r\n";
    for (const auto &[name, value] : request.headers)
        head += name + ": " + value + "\r\n";
    if (!connection.isEmpty()) {
        head += "Connection: ";
        head += connection;
        head += "\r\n";
    }
    head += "\r\n";
    return head;
}

} // namespace coreflow
