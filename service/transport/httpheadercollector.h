#pragma once
// HttpHeaderCollector: the header lines of one HTTP message as Debian's http_parser reports them
// (a field or value may arrive in several pieces), fed by HttpMessageParser (the relay's one
// http_parser setup: the listener's handshake and HTTP/1.1 loop, the WebSocket client handshake, the
// HTTP client). Names as sent, values trimmed of surrounding whitespace, in arrival order.
// Bounds, both checked on every piece as it arrives (docs/contract.md §17 "Listener bounds", D-60):
//  - at most maxLines header lines (setMaxLines; unbounded by default): the piece that would begin
//    the line past it is refused;
//  - at most maxBytes bytes of names and values held (setMaxBytes, bytes; unbounded by default): the
//    piece that would take heldBytes() past it is refused.
// A piece past a bound is not kept. The refusal itself comes with the piece that ends its name or
// value (`ends`: http_parser saw the ':' or the line end after it): field()/value() return false and
// overflow() names the bound from then on (the caller fails the message; http_parser then stops with
// HPE_CB_header_field or HPE_CB_header_value). Pieces that only end where a read ended (http_parser
// hands over what it has at the end of each buffer) are dropped until then, so the verdict (the bound,
// or a malformed name or value met first) is the same for any split of the bytes (fuzz_http_response).
// heldBytes() is what the collector holds of the message now (names and values; each line's
// bookkeeping comes on top, bounded by the line bound); dropped bytes are not held.
#include "service/transport/httpheaderpairs.h"

#include <QByteArray>
#include <QByteArrayView>

#include <utility>

namespace coreflow {

class HttpHeaderCollector {
public:
    using Pairs = HttpHeaderPairs;
    enum class Overflow { None, Lines, Bytes };

    // At most `lines` header lines per message; a negative value: unbounded.
    void setMaxLines(qsizetype lines) { m_maxLines = lines; }
    // At most `bytes` bytes of names and values held per message; a negative value: unbounded.
    void setMaxBytes(qsizetype bytes) { m_maxBytes = bytes; }

    // A piece of a header name; `ends`: the name ends with it (see above).
    bool field(const char *at, qsizetype length, bool ends)
    {
        if (m_pending == Overflow::None) {
            if (m_inValue || m_headers.isEmpty()) {
                if (m_maxLines >= 0 && m_headers.size() >= m_maxLines) {
                    m_pending = Overflow::Lines;
                } else if (admitBytes(length)) {
                    finishLast();
                    m_headers.append({QByteArray(at, length), QByteArray()});
                    m_inValue = false;
                }
            } else if (admitBytes(length)) {
                m_headers.last().first.append(at, length);
            }
        }
        return m_pending == Overflow::None || !ends || refuse(m_pending);
    }
    // A piece of a header value; `ends`: the value (or this line of it) ends with it.
    bool value(const char *at, qsizetype length, bool ends)
    {
        if (m_headers.isEmpty() && m_pending == Overflow::None)
            return true;
        if (m_pending == Overflow::None && admitBytes(length)) {
            m_inValue = true;
            m_headers.last().second.append(at, length);
        }
        return m_pending == Overflow::None || !ends || refuse(m_pending);
    }
    // Call once the header block is complete (on_headers_complete).
    void finish() { finishLast(); }
    void clear()
    {
        m_headers.clear();
        m_heldBytes = 0;
        m_inValue = false;
        m_overflow = Overflow::None;
        m_pending = Overflow::None;
    }
    bool overflowed() const { return m_overflow != Overflow::None; }
    Overflow overflow() const { return m_overflow; }
    qsizetype heldBytes() const { return m_heldBytes; }

    const Pairs &headers() const { return m_headers; }
    Pairs take()
    {
        m_inValue = false;
        m_heldBytes = 0;
        return std::exchange(m_headers, Pairs());
    }
    // The last value of a header (name compared case-insensitively), or empty.
    QByteArray last(QByteArrayView name) const
    {
        for (auto it = m_headers.crbegin(); it != m_headers.crend(); ++it)
            if (QByteArrayView(it->first).compare(name, Qt::CaseInsensitive) == 0)
                return it->second;
        return {};
    }
    // Every value of a header joined by ",", the list form HTTP allows for repeated headers.
    QByteArray joined(QByteArrayView name) const
    {
        QByteArray out;
        for (const auto &[n, v] : m_headers)
            if (QByteArrayView(n).compare(name, Qt::CaseInsensitive) == 0)
                out += (out.isEmpty() ? QByteArray() : QByteArray(",")) + v;
        return out;
    }
    bool has(QByteArrayView name) const
    {
        for (const auto &[n, v] : m_headers)
            if (QByteArrayView(n).compare(name, Qt::CaseInsensitive) == 0)
                return true;
        return false;
    }

private:
    bool refuse(Overflow why)
    {
        m_overflow = why;
        return false;
    }
    // False (and the bound pending) when the piece would take heldBytes() past the byte bound.
    bool admitBytes(qsizetype length)
    {
        if (m_maxBytes >= 0 && m_heldBytes + length > m_maxBytes) {
            m_pending = Overflow::Bytes;
            return false;
        }
        m_heldBytes += length;
        return true;
    }
    void finishLast()
    {
        if (m_headers.isEmpty())
            return;
        QByteArray &value = m_headers.last().second;
        // Trimmed in place, and only when there is something to trim (no copy per header line).
        if (!value.isEmpty() && (isWhitespace(value.front()) || isWhitespace(value.back()))) {
            const qsizetype before = value.size();
            value = std::move(value).trimmed();
            m_heldBytes -= before - value.size();
        }
    }
    static bool isWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

    Pairs m_headers;
    qsizetype m_maxLines = -1;
    qsizetype m_maxBytes = -1;
    qsizetype m_heldBytes = 0;
    bool m_inValue = false;
    Overflow m_overflow = Overflow::None;
    Overflow m_pending = Overflow::None; // a bound crossed by a name or value not yet ended
};

} // namespace coreflow
