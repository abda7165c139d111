#include "bench/harness/wsnet.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

namespace bench {

uint64_t nowNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

namespace {

constexpr uint64_t kListenerTag = 1;

void setNoDelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string websocketAccept(std::string_view key)
{
    static const char guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
    std::string in(key);
    in += guid;
    unsigned char digest[SHA_DIGEST_LENGTH];
    SHA1(reinterpret_cast<const unsigned char *>(in.data()), in.size(), digest);
    unsigned char out[64];
    const int n = EVP_EncodeBlock(out, digest, SHA_DIGEST_LENGTH);
    return std::string(reinterpret_cast<char *>(out), size_t(n));
}

std::string_view headerValue(std::string_view head, std::string_view name)
{
    size_t pos = 0;
    while (pos < head.size()) {
        size_t eol = head.find("\r\n", pos);
        if (eol == std::string_view::npos)
            eol = head.size();
        std::string_view line = head.substr(pos, eol - pos);
        const size_t colon = line.find(':');
        if (colon != std::string_view::npos && colon == name.size()
            && std::equal(name.begin(), name.end(), line.begin(),
                          [](char a, char b) { return std::tolower(uint8_t(a)) == std::tolower(uint8_t(b)); })) {
            std::string_view v = line.substr(colon + 1);
            while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
                v.remove_prefix(1);
            while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
                v.remove_suffix(1);
            return v;
        }
        pos = eol + 2;
    }
    return {};
}

} // namespace

SSL_CTX *makeClientContext()
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    return ctx;
}

SSL_CTX *makeServerContext(const std::string &certFile, const std::string &keyFile)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_use_certificate_chain_file(ctx, certFile.c_str()) != 1
        || SSL_CTX_use_PrivateKey_file(ctx, keyFile.c_str(), SSL_FILETYPE_PEM) != 1) {
        ERR_print_errors_fp(stderr);
        SSL_CTX_free(ctx);
        return nullptr;
    }
    return ctx;
}

Loop::Loop()
{
    m_ep = epoll_create1(EPOLL_CLOEXEC);
    m_eventFd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = 0;
    epoll_ctl(m_ep, EPOLL_CTL_ADD, m_eventFd, &ev);
}

Loop::~Loop()
{
    ::close(m_eventFd);
    ::close(m_ep);
    for (Listener *l : m_listeners)
        delete l;
}

void Loop::post(std::function<void()> fn)
{
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_tasks.push_back(std::move(fn));
    }
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(m_eventFd, &one, sizeof one);
}

void Loop::at(uint64_t atNs, std::function<void()> fn)
{
    m_timers.push_back(Timer{atNs, m_timerSeq++, std::move(fn)});
    std::push_heap(m_timers.begin(), m_timers.end(), std::greater<Timer>());
}

void Loop::stop()
{
    m_stop = true;
    post([] {});
}

void Loop::runTasks()
{
    std::vector<std::function<void()>> tasks;
    {
        std::lock_guard<std::mutex> lock(m_mu);
        tasks.swap(m_tasks);
    }
    for (auto &t : tasks)
        t();
}

