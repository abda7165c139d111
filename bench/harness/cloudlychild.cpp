#include "bench/harness/cloudlychild.h"

#include "bench/harness/processes.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace bench {

bool CloudlyChild::start(const std::string &self, const std::vector<std::string> &args)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return false;
    m_pid = fork();
    if (m_pid == 0) {
        const int fd = dup(sv[1]); // without CLOEXEC
        std::vector<std::string> a{self, "cloudly"};
        a.insert(a.end(), args.begin(), args.end());
        a.push_back("--control-fd");
        a.push_back(std::to_string(fd));
        std::vector<char *> argv;
        for (auto &s : a)
            argv.push_back(s.data());
        argv.push_back(nullptr);
        execv(self.c_str(), argv.data());
        _exit(127);
    }
    ::close(sv[1]);
    m_fd = sv[0];
    {
        std::lock_guard<std::mutex> lock(m_mu);
        m_lines.clear();
    }
    m_reader = std::thread([this] { readLoop(); });
    return true;
}

void CloudlyChild::send(const std::string &line)
{
    const std::string l = line + "\n";
    [[maybe_unused]] ssize_t n = ::write(m_fd, l.data(), l.size());
}

bool CloudlyChild::wait(const std::string &prefix, int timeoutMs, std::string &line)
{
    std::unique_lock<std::mutex> lock(m_mu);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeoutMs);
    for (;;) {
        for (auto it = m_lines.begin(); it != m_lines.end(); ++it) {
            if (it->compare(0, prefix.size(), prefix) == 0) {
                line = *it;
                m_lines.erase(it);
                return true;
            }
        }
        if (m_cv.wait_until(lock, deadline) == std::cv_status::timeout)
            return false;
    }
}

void CloudlyChild::drop(const std::string &prefix)
{
    std::lock_guard<std::mutex> lock(m_mu);
    m_lines.erase(std::remove_if(m_lines.begin(), m_lines.end(),
                                 [&](const std::string &l) { return l.compare(0, prefix.size(), prefix) == 0; }),
                  m_lines.end());
}

void CloudlyChild::stop()
{
    send("quit");
    int status = 0;
    for (int i = 0; i < 50; ++i) {
        if (waitpid(m_pid, &status, WNOHANG) == m_pid) {
            m_pid = -1;
            break;
        }
        sleepMs(50);
    }
    reap();
}

void CloudlyChild::kill()
{
    if (m_pid > 0)
        ::kill(m_pid, SIGKILL);
    reap();
}

void CloudlyChild::reap()
{
    int status = 0;
    if (m_pid > 0) {
        ::kill(m_pid, SIGKILL);
        waitpid(m_pid, &status, 0);
        m_pid = -1;
    }
    ::shutdown(m_fd, SHUT_RDWR);
    if (m_reader.joinable())
        m_reader.join();
    ::close(m_fd);
    m_fd = -1;
}

void CloudlyChild::readLoop()
{
    std::string buf;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(m_fd, chunk, sizeof chunk);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                continue;
            return;
        }
        buf.append(chunk, size_t(n));
        size_t pos;
        while ((pos = buf.find('\n')) != std::string::npos) {
            {
                std::lock_guard<std::mutex> lock(m_mu);
                m_lines.push_back(buf.substr(0, pos));
            }
            m_cv.notify_all();
            buf.erase(0, pos + 1);
        }
    }
}

} // namespace bench
