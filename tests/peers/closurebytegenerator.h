#pragma once
// ClosureByteGenerator: the deterministic content of a LoopbackCorestore database-closure export
// (docs/contract.md §15.1, POST /control/database-closures/export), generated on demand from a 64-bit
// seed so that an export of any size is streamed without ever being held in memory.
//
// Byte p of the stream is byte (p % 8) (little-endian) of splitmix64(seed + p / 8): random access by
// offset, so a test can read any window (bytes()) and the peer can write the body in pieces (fill()).
// Not cryptographic; only meant to be incompressible-looking and reproducible.
#include <QByteArray>
#include <QtGlobal>

namespace coreflow::peers {

class ClosureByteGenerator {
public:
    explicit ClosureByteGenerator(quint64 seed) : m_seed(seed) {}

    // Writes `length` bytes starting at stream offset `offset` (both ≥ 0) to `out`.
    void fill(qint64 offset, char *out, qint64 length) const;
    QByteArray bytes(qint64 offset, qint64 length) const;
    // Lower-case hex SHA-256 of the first `size` bytes, computed in 64 KiB pieces.
    QByteArray sha256Hex(qint64 size) const;

private:
    quint64 m_seed;
};

} // namespace coreflow::peers
