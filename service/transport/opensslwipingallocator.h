#pragma once
// OpenSslWipingAllocator: OpenSSL's heap blocks wiped when freed, while a scope that handles a private
// key is open on the thread (docs/contract.md §19.4 "Secrets in memory").
//
// Decoding a PEM private key (PEM_read_bio_PrivateKey) leaves copies of the key's DER in heap blocks
// OpenSSL frees without wiping them (nine for the listener key, D-133). A freed block keeps those
// bytes until the allocator happens to reuse it, so a memory image could carry the key. The relay
// cannot reach into OpenSSL's decoders, so it gives OpenSSL its own malloc/realloc/free
// (CRYPTO_set_mem_functions): outside a Scope they are glibc's with one thread-local test; inside
// one, free() first zeroes the whole block (malloc_usable_size bytes) and a realloc() that has to
// move a block copies it and zeroes and frees the old one. The TLS paths (records, handshakes) run
// outside any Scope and pay nothing but that test.
//
// install() must run before OpenSSL allocates anything (main(), ProcessHardening::apply()); it is
// false when OpenSSL already did (then OpenSSL keeps its allocator and a Scope wipes nothing).
// A Scope nests, is per thread, and is only ever a local variable around the key handling.
namespace coreflow {

class OpenSslWipingAllocator {
public:
    static bool install();
    // True once install() took effect (tests read it).
    static bool installed();

    class Scope {
    public:
        Scope();
        ~Scope();
        Scope(const Scope &) = delete;
        Scope &operator=(const Scope &) = delete;
    };

private:
    OpenSslWipingAllocator() = delete;
};

} // namespace coreflow
