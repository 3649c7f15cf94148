/*
 * disasm_tool: host helper for tests/decode_vs_objdump.sh.
 *
 *   disasm_tool gen SEED N   print test instructions, one per line, as
 *                            "W xxxxxxxx" (32-bit) or "H xxxx" (16-bit):
 *                            N random variants of every table entry (operand
 *                            fields biased toward zero/ra/sp and special
 *                            immediates), every compressed halfword, and
 *                            random 32-bit words.
 *   disasm_tool dis [START]  read such lines on stdin; print "addr:\ttext"
 *                            for each, addresses counting from START (hex,
 *                            default 0) as in an object laid out in the
 *                            same order.
 *
 * Built from src/riscv/decode.c and disasm.c only.
 */
#include "riscv/insn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static uint32_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1Dull) >> 32);
}

/* A register number biased toward the ones aliases care about. */
static uint32_t biased_reg(void)
{
    switch (rnd() % 8) {
    case 0: case 1: return 0;
    case 2: return 1;
    case 3: return 2;
    default: return rnd() % 32;
    }
}

/* A 12-bit immediate / CSR number biased toward special values. */
static uint32_t biased_imm12(void)
{
    static const uint32_t special[] = {
        0, 1, 2, 3, 0xfff, 0xff, 0x7ff, 0x800, 0xc00, 0xc01, 0xc02, 0xc80,
        0x0ff, 0x033, 0x011, 0x830, 0x8ff, 0x010, 0x100, 0x300, 0x7c0,
    };
    return special[rnd() % (sizeof special / sizeof special[0])];
}

static uint32_t random_variant(const InsnDesc *d)
{
    uint32_t w = rnd();
    if (rnd() % 2) w = (w & ~0x00000f80u) | biased_reg() << 7;
    if (rnd() % 2) w = (w & ~0x000f8000u) | biased_reg() << 15;
    if (rnd() % 2) w = (w & ~0x01f00000u) | biased_reg() << 20;
    if (rnd() % 4 == 0) w = (w & ~0xf8000000u) | biased_reg() << 27;
    if (rnd() % 4 == 0) w = (w & ~0xfff00000u) | biased_imm12() << 20;
    if (rnd() % 3 == 0) w = (w & ~0x7000u) | (rnd() % 2 ? 7u : 0u) << 12;
    return (w & ~d->mask) | d->match;
}

static int gen(uint64_t seed, unsigned n)
{
    rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
    for (unsigned op = 1; op < OP_COUNT; op++) {
        printf("W %08" PRIx32 "\n", insn_table[op].match);
        for (unsigned i = 0; i < n; i++)
            printf("W %08" PRIx32 "\n", random_variant(&insn_table[op]));
    }
    for (uint32_t h = 0; h < 0x10000; h++)
        if ((h & 3) != 3)
            printf("H %04" PRIx32 "\n", h);
    for (unsigned i = 0; i < 100 * n; i++) {
        uint32_t w = rnd() | 3;
        if ((w & 0x1c) == 0x1c)     /* bits 4:2 = 111 start longer encodings */
            w &= ~0x10u;
        printf("W %08" PRIx32 "\n", w);
    }
    return 0;
}

static int dis(uint64_t pc)
{
    char line[64], text[128];
    while (fgets(line, sizeof line, stdin)) {
        char kind;
        unsigned long v;
        if (sscanf(line, "%c %lx", &kind, &v) != 2 || (kind != 'W' && kind != 'H')) {
            fprintf(stderr, "disasm_tool: bad line: %s", line);
            return 1;
        }
        Insn in;
        insn_decode((uint32_t)v, &in);
        if (in.len != (kind == 'H' ? 2 : 4)) {
            fprintf(stderr, "disasm_tool: length mismatch: %s", line);
            return 1;
        }
        insn_disasm(&in, pc, text, sizeof text);
        printf("%" PRIx64 ":\t%s\n", pc, text);
        pc += in.len;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "gen"))
        return gen(strtoull(argv[2], NULL, 0), (unsigned)strtoul(argv[3], NULL, 0));
    if ((argc == 2 || argc == 3) && !strcmp(argv[1], "dis"))
        return dis(argc == 3 ? strtoull(argv[2], NULL, 16) : 0);
    fprintf(stderr, "usage: disasm_tool gen SEED N | disasm_tool dis [START_HEX]\n");
    return 2;
}
