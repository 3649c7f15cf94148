/*
 * RV64I loads and stores of every width and signedness, at every offset
 * inside a buffer (so most accesses are misaligned), plus stores of every
 * width at every offset, and loads with the extreme 12-bit displacements.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint8_t buf[64] __attribute__((aligned(16)));
static uint8_t big[8192] __attribute__((aligned(16)));

#define LD(insn, off, p) ({ uint64_t r_; \
    __asm__ volatile(insn " %0, " #off "(%1)" : "=r"(r_) : "r"(p) : "memory"); r_; })
#define ST(insn, off, p, v) \
    __asm__ volatile(insn " %1, " #off "(%0)" : : "r"(p), "r"(v) : "memory")

static void fill(void)
{
    for (int i = 0; i < 64; i++)
        buf[i] = (uint8_t)(0x80 + i * 13);
}

int main(void)
{
    fill();
    for (int off = 0; off < 16; off++) {
        uint8_t *p = buf + off;
        printf("off %2d: lb %llx lbu %llx lh %llx lhu %llx lw %llx lwu %llx ld %llx\n", off,
               (unsigned long long)LD("lb", 0, p), (unsigned long long)LD("lbu", 0, p),
               (unsigned long long)LD("lh", 0, p), (unsigned long long)LD("lhu", 0, p),
               (unsigned long long)LD("lw", 0, p), (unsigned long long)LD("lwu", 0, p),
               (unsigned long long)LD("ld", 0, p));
    }
    for (int off = 0; off < 16; off++) {
        uint64_t v = 0x0123456789abcdefULL ^ ((uint64_t)off << 56);
        uint8_t *p = buf + 8 + off;
        memset(buf, 0, sizeof buf);
        ST("sb", 0, p, v);
        ST("sh", 3, p, v);
        ST("sw", 7, p, v);
        ST("sd", 13, p, v);
        ST("sd", -8, p, ~v);
        printf("store off %2d:", off);
        for (int i = 0; i < 48; i++)
            printf("%02x", buf[i]);
        printf("\n");
    }
    /* extreme displacements */
    for (unsigned i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7 + (i >> 8));
    uint8_t *mid = big + 4096;
    printf("disp: %llx %llx %llx %llx\n",
           (unsigned long long)LD("ld", 2047, mid), (unsigned long long)LD("ld", -2048, mid),
           (unsigned long long)LD("lw", 2044, mid), (unsigned long long)LD("lh", -2047, mid));
    ST("sd", 2040, mid, 0x1122334455667788ULL);
    ST("sw", -2048, mid, 0xaabbccddULL);
    printf("disp st: %llx %llx\n", (unsigned long long)LD("ld", 2040, mid),
           (unsigned long long)LD("lwu", -2048, mid));
    /* load into the base register (rd == rs1) */
    uint64_t q[2] = { (uint64_t)&q[1], 0x5555aaaa5555aaaaULL }, r;
    __asm__ volatile("ld %0, 0(%1)\n ld %0, 0(%0)" : "=&r"(r) : "r"(q) : "memory");
    printf("rd==rs1 %llx\n", (unsigned long long)r);
    return 0;
}
