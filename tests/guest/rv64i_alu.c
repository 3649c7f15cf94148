/*
 * RV64I integer ALU: every register-register and register-immediate
 * operation (including the W forms) on a table of corner values, each
 * forced to the exact instruction with inline asm. Prints hex results.
 */
#include <stdint.h>
#include <stdio.h>

static const uint64_t vals[] = {
    0, 1, 2, 0x1f, 0x20, 0x3f, 0x40, 0x41, 0x7f, 0x80, 0xff,
    0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, 0x123456789abcdef0,
    0x7fffffffffffffff, 0x8000000000000000, 0xfffffffffffffffe,
    0xffffffffffffffff, 0xffffffff80000000, 0x00000000fffff800,
    0xdeadbeefcafebabe, 0x0000000080000001,
};
#define NVALS (sizeof vals / sizeof vals[0])

#define RR(name) \
    static uint64_t op_##name(uint64_t a, uint64_t b) { \
        uint64_t r; __asm__ volatile(#name " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b)); return r; }
/* One row: op with a constant immediate applied to every value. */
#define RI(name, imm) do {                                                  \
        printf("%-14s", #name " " #imm);                                    \
        for (unsigned i_ = 0; i_ < NVALS; i_++) {                           \
            uint64_t r_;                                                    \
            __asm__ volatile(#name " %0, %1, %2" : "=r"(r_) : "r"(vals[i_]), "i"(imm)); \
            printf(" %llx", (unsigned long long)r_);                        \
        }                                                                   \
        printf("\n");                                                       \
    } while (0)

RR(add) RR(sub) RR(sll) RR(slt) RR(sltu) RR(xor) RR(srl) RR(sra) RR(or) RR(and)
RR(addw) RR(subw) RR(sllw) RR(srlw) RR(sraw)

typedef uint64_t (*rr_fn)(uint64_t, uint64_t);

static const struct { const char *name; rr_fn fn; } rr[] = {
#define E(n) { #n, op_##n },
    E(add) E(sub) E(sll) E(slt) E(sltu) E(xor) E(srl) E(sra) E(or) E(and)
    E(addw) E(subw) E(sllw) E(srlw) E(sraw)
#undef E
};

/*
 * Constants the translator folds (lui/auipc, then addi or addiw of a known
 * value): the W forms sign-extend bit 31 of the sum. Run eight times, so the
 * block is translated, not only interpreted (its first runs).
 */
static void constants(void)
{
    uint64_t r[7] = { 0 }, tmp;
    for (int it = 0; it < 8; it++)
        __asm__ volatile("lui %0, 0x80000\n\taddiw %0, %0, -1\n\t"     /* 0x7fffffff */
                         "lui %1, 0x80000\n\taddi %1, %1, -1\n\t"      /* 0xffffffff7fffffff */
                         "lui %2, 0x7ffff\n\taddiw %2, %2, 2047\n\t"   /* 0x7ffff7ff */
                         "lui %3, 0x80000\n\taddiw %3, %3, 0\n\t"      /* 0xffffffff80000000 */
                         "addiw %4, %3, -2048\n\t"                      /* 0x7ffff800 */
                         "addi %5, %4, 2047\n\taddiw %5, %5, 1\n\t"     /* 0xffffffff80000000 */
                         "1: auipc %6, 0\n\taddi %6, %6, -8\n\t"
                         "la %7, 1b\n\tsub %6, %6, %7\n\t"             /* (1b - 8) - 1b */
                         : "=&r"(r[0]), "=&r"(r[1]), "=&r"(r[2]), "=&r"(r[3]), "=&r"(r[4]),
                           "=&r"(r[5]), "=&r"(r[6]), "=&r"(tmp));
    printf("constants");
    for (int i = 0; i < 7; i++)
        printf(" %llx", (unsigned long long)r[i]);
    printf("\n");
}

int main(void)
{
    for (unsigned k = 0; k < sizeof rr / sizeof rr[0]; k++) {
        uint64_t h = 0;
        printf("%s:\n", rr[k].name);
        for (unsigned i = 0; i < NVALS; i++) {
            for (unsigned j = 0; j < NVALS; j++) {
                uint64_t r = rr[k].fn(vals[i], vals[j]);
                h = h * 31 + r;
                if (j % 6 == 0)
                    printf("  %016llx", (unsigned long long)r);
            }
            printf("\n");
        }
        printf("  hash %016llx\n", (unsigned long long)h);
    }
    RI(addi, 0); RI(addi, 1); RI(addi, 2047); RI(addi, -2048); RI(addi, -1);
    RI(slti, 0); RI(slti, 1); RI(slti, -1); RI(slti, 2047); RI(slti, -2048);
    RI(sltiu, 0); RI(sltiu, 1); RI(sltiu, -1); RI(sltiu, 2047); RI(sltiu, -2048);
    RI(xori, -1); RI(xori, 0x555); RI(ori, -2048); RI(ori, 0x7f0);
    RI(andi, -16); RI(andi, 0x7ff);
    RI(slli, 0); RI(slli, 1); RI(slli, 31); RI(slli, 32); RI(slli, 63);
    RI(srli, 0); RI(srli, 1); RI(srli, 31); RI(srli, 32); RI(srli, 63);
    RI(srai, 0); RI(srai, 1); RI(srai, 31); RI(srai, 32); RI(srai, 63);
    RI(addiw, 0); RI(addiw, 1); RI(addiw, -1); RI(addiw, 2047); RI(addiw, -2048);
    RI(slliw, 0); RI(slliw, 1); RI(slliw, 31); RI(srliw, 0); RI(srliw, 1); RI(srliw, 31);
    RI(sraiw, 0); RI(sraiw, 1); RI(sraiw, 31);
    /* lui / auipc differences */
    uint64_t r1, r2;
    __asm__ volatile("lui %0, 0x80000" : "=r"(r1));
    __asm__ volatile("lui %0, 0xfffff" : "=r"(r2));
    printf("lui %llx %llx\n", (unsigned long long)r1, (unsigned long long)r2);
    __asm__ volatile("1: auipc %0, 0x12345\n auipc %1, 0\n" : "=r"(r1), "=r"(r2));
    printf("auipc delta %llx\n", (unsigned long long)(r1 - r2));
    __asm__ volatile("auipc %0, 0x80000\n auipc %1, 0\n" : "=r"(r1), "=r"(r2));
    printf("auipc delta %llx\n", (unsigned long long)(r1 - r2));
    constants();
    /* writes to x0 are discarded */
    __asm__ volatile("li t0, 5\n addi x0, t0, 1\n add %0, x0, x0\n" : "=r"(r1) : : "t0");
    printf("x0 %llx\n", (unsigned long long)r1);
    return 0;
}
