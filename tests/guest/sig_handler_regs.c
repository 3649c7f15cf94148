/*
 * Synchronous signals with a handler: the frame holds the exact pc of the
 * faulting instruction and every register; si_addr/si_code are right; a
 * handler that edits uc_mcontext (pc past the instruction, a result in a
 * register) changes the state the program resumes with. SIGSEGV (load and
 * store, unmapped and read-only), SIGBUS (misaligned AMO and LR), SIGILL,
 * SIGTRAP. (Not a misaligned SC: qemu-riscv64 checks the reservation
 * first and just fails it; xlat, like Spike, raises SIGBUS.)
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static volatile int got_sig, got_code;
static volatile uintptr_t got_addr, got_pc;
static volatile int regs_ok;

/* Skip the (4-byte) faulting instruction and "load" 0x1234 into a0. */
static void handler(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    unsigned long *g = uc->uc_mcontext.__gregs;
    got_sig = sig;
    got_code = si->si_code;
    got_addr = (uintptr_t)si->si_addr;
    got_pc = g[REG_PC];
    /* s2..s11 (x18..x27) hold 1000+n, set just before the fault. */
    regs_ok = 1;
    for (int r = 18; r <= 27; r++)
        if (g[r] != 1000u + r)
            regs_ok = 0;
    g[REG_PC] += 4;
    g[10] = 0x1234;                     /* a0 */
}

/*
 * Run `insn` (4 bytes, at label 1) with a1 = addr and s2..s11 = 1000+n;
 * returns a0 afterwards, *at = the instruction's address.
 */
#define PROBE(name, insn)                                                     \
    static unsigned long name(uintptr_t addr, uintptr_t *at)                  \
    {                                                                         \
        register unsigned long a0 __asm__("a0") = 7;                          \
        register uintptr_t a1 __asm__("a1") = addr;                           \
        __asm__ volatile(".option push\n\t.option norvc\n\t"                  \
                         "li s2, 1018\n\tli s3, 1019\n\tli s4, 1020\n\t"      \
                         "li s5, 1021\n\tli s6, 1022\n\tli s7, 1023\n\t"      \
                         "li s8, 1024\n\tli s9, 1025\n\tli s10, 1026\n\t"     \
                         "li s11, 1027\n\t"                                   \
                         "la t0, 1f\n\tsd t0, 0(%[at])\n"                     \
                         "1:\t" insn "\n\t.option pop"                        \
                         : "+r"(a0), "+r"(a1)                                 \
                         : [at] "r"(at)                                       \
                         : "t0", "s2", "s3", "s4", "s5", "s6", "s7", "s8",    \
                           "s9", "s10", "s11", "memory");                     \
        return a0;                                                            \
    }

PROBE(do_load, "ld a0, 0(a1)")
PROBE(do_store, "sd a0, 0(a1)")
PROBE(do_amo, "amoadd.w a0, a0, (a1)")
PROBE(do_lr, "lr.d a0, (a1)")
PROBE(do_illegal, ".4byte 0xc0001073")  /* csrw cycle, zero: read-only CSR */
PROBE(do_ebreak, "ebreak")

static void run(const char *what, unsigned long (*fn)(uintptr_t, uintptr_t *), uintptr_t addr)
{
    static uintptr_t at;
    got_sig = 0;
    unsigned long r = fn(addr, (uintptr_t *)&at);
    printf("%-16s sig=%d code=%d addr-ok=%d pc-ok=%d regs-ok=%d a0=%#lx\n", what, got_sig,
           got_code, got_addr == (got_sig == SIGILL || got_sig == SIGTRAP ? at : addr),
           got_pc == at, regs_ok, r);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGTRAP, &sa, NULL);

    char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(page + 4096, 4096);
    mprotect(page, 4096, PROT_READ);

    run("load unmapped", do_load, (uintptr_t)page + 4096 + 8);
    run("load null", do_load, 16);
    run("store readonly", do_store, (uintptr_t)page + 24);
    run("store unmapped", do_store, (uintptr_t)page + 4100);
    run("amo misaligned", do_amo, (uintptr_t)page + 2);
    run("lr misaligned", do_lr, (uintptr_t)page + 4);
    run("illegal", do_illegal, 0);
    run("ebreak", do_ebreak, 0);
    run("load ok", do_load, (uintptr_t)page);
    return 0;
}