void Loop::run()
{
    std::vector<epoll_event> events(1024);
    while (!m_stop) {
        int timeoutMs = 1000;
        if (!m_timers.empty()) {
            const uint64_t now = nowNs();
            const uint64_t at = m_timers.front().at;
            timeoutMs = at <= now ? 0 : int(std::min<uint64_t>(1000, (at - now + 999999) / 1000000));
        }
        if (!m_dirty.empty())
            timeoutMs = 0;
        const int n = epoll_wait(m_ep, events.data(), int(events.size()), timeoutMs);
        for (int i = 0; i < n; ++i) {
            const uint64_t tag = events[i].data.u64;
            if (tag == 0) {
                uint64_t v;
                while (::read(m_eventFd, &v, sizeof v) > 0) {
                }
                continue;
            }
            if (tag & kListenerTag) {
                acceptAll(*reinterpret_cast<Listener *>(tag & ~kListenerTag));
                continue;
            }
            Conn *c = static_cast<Conn *>(events[i].data.ptr);
            if (c->state != ConnState::Closed)
                onEvent(*c, events[i].events);
        }
        runTasks();
        const uint64_t now = nowNs();
        while (!m_timers.empty() && m_timers.front().at <= now) {
            std::pop_heap(m_timers.begin(), m_timers.end(), std::greater<Timer>());
            Timer t = std::move(m_timers.back());
            m_timers.pop_back();
            t.fn();
        }
        // Flush batched output (new frames may be queued while flushing a close; loop until quiet).
        while (!m_dirty.empty()) {
            std::vector<Conn *> dirty;
            dirty.swap(m_dirty);
            for (Conn *c : dirty) {
                c->dirty = false;
                if (c->state != ConnState::Closed)
                    flush(*c);
            }
        }
        for (Conn *c : m_dead)
            delete c;
        m_dead.clear();
    }
}

void Loop::listen(int listenFd, SSL_CTX *ctx, ConnHandler *handler)
{
    auto *l = new Listener{listenFd, ctx, handler};
    m_listeners.push_back(l);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = reinterpret_cast<uint64_t>(l) | kListenerTag;
    epoll_ctl(m_ep, EPOLL_CTL_ADD, listenFd, &ev);
}

void Loop::acceptAll(Listener &l)
{
    for (;;) {
        const int fd = accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                std::fprintf(stderr, "bench: accept failed: %s\n", std::strerror(errno));
            return;
        }
        setNoDelay(fd);
        auto *c = new Conn;
        c->loop = this;
        c->fd = fd;
        c->client = false;
        c->handler = l.handler;
        c->ssl = SSL_new(l.ctx);
        SSL_set_fd(c->ssl, fd);
        SSL_set_accept_state(c->ssl);
        c->state = ConnState::Tls;
        ++m_live;
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
        ev.data.ptr = c;
        epoll_ctl(m_ep, EPOLL_CTL_ADD, fd, &ev);
    }
}

Conn *Loop::connect(const sockaddr_in &addr, SSL_CTX *ctx, ConnHandler *handler, const std::string &host)
{
    auto *c = new Conn;
    c->loop = this;
    c->client = true;
    c->handler = handler;
    c->host = host;
    ++m_live;
    c->fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        std::fprintf(stderr, "bench: socket failed: %s\n", std::strerror(errno));
        c->state = ConnState::Closed;
        --m_live;
        m_dead.push_back(c);
        handler->onClosed(*c, 1006);
        return c;
    }
    setNoDelay(c->fd);
    c->ssl = SSL_new(ctx);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_connect_state(c->ssl);
    SSL_set_tlsext_host_name(c->ssl, "localhost");
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.ptr = c;
    const int rc = ::connect(c->fd, reinterpret_cast<const sockaddr *>(&addr), sizeof addr);
    epoll_ctl(m_ep, EPOLL_CTL_ADD, c->fd, &ev);
    if (rc == 0) {
        c->state = ConnState::Tls;
        driveHandshake(*c);
    } else if (errno == EINPROGRESS) {
        c->state = ConnState::Connecting;
    } else {
        finish(*c, 1006);
    }
    return c;
}

void Loop::onEvent(Conn &c, uint32_t events)
{
    if (c.state == ConnState::Connecting) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0)
            return finish(c, 1006);
        if (!(events & (EPOLLOUT | EPOLLIN)))
            return;
        c.state = ConnState::Tls;
    }
    if (c.state == ConnState::Tls)
        return driveHandshake(c);
    if ((events & EPOLLOUT) && c.outOff < c.out.size())
        flush(c);
    if (c.state == ConnState::Closed)
        return;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        readSome(c);
}

