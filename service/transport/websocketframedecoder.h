#pragma once
// WebSocketFrameDecoder: RFC 6455 framing, read side, for the relay listener's node lane (Role::Server:
// frames from clients) and the relay's own Cloudly session (Role::Client: frames from a server)
// (docs/contract.md §3.0, §6.0.1; D-53, D-54).
//
// Pure: bytes in, whole messages and control frames out, no socket. It keeps only what a partial
// frame or a fragmented message needs (nothing at all between messages), which is why the listener
// does not use a framing library that holds fixed per-connection buffers (D-53). The one exception is
// setRetainBuffers() (the relay's Cloudly session, D-137).
//
// Rules enforced (each a named Failure, with the close code the session then sends):
//  - frames from a client must be masked, frames from a server must not be (RFC 6455 §5.1);
//    RSV bits zero, known opcodes only                                               -> ProtocolError 1002
//  - control frames: FIN set, payload <= 125 bytes                                 -> ProtocolError 1002
//  - continuation without a message, or a new message inside a fragmented one      -> ProtocolError 1002
//  - a message (all fragments) above maxMessageBytes, known from the frame header   -> MessageTooBig 1009
//  - a text message that is not valid UTF-8                                        -> InvalidUtf8 1007
// Once failed or stopped, the decoder consumes nothing more and holds nothing: a partial frame and an
// unfinished fragmented message are released (bufferedBytes() is 0), so a failed session's memory is
// never held uncounted by the receive budget while its Close is under way (docs/contract.md §3.0).
#include <QByteArray>
#include <QByteArrayView>

#include <functional>

namespace coreflow {

class WebSocketFrameDecoder {
public:
    enum class Opcode : quint8 { Continuation = 0x0, Text = 0x1, Binary = 0x2, Close = 0x8, Ping = 0x9, Pong = 0xA };
    enum class Failure { None, ProtocolError, MessageTooBig, InvalidUtf8 };

    struct Sink {
        // A whole text or binary message (fragments joined, unmasked). Text is valid UTF-8.
        std::function<void(Opcode opcode, QByteArray payload)> message;
        // A control frame (Close, Ping, Pong), payload unmasked (at most 125 bytes).
        std::function<void(Opcode opcode, QByteArray payload)> control;
    };

    // Which end of the connection reads: the server reads masked client frames, the client unmasked
    // server frames.
    enum class Role { Server, Client };

    explicit WebSocketFrameDecoder(qsizetype maxMessageBytes, Role role = Role::Server)
        : m_maxMessageBytes(maxMessageBytes), m_role(role) {}

    // Consumes bytes as they arrived from the transport. Callbacks run synchronously; a callback may
    // call stop() to make the decoder drop the rest (e.g. after a Close frame).
    void feed(QByteArrayView bytes, const Sink &sink);
    // Drops everything held and everything fed from now on (inside feed(): once the callback returns).
    void stop();
    // Changes the message bound for frames whose header has not been read yet (bytes).
    void setMaxMessageBytes(qsizetype maxMessageBytes) { m_maxMessageBytes = maxMessageBytes; }

    Failure failure() const { return m_failure; }
    // The RFC 6455 close code for failure() (1002, 1007 or 1009; 0 while none).
    quint16 failureCloseCode() const;
    // Bytes held for a partial frame or an unfinished fragmented message (0 between messages).
    qsizetype bufferedBytes() const { return m_partial.size() + m_message.size(); }

    // Retained buffers (D-137; the relay's Cloudly session, whose closure chunks are 262168-byte binary
    // messages, docs/contract.md §13.4): a partial frame of at most kRetainedBufferBytes grows once to
    // its whole size, and the two buffers (the partial frame's and a binary message's payload) are
    // kept between messages, each up to kRetainedBufferBytes; a payload buffer is reused only when the
    // receiver kept no copy of the message it carried (so a kept message is never written over). Text
    // messages are never delivered in a reused buffer. Off by default: a listener session holds
    // nothing between messages (D-53). stop() and a failure give everything back.
    static constexpr qsizetype kRetainedBufferBytes = 262144 + 24 + 14; // a maximal chunk frame, header included
    void setRetainBuffers(bool retain);
    // Bytes allocated by the decoder's buffers (their capacity, whether or not they hold a frame now):
    // 0 between messages unless it retains buffers, then at most 2 * kRetainedBufferBytes.
    qsizetype allocatedBytes() const { return m_partial.capacity() + m_message.capacity() + m_spare.capacity(); }

    // Whether a close code received in a Close frame may be sent by a peer (RFC 6455 §7.4).
    static bool isValidReceivedCloseCode(quint16 code);
    static bool isValidUtf8(QByteArrayView bytes);

private:
    // Decodes one frame from data; returns the bytes consumed (0: incomplete, keep them).
    qsizetype decodeOne(const char *data, qsizetype size, const Sink &sink);
    void fail(Failure failure) { m_failure = failure; }
    // Gives back the partial frame and the fragments of an unfinished message.
    void release();
    // The whole size of the frame that starts at data (header, key, payload), or -1 while its header is
    // incomplete.
    static qsizetype frameBytes(const char *data, qsizetype size);
    // Retaining, with a partial frame held: takes from bytes what completes that frame (its buffer grown
    // once to the frame's whole size, when at most kRetainedBufferBytes) and decodes it; returns the rest.
    QByteArrayView completeRetainedFrame(QByteArrayView bytes, const Sink &sink);

    qsizetype m_maxMessageBytes;
    Role m_role;
    QByteArray m_partial;       // bytes of an incomplete frame
    QByteArray m_message;       // fragments of an unfinished message
    QByteArray m_spare;         // retained: the last binary payload's buffer, for the next one
    bool m_retain = false;
    Opcode m_messageOpcode = Opcode::Text;
    bool m_inMessage = false;
    bool m_stopped = false;
    bool m_feeding = false;     // inside feed(): buffers are released when it returns
    Failure m_failure = Failure::None;
};

} // namespace coreflow
