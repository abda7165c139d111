#include "tests/peers/closurehashworker.h"

namespace coreflow::peers {

ClosureHashWorker::ClosureHashWorker() : m_thread([this] { run(); }) {}

ClosureHashWorker::~ClosureHashWorker()
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_one();
    m_thread.join();
}

void ClosureHashWorker::update(std::shared_ptr<EVP_MD_CTX> context, QByteArray bytes, qsizetype from)
{
    {
        std::lock_guard<std::mutex> lock(m_mutex);
        m_jobs.push_back(Job{std::move(context), std::move(bytes), from});
    }
    m_wake.notify_one();
}

void ClosureHashWorker::waitIdle()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    m_idle.wait(lock, [this] { return m_jobs.empty() && !m_busy; });
}

void ClosureHashWorker::run()
{
    std::unique_lock<std::mutex> lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [this] { return m_stopping || !m_jobs.empty(); });
        if (m_jobs.empty())
            return; // stopping, nothing left
        Job job = std::move(m_jobs.front());
        m_jobs.pop_front();
        m_busy = true;
        lock.unlock();
        EVP_DigestUpdate(job.context.get(), job.bytes.constData() + job.from, size_t(job.bytes.size() - job.from));
        job = Job(); // the bytes go back on this thread, outside the lock
        lock.lock();
        m_busy = false;
        if (m_jobs.empty())
            m_idle.notify_all();
    }
}

} // namespace coreflow::peers
