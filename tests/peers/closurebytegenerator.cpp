#include "tests/peers/closurebytegenerator.h"

#include <memory>
#include <openssl/evp.h>

namespace coreflow::peers {

namespace {

quint64 splitmix64(quint64 x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

} // namespace

void ClosureByteGenerator::fill(qint64 offset, char *out, qint64 length) const
{
    qint64 position = offset;
    const qint64 end = offset + length;
    while (position < end) {
        const quint64 word = splitmix64(m_seed + quint64(position / 8));
        for (int shift = int(position % 8); shift < 8 && position < end; ++shift, ++position)
            *out++ = char((word >> (8 * shift)) & 0xffu);
    }
}

QByteArray ClosureByteGenerator::bytes(qint64 offset, qint64 length) const
{
    QByteArray out(qsizetype(length), Qt::Uninitialized);
    fill(offset, out.data(), length);
    return out;
}

QByteArray ClosureByteGenerator::sha256Hex(qint64 size) const
{
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> hash(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    EVP_DigestInit_ex(hash.get(), EVP_sha256(), nullptr);
    constexpr qint64 piece = 64 * 1024;
    QByteArray buffer(piece, Qt::Uninitialized);
    for (qint64 offset = 0; offset < size; offset += piece) {
        const qint64 n = qMin(piece, size - offset);
        fill(offset, buffer.data(), n);
        EVP_DigestUpdate(hash.get(), buffer.constData(), size_t(n));
    }
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digestBytes = 0;
    EVP_DigestFinal_ex(hash.get(), digest, &digestBytes);
    return QByteArray(reinterpret_cast<const char *>(digest), int(digestBytes)).toHex();
}

} // namespace coreflow::peers
