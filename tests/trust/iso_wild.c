/*
 * The isolation promise, from the guest's side: every way a guest program
 * can point at memory outside its own address space must end in SIGSEGV
 * (with si_addr the exact guest address, and the exact pc for jumps) or in
 * an error return, never in a host access. Run by tests/trust.sh under xlat
 * with XLAT_CANARY_CHECK=1, which then checks xlat's own canaries at exit.
 *
 * qemu-riscv64 is no reference here: it shares its address space with the
 * guest, so several of these accesses succeed under it. The expected
 * results are what riscv64 Linux (Sv39) gives: nothing is mapped at or above
 * 2^38 in user space, so each access faults at its own address.
 *
 * Prints one line per group and "iso_wild: ALL OK" if nothing failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

static sigjmp_buf jb;
static volatile uint64_t f_addr, f_pc;
static volatile int f_sig;
static int failures;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
    f_sig = sig;
    f_addr = (uint64_t)si->si_addr;
    f_pc = ((ucontext_t *)uc)->uc_mcontext.__gregs[0];
    siglongjmp(jb, 1);
}

static void fail(const char *what, uint64_t addr, const char *why)
{
    if (failures++ < 20)
        printf("FAIL %s at 0x%016llx: %s (sig %d si_addr 0x%llx pc 0x%llx)\n", what,
               (unsigned long long)addr, why, f_sig, (unsigned long long)f_addr,
               (unsigned long long)f_pc);
}

/* -- Wild addresses, one instruction each --------------------------------- */

typedef void (*ProbeFn)(uint64_t addr);

static void p_ld(uint64_t a)  { uint64_t v; __asm__ volatile("ld %0, 0(%1)" : "=r"(v) : "r"(a) : "memory"); }
static void p_lw(uint64_t a)  { uint64_t v; __asm__ volatile("lw %0, 0(%1)" : "=r"(v) : "r"(a) : "memory"); }
static void p_sd(uint64_t a)  { __asm__ volatile("sd zero, 0(%0)" : : "r"(a) : "memory"); }
static void p_sb(uint64_t a)  { __asm__ volatile("sb zero, 0(%0)" : : "r"(a) : "memory"); }
static void p_fld(uint64_t a) { __asm__ volatile("fld ft0, 0(%0)" : : "r"(a) : "memory", "ft0"); }
static void p_fsd(uint64_t a) { __asm__ volatile("fsd ft0, 0(%0)" : : "r"(a) : "memory"); }
static void p_amoadd(uint64_t a)  { uint64_t v; __asm__ volatile("amoadd.d %0, %1, (%1)" : "=&r"(v) : "r"(a) : "memory"); }
static void p_amoswapw(uint64_t a) { uint64_t v; __asm__ volatile("amoswap.w %0, %1, (%1)" : "=&r"(v) : "r"(a) : "memory"); }
static void p_lr(uint64_t a)  { uint64_t v; __asm__ volatile("lr.d %0, (%1)" : "=r"(v) : "r"(a) : "memory"); }
/* An sc.d without a reservation may fail without accessing memory (the
 * spec leaves it to the implementation): no fault is fine if it failed. */
static volatile uint64_t sc_result;
static void p_sc(uint64_t a)  { uint64_t v; __asm__ volatile("sc.d %0, %1, (%1)" : "=&r"(v) : "r"(a) : "memory"); sc_result = v; }
static void p_jalr(uint64_t a) { __asm__ volatile("jalr ra, 0(%0)" : : "r"(a) : "ra", "memory"); }

/*
 * A valid access through t1, then t1 rewritten (by a move, by a load of a
 * pointer through itself) and the wild access through it, all in one
 * block: xlat checks a base register once per block (--tune checked-reuse),
 * so this fails if a write to the register does not make it check again.
 */
static uint64_t valid_word;
static volatile uint64_t wild_ptr;
static void p_ld_remove(uint64_t a)
{
    uint64_t v;
    __asm__ volatile("mv t1, %1\n\tld %0, 0(t1)\n\tmv t1, %2\n\tld %0, 0(t1)"
                     : "=&r"(v) : "r"(&valid_word), "r"(a) : "t1", "memory");
}
static void p_sd_reload(uint64_t a)
{
    wild_ptr = a;
    __asm__ volatile("mv t1, %0\n\tld t1, 0(t1)\n\tsd zero, 0(t1)"
                     : : "r"(&wild_ptr) : "t1", "memory");
}

