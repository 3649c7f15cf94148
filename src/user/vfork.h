/*
 * vfork (clone with CLONE_VFORK) on top of a host fork.
 *
 * Linux runs a CLONE_VM|CLONE_VFORK child (glibc's posix_spawn and vfork)
 * in its parent's memory and suspends the parent until the child execs or
 * exits. xlat cannot share its own state (code buffer, locks, jump caches,
 * CPUState, signal tables) with a second process, so it forks as for any
 * clone without CLONE_VM -- the child has its own xlat by construction --
 * and makes the difference invisible where programs look:
 *
 *  - The parent waits in clone until the child execs or exits: it reads a
 *    socket whose other end only the child holds (one of xlat's own
 *    descriptors, close-on-exec, out of the guest's reach), up to end of
 *    file. Guest signals arriving meanwhile are queued by xlat's handlers
 *    and delivered when clone returns, as after a real vfork.
 *
 *  - With CLONE_VM the child records its writes to guest memory: every
 *    page of a private writable mapping is made host read-only (the
 *    guest's protection in mm.c does not change); the first store to one
 *    faults, and vfork_write_fault (fault.c, before the JIT's SMC check)
 *    copies the page and makes it writable. Shared mappings need nothing:
 *    the parent has the same pages.
 *
 *  - Right before its host execve and when it exits, the child compares
 *    each copied page with what it holds now and sends the changed byte
 *    runs, {u64 guest address, u32 length, bytes}, to the parent, which
 *    stores them into its memory before clone returns. Runs, not pages:
 *    the parent's other threads may have written other bytes of the same
 *    pages meanwhile. A failed execve lets the child go on, still
 *    tracking; a later release sends what changed since the last one.
 *
 * Limits (real vfork shares the whole mm; this shares the contents of the
 * mappings that existed at the clone):
 *  - Mapping changes the child makes (mmap, munmap, mprotect, mremap, brk)
 *    stay in the child. Its writes to a range it unmaps, replaces or moves
 *    are sent at that moment; pages that become writable only in the
 *    child are not tracked.
 *  - The child sees the parent's memory as it was at the clone: the
 *    parent's other threads' later stores do not reach it, and a lock one
 *    of them held then stays held in the child (as after fork).
 *  - A child killed by a signal xlat never sees (SIGKILL, or one whose
 *    default action the host kernel carries out) sends nothing.
 *  - Threads the child starts are tracked too, but a release does not stop
 *    them: what they write after it is lost.
 */
#ifndef XLAT_USER_VFORK_H
#define XLAT_USER_VFORK_H

#include <stdbool.h>
#include <stdint.h>

/* The channel of one fork-like clone, set up by vfork_fork_begin. */
typedef struct VforkLink {
    int rd;     /* the parent's end, or -1: the parent does not wait */
    int wr;     /* the child's end, or -1 */
} VforkLink;

/*
 * Around every host fork() of a guest clone (thread.c): begin takes the
 * fork lock (one guest fork at a time: no other may inherit the channel)
 * and, with wait, creates the channel; then exactly one of parent (closes
 * the child's end, drops the lock) and child. In the child, copy_back starts
 * the write tracking (CLONE_VM); it also ends whatever the process
 * inherited: its parent's channel and tracking belong to its parent.
 * vfork_wait (parent, after parent) applies the child's records until the
 * child execs or exits, and closes the channel.
 */
void vfork_fork_begin(VforkLink *l, bool wait);
void vfork_fork_parent(VforkLink *l);
void vfork_fork_child(VforkLink *l, bool copy_back);
void vfork_wait(VforkLink *l);

/*
 * In a vfork child: send the parent every write made since the last
 * release. Called right before the host execve (sys_exec.c) and when the
 * process ends (xlat_at_exit); a no-op anywhere else.
 */
void vfork_child_release(void);

/*
 * SIGSEGV (SEGV_ACCERR) at host address addr: a first store to a tracked
 * page? Copies it and returns true if the store can be retried; false if
 * it is not one (or the JIT's write protection must handle it next).
 * Async-signal-safe.
 */
bool vfork_write_fault(void *addr);

/*
 * A host system call in a vfork child failed with EFAULT: the kernel
 * cannot fault a tracked page in (syscall_dispatch, in this order):
 *  - vfork_unprotect_args: copy and unprotect the tracked pages from each
 *    argument that points into one, up to 1 MiB or the first untracked
 *    page (a heuristic: the kernel writes where a pointer argument
 *    points). True if there were any: retry, and again while true.
 *  - vfork_before_exec_unprotect: copy the tracked pages the JIT also
 *    protects, before exec_unwatch_all makes them writable.
 *  - vfork_unprotect_all: the last resort (the buffer is reached through
 *    another pointer, as readv's are): copy and unprotect every tracked
 *    page. True if there were any.
 */
bool vfork_unprotect_args(const uint64_t *args, int n);
void vfork_before_exec_unprotect(void);
bool vfork_unprotect_all(void);

/*
 * mm.c's hooks, with the mapping table locked, for the page-aligned range
 * [start, start+len) of a vfork child:
 *  - forget: its host pages are about to be unmapped, replaced or moved:
 *    send its writes now and stop tracking it.
 *  - protect: its protection changes to prot; called before (done false)
 *    and after (done true) the host mprotect.
 *  - discard: its contents are about to be dropped (MADV_DONTNEED...).
 */
void vfork_mm_forget(uint64_t start, uint64_t len);
void vfork_mm_protect(uint64_t start, uint64_t len, int prot, bool done);
void vfork_mm_discard(uint64_t start, uint64_t len);

#endif
