#pragma once
// HttpHeaderCollector: the header lines of one HTTP message as Debian's http_parser reports them
// (a field or value may arrive in several pieces), for the listener's handshake, its HTTP/1.1 loop
// and the Cloudly session's WebSocket client handshake. Names as sent, values trimmed of surrounding
// whitespace, in arrival order. No bound of its own: the callers bound the header block in bytes.
#include <QByteArray>
#include <QByteArrayView>
#include <QList>
#include <QPair>

#include <http_parser.h>

namespace coreflow {

class HttpHeaderCollector {
public:
    using Pairs = QList<QPair<QByteArray, QByteArray>>;

    // Sets settings.on_header_field / on_header_value to feed the collector Owner::*Member, where the
    // parser's data points to the Owner.
    template <typename Owner, HttpHeaderCollector Owner::*Member>
    static void install(http_parser_settings &settings)
    {
        settings.on_header_field = [](http_parser *p, const char *at, size_t length) {
            (static_cast<Owner *>(p->data)->*Member).field(at, qsizetype(length));
            return 0;
        };
        settings.on_header_value = [](http_parser *p, const char *at, size_t length) {
            (static_cast<Owner *>(p->data)->*Member).value(at, qsizetype(length));
            return 0;
        };
    }

    void field(const char *at, qsizetype length)
    {
        if (m_inValue || m_headers.isEmpty()) {
            finishLast();
            m_headers.append({QByteArray(), QByteArray()});
            m_inValue = false;
        }
        m_headers.last().first.append(at, length);
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
    }

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
        if (!m_headers.isEmpty())
            m_headers.last().second = m_headers.last().second.trimmed();
    }

    Pairs m_headers;
    bool m_inValue = false;
};

} // namespace coreflow
