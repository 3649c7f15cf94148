/*
 * RV64I control flow: every conditional branch on every pair of a table of
 * corner values (taken/not taken), jal/jalr link values, jalr clearing
 * bit 0 of the target, and a computed-goto style jump table.
 */
#include <stdint.h>
#include <stdio.h>

static const uint64_t vals[] = {
    0, 1, 2, 0x7f, 0x80, 0x7fffffff, 0x80000000, 0xffffffff,
    0x7fffffffffffffff, 0x8000000000000000, 0xfffffffffffffffe,
    0xffffffffffffffff, 0xffffffff80000000,
};
#define NVALS (sizeof vals / sizeof vals[0])

#define BR(name) \
    static int br_##name(uint64_t a, uint64_t b) { \
        int r; \
        __asm__ volatile(#name " %1, %2, 1f\n li %0, 0\n j 2f\n1: li %0, 1\n2:" \
                         : "=r"(r) : "r"(a), "r"(b)); \
        return r; }

BR(beq) BR(bne) BR(blt) BR(bge) BR(bltu) BR(bgeu)

/* Backward branch form: the taken path jumps back over the test. */
static int br_back_blt(uint64_t a, uint64_t b)
{
    int r;
    __asm__ volatile("j 2f\n1: li %0, 1\n j 3f\n2: blt %1, %2, 1b\n li %0, 0\n3:"
                     : "=r"(r) : "r"(a), "r"(b));
    return r;
}

static const struct { const char *name; int (*fn)(uint64_t, uint64_t); } brs[] = {
    { "beq", br_beq }, { "bne", br_bne }, { "blt", br_blt }, { "bge", br_bge },
    { "bltu", br_bltu }, { "bgeu", br_bgeu }, { "blt-back", br_back_blt },
};

static int __attribute__((noinline)) square(int x) { return x * x; }

int main(void)
{
    for (unsigned k = 0; k < sizeof brs / sizeof brs[0]; k++) {
        printf("%-9s", brs[k].name);
        for (unsigned i = 0; i < NVALS; i++) {
            printf(" ");
            for (unsigned j = 0; j < NVALS; j++)
                printf("%d", brs[k].fn(vals[i], vals[j]));
        }
        printf("\n");
    }

    /* jal link = address of the next instruction */
    uint64_t link, here;
    __asm__ volatile("jal %0, 1f\n1: auipc %1, 0" : "=r"(link), "=r"(here));
    printf("jal link ok: %d\n", link == here);
    /* jalr with an odd target: bit 0 is cleared */
    __asm__ volatile("lla t0, 1f\n addi t0, t0, 1\n jalr %0, 0(t0)\n"
                     "li %1, 99\n1: lla %1, 1b\n" : "=r"(link), "=r"(here) : : "t0");
    printf("jalr odd target ok: %d\n", here != 99);
    /* jalr with rd == rs1 and a negative offset: target from the old value */
    __asm__ volatile("lla %0, 1f\n addi %0, %0, 8\n jalr %0, -8(%0)\n2: nop\n1: lla %1, 2b\n"
                     : "=&r"(link), "=&r"(here));
    printf("jalr rd==rs1 link ok: %d\n", link == here);
    /* c.jalr (compressed: link = pc + 2) */
    __asm__ volatile(".option push\n.option rvc\n lla t0, 1f\n c.jalr t0\n2: nop\n1: lla %1, 2b\n"
                     " mv %0, ra\n.option pop\n" : "=&r"(link), "=&r"(here) : : "t0", "ra");
    printf("c.jalr link ok: %d\n", link == here);

    /* indirect calls through a table */
    int (*fns[4])(int) = { square, square, square, square };
    int s = 0;
    for (int i = 0; i < 100; i++)
        s += fns[i & 3](i);
    printf("indirect sum %d\n", s);

    /* a switch that compiles to a jump table */
    unsigned h = 0;
    for (unsigned i = 0; i < 1000; i++) {
        switch ((i * 7) % 9) {
        case 0: h = h * 3 + 1; break;
        case 1: h ^= i; break;
        case 2: h += 17; break;
        case 3: h = (h << 3) | (h >> 29); break;
        case 4: h -= i * i; break;
        case 5: h *= 5; break;
        case 6: h = ~h; break;
        case 7: h += h >> 7; break;
        default: h ^= 0x5a5a5a5a; break;
        }
    }
    printf("switch hash %08x\n", h);
    return 0;
}