void Loop::driveHandshake(Conn &c)
{
    const int rc = SSL_do_handshake(c.ssl);
    if (rc != 1) {
        const int err = SSL_get_error(c.ssl, rc);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
            return;
        ERR_clear_error();
        return finish(c, 1015);
    }
    c.state = ConnState::Http;
    if (c.client) {
        c.out += "GET / HTTP/1.1\r\nHost: ";
        c.out += c.host;
        c.out += "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                 "Sec-WebSocket-Version: 13\r\n\r\n";
        flush(c);
        if (c.state == ConnState::Closed)
            return;
    }
    readSome(c);
}

void Loop::readSome(Conn &c)
{
    if (c.paused || c.state == ConnState::Closed)
        return;
    char buf[65536];
    bool eof = false;
    for (;;) {
        const int n = SSL_read(c.ssl, buf, sizeof buf);
        if (n > 0) {
            c.in.append(buf, size_t(n));
            continue;
        }
        const int err = SSL_get_error(c.ssl, n);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE)
            break;
        ERR_clear_error();
        eof = true;
        break;
    }
    processInput(c);
    if (eof && c.state != ConnState::Closed)
        finish(c, 1006);
}

bool Loop::processHttp(Conn &c)
{
    const std::string_view all(c.in.data() + c.inOff, c.in.size() - c.inOff);
    const size_t end = all.find("\r\n\r\n");
    if (end == std::string_view::npos)
        return false;
    const std::string_view head = all.substr(0, end);
    c.inOff += end + 4;
    if (c.client) {
        if (head.substr(0, 12) != "HTTP/1.1 101") {
            std::fprintf(stderr, "bench: upgrade refused: %.*s\n", int(std::min<size_t>(head.size(), 200)), head.data());
            finish(c, 1002);
            return false;
        }
    } else {
        const std::string_view key = headerValue(head, "sec-websocket-key");
        if (key.empty()) {
            finish(c, 1002);
            return false;
        }
        c.out += "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ";
        c.out += websocketAccept(key);
        c.out += "\r\n\r\n";
        markDirty(c);
    }
    c.state = ConnState::Open;
    c.handler->onOpen(c);
    return c.state == ConnState::Open;
}

void Loop::processInput(Conn &c)
{
    if (c.state == ConnState::Http && !processHttp(c))
        return;
    while (c.state == ConnState::Open && !c.paused) {
        const size_t avail = c.in.size() - c.inOff;
        if (avail < 2)
            break;
        auto *p = reinterpret_cast<unsigned char *>(c.in.data() + c.inOff);
        const bool fin = p[0] & 0x80;
        const int opcode = p[0] & 0x0f;
        const bool masked = p[1] & 0x80;
        uint64_t len = p[1] & 0x7f;
        size_t hdr = 2;
        if (len == 126) {
            if (avail < 4)
                break;
            len = (uint64_t(p[2]) << 8) | p[3];
            hdr = 4;
        } else if (len == 127) {
            if (avail < 10)
                break;
            len = 0;
            for (int i = 0; i < 8; ++i)
                len = (len << 8) | p[2 + i];
            hdr = 10;
        }
        unsigned char mask[4] = {0, 0, 0, 0};
        if (masked) {
            if (avail < hdr + 4)
                break;
            std::memcpy(mask, p + hdr, 4);
            hdr += 4;
        }
        if (avail < hdr + len)
            break;
        unsigned char *payload = p + hdr;
        if (masked && (mask[0] | mask[1] | mask[2] | mask[3])) {
            for (uint64_t i = 0; i < len; ++i)
                payload[i] ^= mask[i & 3];
        }
        c.inOff += hdr + size_t(len);
        const std::string_view data(reinterpret_cast<char *>(payload), size_t(len));
        switch (opcode) {
        case 0x1:
        case 0x2:
            if (fin) {
                c.handler->onText(c, data);
            } else {
                c.msg.assign(data);
                c.msgOpcode = opcode;
            }
            break;
        case 0x0:
            c.msg.append(data);
            if (fin) {
                std::string whole;
                whole.swap(c.msg);
                c.handler->onText(c, whole);
            }
            break;
        case 0x8: {
            const int code = len >= 2 ? (int(payload[0]) << 8) | payload[1] : 1005;
            if (!c.closeAfterFlush) {
                appendFrameHeader(c, 0x8, 2);
                c.out.push_back(char(code >> 8));
                c.out.push_back(char(code & 0xff));
                c.closeAfterFlush = true;
            }
            c.closeCode = code;
            flush(c);
            if (c.state != ConnState::Closed)
                finish(c, code);
            return;
        }
        case 0x9:
            appendFrameHeader(c, 0xA, data.size());
            c.out.append(data);
            markDirty(c);
            break;
        default:
            break;
        }
    }
    if (c.state == ConnState::Closed)
        return;
    if (c.inOff == c.in.size()) {
        c.in.clear();
        c.inOff = 0;
        if (c.in.capacity() > (1u << 20))
            c.in.shrink_to_fit();
    } else if (c.inOff > (1u << 16)) {
        c.in.erase(0, c.inOff);
        c.inOff = 0;
    }
}

