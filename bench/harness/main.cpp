// coreflow-bench: the benchmark harness of the Coreflow relay (bench/README.md).
//   coreflow-bench cloudly ...   the lean loopback Cloudly (started by `run`)
//   coreflow-bench run ...       the load generator and scenario driver
//   coreflow-bench soak ...      the long soak with faults (soak.cpp)
#include <openssl/ssl.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

namespace bench {
int cloudlyMain(int argc, char **argv);
int loadMain(int argc, char **argv, const std::string &self);
int soakMain(int argc, char **argv, const std::string &self);
} // namespace bench

int main(int argc, char **argv)
{
    OPENSSL_init_ssl(0, nullptr);
    if (argc >= 2 && std::strcmp(argv[1], "cloudly") == 0)
        return bench::cloudlyMain(argc - 2, argv + 2);
    if (argc >= 2 && (std::strcmp(argv[1], "run") == 0 || std::strcmp(argv[1], "soak") == 0)) {
        char self[4096];
        const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0)
            return 1;
        self[n] = 0;
        return std::strcmp(argv[1], "soak") == 0 ? bench::soakMain(argc - 2, argv + 2, self)
                                                 : bench::loadMain(argc - 2, argv + 2, self);
    }
    std::fprintf(stderr, "usage: coreflow-bench run|soak|cloudly ...\n");
    return 2;
}