/* Through sp, set in the same block or the one before (a translator must
 * not trust sp to stay in the window); the fault handler runs on the
 * alternate stack. */
static void p_ld_sp(uint64_t a)
{
    __asm__ volatile("mv t0, sp\n\tmv sp, %0\n\tld t1, 0(sp)\n\tmv sp, t0"
                     : : "r"(a) : "t0", "t1", "memory");
}
/* sp set in one block, used in the next, entered with sp outside the window */
static void p_ld_sp_next(uint64_t a)
{
    __asm__ volatile("mv t0, sp\n\tmv sp, %0\n\tj 1f\n1:\tld t1, 0(sp)\n\tmv sp, t0"
                     : : "r"(a) : "t0", "t1", "memory");
}
static void p_sd_sp(uint64_t a)
{
    wild_ptr = a;
    __asm__ volatile("mv t0, sp\n\tld sp, 0(%0)\n\tsd zero, 0(sp)\n\tmv sp, t0"
                     : : "r"(&wild_ptr) : "t0", "memory");
}

static const struct { const char *name; ProbeFn fn; int jump; } probes[] = {
    { "ld", p_ld, 0 },   { "lw", p_lw, 0 },     { "sd", p_sd, 0 },
    { "sb", p_sb, 0 },   { "fld", p_fld, 0 },   { "fsd", p_fsd, 0 },
    { "amoadd.d", p_amoadd, 0 }, { "amoswap.w", p_amoswapw, 0 },
    { "lr.d", p_lr, 0 }, { "sc.d", p_sc, 0 },   { "jalr", p_jalr, 1 },
    { "ld after mv", p_ld_remove, 0 }, { "sd after ld", p_sd_reload, 0 },
    { "ld via sp", p_ld_sp, 0 }, { "sd via sp", p_sd_sp, 0 },
    { "ld via sp, next block", p_ld_sp_next, 0 },
};

/* Past the window, its guards, typical host mappings, non-canonical. */
static const uint64_t wild[] = {
    1ULL << 38, (1ULL << 39) - 8, 1ULL << 39, (1ULL << 39) + 8,
    (1ULL << 39) + 4096, (1ULL << 39) + (1ULL << 32) - 8, (1ULL << 39) + (1ULL << 32),
    (1ULL << 39) + (1ULL << 32) + 4096, 1ULL << 40, 0x400000ULL << 20,
    0x555555554000ULL, 0x555555558000ULL, 0x7f0000000000ULL, 0x7ffff7fc0000ULL,
    0x7ffff7ffd000ULL, 0x7ffffffde000ULL, 0x7fffffffe000ULL, 0x7ffffffff000ULL,
    0x800000000000ULL, 1ULL << 62, 1ULL << 63, 0xffff800000000000ULL,
    0xffffffffff600000ULL, 0xfffffffffffff000ULL, 0xfffffffffffffff8ULL,
};

static void wild_probes(void)
{
    int bad0 = failures, n = 0;
    for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++) {
        for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
            uint64_t a = wild[i];
            f_sig = 0;
            n++;
            if (sigsetjmp(jb, 1) == 0) {
                sc_result = 0;
                probes[p].fn(a);
                if (probes[p].fn != p_sc || sc_result == 0)
                    fail(probes[p].name, a, "no fault");
                continue;
            }
            if (f_sig != SIGSEGV)
                fail(probes[p].name, a, "not SIGSEGV");
            else if (f_addr != a)
                fail(probes[p].name, a, "wrong si_addr");
            else if (probes[p].jump && f_pc != a)
                fail(probes[p].name, a, "wrong pc");
        }
    }
    printf("wild addresses: %d probes, %s\n", n, failures == bad0 ? "all faulted exactly" : "FAILED");
}

/* -- Every displacement at the edges (generated code) ----------------------- */

#define OP_LOAD  0x03
#define OP_STORE 0x23
#define REG_A0   10
#define REG_A1   11
#define INSN_RET 0x00008067u

