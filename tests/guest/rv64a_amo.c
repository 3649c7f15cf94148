/*
 * A extension: every AMO (.w and .d, with and without .aqrl) on corner
 * values, checking both the returned old value (sign-extended for .w) and
 * the memory result, plus lr/sc: success, failure without a reservation,
 * failure after the reserved word changed, an lr/sc increment loop, and
 * neighbouring words left untouched by the .w forms.
 */
#include <stdint.h>
#include <stdio.h>

static const uint64_t vals[] = {
    0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xffffffff80000000,
    0x7fffffffffffffff, 0x8000000000000000, 0xffffffffffffffff, 0x123456789abcdef0,
};
#define NVALS (sizeof vals / sizeof vals[0])

static volatile uint64_t mem[4] __attribute__((aligned(16)));

#define AMO(id, insn) \
    static uint64_t op_##id(volatile void *p, uint64_t v) { \
        uint64_t r; __asm__ volatile(insn " %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory"); return r; }

AMO(swap_w, "amoswap.w") AMO(add_w, "amoadd.w") AMO(xor_w, "amoxor.w")
AMO(and_w, "amoand.w") AMO(or_w, "amoor.w") AMO(min_w, "amomin.w")
AMO(max_w, "amomax.w") AMO(minu_w, "amominu.w") AMO(maxu_w, "amomaxu.w.aqrl")
AMO(swap_d, "amoswap.d") AMO(add_d, "amoadd.d.aq") AMO(xor_d, "amoxor.d")
AMO(and_d, "amoand.d") AMO(or_d, "amoor.d.rl") AMO(min_d, "amomin.d")
AMO(max_d, "amomax.d") AMO(minu_d, "amominu.d") AMO(maxu_d, "amomaxu.d")

static const struct { const char *name; uint64_t (*fn)(volatile void *, uint64_t); int w; } ops[] = {
#define E(n, w) { #n, op_##n, w },
    E(swap_w, 1) E(add_w, 1) E(xor_w, 1) E(and_w, 1) E(or_w, 1)
    E(min_w, 1) E(max_w, 1) E(minu_w, 1) E(maxu_w, 1)
    E(swap_d, 0) E(add_d, 0) E(xor_d, 0) E(and_d, 0) E(or_d, 0)
    E(min_d, 0) E(max_d, 0) E(minu_d, 0) E(maxu_d, 0)
#undef E
};

static uint64_t lr_d(volatile uint64_t *p)
{
    uint64_t r;
    __asm__ volatile("lr.d %0, (%1)" : "=r"(r) : "r"(p) : "memory");
    return r;
}

static uint64_t sc_d(volatile uint64_t *p, uint64_t v)
{
    uint64_t r;
    __asm__ volatile("sc.d %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory");
    return r;
}

static uint64_t lr_w(volatile void *p)
{
    uint64_t r;
    __asm__ volatile("lr.w.aq %0, (%1)" : "=r"(r) : "r"(p) : "memory");
    return r;
}

static uint64_t sc_w(volatile void *p, uint64_t v)
{
    uint64_t r;
    __asm__ volatile("sc.w.rl %0, %2, (%1)" : "=r"(r) : "r"(p), "r"(v) : "memory");
    return r;
}

int main(void)
{
    for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        printf("%s:\n", ops[k].name);
        for (unsigned i = 0; i < NVALS; i++) {
            printf(" ");
            for (unsigned j = 0; j < NVALS; j++) {
                /* .w forms operate on the upper word too, to check the neighbour */
                unsigned half = ops[k].w ? (i + j) & 1 : 0;
                mem[0] = vals[i];
                mem[1] = 0x5a5a5a5a5a5a5a5aULL;
                volatile uint8_t *p = (volatile uint8_t *)mem + 4 * half;
                if (ops[k].w && half)
                    mem[0] = (vals[i] << 32) | 0x11111111;
                uint64_t old = ops[k].fn(p, vals[j]);
                printf(" %llx/%llx", (unsigned long long)old, (unsigned long long)mem[0]);
            }
            printf(" [%llx]\n", (unsigned long long)mem[1]);
        }
    }

    /* lr/sc */
    mem[0] = 10;
    uint64_t v = lr_d(&mem[0]);
    uint64_t rc = sc_d(&mem[0], v + 1);
    printf("lr/sc: %llu rc %llu mem %llu\n", (unsigned long long)v, (unsigned long long)rc,
           (unsigned long long)mem[0]);
    rc = sc_d(&mem[0], 99);
    printf("sc without lr: rc %llu mem %llu\n", (unsigned long long)rc, (unsigned long long)mem[0]);
    v = lr_d(&mem[0]);
    mem[0] = 1234;
    rc = sc_d(&mem[0], 5);
    printf("sc after change: rc %llu mem %llu\n", (unsigned long long)rc, (unsigned long long)mem[0]);
    v = lr_d(&mem[0]);
    rc = sc_d(&mem[1], 5);
    printf("sc other address: rc %llu mem %llx\n", (unsigned long long)rc, (unsigned long long)mem[1]);
    rc = sc_d(&mem[0], 6);
    printf("sc after failed sc: rc %llu mem %llu\n", (unsigned long long)rc, (unsigned long long)mem[0]);

    mem[0] = 0xffffffff7ffffffeULL;
    v = lr_w(&mem[0]);
    rc = sc_w(&mem[0], 0x1234567880000000ULL);
    printf("lr.w/sc.w: %llx rc %llu mem %llx\n", (unsigned long long)v, (unsigned long long)rc,
           (unsigned long long)mem[0]);

    /* the usual atomic-increment loop */
    mem[2] = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t t, fail;
        __asm__ volatile("1: lr.d %0, (%2)\n addi %0, %0, 3\n sc.d %1, %0, (%2)\n bnez %1, 1b"
                         : "=&r"(t), "=&r"(fail) : "r"(&mem[2]) : "memory");
    }
    printf("lr/sc loop: %llu\n", (unsigned long long)mem[2]);

    /* C11 atomics as the compiler emits them */
    static _Atomic long counter;
    for (int i = 0; i < 100; i++)
        __atomic_fetch_add(&counter, i, __ATOMIC_SEQ_CST);
    long expected = 4950;
    int ok = __atomic_compare_exchange_n(&counter, &expected, 7, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    printf("c11: ok %d counter %ld\n", ok, (long)counter);
    return 0;
}
