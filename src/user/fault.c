/*
 * Host SIGSEGV/SIGBUS -> guest memory fault.
 *
 * The interpreter and translated code touch guest memory with plain host
 * loads and stores at g2h(A). When the guest page is unmapped or protected,
 * the host raises SIGSEGV (or SIGBUS past the end of a mapped file). The
 * handler below turns that into a guest fault: if the faulting host address
 * is inside the guest window and the thread is inside a guest access
 * (guest_fault.jmp set), it records the MemFault and siglongjmps back to
 * the run loop, which reports EXIT_FAULT; fault_signal_of then says which
 * signal the guest gets.
 *
 * Anything else is a bug in xlat itself: print where it happened and die
 * with the original signal, so a core dump / debugger sees the real fault.
 *
 * The handler runs on a per-thread alternate stack (a fault caused by a
 * host stack overflow must still be reported) and is installed with
 * SA_NODEFER and an empty sa_mask: the signal mask inside the handler is the
 * mask at the fault, so siglongjmp needs no mask restore and the run loop
 * can use the cheap sigsetjmp(buf, 0).
 */
#define _GNU_SOURCE
#include "user/fault.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ucontext.h>
#include <unistd.h>

#include "exec/exec.h"
#include "user/code_watch.h"
#include "user/mm.h"
#include "user/signal.h"
#include "user/vfork.h"


/* Big enough for the handler plus an ASan/UBSan report. */
#define ALT_STACK_SIZE (64 * 1024)

static __thread void *alt_stack;

/* -- Reporting an internal error ------------------------------------------ */

/* Async-signal-safe formatting: append a hex number to buf at *pos. */
static void put_hex(char *buf, size_t *pos, size_t size, uint64_t v)
{
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v && n < 16);
    if (*pos + 2 < size) { buf[(*pos)++] = '0'; buf[(*pos)++] = 'x'; }
    while (n > 0 && *pos < size)
        buf[(*pos)++] = tmp[--n];
}

static void put_str(char *buf, size_t *pos, size_t size, const char *s)
{
    while (*s && *pos < size)
        buf[(*pos)++] = *s++;
}

static void put_dec(char *buf, size_t *pos, size_t size, int v)
{
    char tmp[12];
    int n = 0;
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0 && *pos < size)
        buf[(*pos)++] = '-';
    while (n > 0 && *pos < size)
        buf[(*pos)++] = tmp[--n];
}

static uint64_t host_pc(const void *uctx)
{
#if defined(__x86_64__)
    const ucontext_t *uc = uctx;
    return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#else
    (void)uctx;
    return 0;
#endif
}

static void internal_fault(int sig, const siginfo_t *si, const void *uctx)
{
    char buf[160];
    size_t pos = 0;
    put_str(buf, &pos, sizeof buf, "xlat: internal error: host signal ");
    put_dec(buf, &pos, sizeof buf, sig);
    put_str(buf, &pos, sizeof buf, " at host address ");
    put_hex(buf, &pos, sizeof buf, (uint64_t)(uintptr_t)si->si_addr);
    put_str(buf, &pos, sizeof buf, " (pc ");
    put_hex(buf, &pos, sizeof buf, host_pc(uctx));
    put_str(buf, &pos, sizeof buf, ")\n");
    if (write(STDERR_FILENO, buf, pos) < 0) {
        /* nothing more we can do */
    }

    /* Die from the same signal: returning re-executes the faulting access,
     * now with the default action. */
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    if (si->si_code <= 0)           /* sent by kill(): re-send it */
        raise(sig);
}

/* -- The handler ---------------------------------------------------------- */

static void fault_handler(int sig, siginfo_t *si, void *uctx)
{
    GuestFaultFrame *gf = &guest_fault;

    /* A vfork child's first store to a page since the clone: copied for
     * the parent (vfork.c), writable again; retry the store. It comes
     * first: the page may be write-protected for the JIT too. */
    if (sig == SIGSEGV && si->si_code == SEGV_ACCERR && vfork_write_fault(si->si_addr))
        return;
    /* JIT: a store to a page write-protected because it holds translated
     * code; the page is writable again, retry the store. */
    if (sig == SIGSEGV && si->si_code == SEGV_ACCERR && code_watch_fault(si->si_addr))
        return;
    /* JIT: translated code checks only the base register, so its faulting
     * guest accesses may land in the guards around the window. */
    bool in_jit = si->si_code > 0 && exec_host_pc_in_cache(host_pc(uctx));
    if (gf->jmp != NULL && si->si_code > 0 &&
        (host_in_window(si->si_addr) || (in_jit && host_in_window_or_guards(si->si_addr)))) {
        if (in_jit)
            exec_fault_restore(uctx);
        sigjmp_buf *jmp = gf->jmp;
        gf->jmp = NULL;             /* a second fault before re-arming is a bug */
        bool write = ((ucontext_t *)uctx)->uc_mcontext.gregs[REG_ERR] & 2;  /* x86 #PF: W */
        gf->fault = (MemFault){
            .kind = sig == SIGBUS ? MEM_FAULT_BUS
                  : host_in_window(si->si_addr) ? MEM_FAULT_PROT    /* maybe unmapped */
                  : MEM_FAULT_UNMAPPED,                             /* in the guards */
            .access = write ? MEM_STORE : MEM_LOAD,
            .addr = h2g(si->si_addr),
        };
        siglongjmp(*jmp, 1);
    }
    if (si->si_code <= 0) {         /* sent by kill()/sigqueue(): a guest signal */
        signal_host_async(sig, si, uctx);
        return;
    }
    internal_fault(sig, si, uctx);
}

GuestSignal fault_signal_of(const CPUState *cpu, enum exit_reason why)
{
    if (why == EXIT_ILLEGAL)
        return (GuestSignal){ SIGILL, ILL_ILLOPC, cpu->pc };
    if (why == EXIT_EBREAK)
        return (GuestSignal){ SIGTRAP, TRAP_BRKPT, cpu->pc };
    uint64_t a = cpu->fault.addr;
    switch (cpu->fault.kind) {
    case MEM_FAULT_BUS:
        return (GuestSignal){ SIGBUS, BUS_ADRERR, a };
    case MEM_FAULT_MISALIGNED:
        return (GuestSignal){ SIGBUS, BUS_ADRALN, a };
    case MEM_FAULT_PROT:
        return (GuestSignal){ SIGSEGV, guest_access_ok(a, 1, 0) ? SEGV_ACCERR : SEGV_MAPERR, a };
    default:
        return (GuestSignal){ SIGSEGV, SEGV_MAPERR, a };
    }
}

/* -- Setup ---------------------------------------------------------------- */

void fault_thread_init(void)
{
    if (alt_stack != NULL)
        return;
    void *p = mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("xlat: alternate signal stack");
        exit(1);
    }
    stack_t ss = { .ss_sp = p, .ss_size = ALT_STACK_SIZE, .ss_flags = 0 };
    if (sigaltstack(&ss, NULL) != 0) {
        perror("xlat: sigaltstack");
        exit(1);
    }
    alt_stack = p;
}

void fault_thread_exit(void)
{
    if (alt_stack == NULL)
        return;
    stack_t ss = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
    sigaltstack(&ss, NULL);
    munmap(alt_stack, ALT_STACK_SIZE);
    alt_stack = NULL;
}

void fault_init(void)
{
    fault_thread_init();

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fault_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, NULL) != 0 || sigaction(SIGBUS, &sa, NULL) != 0) {
        perror("xlat: sigaction");
        exit(1);
    }
}