static uint32_t enc_lb(int imm)
{
    return ((uint32_t)(imm & 0xfff) << 20) | (REG_A1 << 15) | (REG_A0 << 7) | OP_LOAD;
}

static uint32_t enc_sb(int imm)
{
    uint32_t u = (uint32_t)imm & 0xfff;
    return ((u >> 5) << 25) | (REG_A0 << 20) | (REG_A1 << 15) | ((u & 31) << 7) | OP_STORE;
}

/* Bases where base+imm, for every imm in [-2048, 2047], is outside the
 * guest's possible mappings (wrapping mod 2^64 into the NULL page for
 * 0xfff..., and from the NULL page to the top of the address space for the
 * small bases: a window at host address 0 has no guard below it). The
 * small bases come last, when the code is translated (first runs are
 * interpreted). */
static const uint64_t edge_bases[] = {
    (1ULL << 38) + 2048, (1ULL << 39) - 2048, (1ULL << 39) - 1, 1ULL << 39,
    (1ULL << 39) + 2047, (1ULL << 39) + (1ULL << 32), (1ULL << 39) + (1ULL << 32) - 1,
    1ULL << 63, 0x7ffffffff000ULL, 0xfffffffffffff800ULL, 0xffffffffffffffffULL,
    0, 8, 2047,
};

static void displacement_sweep(void)
{
    const int N = 4096;
    uint32_t *code = mmap(NULL, (size_t)N * 8 * 2, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        fail("mmap rwx", 0, strerror(errno));
        return;
    }
    for (int i = 0; i < N; i++) {
        code[2 * i] = enc_lb(i - 2048);
        code[2 * i + 1] = INSN_RET;
        code[2 * N + 2 * i] = enc_sb(i - 2048);
        code[2 * N + 2 * i + 1] = INSN_RET;
    }
    __builtin___clear_cache((char *)code, (char *)(code + 4 * N));
    for (int op = 0; op < 2; op++) {
        int bad0 = failures;
        for (size_t b = 0; b < sizeof edge_bases / sizeof edge_bases[0]; b++) {
            uint64_t base = edge_bases[b];
            for (int i = 0; i < N; i++) {
                uint32_t *entry = code + 2 * N * op + 2 * i;
                uint64_t a = base + (uint64_t)(int64_t)(i - 2048);
                long (*fn)(long, uint64_t) = (long (*)(long, uint64_t))(uintptr_t)entry;
                f_sig = 0;
                if (sigsetjmp(jb, 1) == 0) {
                    fn(0, base);
                    fail(op ? "sb sweep" : "lb sweep", a, "no fault");
                    continue;
                }
                if (f_sig != SIGSEGV || f_addr != a)
                    fail(op ? "sb sweep" : "lb sweep", a, "wrong signal or si_addr");
                else if (f_pc != (uint64_t)(uintptr_t)entry)
                    fail(op ? "sb sweep" : "lb sweep", a, "wrong pc");
            }
        }
        printf("%s every displacement at %zu edges: %s\n", op ? "sb" : "lb",
               sizeof edge_bases / sizeof edge_bases[0], failures == bad0 ? "ok" : "FAILED");
    }
    munmap(code, (size_t)N * 16);
}

/* -- mmap and mremap hints ------------------------------------------------- */

/* A mapping result is acceptable if it failed or lies below 2^38. */
static void check_map(const char *what, void *p, uint64_t len)
{
    if (p == MAP_FAILED)
        return;
    uint64_t a = (uint64_t)(uintptr_t)p;
    if (a >= (1ULL << 38) || a + len > (1ULL << 38))
        fail(what, a, "mapping outside the guest space");
    else
        munmap(p, len);
}

