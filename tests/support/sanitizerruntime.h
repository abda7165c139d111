#pragma once
// COREFLOW_SANITIZER_RUNTIME: defined when this translation unit is built with ASan or TSan (gcc
// defines __SANITIZE_*__, clang answers __has_feature). Their runtime changes two things a memory
// test can see (D-123): it intercepts mlock and locks nothing, and before main() it reads
// /proc/self/environ into a buffer of its own that it keeps for the life of the process.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define COREFLOW_SANITIZER_RUNTIME 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define COREFLOW_SANITIZER_RUNTIME 1
#endif
#endif
