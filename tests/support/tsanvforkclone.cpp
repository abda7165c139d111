// Linked into every test and peer executable of the ThreadSanitizer tree only (tests/CMakeLists.txt,
// COREFLOW_TSAN; D-131). Not product code: the relay and the console never start a child this way.
//
// QProcess (Qt 6.4's forkfd) starts a child with glibc's clone(CLONE_VM | CLONE_VFORK): the child runs
// in the parent's memory until it calls exec. gcc 12's TSan intercepts clone() and runs its fork
// bookkeeping in that child (ForkChildAfter). With CLONE_VM that bookkeeping writes the parent's own
// runtime state: when the parent has a second thread it marks the parent "after a multi-threaded
// fork" and turns on ignores for the parent's calling thread. The parent's next pthread_create then
// dies ("starting new threads after multi-threaded fork is not supported"), and with die_after_fork=0
// its main thread would stop being checked at all, silently.
//
// This definition of clone() comes first in symbol lookup (the executable), so Qt's call reaches it:
// a clone that shares the parent's memory without being a thread (the vfork shape, child calls exec
// or _exit at once) goes to glibc's clone directly, as a raw clone system call would, and the runtime
// never hears of it; every other clone (threads, a real fork-like clone) goes on to TSan's interceptor.
#include <dlfcn.h>
#include <sched.h>
#include <sys/types.h>

#include <cstdarg>
#include <cstdlib>

namespace {

using CloneFunction = int (*)(int (*)(void *), void *, int, void *, ...);

CloneFunction resolve(void *handle)
{
    void *symbol = ::dlsym(handle, "clone");
    if (!symbol)
        std::abort();
    return reinterpret_cast<CloneFunction>(symbol);
}

// glibc's own clone, looked up inside libc's scope (the runtime's interceptor is not in it).
CloneFunction glibcClone()
{
    static const CloneFunction f = [] {
        void *libc = ::dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
        if (!libc)
            std::abort();
        return resolve(libc);
    }();
    return f;
}

// The next definition after this executable: TSan's interceptor.
CloneFunction interceptedClone()
{
    static const CloneFunction f = resolve(RTLD_NEXT);
    return f;
}

} // namespace

extern "C" int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list rest;
    va_start(rest, arg);
    pid_t *parentTid = va_arg(rest, pid_t *);
    void *tls = va_arg(rest, void *);
    pid_t *childTid = va_arg(rest, pid_t *);
    va_end(rest);
    const bool sharesMemoryAsAProcess = (flags & CLONE_VM) && !(flags & CLONE_THREAD);
    const CloneFunction target = sharesMemoryAsAProcess ? glibcClone() : interceptedClone();
    return target(fn, stack, flags, arg, parentTid, tls, childTid);
}
