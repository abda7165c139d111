#pragma once
// The lean Cloudly (`coreflow-bench cloudly`) as a child process and its line-based control channel
// (cloudly.cpp lists the lines). Shared by the `run` and `soak` drivers.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <thread>
#include <vector>

namespace bench {

class CloudlyChild {
public:
    bool start(const std::string &self, const std::vector<std::string> &args);
    void send(const std::string &line);
    // Waits for the next line starting with prefix (other lines are kept for their own waiters).
    bool wait(const std::string &prefix, int timeoutMs, std::string &line);
    void drop(const std::string &prefix);
    void stop();  // "quit", then SIGKILL after 2.5 s
    void kill();  // SIGKILL at once (a crash), then reap
    pid_t pid() const { return m_pid; }

private:
    void readLoop();
    void reap();

    pid_t m_pid = -1;
    int m_fd = -1;
    std::thread m_reader;
    std::mutex m_mu;
    std::condition_variable m_cv;
    std::deque<std::string> m_lines;
};

} // namespace bench
