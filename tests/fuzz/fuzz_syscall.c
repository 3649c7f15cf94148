/*
 * libFuzzer target: random system calls from a guest CPU state into
 * syscall_dispatch, the whole Linux syscall layer's entry.
 *
 * Each input is a short program: records of (syscall, six arguments), each
 * argument a raw value, a small integer, a pointer into a guest scratch
 * area (filled with the input's bytes), a pointer near its end or just past
 * the guest window, or one of the fds opened so far. After every call the
 * harness checks xlat's invariants: the result is a value or -errno in
 * [-4095, -1], pc and every register but a0 are unchanged, the guest
 * window has not moved. ASan and UBSan watch everything else.
 *
 * Safety (the fuzzer runs as whatever user runs make check, maybe root):
 * only an allowlist of calls is used (no exit, kill, clone, execve, mount,
 * reboot, set*id, rlimits, signal dispositions, timers that signal,
 * ioctl, mknod, scheduler changes, rseq, fallocate); the process works in a fresh temporary
 * directory, and every byte the guest can pass as a string has '/' and '.'
 * replaced, so paths are plain names inside it; dirfd arguments are forced
 * to AT_FDCWD and fd arguments to fds the harness did not inherit. Calls
 * that block are cut short by a 10 ms interval timer (a POSIX timer on a
 * real-time signal without SA_RESTART, apart from libFuzzer's SIGALRM):
 * they return EINTR.
 * Built and run by tests/fuzz.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "riscv/cpu.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/syscall.h"

__attribute__((weak)) Options opt;

#define SCRATCH     0x100000ULL
#define SCRATCH_LEN 0x10000ULL
#define MAX_CALLS   16

/* nr and one letter per argument: '-' anything, 'd' dirfd (AT_FDCWD),
 * 'f' an fd the harness did not inherit, 'u' forced AF_UNIX. */
static const struct { int nr; const char *args; } calls[] = {
    { 5, "------" }, { 6, "------" }, { 7, "f-----" }, { 8, "------" }, { 9, "------" },
    { 10, "f-----" }, { 11, "------" }, { 12, "------" }, { 13, "f-----" }, { 14, "------" },
    { 15, "------" }, { 16, "f-----" }, { 17, "------" }, { 19, "------" }, { 20, "------" },
    { 21, "ff----" }, { 22, "f-----" }, { 23, "f-----" }, { 24, "ff----" }, { 25, "f-----" },
    { 26, "------" }, { 27, "f-----" }, { 28, "f-----" }, { 32, "f-----" }, { 34, "d-----" },
    { 35, "d-----" }, { 36, "-d----" }, { 37, "d-d---" }, { 43, "------" }, { 44, "f-----" },
    { 45, "------" }, { 46, "f-----" }, { 48, "d-----" }, { 49, "------" },
    { 50, "f-----" }, { 52, "f-----" }, { 53, "d-----" }, { 54, "d-----" }, { 55, "f-----" },
    { 56, "d-----" }, { 57, "f-----" }, { 59, "------" }, { 61, "f-----" }, { 62, "f-----" },
    { 63, "f-----" }, { 64, "f-----" }, { 65, "f-----" }, { 66, "f-----" }, { 67, "f-----" },
    { 68, "f-----" }, { 69, "f-----" }, { 70, "f-----" }, { 71, "ff----" }, { 72, "------" },
    { 73, "------" }, { 74, "f-----" }, { 75, "f-----" }, { 76, "f-f---" }, { 77, "ff----" },
    { 78, "d-----" }, { 79, "d-----" }, { 80, "f-----" }, { 82, "f-----" }, { 83, "f-----" },
    { 84, "f-----" }, { 85, "------" }, { 86, "f-----" }, { 87, "f-----" }, { 88, "d-----" },
    { 96, "------" }, { 98, "------" }, { 99, "------" }, { 100, "------" }, { 101, "------" },
    { 102, "------" }, { 113, "------" }, { 114, "------" }, { 115, "------" }, { 123, "------" },
    { 124, "------" }, { 125, "------" }, { 126, "------" }, { 127, "------" }, { 141, "------" },
    { 148, "------" }, { 150, "------" }, { 153, "------" }, { 155, "------" }, { 156, "------" },
    { 158, "------" }, { 160, "------" }, { 163, "------" }, { 165, "------" }, { 166, "------" },
    { 168, "------" }, { 169, "------" }, { 172, "------" }, { 173, "------" }, { 174, "------" },
    { 175, "------" }, { 176, "------" }, { 177, "------" }, { 178, "------" }, { 179, "------" },
    { 198, "u-----" }, { 199, "u-----" }, { 200, "f-----" }, { 201, "f-----" }, { 202, "f-----" },
    { 203, "f-----" }, { 204, "f-----" }, { 205, "f-----" }, { 206, "f-----" }, { 207, "f-----" },
    { 208, "f-----" }, { 209, "f-----" }, { 210, "f-----" }, { 211, "f-----" }, { 212, "f-----" },
    { 213, "f-----" }, { 214, "------" }, { 215, "------" }, { 216, "------" }, { 222, "----f-" },
    { 223, "f-----" }, { 226, "------" }, { 227, "------" }, { 228, "------" }, { 229, "------" },
    { 232, "------" }, { 233, "------" }, { 242, "f-----" }, { 243, "f-----" }, { 258, "------" },
    { 259, "------" }, { 269, "f-----" }, { 276, "d-d---" }, { 278, "------" }, { 279, "------" },
    { 283, "------" }, { 285, "f-f---" }, { 286, "f-----" }, { 287, "f-----" }, { 291, "d-----" },
    { 436, "ff----" }, { 437, "d-----" }, { 439, "d-----" }, { 441, "f-----" },
};
#define NCALLS (sizeof calls / sizeof calls[0])

