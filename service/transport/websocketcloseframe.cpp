#include "service/transport/websocketcloseframe.h"

#include "service/transport/websocketframedecoder.h"

namespace coreflow {

WebSocketCloseVerdict WebSocketCloseFrame::read(QByteArrayView payload)
{
    WebSocketCloseVerdict verdict;
    bool valid = payload.size() != 1;
    if (payload.size() >= 2) {
        verdict.receivedCode = quint16((quint8(payload[0]) << 8) | quint8(payload[1]));
        valid = WebSocketFrameDecoder::isValidReceivedCloseCode(verdict.receivedCode);
        verdict.answerCode = !valid ? 1002
                             : WebSocketFrameDecoder::isValidUtf8(payload.sliced(2)) ? verdict.receivedCode
                                                                                      : 1007;
    } else if (!valid) {
        verdict.answerCode = 1002;
    }
    verdict.sessionCloseCode = valid && verdict.answerCode != 1007 ? verdict.receivedCode : verdict.answerCode;
    return verdict;
}

} // namespace coreflow
