#include "service/transport/websocketacceptkey.h"

#include <QCryptographicHash>

namespace coreflow {

QByteArray webSocketAcceptKey(const QByteArray &clientKey)
{
    return QCryptographicHash::hash(clientKey + QByteArrayLiteral("258EAFA5-E914-47DA-95CA-C5AB0DC85B11"),
                                    QCryptographicHash::Sha1)
        .toBase64();
}

} // namespace coreflow
