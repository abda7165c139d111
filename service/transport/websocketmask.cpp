#include "service/transport/websocketmask.h"

#include <sodium.h>

#include <cstring>

namespace coreflow {

WebSocketMask::WebSocketMask() = default;

WebSocketMask::~WebSocketMask() { sodium_memzero(m_pool.data(), m_pool.size()); }

const unsigned char *WebSocketMask::nextKey()
{
    if (m_used + 4 > kPoolBytes) {
        randombytes_buf(m_pool.data(), m_pool.size());
        m_used = 0;
    }
    const unsigned char *key = m_pool.data() + m_used;
    m_used += 4;
    return key;
}

void WebSocketMask::apply(char *dst, const char *src, qsizetype size, const unsigned char *key)
{
    if (!key) {
        if (size && dst != src)
            std::memmove(dst, src, size_t(size));
        return;
    }
    // Eight bytes at a time where it can; the key repeats every 4 bytes, so twice per word.
    quint64 wide = 0;
    for (int i = 0; i < 8; ++i)
        wide |= quint64(key[i % 4]) << (8 * i);
    qsizetype i = 0;
    for (; i + 8 <= size; i += 8) {
        quint64 chunk;
        std::memcpy(&chunk, src + i, 8);
        chunk ^= wide;
        std::memcpy(dst + i, &chunk, 8);
    }
    for (; i < size; ++i)
        dst[i] = char(src[i] ^ char(key[i % 4]));
}

} // namespace coreflow
