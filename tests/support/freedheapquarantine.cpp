// freedheapquarantine: an LD_PRELOAD module for the plain build's memory scan (tst_memorycanary;
// docs/contract.md §19.4 "Secrets in memory"). glibc hands a freed block to the next allocation of
// its size, which may or may not overwrite a secret the block still holds: whether an unwiped copy
// is still in the heap when the test reads /proc/<pid>/mem is then luck. ASan's quarantine keeps
// freed blocks unused (and so readable) for a while, which is how the sanitizer build saw such
// copies. This module does the same for the plain build: free() keeps the block out of glibc's
// hands, and realloc() that must move a block allocates anew and keeps the old one the same way.
// The oldest kept blocks go back to glibc once more than kQuarantineBytes (or kMaxBlocks) are kept.
// Nothing is changed in a block's bytes: what the relay left in it is what the scan sees.
//
// Test instrumentation only: loaded into the built `coreflow` by tst_memorycanary, never linked
// into the relay, never built with a sanitizer (its runtime owns malloc there).
#include <malloc.h>
#include <pthread.h>
#include <cstddef>
#include <cstring>

extern "C" {
// glibc's own entry points (exported by libc.so.6), so that this module never calls itself.
void *__libc_malloc(size_t size);
void __libc_free(void *pointer);
}

namespace {

constexpr size_t kQuarantineBytes = size_t(256) << 20; // ASan's default quarantine_size_mb
constexpr size_t kMaxBlocks = size_t(1) << 20;

struct Kept {
    void *pointer;
    size_t bytes;
};

// A ring of kept blocks; its storage comes from glibc directly (never through free() above).
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
Kept *ring = nullptr;
size_t head = 0; // the oldest
size_t count = 0;
size_t keptBytes = 0;

void keep(void *pointer)
{
    const size_t bytes = malloc_usable_size(pointer);
    pthread_mutex_lock(&lock);
    if (!ring)
        ring = static_cast<Kept *>(__libc_malloc(kMaxBlocks * sizeof(Kept)));
    if (!ring) {
        pthread_mutex_unlock(&lock);
        __libc_free(pointer);
        return;
    }
    while (count > 0 && (count == kMaxBlocks || keptBytes + bytes > kQuarantineBytes)) {
        __libc_free(ring[head].pointer);
        keptBytes -= ring[head].bytes;
        head = (head + 1) % kMaxBlocks;
        --count;
    }
    ring[(head + count) % kMaxBlocks] = Kept{pointer, bytes};
    ++count;
    keptBytes += bytes;
    pthread_mutex_unlock(&lock);
}

} // namespace

extern "C" {

void free(void *pointer) noexcept
{
    if (pointer)
        keep(pointer);
}

void *realloc(void *pointer, size_t size) noexcept
{
    if (!pointer)
        return __libc_malloc(size);
    if (size == 0) {
        keep(pointer);
        return nullptr;
    }
    const size_t usable = malloc_usable_size(pointer);
    if (usable >= size)
        return pointer; // glibc would shrink in place: the same block, nothing freed
    void *grown = __libc_malloc(size);
    if (!grown)
        return nullptr;
    std::memcpy(grown, pointer, usable);
    keep(pointer);
    return grown;
}

} // extern "C"
