#pragma once
// ClosureHashWorker: one thread that runs SHA-256 updates (OpenSSL EVP) handed to it in order, for the
// loopback Cloudly's closure side (LoopbackClosureStore::setHashOnWorker, docs/contract.md §13.4 send
// direction). With it the thread that serves the Cloudly WebSocket only queues each chunk; the bench
// (bench/closures/) uses it so that the forwarded round trips it measures wait for the relay, not for
// the peer's hashing.
//
// Shapes: update() takes the digest context and the bytes from `from` to the end of `bytes` (a shared
// QByteArray: nothing is copied); updates of one context run in the order they were queued.
// waitIdle() returns once every queued update ran. No bound on the queue: the caller holds it to what
// the relay may send unacknowledged (the chunk frames of one WebSocket read at most).
#include <QByteArray>

#include <openssl/evp.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace coreflow::peers {

class ClosureHashWorker {
public:
    ClosureHashWorker();
    ~ClosureHashWorker(); // runs what is queued, then joins
    ClosureHashWorker(const ClosureHashWorker &) = delete;
    ClosureHashWorker &operator=(const ClosureHashWorker &) = delete;

    void update(std::shared_ptr<EVP_MD_CTX> context, QByteArray bytes, qsizetype from);
    void waitIdle();

private:
    struct Job {
        std::shared_ptr<EVP_MD_CTX> context;
        QByteArray bytes;
        qsizetype from = 0;
    };
    void run();

    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::deque<Job> m_jobs;
    bool m_busy = false;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace coreflow::peers
