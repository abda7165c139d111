#include "service/closures/closurechunkframe.h"

#include <QtEndian>

#include <cstring>

namespace coreflow {

ClosureChunkFrame::Chunk ClosureChunkFrame::read(QByteArrayView frame)
{
    Chunk chunk;
    if (frame.size() < kHeaderBytes) {
        chunk.problem = Problem::ShorterThanHeader;
        return chunk;
    }
    chunk.streamId = QUuid::fromRfc4122(frame.first(16));
    chunk.offset = qFromBigEndian<quint64>(frame.data() + 16);
    const qsizetype payloadBytes = frame.size() - kHeaderBytes;
    if (payloadBytes == 0)
        chunk.problem = Problem::EmptyPayload;
    else if (payloadBytes > kMaxPayloadBytes)
        chunk.problem = Problem::PayloadTooLarge;
    else if (chunk.offset > kMaxOffset)
        chunk.problem = Problem::OffsetTooLarge;
    else
        chunk.payload = frame.sliced(kHeaderBytes);
    return chunk;
}

QByteArray ClosureChunkFrame::compose(const QUuid &streamId, quint64 offset, QByteArrayView payload)
{
    QByteArray frame;
    frame.reserve(kHeaderBytes + payload.size());
    frame.append(streamId.toRfc4122());
    char be[8];
    qToBigEndian<quint64>(offset, be);
    frame.append(be, 8);
    frame.append(payload.data(), payload.size());
    return frame;
}

void ClosureChunkFrame::writeHeader(char *out, const QUuid &streamId, quint64 offset)
{
    const QByteArray id = streamId.toRfc4122();
    memcpy(out, id.constData(), 16);
    qToBigEndian<quint64>(offset, out + 16);
}

QString ClosureChunkFrame::problemText(Problem problem)
{
    switch (problem) {
    case Problem::None:
        return QStringLiteral("none");
    case Problem::ShorterThanHeader:
        return QStringLiteral("a chunk frame shorter than its 24-byte header");
    case Problem::EmptyPayload:
        return QStringLiteral("a chunk frame without payload");
    case Problem::PayloadTooLarge:
        return QStringLiteral("a chunk payload above 262144 bytes");
    case Problem::OffsetTooLarge:
        return QStringLiteral("a chunk offset above 2^53");
    }
    return QStringLiteral("unknown");
}

} // namespace coreflow
