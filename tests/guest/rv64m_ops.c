/*
 * M extension: every multiply/divide/remainder instruction (and the W
 * forms) on corner values -- 0, 1, -1, INT_MIN, INT_MAX of both widths --
 * and a deterministic pseudo-random set. Division by zero and the
 * INT_MIN / -1 overflow must follow the RISC-V rules, not trap.
 */
#include <stdint.h>
#include <stdio.h>

static uint64_t vals[40] = {
    0, 1, 2, 3, 7, 0xffffffffffffffff, 0xfffffffffffffffe, 0xfffffffffffffff9,
    0x7fffffffffffffff, 0x8000000000000000, 0x8000000000000001,
    0x7fffffff, 0x80000000, 0xffffffff, 0xffffffff80000000, 0x100000000,
    0x00000000fffffffe, 0xffffffff7fffffff, 0x12345678, 0x1234567887654321,
};

#define RR(name) \
    static uint64_t op_##name(uint64_t a, uint64_t b) { \
        uint64_t r; __asm__ volatile(#name " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); return r; }

RR(mul) RR(mulh) RR(mulhsu) RR(mulhu) RR(div) RR(divu) RR(rem) RR(remu)
RR(mulw) RR(divw) RR(divuw) RR(remw) RR(remuw)

static const struct { const char *name; uint64_t (*fn)(uint64_t, uint64_t); } ops[] = {
#define E(n) { #n, op_##n },
    E(mul) E(mulh) E(mulhsu) E(mulhu) E(div) E(divu) E(rem) E(remu)
    E(mulw) E(divw) E(divuw) E(remw) E(remuw)
#undef E
};

int main(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (unsigned i = 20; i < 40; i++) {
        seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
        vals[i] = (i & 1) ? seed : seed >> (i % 61);
    }
    for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        uint64_t h = 0;
        printf("%s:\n", ops[k].name);
        for (unsigned i = 0; i < 40; i++) {
            printf(" ");
            for (unsigned j = 0; j < 40; j++) {
                uint64_t r = ops[k].fn(vals[i], vals[j]);
                h = (h ^ r) * 0x100000001b3ULL;
                if (i < 20 && j < 20)
                    printf(" %llx", (unsigned long long)r);
            }
            if (i < 20)
                printf("\n");
        }
        printf("\n  hash %016llx\n", (unsigned long long)h);
    }
    return 0;
}
