// fuzz_websocket_server: WebSocketFrameDecoder in Role::Server (fuzz/websocketfuzzdriver.h says what it checks).
#include "fuzz/websocketfuzzdriver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return coreflow::fuzz::runWebSocketDecoder(data, size, coreflow::WebSocketFrameDecoder::Role::Server);
}
