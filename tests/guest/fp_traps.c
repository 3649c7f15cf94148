/*
 * Reserved rounding modes: an F/D instruction whose rm field is 5 or 6, or
 * is 7 (dynamic) while frm holds 5, 6 or 7, raises SIGILL (ILL_ILLOPC at the
 * instruction's address) and changes neither its destination nor fflags.
 * Instructions without an rm field run normally whatever frm holds.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

static sigjmp_buf env;
static volatile int sig_code;
static volatile uintptr_t sig_addr, sig_pc;
static volatile uint64_t sig_ft0;
static volatile unsigned sig_fcsr;

/* Records the fault and the FP state the kernel saved at the trap. */
static void on_sigill(int sig, siginfo_t *si, void *ctx)
{
    ucontext_t *uc = ctx;
    (void)sig;
    sig_code = si->si_code;
    sig_addr = (uintptr_t)si->si_addr;
    sig_pc = uc->uc_mcontext.__gregs[REG_PC];
    sig_ft0 = uc->uc_mcontext.__fpregs.__d.__f[0];
    sig_fcsr = uc->uc_mcontext.__fpregs.__d.__fcsr;
    siglongjmp(env, 1);
}

/*
 * Each probe sets frm, loads ft0 = 1.0 (the destination) and f1/f2/f3 = 2.0,
 * clears fflags, runs the instruction at label "1:" (its address goes to
 * *at), then reports ft0 and fflags.
 */
#define PROBE(name, insn)                                                      \
    static uint64_t name(unsigned frm, uintptr_t *at, unsigned long *fl)       \
    {                                                                          \
        uint64_t r;                                                            \
        unsigned long f;                                                       \
        __asm__ volatile("la t0, 1f\n\tsd t0, 0(%[at])\n\t"                    \
                         "fmv.d.x ft0, %[one]\n\tfmv.d.x ft1, %[two]\n\t"      \
                         "fmv.d.x ft2, %[two]\n\tfmv.d.x ft3, %[two]\n\t"      \
                         "li a0, 3\n\tcsrw frm, %[frm]\n\tcsrw fflags, zero\n" \
                         "1:\t" insn "\n\t"                                    \
                         "csrr %[f], fflags\n\tfmv.x.d %[r], ft0"              \
                         : [r] "=&r"(r), [f] "=&r"(f)                          \
                         : [one] "r"(0x3ff0000000000000ull),                   \
                           [two] "r"(0x4000000000000000ull), [frm] "r"(frm),   \
                           [at] "r"(at)                                        \
                         : "t0", "a0", "ft0", "ft1", "ft2", "ft3", "memory");  \
        *fl = f;                                                               \
        return r;                                                              \
    }

/* .insn r opcode, funct3 (= rm), funct7, rd, rs1, rs2 */
PROBE(fadd_d_rm5, ".insn r 0x53, 5, 0x01, ft0, ft1, ft2")
PROBE(fadd_s_rm6, ".insn r 0x53, 6, 0x00, ft0, ft1, ft2")
PROBE(fadd_d_dyn, "fadd.d ft0, ft1, ft2, dyn")
PROBE(fadd_d_rne, "fadd.d ft0, ft1, ft2, rne")
PROBE(fmul_s_dyn, "fmul.s ft0, ft1, ft2, dyn")
PROBE(fsqrt_d_dyn, "fsqrt.d ft0, ft1, dyn")
PROBE(fmadd_d_dyn, "fmadd.d ft0, ft1, ft2, ft3, dyn")
PROBE(fmadd_s_rm5, ".insn r4 0x43, 5, 0, ft0, ft1, ft2, ft3")
PROBE(fcvt_s_d_dyn, "fcvt.s.d ft0, ft1, dyn")
PROBE(fcvt_d_s_dyn, ".insn r 0x53, 7, 0x21, ft0, ft1, x0")
PROBE(fcvt_d_w_dyn, ".insn r 0x53, 7, 0x69, ft0, a0, x0")
PROBE(fcvt_d_w_rm6, ".insn r 0x53, 6, 0x69, ft0, a0, x0")
PROBE(fcvt_w_d_dyn, "fcvt.w.d a0, ft1, dyn\n\tfcvt.d.w ft0, a0")
PROBE(fcvt_s_l_dyn, "fcvt.s.l ft0, a0, dyn")
PROBE(fsgnj_d, "fsgnj.d ft0, ft1, ft2")
PROBE(fmin_d, "fmin.d ft0, ft1, ft2")
PROBE(feq_d, "feq.d a0, ft1, ft2\n\tfcvt.d.w ft0, a0")
PROBE(fclass_d, "fclass.d a0, ft1\n\tfcvt.d.w ft0, a0")
PROBE(fmv_d_x, "fmv.d.x ft0, a0")

struct probe { const char *name; uint64_t (*fn)(unsigned, uintptr_t *, unsigned long *); };
static const struct probe probes[] = {
#define P(x) { #x, x }
    P(fadd_d_rm5), P(fadd_s_rm6), P(fadd_d_dyn), P(fadd_d_rne), P(fmul_s_dyn), P(fsqrt_d_dyn),
    P(fmadd_d_dyn), P(fmadd_s_rm5), P(fcvt_s_d_dyn), P(fcvt_d_s_dyn), P(fcvt_d_w_dyn),
    P(fcvt_d_w_rm6), P(fcvt_w_d_dyn), P(fcvt_s_l_dyn), P(fsgnj_d), P(fmin_d), P(feq_d),
    P(fclass_d), P(fmv_d_x),
#undef P
};

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigill;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigaction(SIGILL, &sa, NULL);

    for (volatile size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        for (volatile unsigned frm = 0; frm < 8; frm++) {
            static uintptr_t at;
            unsigned long fl = 0;
            uint64_t r = 0;
            sig_code = 0;
            if (sigsetjmp(env, 1) == 0) {
                r = probes[i].fn(frm, (uintptr_t *)&at, &fl);
                printf("%-13s frm=%u: ok ft0=%016llx fflags=%02lx\n", probes[i].name, frm,
                       (unsigned long long)r, fl);
            } else {
                /* The trapping instruction must not have written ft0 or fflags. */
                printf("%-13s frm=%u: SIGILL code=%d addr-ok=%d pc-ok=%d ft0=%016llx "
                       "fcsr=%02x\n", probes[i].name, frm, sig_code, sig_addr == at,
                       sig_pc == at, (unsigned long long)sig_ft0, sig_fcsr);
            }
            __asm__ volatile("csrw fcsr, zero");
        }
    }
    return 0;
}
