#pragma once
// StreamingSha256: SHA-256 over bytes as they cross (libsodium's crypto_hash_sha256 streaming API),
// for a database closure's digest computed in transit (docs/contract.md §13.4; CS-65). update() any
// number of times, then hexDigest() once (lowercase hex, 64 characters, §1 "Digests").
#include <QByteArray>
#include <QByteArrayView>

#include <sodium.h>

namespace coreflow {

class StreamingSha256 {
public:
    StreamingSha256();
    void update(QByteArrayView bytes);
    // Finishes the digest; later calls return the same value.
    QByteArray hexDigest();
    // Lowercase 64-character hex (the only digest form the contract accepts).
    static bool isHexDigest(QByteArrayView text);

private:
    crypto_hash_sha256_state m_state;
    QByteArray m_hex;
};

} // namespace coreflow
