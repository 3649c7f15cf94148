/*
 * FP state in the signal frame: a handler sees the interrupted f registers
 * and fcsr in uc_mcontext.__fpregs, may change them there (the change is
 * what the program resumes with), and its own FP work (registers, rounding
 * mode, flags) does not leak into the interrupted code.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

static const int fsregs[12] = { 8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27 };
static double in[12], out[12];
static unsigned long fcsr_after;
static volatile int seen_ok, seen_fcsr, entry_fcsr, seen_a7;

static void handler(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    double *f = (double *)uc->uc_mcontext.__fpregs.__d.__f;
    unsigned long fcsr;
    (void)sig;
    (void)si;
    __asm__ volatile("csrr %0, fcsr" : "=r"(fcsr));
    entry_fcsr = (int)fcsr;
    seen_ok = 1;
    for (int i = 0; i < 12; i++)
        if (f[fsregs[i]] != in[i])
            seen_ok = 0;
    seen_fcsr = (int)uc->uc_mcontext.__fpregs.__d.__fcsr;
    seen_a7 = (int)uc->uc_mcontext.__gregs[17];

    /* Scribble over the live FP state; sigreturn must undo it. */
    __asm__ volatile("fmv.d.x fs1, zero\n\tfmv.d.x fs11, zero\n\t"
                     "li t0, 0x84\n\tcsrw fcsr, t0"
                     ::: "t0", "fs1", "fs11");
    /* Edit the saved state: fs0 = 42.0, frm = RDN, fflags = DZ. */
    f[8] = 42.0;
    uc->uc_mcontext.__fpregs.__d.__fcsr = (2 << 5) | 8;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR1, &sa, NULL);
    for (int i = 0; i < 12; i++)
        in[i] = 1.5 + i * 0.25;

    /* Load fs0..fs11 and fcsr = RTZ|NX, tgkill ourselves with a bare
     * ecall (the handler runs right after it), then read everything back. */
    register long a0 __asm__("a0") = getpid();
    register long a1 __asm__("a1") = gettid();
    register long a2 __asm__("a2") = SIGUSR1;
    register long a7 __asm__("a7") = SYS_tgkill;
    __asm__ volatile(
        "fld fs0, 0(%[in])\n\tfld fs1, 8(%[in])\n\tfld fs2, 16(%[in])\n\t"
        "fld fs3, 24(%[in])\n\tfld fs4, 32(%[in])\n\tfld fs5, 40(%[in])\n\t"
        "fld fs6, 48(%[in])\n\tfld fs7, 56(%[in])\n\tfld fs8, 64(%[in])\n\t"
        "fld fs9, 72(%[in])\n\tfld fs10, 80(%[in])\n\tfld fs11, 88(%[in])\n\t"
        "li t0, 0x21\n\tcsrw fcsr, t0\n\t"
        "ecall\n\t"
        "csrr t0, fcsr\n\tsd t0, 0(%[fc])\n\t"
        "fsd fs0, 0(%[out])\n\tfsd fs1, 8(%[out])\n\tfsd fs2, 16(%[out])\n\t"
        "fsd fs3, 24(%[out])\n\tfsd fs4, 32(%[out])\n\tfsd fs5, 40(%[out])\n\t"
        "fsd fs6, 48(%[out])\n\tfsd fs7, 56(%[out])\n\tfsd fs8, 64(%[out])\n\t"
        "fsd fs9, 72(%[out])\n\tfsd fs10, 80(%[out])\n\tfsd fs11, 88(%[out])\n\t"
        "csrw fcsr, zero"
        : "+r"(a0)
        : "r"(a1), "r"(a2), "r"(a7), [in] "r"(in), [out] "r"(out), [fc] "r"(&fcsr_after)
        : "t0", "fs0", "fs1", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
          "fs10", "fs11", "memory");

    printf("tgkill=%ld handler saw regs-ok=%d fcsr=%#x a7=%d entry fcsr=%#x\n", a0, seen_ok,
           seen_fcsr, seen_a7, entry_fcsr);
    printf("after: fcsr=%#lx\n", fcsr_after);
    for (int i = 0; i < 12; i++)
        printf("f%d=%g%s", fsregs[i], out[i], i == 11 ? "\n" : " ");
    return 0;
}
