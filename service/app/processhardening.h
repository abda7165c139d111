#pragma once
// ProcessHardening: what main() does before it reads any secret (docs/contract.md §19.4).
//   - sodium_init() (Secret's guarded memory needs it; failure ends the start with exit 1);
//   - OpenSSL's allocator set (OpenSslWipingAllocator): the blocks it frees while a private key is
//     decoded are wiped first (failure, OpenSSL allocated already, ends the start);
//   - prctl(PR_SET_DUMPABLE, 0): no core dump, and /proc/<pid>/mem, ptrace and /proc/<pid>/environ
//     are closed to other processes of the same uid (root with CAP_SYS_PTRACE still reads them);
//   - setrlimit(RLIMIT_CORE, 0): no core file even if something makes the process dumpable again;
//   - SIGPIPE ignored: a peer's hang-up is that connection's EPIPE, never the process's end.
// Returns the first step that failed, or an empty string.
#include <QString>

namespace coreflow {

class ProcessHardening {
public:
    static QString apply();
};

} // namespace coreflow
