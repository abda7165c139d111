#include "service/transport/opensslwipingallocator.h"

#include <openssl/crypto.h>
#include <sodium.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <malloc.h>

namespace coreflow {

namespace {

thread_local int t_scopes = 0;
std::atomic<bool> g_installed{false};

void wipeBlock(void *block)
{
    if (block)
        sodium_memzero(block, malloc_usable_size(block));
}

void *allocate(size_t size, const char *, int) { return std::malloc(size); }

void *reallocate(void *block, size_t size, const char *, int)
{
    if (t_scopes == 0 || !block)
        return std::realloc(block, size);
    if (size == 0) {
        wipeBlock(block);
        std::free(block);
        return nullptr;
    }
    const size_t usable = malloc_usable_size(block);
    if (usable >= size)
        return block; // it fits: nothing is freed
    void *grown = std::malloc(size);
    if (!grown)
        return nullptr; // the old block stays the caller's, as realloc() leaves it
    std::memcpy(grown, block, usable);
    wipeBlock(block);
    std::free(block);
    return grown;
}

void release(void *block, const char *, int)
{
    if (t_scopes > 0)
        wipeBlock(block);
    std::free(block);
}

} // namespace

bool OpenSslWipingAllocator::install()
{
    if (CRYPTO_set_mem_functions(allocate, reallocate, release) != 1)
        return false;
    g_installed = true;
    return true;
}

bool OpenSslWipingAllocator::installed() { return g_installed; }

OpenSslWipingAllocator::Scope::Scope() { ++t_scopes; }

OpenSslWipingAllocator::Scope::~Scope() { --t_scopes; }

} // namespace coreflow
