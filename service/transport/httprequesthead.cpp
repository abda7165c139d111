#include "service/transport/httprequesthead.h"

namespace coreflow {

namespace {

QByteArray linesBeforeConnection(const HttpClientRequest &request, QByteArrayView host)
{
    QByteArray head;
    head.reserve(256 + request.target.size());
    head += request.method + ' ' + request.target + " HTTP/1.1\r\nHost: ";
    head += host;
    head += "\r\n";
    for (const auto &[name, value] : request.headers)
        head += name + ": " + value + "\r\n";
    if (!request.body.isEmpty() || request.method == "POST" || request.method == "PUT")
        head += "Content-Length: " + QByteArray::number(request.body.size()) + "\r\n";
    return head;
}

QByteArray linesFromConnection(QByteArrayView connection)
{
    QByteArray tail;
    if (!connection.isEmpty()) {
        tail += "Connection: ";
        tail += connection;
        tail += "\r\n";
    }
    tail += "\r\n";
    return tail;
}

} // namespace

QByteArray httpRequestHead(const HttpClientRequest &request, QByteArrayView host, QByteArrayView connection)
{
    return linesBeforeConnection(request, host) + linesFromConnection(connection) + request.body;
}

Secret httpRequestHeadWithBearer(const HttpClientRequest &request, QByteArrayView host, QByteArrayView connection)
{
    const QByteArray before = linesBeforeConnection(request, host);
    const QByteArray after = linesFromConnection(connection);
    return Secret::concatenated({before, "Authorization: Bearer ", request.bearer.reveal(), "\r\n", after, request.body});
}

} // namespace coreflow
