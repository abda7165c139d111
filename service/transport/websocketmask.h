#pragma once
// WebSocketMask: RFC 6455 §5.3 masking. apply() XORs a 4-byte key into a payload (unmasking is the
// same operation); an instance hands out a fresh key per frame for the client side of a session
// (the relay's own Cloudly session; docs/contract.md D-54).
//
// Keys come from libsodium's randombytes_buf (RFC 6455 asks for an unpredictable key per frame),
// drawn 4096 bytes at a time so a frame costs no system call; the pool is wiped when refilled or
// destroyed. Memory: one 4 KiB pool per client session (the relay has one).
#include <QtGlobal>

#include <array>

namespace coreflow {

class WebSocketMask {
public:
    WebSocketMask();
    ~WebSocketMask();
    WebSocketMask(const WebSocketMask &) = delete;
    WebSocketMask &operator=(const WebSocketMask &) = delete;

    // The next frame's key (4 bytes, valid until the next call).
    const unsigned char *nextKey();

    // dst[i] = src[i] ^ key[i % 4] for size bytes; dst may equal src. key nullptr copies unchanged.
    static void apply(char *dst, const char *src, qsizetype size, const unsigned char *key);

private:
    static constexpr int kPoolBytes = 4096;
    std::array<unsigned char, kPoolBytes> m_pool{};
    int m_used = kPoolBytes;
};

} // namespace coreflow
