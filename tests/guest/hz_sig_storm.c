/*
 * Signals under load: a sender thread queues N real-time signals (which
 * queue, so none may be lost; it retries on EAGAIN) at the main thread
 * while the main thread
 *   1. does read/write round trips on a pipe (syscalls, SA_RESTART),
 *   2. runs freshly generated code, each function once (translation),
 *   3. spins in an asm loop that keeps s1 and s2 in a fixed relation at
 *      every instruction boundary; the handler checks the relation against
 *      the interrupted pc in its ucontext (consistent registers).
 * Each phase ends when every signal sent has been received; a watchdog
 * fails the test if that takes more than 10 s (lost signal or deadlock).
 */
// xlat-cflags: -pthread
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define N 3000

static pid_t main_tid;
static volatile int received, sent, phase_done, bad_regs, in_loop;
extern char spin_loop[], spin_top[], spin_l1[], spin_end[];

static void on_sig(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = ucv;
    if (in_loop) {
        uintptr_t pc = uc->uc_mcontext.__gregs[0];
        uint64_t s1 = uc->uc_mcontext.__gregs[9], s2 = uc->uc_mcontext.__gregs[18];
        /* From spin_top on: at spin_loop itself (a signal taken on the call)
         * s1 and s2 are still the caller's. */
        if (pc >= (uintptr_t)spin_top && pc < (uintptr_t)spin_end) {
            uint64_t want = pc == (uintptr_t)spin_l1 ? s2 + 1 : s2;
            if (s1 != want)
                bad_regs++;
        }
    }
    __atomic_fetch_add(&received, 1, __ATOMIC_SEQ_CST);
}

/* s1 and s2 count together; between the two addis s1 == s2 + 1. */
__asm__(".text\n.globl spin_loop, spin_top, spin_l1, spin_end\n"
        "spin_loop:\n"
        "  addi sp, sp, -16\n  sd s1, 0(sp)\n  sd s2, 8(sp)\n  li s1, 0\n  li s2, 0\n"
        "spin_top:\n  addi s1, s1, 1\n"
        "spin_l1:\n  addi s2, s2, 1\n"
        "  lw t0, 0(a0)\n  beqz t0, spin_top\n"
        "  ld s1, 0(sp)\n  ld s2, 8(sp)\n  addi sp, sp, 16\n  ret\n"
        "spin_end:\n");
void spin_loop_fn(volatile int *stop) __asm__("spin_loop");

static void *sender(void *arg)
{
    (void)arg;
    for (int phase = 0; phase < 3; phase++) {
        while (__atomic_load_n(&phase_done, __ATOMIC_SEQ_CST) != phase)
            usleep(100);
        for (int i = 0; i < N; i++) {
            siginfo_t si;
            memset(&si, 0, sizeof si);
            si.si_code = SI_QUEUE;
            si.si_pid = getpid();
            while (syscall(SYS_rt_tgsigqueueinfo, getpid(), main_tid, SIGRTMIN, &si) != 0) {
                if (errno != EAGAIN)
                    return NULL;
                sched_yield();
            }
            __atomic_fetch_add(&sent, 1, __ATOMIC_SEQ_CST);
        }
    }
    return NULL;
}

static void *watchdog(void *arg)
{
    (void)arg;
    sleep(20);
    printf("watchdog: stuck (sent %d received %d)\n", sent, received);
    fflush(stdout);
    _exit(1);
}

static volatile int stop;

static int all_in(int phase)
{
    return __atomic_load_n(&received, __ATOMIC_SEQ_CST) >= (phase + 1) * N;
}

static void *stopper_fn(void *arg)
{
    (void)arg;
    while (!all_in(2))
        usleep(1000);
    stop = 1;
    return NULL;
}

static void report(const char *what, int phase)
{
    /* The sender counts a signal when its syscall has returned, which may
     * be after the handler here has run: wait for its count. */
    while (__atomic_load_n(&sent, __ATOMIC_SEQ_CST) < (phase + 1) * N)
        sched_yield();
    printf("%s: sent %d received %d\n", what, sent - phase * N, received - phase * N);
    __atomic_store_n(&phase_done, phase + 1, __ATOMIC_SEQ_CST);
}

int main(void)
{
    main_tid = gettid();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sig;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGRTMIN, &sa, NULL);
    pthread_t s, w;
    pthread_create(&w, NULL, watchdog, NULL);
    pthread_create(&s, NULL, sender, NULL);

    /* 1. syscalls */
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    long trips = 0;
    char c = 'x';
    while (!all_in(0)) {
        if (write(fds[1], &c, 1) != 1 || read(fds[0], &c, 1) != 1)
            printf("pipe error %d\n", errno);
        trips++;
    }
    report("during syscalls", 0);

    /* 2. translation: one new function per iteration (li a0, i ; ret). */
    uint32_t *code = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE | PROT_EXEC,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    long wrong = 0;
    for (int i = 0; !all_in(1); i++) {
        uint32_t *f = code + (i % 65536) * 4;
        f[0] = ((uint32_t)(i & 0x7ff) << 20) | (10 << 7) | 0x13;
        f[1] = 0x00008067u;
        __builtin___clear_cache((char *)f, (char *)(f + 2));
        if (((long (*)(void))(uintptr_t)f)() != (i & 0x7ff))
            wrong++;
    }
    report("during translation", 1);
    printf("generated code wrong results: %ld\n", wrong);

    /* 3. a tight loop; a helper thread ends it once every signal is in. */
    pthread_t stopper;
    in_loop = 1;
    pthread_create(&stopper, NULL, stopper_fn, NULL);
    spin_loop_fn(&stop);
    pthread_join(stopper, NULL);
    in_loop = 0;
    report("during a tight loop", 2);
    printf("handlers saw inconsistent registers: %d times\n", bad_regs);
    pthread_join(s, NULL);
    (void)trips;
    return bad_regs != 0 || wrong != 0;
}
