#pragma once
// HttpHeaderCollector: the header lines of one HTTP message as Debian's http_parser reports them
// (a field or value may arrive in several pieces), fed by HttpMessageParser (the relay's one
// http_parser setup: the listener's handshake and HTTP/1.1 loop, the WebSocket client handshake, the
// HTTP client). Names as sent, values trimmed of surrounding whitespace, in arrival order.
// Bound: at most maxLines header lines when set (setMaxLines; unbounded by default, the callers then
// bound the header block in bytes); field() refuses the line past it (returns false, overflowed()).
#include "service/transport/httpheaderpairs.h"

#include <QByteArray>
#include <QByteArrayView>

#include <utility>

namespace coreflow {

class HttpHeaderCollector {
public:
    using Pairs = HttpHeaderPairs;

    // At most `lines` header lines per message; a negative value: unbounded.
    void setMaxLines(qsizetype lines) { m_maxLines = lines; }

    // Returns false (and overflowed() is true from then on) when the piece would begin a line past
    // the bound; nothing is kept of it.
    bool field(const char *at, qsizetype length)
    {
        if (m_inValue || m_headers.isEmpty()) {
            if (m_maxLines >= 0 && m_headers.size() >= m_maxLines) {
                m_overflowed = true;
                return false;
            }
            finishLast();
            m_headers.append({QByteArray(), QByteArray()});
            m_inValue = false;
        }
        m_headers.last().first.append(at, length);
        return true;
    }
    void value(const char *at, qsizetype length)
    {
        if (m_headers.isEmpty())
            return;
        m_inValue = true;
        m_headers.last().second.append(at, length);
    }
    // Call once the header block is complete (on_headers_complete).
    void finish() { finishLast(); }
    void clear()
    {
        m_headers.clear();
        m_inValue = false;
        m_overflowed = false;
    }
    bool overflowed() const { return m_overflowed; }

    const Pairs &headers() const { return m_headers; }
    Pairs take()
    {
        m_inValue = false;
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
    void finishLast()
    {
        if (m_headers.isEmpty())
            return;
        QByteArray &value = m_headers.last().second;
        // Trimmed in place, and only when there is something to trim (no copy per header line).
        if (!value.isEmpty() && (isWhitespace(value.front()) || isWhitespace(value.back())))
            value = std::move(value).trimmed();
    }
    static bool isWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

    Pairs m_headers;
    qsizetype m_maxLines = -1;
    bool m_inValue = false;
    bool m_overflowed = false;
};

} // namespace coreflow