void Loop::appendFrameHeader(Conn &c, int opcode, size_t len)
{
    char h[14];
    size_t n = 0;
    h[n++] = char(0x80 | opcode);
    const char maskBit = c.client ? char(0x80) : 0;
    if (len < 126) {
        h[n++] = char(maskBit | char(len));
    } else if (len < 65536) {
        h[n++] = char(maskBit | 126);
        h[n++] = char(len >> 8);
        h[n++] = char(len & 0xff);
    } else {
        h[n++] = char(maskBit | 127);
        for (int i = 7; i >= 0; --i)
            h[n++] = char((uint64_t(len) >> (8 * i)) & 0xff);
    }
    if (c.client) {
        for (int i = 0; i < 4; ++i)
            h[n++] = 0; // the all-zero masking key
    }
    c.out.append(h, n);
}

void Loop::sendText(Conn &c, std::string_view payload)
{
    if (c.state != ConnState::Open || c.closeAfterFlush)
        return;
    appendFrameHeader(c, 0x1, payload.size());
    c.out.append(payload);
    markDirty(c);
}

void Loop::sendTextParts(Conn &c, std::initializer_list<std::string_view> parts)
{
    if (c.state != ConnState::Open || c.closeAfterFlush)
        return;
    size_t len = 0;
    for (auto p : parts)
        len += p.size();
    appendFrameHeader(c, 0x1, len);
    for (auto p : parts)
        c.out.append(p);
    markDirty(c);
}

void Loop::markDirty(Conn &c)
{
    if (!c.dirty) {
        c.dirty = true;
        m_dirty.push_back(&c);
    }
}

void Loop::flush(Conn &c)
{
    while (c.outOff < c.out.size()) {
        const size_t remaining = c.out.size() - c.outOff;
        const int n = SSL_write(c.ssl, c.out.data() + c.outOff, int(std::min<size_t>(remaining, 1u << 20)));
        if (n > 0) {
            c.outOff += size_t(n);
            continue;
        }
        const int err = SSL_get_error(c.ssl, n);
        if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ)
            return; // EPOLLOUT (edge-triggered) resumes
        ERR_clear_error();
        return finish(c, 1006);
    }
    c.out.clear();
    c.outOff = 0;
    if (c.out.capacity() > (1u << 20))
        c.out.shrink_to_fit();
    if (c.closeAfterFlush && c.state != ConnState::Closed)
        finish(c, c.closeCode);
}

