// fuzz_closure_chunk: ClosureChunkFrame::read (docs/contract.md §13.4, CS-65) over any binary message
// from Cloudly. It must never read past the message, must accept exactly the frames of 24 header
// bytes plus 1..262144 payload bytes with an offset of at most 2^53, must hand out the payload as a view
// of the message's own bytes, and compose() of what it read must give the message back.
#include "service/closures/closurechunkframe.h"

#include <QtEndian>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace coreflow;

namespace {
[[noreturn]] void broken(const char *what)
{
    std::fprintf(stderr, "fuzz_closure_chunk: %s\n", what);
    std::abort();
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const QByteArrayView frame(reinterpret_cast<const char *>(data), qsizetype(size));
    const ClosureChunkFrame::Chunk chunk = ClosureChunkFrame::read(frame);
    const qsizetype payload = qsizetype(size) - ClosureChunkFrame::kHeaderBytes;
    if (qsizetype(size) < ClosureChunkFrame::kHeaderBytes) {
        if (chunk.problem != ClosureChunkFrame::Problem::ShorterThanHeader || !chunk.streamId.isNull())
            broken("a frame shorter than its header was not refused as such");
        return 0;
    }
    const quint64 offset = qFromBigEndian<quint64>(data + 16);
    if (chunk.offset != offset)
        broken("the offset is not the big-endian bytes 16..23");
    const bool valid = payload >= 1 && payload <= ClosureChunkFrame::kMaxPayloadBytes && offset <= ClosureChunkFrame::kMaxOffset;
    if (valid != (chunk.problem == ClosureChunkFrame::Problem::None))
        broken("accepted a frame outside the bounds, or refused one inside them");
    if (!valid) {
        if (!chunk.payload.isEmpty())
            broken("a refused frame handed out a payload");
        return 0;
    }
    if (chunk.payload.data() != frame.data() + ClosureChunkFrame::kHeaderBytes || chunk.payload.size() != payload)
        broken("the payload is not a view of the frame's own bytes after the header");
    const QByteArray again = ClosureChunkFrame::compose(chunk.streamId, chunk.offset, chunk.payload);
    if (again.size() != qsizetype(size) || std::memcmp(again.constData(), data, size) != 0)
        broken("compose(read(frame)) is not the frame");
    return 0;
}
