/*
 * fflags after sequences of FP instructions in one block: xlat keeps x86's
 * MXCSR in round-to-nearest and lets its inexact flag accumulate between
 * instructions, so these check that a cleared fflags stays clear after an
 * exact operation, that a bailing operation (NaN result, division by zero)
 * does not leak its flag into the next one, and that static and dynamic
 * rounding modes still round (and flag) each operation correctly.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static volatile double one = 1.0, three = 3.0, zero = 0.0, two5 = 2.5, tiny = 1e-310;
static volatile float onef = 1.0f, threef = 3.0f;

static unsigned flags(void)
{
    unsigned f;
    __asm__ volatile("frflags %0" : "=r"(f));
    return f;
}

int main(void)
{
    double x, y;
    unsigned f1, f2;

    /* inexact, clear, exact: all in one block */
    __asm__ volatile("fsflags zero\n\t"
                     "fdiv.d %0, %3, %4\n\t"
                     "frflags %1\n\t"
                     "fsflags zero\n\t"
                     "fadd.d %0, %3, %3\n\t"
                     "frflags %2"
                     : "=&f"(x), "=&r"(f1), "=&r"(f2) : "f"(one), "f"(three));
    printf("inexact then cleared then exact: %u %u (%g)\n", f1, f2, x);

    /* 0/0 (NaN: bails) then an exact op */
    __asm__ volatile("fsflags zero\n\t"
                     "fdiv.d %0, %2, %2\n\t"
                     "fadd.d %0, %3, %3\n\t"
                     "frflags %1"
                     : "=&f"(x), "=&r"(f1) : "f"(zero), "f"(one));
    printf("0/0 then exact: %u (%g)\n", f1, x);

    /* 1/0 (division by zero: bails), clear, then inexact */
    __asm__ volatile("fsflags zero\n\t"
                     "fdiv.d %0, %3, %4\n\t"
                     "frflags %1\n\t"
                     "fsflags zero\n\t"
                     "fdiv.d %0, %3, %5\n\t"
                     "frflags %2"
                     : "=&f"(x), "=&r"(f1), "=&r"(f2) : "f"(one), "f"(zero), "f"(three));
    printf("1/0, cleared, 1/3: %u %u\n", f1, f2);

    /* static modes: 1/3 rounded down and up differ; 2.5 to int by rtz */
    long i;
    __asm__ volatile("fsflags zero\n\t"
                     "fdiv.d %0, %3, %4, rdn\n\t"
                     "fdiv.d %1, %3, %4, rup\n\t"
                     "fcvt.l.d %2, %5, rtz"
                     : "=&f"(x), "=&f"(y), "=&r"(i) : "f"(one), "f"(three), "f"(two5));
    printf("rdn < rup: %d, rtz(2.5) = %ld, flags %u\n", x < y, i, flags());

    /* dynamic modes RUP and RDN via frm, then back to RNE; single precision */
    float xf, yf;
    __asm__ volatile("fsrmi 3\n\t"                  /* RUP */
                     "fdiv.s %0, %2, %3\n\t"
                     "fsrmi 2\n\t"                  /* RDN */
                     "fdiv.s %1, %2, %3\n\t"
                     "fsrmi 0"
                     : "=&f"(xf), "=&f"(yf) : "f"(onef), "f"(threef));
    printf("dyn rup > rdn: %d, flags %u\n", xf > yf, flags());

    /* underflow (bails) then a syscall then exact */
    __asm__ volatile("fsflags zero\n\t"
                     "fmul.d %0, %1, %1" : "=&f"(x) : "f"(tiny));
    f1 = flags();
    getpid();
    __asm__ volatile("fsflags zero\n\t"
                     "fadd.d %0, %1, %1" : "=&f"(y) : "f"(one));
    printf("underflow: %u, after a syscall, exact: %u\n", f1, flags());
    return 0;
}