void Loop::close(Conn &c, int code)
{
    if (c.state != ConnState::Open || c.closeAfterFlush) {
        if (c.state != ConnState::Closed && c.state != ConnState::Open)
            finish(c, code);
        return;
    }
    appendFrameHeader(c, 0x8, 2);
    c.out.push_back(char(code >> 8));
    c.out.push_back(char(code & 0xff));
    c.closeAfterFlush = true;
    c.closeCode = code;
    markDirty(c);
}

void Loop::abort(Conn &c)
{
    if (c.state == ConnState::Closed)
        return;
    linger lg{1, 0};
    setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    finish(c, 1006);
}

void Loop::setPaused(Conn &c, bool paused)
{
    c.paused = paused;
    if (!paused && c.state != ConnState::Closed) {
        processInput(c);
        readSome(c);
    }
}

void Loop::finish(Conn &c, int code)
{
    if (c.state == ConnState::Closed)
        return;
    c.state = ConnState::Closed;
    if (c.fd >= 0) {
        epoll_ctl(m_ep, EPOLL_CTL_DEL, c.fd, nullptr);
        ::close(c.fd);
        c.fd = -1;
    }
    if (c.ssl) {
        SSL_free(c.ssl);
        c.ssl = nullptr;
    }
    c.closeCode = code;
    --m_live;
    m_dead.push_back(&c);
    c.handler->onClosed(c, code);
}

// --- JSON helpers ------------------------------------------------------------------------------

namespace {
size_t skipWs(std::string_view s, size_t i)
{
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
        ++i;
    return i;
}

size_t valueEnd(std::string_view s, size_t i)
{
    if (i >= s.size())
        return std::string_view::npos;
    const char c = s[i];
    if (c == '"') {
        for (size_t j = i + 1; j < s.size(); ++j) {
            if (s[j] == '\\')
                ++j;
            else if (s[j] == '"')
                return j + 1;
        }
        return std::string_view::npos;
    }
    if (c == '{' || c == '[') {
        int depth = 0;
        for (size_t j = i; j < s.size(); ++j) {
            const char ch = s[j];
            if (ch == '"') {
                for (++j; j < s.size(); ++j) {
                    if (s[j] == '\\')
                        ++j;
                    else if (s[j] == '"')
                        break;
                }
            } else if (ch == '{' || ch == '[') {
                ++depth;
            } else if (ch == '}' || ch == ']') {
                if (--depth == 0)
                    return j + 1;
            }
        }
        return std::string_view::npos;
    }
    size_t j = i;
    while (j < s.size() && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n')
        ++j;
    return j;
}

size_t findKey(std::string_view json, std::string_view key, size_t from)
{
    std::string pattern;
    pattern.reserve(key.size() + 2);
    pattern += '"';
    pattern += key;
    pattern += '"';
    size_t pos = json.find(pattern, from);
    while (pos != std::string_view::npos) {
        size_t i = skipWs(json, pos + pattern.size());
        if (i < json.size() && json[i] == ':')
            return skipWs(json, i + 1);
        pos = json.find(pattern, pos + 1);
    }
    return std::string_view::npos;
}
} // namespace

std::string_view rawMember(std::string_view json, std::string_view key, size_t from)
{
    const size_t start = findKey(json, key, from);
    if (start == std::string_view::npos)
        return {};
    const size_t end = valueEnd(json, start);
    if (end == std::string_view::npos)
        return {};
    return json.substr(start, end - start);
}

std::string_view stringMember(std::string_view json, std::string_view key, size_t from)
{
    std::string_view raw = rawMember(json, key, from);
    if (raw.size() < 2 || raw.front() != '"')
        return {};
    return raw.substr(1, raw.size() - 2);
}

bool correlationOf(std::string_view frame, std::string_view &id, bool &isResponse)
{
    const size_t pos = frame.rfind("\"correlation\"");
    if (pos == std::string_view::npos)
        return false;
    id = stringMember(frame, "id", pos);
    const std::string_view phase = stringMember(frame, "phase", pos);
    isResponse = phase == "response";
    return !id.empty() && !phase.empty();
}

} // namespace bench
