#pragma once
// WebSocketCloseFrame: reads the payload of a Close frame a peer sent (RFC 6455 §5.5.1, §7.4;
// docs/contract.md §3.0) and decides the session's answer. Pure: WebSocketSession calls it and writes
// the answer; the fuzz target fuzz_websocket_close feeds it bytes.
//
// Payload shapes (at most 125 bytes, the decoder's bound for control frames):
//   empty          no code: received 1005, answered with an empty Close
//   one byte       malformed: answered 1002 ("invalid close frame")
//   2+ bytes       a big-endian code, then a reason that must be UTF-8; a code a peer may not send
//                  (isValidReceivedCloseCode) is answered 1002, a reason that is not UTF-8 1007,
//                  otherwise the code is echoed
#include <QByteArrayView>
#include <QtGlobal>

namespace coreflow {

struct WebSocketCloseVerdict {
    quint16 receivedCode = 1005; // the code in the payload (1005 when it has none)
    quint16 answerCode = 0;      // the code of the Close sent back (0: an empty Close)
    quint16 sessionCloseCode = 1005; // what the session reports as its close code
};

class WebSocketCloseFrame {
public:
    static WebSocketCloseVerdict read(QByteArrayView payload);
};

} // namespace coreflow
