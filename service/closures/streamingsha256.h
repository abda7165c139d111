#pragma once
// StreamingSha256: SHA-256 over bytes as they cross (OpenSSL's EVP digest API), for a database closure's
// digest computed in transit (docs/contract.md §13.4; CS-65). update() any number of times, then
// hexDigest() once (lowercase hex, 64 characters, §1 "Digests"). EVP rather than libsodium's
// crypto_hash_sha256: EVP uses the CPU's SHA extensions, about 4.7x faster on the bench machine, which
// was a third of the relay's CPU per closure byte (D-128).
#include <QByteArray>
#include <QByteArrayView>

#include <memory>

struct evp_md_ctx_st;

namespace coreflow {

class StreamingSha256 {
public:
    StreamingSha256();
    ~StreamingSha256();
    StreamingSha256(const StreamingSha256 &) = delete;
    StreamingSha256 &operator=(const StreamingSha256 &) = delete;
    void update(QByteArrayView bytes);
    // Finishes the digest; later calls return the same value.
    QByteArray hexDigest();
    // Lowercase 64-character hex (the only digest form the contract accepts).
    static bool isHexDigest(QByteArrayView text);

private:
    struct ContextFree {
        void operator()(evp_md_ctx_st *context) const;
    };
    std::unique_ptr<evp_md_ctx_st, ContextFree> m_context;
    QByteArray m_hex;
};

} // namespace coreflow