static void mmap_hints(void)
{
    int bad0 = failures;
    const int rw = PROT_READ | PROT_WRITE, anon = MAP_PRIVATE | MAP_ANONYMOUS;
    for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
        void *h = (void *)(uintptr_t)(wild[i] & ~0xfffULL);
        check_map("mmap hint", mmap(h, 1 << 20, rw, anon, -1, 0), 1 << 20);
        void *p = mmap(h, 1 << 20, rw, anon | MAP_FIXED, -1, 0);
        if (p != MAP_FAILED)
            fail("mmap MAP_FIXED", (uint64_t)(uintptr_t)h, "succeeded");
        check_map("mmap FIXED_NOREPLACE", mmap(h, 4096, rw, anon | MAP_FIXED_NOREPLACE, -1, 0), 4096);
    }
    /* Huge lengths: more than the whole space, and wrapping around. */
    static const uint64_t lens[] = { 1ULL << 38, 1ULL << 39, 1ULL << 40, 1ULL << 47,
                                     1ULL << 63, 0xfffffffffffff000ULL };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        check_map("mmap huge", mmap(NULL, lens[i], PROT_NONE, anon | MAP_NORESERVE, -1, 0), lens[i]);
        void *p = mmap((void *)0x10000000, lens[i], PROT_NONE, anon | MAP_FIXED | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED)
            fail("mmap FIXED huge", lens[i], "succeeded");
    }
    /* mremap: grow to huge sizes, move to wild places. */
    char *m = mmap(NULL, 8192, rw, anon, -1, 0);
    for (size_t i = 0; m != MAP_FAILED && i < sizeof lens / sizeof lens[0]; i++) {
        void *p = mremap(m, 8192, lens[i], MREMAP_MAYMOVE);
        if (p != MAP_FAILED) {
            check_map("mremap grow", p, lens[i]);
            m = mmap(NULL, 8192, rw, anon, -1, 0);
        }
    }
    for (size_t i = 0; m != MAP_FAILED && i < sizeof wild / sizeof wild[0]; i++) {
        void *to = (void *)(uintptr_t)(wild[i] & ~0xfffULL);
        void *p = mremap(m, 8192, 8192, MREMAP_MAYMOVE | MREMAP_FIXED, to);
        if (p != MAP_FAILED) {
            fail("mremap FIXED", (uint64_t)(uintptr_t)to, "succeeded");
            m = mmap(NULL, 8192, rw, anon, -1, 0);
        }
    }
    printf("mmap/mremap hints: %s\n", failures == bad0 ? "inside the window or refused" : "FAILED");
}

/* -- System calls with wild buffers ---------------------------------------- */

static void syscall_buffers(void)
{
    int bad0 = failures, fds[2];
    int zero = open("/dev/zero", O_RDONLY);
    if (pipe(fds) != 0 || zero < 0) {
        fail("pipe", 0, strerror(errno));
        return;
    }
    write(fds[1], "0123456789abcdef", 16);
    for (size_t i = 0; i < sizeof wild / sizeof wild[0]; i++) {
        char *a = (char *)(uintptr_t)wild[i];
        if (write(fds[1], a, 8) != -1 || errno != EFAULT)
            fail("write(pipe, wild)", wild[i], "not EFAULT");
        if (read(zero, a, 8) != -1 || errno != EFAULT)
            fail("read(/dev/zero, wild)", wild[i], "not EFAULT");
        if (read(fds[0], a, 1) != -1 || errno != EFAULT)
            fail("read(pipe, wild)", wild[i], "not EFAULT");
        struct iovec iov = { a, 8 };
        if (readv(zero, &iov, 1) != -1 || errno != EFAULT)
            fail("readv(wild iov_base)", wild[i], "not EFAULT");
        if (readv(zero, (struct iovec *)a, 1) != -1 || errno != EFAULT)
            fail("readv(wild iov)", wild[i], "not EFAULT");
        if (syscall(SYS_getcwd, a, 64) != -1 || errno != EFAULT)
            fail("getcwd(wild)", wild[i], "not EFAULT");
        if (syscall(SYS_clock_gettime, CLOCK_MONOTONIC, a) != -1 || errno != EFAULT)
            fail("clock_gettime(wild)", wild[i], "not EFAULT");
        if (syscall(SYS_openat, AT_FDCWD, a, O_RDONLY) != -1 || errno != EFAULT)
            fail("openat(wild path)", wild[i], "not EFAULT");
    }
    /* A buffer that starts in mapped memory and runs past the window. */
    char *top = (char *)(uintptr_t)((1ULL << 39) - 4);
    if (read(zero, top, 64) != -1 || errno != EFAULT)
        fail("read(straddling the window end)", (uint64_t)(uintptr_t)top, "not EFAULT");
    close(zero);
    close(fds[0]);
    close(fds[1]);
    printf("syscall buffers: %s\n", failures == bad0 ? "all EFAULT" : "FAILED");
}

