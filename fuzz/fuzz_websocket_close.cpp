// fuzz_websocket_close: WebSocketCloseFrame::read over any payload (RFC 6455 §5.5.1, §7.4;
// docs/contract.md §3.0). The answer is an empty Close for an empty payload, 1002 for one byte or a
// code a peer may not send, 1007 for a reason that is not UTF-8, the echo otherwise.
#include "service/transport/websocketcloseframe.h"
#include "service/transport/websocketframedecoder.h"

#include <cstdlib>

using namespace coreflow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView payload(reinterpret_cast<const char *>(data), qsizetype(size));
    const WebSocketCloseVerdict v = WebSocketCloseFrame::read(payload);
    quint16 expected = 0;
    if (size == 1)
        expected = 1002;
    else if (size >= 2) {
        const quint16 code = quint16(data[0] << 8 | data[1]);
        if (v.receivedCode != code)
            std::abort();
        expected = !WebSocketFrameDecoder::isValidReceivedCloseCode(code) ? 1002
                   : payload.sliced(2).isValidUtf8()                    ? code
                                                                        : 1007;
    }
    if (v.answerCode != expected)
        std::abort();
    return 0;
}
