#pragma once
// wsnet: a lean epoll + OpenSSL WebSocket (RFC 6455, text frames) engine for the benchmark harness.
//
// One Loop per thread. A Loop owns its connections (client or server side), drives the TLS and
// WebSocket handshakes, reads whole messages and hands them to a ConnHandler, and batches writes: a
// frame queued with sendText() is flushed once per loop turn, so many frames share TLS records and
// syscalls. Nothing here is on the relay's side; the point is to cost as little CPU as possible per
// frame so that the relay, not the harness, is what a benchmark measures.
//
// Client frames are masked with the all-zero key (a valid key; XOR with zero is free).
#include <openssl/ssl.h>
#include <netinet/in.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace bench {

uint64_t nowNs(); // CLOCK_MONOTONIC, comparable across processes on this machine

struct Conn;
class Loop;

class ConnHandler {
public:
    virtual ~ConnHandler() = default;
    virtual void onOpen(Conn &) {}
    virtual void onText(Conn &, std::string_view) {}
    // Called once; the connection is freed after the current loop turn.
    virtual void onClosed(Conn &, int /*closeCode*/) {}
};

enum class ConnState { Connecting, Tls, Http, Open, Closed };

struct Conn {
    Loop *loop = nullptr;
    int fd = -1;
    SSL *ssl = nullptr;
    bool client = false;
    ConnState state = ConnState::Connecting;
    bool paused = false;     // stop reading (a node that stops reading its socket)
    bool dirty = false;      // queued output awaiting the end-of-turn flush
    bool closeAfterFlush = false;
    std::string in;          // decrypted bytes not yet consumed
    size_t inOff = 0;
    std::string out;         // plaintext not yet accepted by SSL_write
    size_t outOff = 0;
    std::string msg;         // fragmented message assembly
    int msgOpcode = 0;
    ConnHandler *handler = nullptr;
    uint64_t id = 0;         // free for the owner
    void *user = nullptr;
    int closeCode = 0;
    std::string host;
};

SSL_CTX *makeClientContext();
SSL_CTX *makeServerContext(const std::string &certFile, const std::string &keyFile);

class Loop {
public:
    Loop();
    ~Loop();
    Loop(const Loop &) = delete;
    Loop &operator=(const Loop &) = delete;

    // Thread-safe: run fn on the loop thread.
    void post(std::function<void()> fn);
    // Loop thread only: run fn at (monotonic) atNs.
    void at(uint64_t atNs, std::function<void()> fn);

    void run();   // until stop()
    void stop();  // thread-safe

    // Loop thread only.
    Conn *connect(const sockaddr_in &addr, SSL_CTX *ctx, ConnHandler *handler, const std::string &host);
    void listen(int listenFd, SSL_CTX *ctx, ConnHandler *handler);
    void sendText(Conn &c, std::string_view payload);
    // Appends a text frame whose payload is the concatenation of the parts (no intermediate copy).
    void sendTextParts(Conn &c, std::initializer_list<std::string_view> parts);
    void close(Conn &c, int code);  // WebSocket close then drop
    void abort(Conn &c);            // drop the TCP connection at once
    void setPaused(Conn &c, bool paused);
    size_t connectionCount() const { return m_live; }

private:
    struct Timer {
        uint64_t at;
        uint64_t seq;
        std::function<void()> fn;
        bool operator>(const Timer &o) const { return at != o.at ? at > o.at : seq > o.seq; }
    };
    struct Listener {
        int fd;
        SSL_CTX *ctx;
        ConnHandler *handler;
    };

    void onEvent(Conn &c, uint32_t events);
    void driveHandshake(Conn &c);
    void readSome(Conn &c);
    void processInput(Conn &c);
    bool processHttp(Conn &c);
    void flush(Conn &c);
    void markDirty(Conn &c);
    void appendFrameHeader(Conn &c, int opcode, size_t len);
    void finish(Conn &c, int code);
    void acceptAll(Listener &l);
    void runTasks();

    int m_ep = -1;
    int m_eventFd = -1;
    std::atomic<bool> m_stop{false};
    std::mutex m_mu;
    std::vector<std::function<void()>> m_tasks;
    std::vector<Timer> m_timers; // min-heap
    uint64_t m_timerSeq = 0;
    std::vector<Conn *> m_dirty;
    std::vector<Conn *> m_dead;
    std::vector<Listener *> m_listeners;
    size_t m_live = 0;
};

// Small JSON helpers for frames whose shape the harness knows (compact TypedRequest envelopes).
// Returns the raw JSON value (object/array/string/scalar) following "key": searching from `from`;
// empty when absent. Brace matching is string-aware.
std::string_view rawMember(std::string_view json, std::string_view key, size_t from = 0);
// The string value of "key":"..." (no unescaping; the harness's ids and names need none).
std::string_view stringMember(std::string_view json, std::string_view key, size_t from = 0);
// Correlation of an envelope: id and phase ("request"/"response"), read from the last "correlation".
bool correlationOf(std::string_view frame, std::string_view &id, bool &isResponse);

} // namespace bench
