#pragma once
// ClosureChunkFrame: the binary WebSocket message that carries one piece of a database closure on
// the Cloudly session (docs/contract.md §13.4; CS-65). Layout:
//   bytes 0..15   the stream id's 16 UUID bytes (RFC 4122 order)
//   bytes 16..23  the payload's byte offset in the closure, unsigned 64-bit big-endian
//   bytes 24..    the payload, 1..kMaxPayloadBytes bytes
// read() is bounded: it looks at the 24 header bytes and the message's length only, never copies the
// payload (payload is a view into the message), and names what is wrong. Pure functions, no socket.
#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <QUuid>

namespace coreflow {

class ClosureChunkFrame {
public:
    static constexpr qsizetype kHeaderBytes = 24;
    static constexpr qsizetype kMaxPayloadBytes = 262144; // §20.2 closure chunk payload maximum
    // The largest offset a chunk may state: closures are sized in JSON integers (at most 2^53).
    static constexpr quint64 kMaxOffset = quint64(1) << 53;

    enum class Problem { None, ShorterThanHeader, EmptyPayload, PayloadTooLarge, OffsetTooLarge };

    struct Chunk {
        Problem problem = Problem::None;
        QUuid streamId;          // null when the frame is shorter than the header
        quint64 offset = 0;
        QByteArrayView payload;  // a view into the frame given to read()
    };

    static Chunk read(QByteArrayView frame);
    // One frame; payload must hold 1..kMaxPayloadBytes bytes (the sender's duty).
    static QByteArray compose(const QUuid &streamId, quint64 offset, QByteArrayView payload);
    // Writes the 24 header bytes to out (a frame filled in place, D-138): compose() without the copy.
    static void writeHeader(char *out, const QUuid &streamId, quint64 offset);
    // A value-free word for a problem ("shorter than its 24-byte header", ...).
    static QString problemText(Problem problem);
};

} // namespace coreflow
