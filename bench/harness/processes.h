#pragma once
// Process helpers shared by the harness's drivers (`run`, `soak`): logging, CPU and /proc figures of a
// child process, loopback ports.
#include <cstdint>
#include <string>
#include <sys/types.h>
#include <vector>

namespace bench {

void logf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sleepMs(int ms);
uint64_t cpuNsOf(pid_t pid);          // CPU time of every thread of pid, ns
uint64_t selfCpuNs();                 // this process's CPU time, ns
long statusKiB(pid_t pid, const char *field); // a "Field:" line of /proc/<pid>/status (kB or a count); -1 when absent
int threadCount(pid_t pid);
int openFdCount(pid_t pid);           // entries of /proc/<pid>/fd; -1 when unreadable
int freePort();                       // a loopback TCP port free at the time of the call
bool tcpReachable(int port);          // 127.0.0.1:port accepts a connection
double percentile(std::vector<uint32_t> &v, double p); // reorders v; -1 when empty

} // namespace bench
