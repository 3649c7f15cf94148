/*
 * A signal must reach a guest spinning in a one-block loop (the JIT polls
 * for exit requests on every cycle of the guest's control flow), and a
 * fault inside a translated block reports the exact pc and address.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

static volatile int ticks;
static void on_alarm(int sig) { (void)sig; ticks++; }

static sigjmp_buf jb;
static volatile uintptr_t fault_pc, fault_addr;
static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    fault_addr = (uintptr_t)si->si_addr;
    fault_pc = ((ucontext_t *)uc)->uc_mcontext.__gregs[REG_PC];
    siglongjmp(jb, 1);
}

extern char load_insn[];

int main(void)
{
    signal(SIGALRM, on_alarm);
    struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    /* A one-block loop: no memory access but the flag, no call. */
    __asm__ volatile("1: lw t0, 0(%0)\n beqz t0, 1b" :: "r"(&ticks) : "t0", "memory");
    it.it_value.tv_usec = it.it_interval.tv_usec = 0;
    setitimer(ITIMER_REAL, &it, NULL);
    printf("spin loop saw the timer: %d\n", ticks > 0);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    if (!sigsetjmp(jb, 1)) {
        __asm__ volatile("li t1, 0x1230\n"
                         "addi t2, t1, 5\n"
                         ".globl load_insn\n"
                         "load_insn: ld t0, 8(t1)\n"
                         "addi t2, t2, 1\n" ::: "t0", "t1", "t2", "memory");
        printf("no fault?\n");
    }
    printf("fault at the load: %d, address 0x%lx\n", fault_pc == (uintptr_t)load_insn,
           (unsigned long)fault_addr);
    return 0;
}