/* -- Other processes' views of memory -------------------------------------- */

static void proc_mem(void)
{
    int bad0 = failures;
    char paths[8][64];
    int n = 0;
    snprintf(paths[n++], 64, "/proc/self/mem");
    snprintf(paths[n++], 64, "/proc/%d/mem", (int)getpid());
    snprintf(paths[n++], 64, "/proc/thread-self/mem");
    snprintf(paths[n++], 64, "/proc/self/task/%d/mem", (int)gettid());
    snprintf(paths[n++], 64, "/proc//self/./mem");
    snprintf(paths[n++], 64, "/proc/self/../self/mem");
    snprintf(paths[n++], 64, "/proc/%d/mem", (int)getppid());
    for (int i = 0; i < n; i++) {
        for (int mode = 0; mode < 3; mode++) {
            int fd = open(paths[i], mode == 0 ? O_RDONLY : mode == 1 ? O_WRONLY : O_RDWR);
            if (fd >= 0) {
                /* Tolerable only as a view of guest memory: a write to a
                 * wild offset must fail. */
                uint64_t v = 0x4141414141414141ULL;
                for (size_t w = 0; w < sizeof wild / sizeof wild[0]; w++)
                    if (pwrite(fd, &v, 8, (off_t)wild[w]) == 8)
                        fail(paths[i], wild[w], "wrote through /proc mem");
                close(fd);
            }
        }
        int dfd = open("/proc/self", O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            int fd = openat(dfd, "mem", O_RDWR);
            if (fd >= 0) {
                fail("openat(/proc/self dirfd, mem)", 0, "opened");
                close(fd);
            }
            close(dfd);
        }
    }
    struct iovec local = { &bad0, sizeof bad0 }, remote = { &bad0, sizeof bad0 };
    if (syscall(SYS_process_vm_writev, getpid(), &local, 1, &remote, 1, 0) != -1)
        fail("process_vm_writev(self)", 0, "succeeded");
    if (syscall(SYS_process_vm_writev, getppid(), &local, 1, &remote, 1, 0) != -1)
        fail("process_vm_writev(parent)", 0, "succeeded");
    if (ptrace(PTRACE_ATTACH, getppid(), 0, 0) != -1)
        fail("ptrace(ATTACH, parent)", 0, "succeeded");
    if (ptrace(PTRACE_POKEDATA, getpid(), 0x7f0000000000ULL, 0) != -1)
        fail("ptrace(POKEDATA, self)", 0, "succeeded");
    /* A child (another xlat process) going after its parent, this xlat. */
    pid_t child = fork();
    if (child == 0) {
        char path[64];
        int bad = 0;
        snprintf(path, sizeof path, "/proc/%d/mem", (int)getppid());
        int fd = open(path, O_RDWR);
        bad += fd >= 0;
        bad += ptrace(PTRACE_ATTACH, getppid(), 0, 0) != -1;
        bad += ptrace(PTRACE_SEIZE, getppid(), 0, 0) != -1;
        bad += syscall(SYS_process_vm_writev, getppid(), &local, 1, &remote, 1, 0) != -1;
        _exit(bad);
    }
    int status = -1;
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail("child: /proc/<parent>/mem, ptrace or process_vm_writev on the parent", 0, "allowed");
    printf("/proc/*/mem, process_vm_writev, ptrace: %s\n", failures == bad0 ? "refused" : "FAILED");
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    stack_t ss = { .ss_sp = malloc(1 << 16), .ss_size = 1 << 16 };
    sigaltstack(&ss, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);

    wild_probes();
    displacement_sweep();
    mmap_hints();
    syscall_buffers();
    proc_mem();
    if (failures)
        printf("iso_wild: %d FAILURES\n", failures);
    else
        printf("iso_wild: ALL OK\n");
    return failures != 0;
}
