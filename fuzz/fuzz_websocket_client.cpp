// fuzz_websocket_client: WebSocketFrameDecoder in Role::Client (fuzz/websocketfuzzdriver.h says what it checks).
#include "fuzz/websocketfuzzdriver.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return coreflow::fuzz::runWebSocketDecoder(data, size, coreflow::WebSocketFrameDecoder::Role::Client);
}
