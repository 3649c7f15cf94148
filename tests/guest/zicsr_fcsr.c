/*
 * Zicsr: reads and writes of fflags, frm and fcsr with every CSR
 * instruction form (csrrw/csrrs/csrrc and the immediate forms, rd = x0
 * and rs1 = x0 variants), their interplay (fcsr = frm << 5 | fflags),
 * flags raised by FP arithmetic, and the read-only counters (checked only
 * for monotonicity, nothing time-dependent is printed).
 */
#include <stdint.h>
#include <stdio.h>

#define CSRR(csr) ({ uint64_t v_; __asm__ volatile("csrr %0, " csr : "=r"(v_)); v_; })

static void show(const char *what)
{
    printf("%-28s fflags %02llx frm %llx fcsr %03llx\n", what,
           (unsigned long long)CSRR("fflags"), (unsigned long long)CSRR("frm"),
           (unsigned long long)CSRR("fcsr"));
}

int main(void)
{
    uint64_t old;
    show("initial");

    __asm__ volatile("csrrw %0, fcsr, %1" : "=r"(old) : "r"(0xffffULL));
    printf("csrrw fcsr old %llx\n", (unsigned long long)old);
    show("fcsr = 0xffff");

    __asm__ volatile("csrrc %0, fflags, %1" : "=r"(old) : "r"(0x5ULL));
    printf("csrrc old %llx\n", (unsigned long long)old);
    show("clear NX|OF");

    __asm__ volatile("csrrs %0, frm, %1" : "=r"(old) : "r"(0x0ULL));
    printf("csrrs frm, x? = 0 old %llx\n", (unsigned long long)old);
    __asm__ volatile("csrrs %0, frm, zero" : "=r"(old));
    printf("csrrs frm, zero old %llx\n", (unsigned long long)old);

    __asm__ volatile("csrrwi %0, frm, 2" : "=r"(old));
    printf("csrrwi frm old %llx\n", (unsigned long long)old);
    show("frm = 2");

    __asm__ volatile("csrrci %0, fcsr, 0x1f" : "=r"(old));
    printf("csrrci fcsr old %llx\n", (unsigned long long)old);
    show("fcsr &= ~0x1f");

    __asm__ volatile("csrrsi %0, fflags, 0x11" : "=r"(old));
    printf("csrrsi old %llx\n", (unsigned long long)old);
    show("fflags |= 0x11");

    __asm__ volatile("csrrsi zero, fflags, 0x2");
    __asm__ volatile("csrrci zero, fflags, 0x10");
    show("rd = x0 forms");

    __asm__ volatile("csrw fflags, %0" : : "r"(0xffffffffffffffe3ULL));
    show("fflags = ~0x1c");
    __asm__ volatile("csrw frm, %0" : : "r"(0x1cULL));
    show("frm = 0x1c (3 bits kept)");
    __asm__ volatile("fscsr %0" : : "r"(0x2a5ULL));
    show("fscsr 0x2a5");
    __asm__ volatile("fsrm %0, %1" : "=r"(old) : "r"(1ULL));
    printf("fsrm old %llx\n", (unsigned long long)old);
    __asm__ volatile("fsflags %0, %1" : "=r"(old) : "r"(0ULL));
    printf("fsflags old %llx\n", (unsigned long long)old);
    show("after fsrm/fsflags");

    /* flags raised by arithmetic accumulate */
    __asm__ volatile("fsrm %0, zero" : "=r"(old));
    volatile double one = 1.0, three = 3.0, zero = 0.0, big = 1e308;
    volatile double r = one / three;
    show("after 1/3");
    r = one / zero;
    show("after 1/0");
    r = big * big;
    show("after overflow");
    r = zero / zero;
    show("after 0/0");
    (void)r;
    __asm__ volatile("csrw fcsr, zero");
    show("cleared");

    /* counters: readable, monotonic */
    uint64_t c0 = CSRR("cycle"), i0 = CSRR("instret"), t0 = CSRR("time");
    volatile unsigned long s = 0;
    for (int i = 0; i < 10000; i++)
        s += i;
    uint64_t c1, i1, t1;
    __asm__ volatile("rdcycle %0" : "=r"(c1));
    __asm__ volatile("rdinstret %0" : "=r"(i1));
    __asm__ volatile("rdtime %0" : "=r"(t1));
    printf("cycle monotonic %d instret monotonic %d time monotonic %d\n",
           c1 > c0, i1 > i0, t1 >= t0);
    return 0;
}