static int first_fd;            /* lowest fd the harness did not inherit */

static const uint64_t wild[] = {
    GUEST_SPACE_SIZE - 8, GUEST_SPACE_SIZE, GUEST_SPACE_SIZE + 4096, 0x7f0000000000ULL,
    0x555555554000ULL, 1ULL << 63, (uint64_t)-4096, 0, 8,
};

/* Bytes consumed from the input, zero when it runs out. */
typedef struct In { const uint8_t *p; size_t n; } In;

static uint64_t take(In *in, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < bytes && in->n; i++, in->p++, in->n--)
        v |= (uint64_t)*in->p << (8 * i);
    return v;
}

static uint64_t arg_value(In *in, char spec)
{
    unsigned kind = (unsigned)take(in, 1);
    uint64_t v = take(in, 8);
    switch (spec) {
    case 'd': return (uint64_t)(int64_t)AT_FDCWD;
    case 'f': return (uint64_t)first_fd + v % 32;
    case 'u': return AF_UNIX;
    }
    switch (kind % 8) {
    case 0:  return v;
    case 1:
    case 2:  return (uint64_t)(int64_t)(int8_t)v;
    case 3:
    case 4:  return SCRATCH + v % SCRATCH_LEN;
    case 5:  return SCRATCH + SCRATCH_LEN - 1 - v % 64;
    case 6:  return wild[v % (sizeof wild / sizeof wild[0])];
    default: return (uint64_t)first_fd + v % 32;
    }
}

static void on_alarm(int sig) { (void)sig; }
static timer_t breaker;
#define BREAKER_SIG (SIGRTMAX - 1)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    log_file = stderr;
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/xlat-fuzz-syscall-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir) || chdir(dir) != 0) {
        perror("fuzz_syscall: temp dir");
        abort();
    }
    mm_init();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;           /* no SA_RESTART: blocking calls see EINTR */
    sigaction(BREAKER_SIG, &sa, NULL);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = BREAKER_SIG;
    if (timer_create(CLOCK_MONOTONIC, &sev, &breaker) != 0)
        abort();
    signal(SIGPIPE, SIG_IGN);
    first_fd = open("/dev/null", O_RDONLY);  /* the lowest free fd */
    close(first_fd);
    if (first_fd < 3)
        abort();
    return 0;
}

static void reset_guest(In *in)
{
    guest_munmap(0, GUEST_TASK_SIZE);
    if (guest_map_fixed(SCRATCH, SCRATCH_LEN, PROT_READ | PROT_WRITE, "scratch") != 0)
        abort();
    uint8_t *s = g2h(SCRATCH);
    for (size_t i = 0; i < SCRATCH_LEN; i++) {
        uint8_t b = in->n ? in->p[i % in->n] : 0;
        s[i] = b == '/' ? 'a' : b == '.' ? 'b' : b;
    }
}

static void check(const CPUState *before, const CPUState *after, uint8_t *base, int nr)
{
    int64_t r = (int64_t)after->x[10];
    bool ok = guest_base == base && after->pc == before->pc && !(r < 0 && r < -4095);
    for (int i = 0; i < 32; i++)
        ok = ok && (i == 10 || after->x[i] == before->x[i]);
    ok = ok && memcmp(after->f, before->f, sizeof after->f) == 0;
    if (!ok) {
        fprintf(stderr, "syscall %d broke an invariant (result %lld)\n", nr, (long long)r);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    In in = { data, size };
    reset_guest(&in);
    uint8_t *base = guest_base;
    struct itimerspec it = { { 0, 10000000 }, { 0, 10000000 } }, off = { { 0, 0 }, { 0, 0 } };
    for (int k = 0; k < MAX_CALLS && in.n; k++) {
        unsigned idx = (unsigned)take(&in, 1) % NCALLS;
        static CPUState cpu, before;
        memset(&cpu, 0, sizeof cpu);
        for (int i = 1; i < 32; i++)
            cpu.x[i] = 0x1000 * (uint64_t)i;
        cpu.x[17] = (uint64_t)calls[idx].nr;
        for (int a = 0; a < 6; a++)
            cpu.x[10 + a] = arg_value(&in, calls[idx].args[a]);
        cpu.pc = 0x10000;
        before = cpu;
        timer_settime(breaker, 0, &it, NULL);
        syscall_dispatch(&cpu);
        timer_settime(breaker, 0, &off, NULL);
        check(&before, &cpu, base, calls[idx].nr);
    }
    /* Everything the calls opened, and the working directory's contents. */
    syscall(SYS_close_range, first_fd, ~0U, 0);
    return 0;
}
