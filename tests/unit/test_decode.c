/*
 * Unit tests for the instruction table, decoder, compressed expansion and
 * disassembler (src/riscv/decode.c, disasm.c).
 *
 * Expected encodings below were produced with riscv64-linux-gnu-as and the
 * expected disassembly with riscv64-linux-gnu-objdump (binutils 2.40);
 * tests/decode_vs_objdump.sh does the exhaustive comparison.
 */
#include "riscv/insn.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            failures++;                                                   \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                   \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
        }                                                                 \
    } while (0)

/* -- Table ---------------------------------------------------------------- */

static void test_table(void)
{
    CHECK(strcmp(insn_table[OP_illegal].name, "illegal") == 0, "OP_illegal name");
    for (unsigned i = 1; i < OP_COUNT; i++) {
        const InsnDesc *a = &insn_table[i];
        CHECK(a->name && a->name[0], "op %u has no name", i);
        CHECK((a->match & ~a->mask) == 0, "%s: match has bits outside mask", a->name);
        CHECK((a->match & 3) == 3 && (a->mask & 0x7f) == 0x7f, "%s: opcode not masked", a->name);
        CHECK(a->fmt < FMT_COUNT && a->ext < EXT_COUNT, "%s: bad fmt/ext", a->name);
        /*
         * Rows are tried in table order: a row may overlap an earlier one
         * only if the earlier one is strictly more specific (a special case
         * carved out of this row), never the other way round.
         */
        for (unsigned j = 1; j < i; j++) {
            const InsnDesc *b = &insn_table[j];
            bool overlap = ((a->match ^ b->match) & a->mask & b->mask) == 0;
            bool b_more_specific = (b->mask & a->mask) == a->mask && b->mask != a->mask;
            CHECK(!overlap || b_more_specific, "%s is shadowed by earlier %s", a->name, b->name);
        }
    }
}

/* Every row's match value decodes to that row and disassembles. */
static void test_each_entry(void)
{
    char buf[128];
    for (unsigned op = 1; op < OP_COUNT; op++) {
        Insn in;
        bool ok = insn_decode(insn_table[op].match, &in);
        CHECK(ok && in.op == op, "%s: match decodes to op %u", insn_table[op].name, in.op);
        CHECK(in.len == 4 && in.raw == insn_table[op].match, "%s: len/raw", insn_table[op].name);
        int n = insn_disasm(&in, 0x1000, buf, sizeof buf);
        CHECK(n > 0 && (int)strlen(buf) == n && buf[0] != '.',
              "%s: disassembly '%s'", insn_table[op].name, buf);
    }
}

/* -- Field extraction ----------------------------------------------------- */

static const struct FieldCase {
    uint32_t word;
    uint16_t op;
    uint8_t rd, rs1, rs2, rs3, rm;
    int64_t imm;
} field_cases[] = {
    { 0xffb58513, OP_addi,     10, 11, 0, 0, 0, -5 },        /* addi a0,a1,-5 */
    { 0xfe113c23, OP_sd,        0,  2, 1, 0, 0, -8 },        /* sd ra,-8(sp) */
    { 0x80b50063, OP_beq,       0, 10, 11, 0, 0, -4096 },    /* beq a0,a1,.-4096 */
    { 0x7ffff0ef, OP_jal,       1,  0, 0, 0, 0, 0xffffe },   /* jal ra,.+0xffffe */
    { 0x8000006f, OP_jal,       0,  0, 0, 0, 0, -0x100000 }, /* j .-0x100000 */
    { 0xfffff537, OP_lui,      10,  0, 0, 0, 0, -4096 },     /* lui a0,0xfffff */
    { 0x80000297, OP_auipc,     5,  0, 0, 0, 0, -0x80000000ll }, /* auipc t0,0x80000 */
    { 0x03f51513, OP_slli,     10, 10, 0, 0, 0, 63 },
    { 0x01f6159b, OP_slliw,    11, 12, 0, 0, 0, 31 },
    { 0x4213d313, OP_srai,      6,  7, 0, 0, 0, 33 },
    { 0x4113d31b, OP_sraiw,     6,  7, 0, 0, 0, 17 },
    { 0x00302573, OP_csrrs,    10,  0, 0, 0, 0, 3 },         /* frcsr a0 */
    { 0x0022d573, OP_csrrwi,   10,  5, 0, 0, 0, 2 },         /* fsrmi a0,5 */
    { 0x0310000f, OP_fence,     0,  0, 0, 0, 0, 0x031 },     /* fence rw,w */
    { 0x8330000f, OP_fence,     0,  0, 0, 0, 0, 0x833 },     /* fence.tso */
    { 0x6ac59543, OP_fmadd_d,  10, 11, 12, 13, RM_RTZ, 0 },
    { 0xf820f04b, OP_fnmsub_s,  0,  1, 2, 31, RM_DYN, 0 },
    { 0x06b6252f, OP_amoadd_w, 10, 12, 11, 0, 3, 0 },        /* amoadd.w.aqrl */
    { 0x140332af, OP_lr_d,      5,  6, 0, 0, 2, 0 },         /* lr.d.aq */
    { 0x1bcea3af, OP_sc_w,      7, 29, 28, 0, 1, 0 },        /* sc.w.rl */
    { 0xc0051553, OP_fcvt_w_s, 10, 10, 0, 0, RM_RTZ, 0 },
    { 0xd20585d3, OP_fcvt_d_w, 11, 11, 0, 0, RM_RNE, 0 },
    { 0x80092487, OP_flw,       9, 18, 0, 0, 0, -2048 },
    { 0x7f3a3fa7, OP_fsd,       0, 20, 19, 0, 0, 2047 },
    { 0x22c5a553, OP_fsgnjx_d, 10, 11, 12, 0, 2, 0 },     /* rm = funct3 */
    { 0x0a85951b, OP_slli_uw,  10, 11, 0, 0, 0, 40 },
    { 0x63f5d513, OP_rori,     10, 11, 0, 0, 0, 63 },
    { 0x61f5d51b, OP_roriw,    10, 11, 0, 0, 0, 31 },
    { 0x2bf59513, OP_bseti,    10, 11, 0, 0, 0, 63 },
    { 0x6b85d513, OP_rev8,     10, 11, 0, 0, 0, 0 },
    { 0xe2079553, OP_fclass_d, 10, 15, 0, 0, 1, 0 },
    { 0xf2088053, OP_fmv_d_x,   0, 17, 0, 0, 0, 0 },
    { 0x5a05c553, OP_fsqrt_d,  10, 11, 0, 0, RM_RMM, 0 },
    { 0xfff58567, OP_jalr,     10, 11, 0, 0, 0, -1 },
};

static void test_fields(void)
{
    for (size_t i = 0; i < sizeof field_cases / sizeof field_cases[0]; i++) {
        const struct FieldCase *c = &field_cases[i];
        Insn in;
        bool ok = insn_decode(c->word, &in);
        CHECK(ok && in.op == c->op, "%08x: op %u, want %s", c->word, in.op, insn_table[c->op].name);
        CHECK(in.rd == c->rd && in.rs1 == c->rs1 && in.rs2 == c->rs2 && in.rs3 == c->rs3,
              "%08x: regs rd=%u rs1=%u rs2=%u rs3=%u", c->word, in.rd, in.rs1, in.rs2, in.rs3);
        CHECK(in.rm == c->rm, "%08x: rm %u want %u", c->word, in.rm, c->rm);
        CHECK(in.imm == c->imm, "%08x: imm %" PRId64 " want %" PRId64, c->word, in.imm, c->imm);
    }
}

/* -- Compressed ----------------------------------------------------------- */

static const struct { uint16_t c; uint32_t w; } expansions[] = {
    { 0x1fe8, 0x3fc10513 },  /* c.addi4spn a0,sp,1020 */
    { 0x0040, 0x00410413 },  /* c.addi4spn s0,sp,4 */
    { 0x3ffc, 0x0f87b787 },  /* c.fld fa5,248(a5) */
    { 0x5ce8, 0x07c4a503 },  /* c.lw a0,124(s1) */
    { 0x6690, 0x0086b603 },  /* c.ld a2,8(a3) */
    { 0xa880, 0x0084b827 },  /* c.fsd fs0,16(s1) */
    { 0xc33c, 0x04f72023 },  /* c.sw a5,64(a4) */
    { 0xfd64, 0x0e953c23 },  /* c.sd s1,248(a0) */
    { 0x0001, 0x00000013 },  /* c.nop */
    { 0x1501, 0xfe050513 },  /* c.addi a0,-32 */
    { 0x0ffd, 0x01ff8f93 },  /* c.addi t6,31 */
    { 0x357d, 0xfff5051b },  /* c.addiw a0,-1 */
    { 0x2d81, 0x000d8d9b },  /* c.addiw s11,0 */
    { 0x57bd, 0xfef00793 },  /* c.li a5,-17 */
    { 0x7101, 0xe0010113 },  /* c.addi16sp sp,-512 */
    { 0x617d, 0x1f010113 },  /* c.addi16sp sp,496 */
    { 0x7501, 0xfffe0537 },  /* c.lui a0,0xfffe0 */
    { 0x62fd, 0x0001f2b7 },  /* c.lui t0,0x1f */
    { 0x91fd, 0x03f5d593 },  /* c.srli a1,63 */
    { 0x8405, 0x40145413 },  /* c.srai s0,1 */
    { 0x9afd, 0xfff6f693 },  /* c.andi a3,-1 */
    { 0x8c05, 0x40940433 },  /* c.sub s0,s1 */
    { 0x8d3d, 0x00f54533 },  /* c.xor a0,a5 */
    { 0x8dd1, 0x00c5e5b3 },  /* c.or a1,a2 */
    { 0x8ef9, 0x00e6f6b3 },  /* c.and a3,a4 */
    { 0x9d0d, 0x40b5053b },  /* c.subw a0,a1 */
    { 0x9fa1, 0x008787bb },  /* c.addw a5,s0 */
    { 0xaffd, 0x7fe0006f },  /* c.j .+2046 */
    { 0xb001, 0x801ff06f },  /* c.j .-2048 */
    { 0xcd7d, 0x0e050f63 },  /* c.beqz a0,.+254 */
    { 0xf081, 0xf00490e3 },  /* c.bnez s1,.-256 */
    { 0x1e7e, 0x03fe1e13 },  /* c.slli t3,63 */
    { 0x30fe, 0x1f813087 },  /* c.fldsp ft1,504(sp) */
    { 0x50fe, 0x0fc12083 },  /* c.lwsp ra,252(sp) */
    { 0x7dfe, 0x1f813d83 },  /* c.ldsp s11,504(sp) */
    { 0x8082, 0x00008067 },  /* c.jr ra */
    { 0x857e, 0x01f00533 },  /* c.mv a0,t6 */
    { 0x9002, 0x00100073 },  /* c.ebreak */
    { 0x9282, 0x000280e7 },  /* c.jalr t0 */
    { 0x912a, 0x00a10133 },  /* c.add sp,a0 */
    { 0xbfee, 0x1fb13c27 },  /* c.fsdsp fs11,504(sp) */
    { 0xdfaa, 0x0ea12e23 },  /* c.swsp a0,252(sp) */
    { 0xfffe, 0x1ff13c23 },  /* c.sdsp t6,504(sp) */
    /* HINTs: legal, executed as their 32-bit form. */
    { 0x0005, 0x00100013 },  /* c.nop 1 -> addi zero,zero,1 */
    { 0x0081, 0x00008093 },  /* c.addi ra,0 */
    { 0x4005, 0x00100013 },  /* c.li zero,1 */
    { 0x6005, 0x00001037 },  /* c.lui zero,0x1 */
    { 0x0006, 0x00101013 },  /* c.slli zero,1 */
    { 0x0002, 0x00001013 },  /* c.slli64 zero */
    { 0x8001, 0x00045413 },  /* c.srli64 s0 */
    { 0x8006, 0x00100033 },  /* c.mv zero,ra */
    { 0x9006, 0x00100033 },  /* c.add zero,ra */
};

/* Reserved compressed encodings: expansion 0, decode fails. */
static const uint16_t reserved_c[] = {
    0x0000,     /* all zero */
    0x0004,     /* c.addi4spn with imm 0 */
    0x8000,     /* quadrant 0, funct3 100 */
    0x2001,     /* c.addiw rd=0 */
    0x6101,     /* c.addi16sp imm 0 */
    0x6081,     /* c.lui ra,0 */
    0x6001,     /* c.lui zero,0 */
    0x9c41,     /* quadrant 1 reserved ALU op (bit12=1, funct2=10) */
    0x9c61,     /* ... funct2=11 */
    0x4002,     /* c.lwsp rd=0 */
    0x6002,     /* c.ldsp rd=0 */
    0x8002,     /* c.jr rs1=0 */
};

static void test_compressed(void)
{
    for (size_t i = 0; i < sizeof expansions / sizeof expansions[0]; i++) {
        uint16_t c = expansions[i].c;
        uint32_t got = insn_expand_compressed(c);
        CHECK(got == expansions[i].w, "expand %04x = %08x, want %08x", c, got, expansions[i].w);
        Insn in;
        bool ok = insn_decode(0xdead0000u | c, &in);   /* upper half ignored */
        CHECK(ok && in.len == 2 && in.craw == c && insn_raw(&in) == expansions[i].w,
              "decode %04x: ok=%d len=%u raw=%08x", c, ok, in.len, insn_raw(&in));
    }
    for (size_t i = 0; i < sizeof reserved_c / sizeof reserved_c[0]; i++) {
        uint16_t c = reserved_c[i];
        Insn in;
        CHECK(insn_expand_compressed(c) == 0, "reserved %04x expands to %08x", c,
              insn_expand_compressed(c));
        CHECK(!insn_decode(c, &in) && in.op == OP_illegal && in.len == 2,
              "reserved %04x decodes", c);
    }
}

/*
 * Every halfword: the word insn_raw() builds for it must decode, as a
 * 32-bit instruction, to the same op and fields (the table of forms agrees
 * with the bucket lookup and the formats' field extraction), and a reserved
 * one must expand to nothing. That the operands are the right ones is
 * test_compressed's job, and decode_vs_objdump.sh's, which compares every
 * halfword with objdump.
 */
static void test_compressed_vs_32bit(void)
{
    unsigned bad = 0, valid = 0;
    for (uint32_t c = 0; c < 0x10000; c++) {
        if ((c & 3) == 3)
            continue;
        Insn in, in32;
        bool ok = insn_decode(c, &in);
        uint32_t w = insn_expand_compressed((uint16_t)c);
        if (!ok) {
            bad += !(w == 0 && in.op == OP_illegal && in.len == 2 && in.craw == c);
            continue;
        }
        valid++;
        bool ok32 = insn_decode(w, &in32);
        bad += !(ok32 && w == insn_raw(&in) && in.op == in32.op && in.rd == in32.rd &&
                 in.rs1 == in32.rs1 && in.rs2 == in32.rs2 && in.rs3 == in32.rs3 &&
                 in.rm == in32.rm && in.imm == in32.imm && in.len == 2 && in.craw == c);
    }
    CHECK(bad == 0, "%u compressed halfwords decode differently from their expansion", bad);
    CHECK(valid > 40000, "only %u valid compressed halfwords", valid);
}

/* -- Disassembly ---------------------------------------------------------- */

static const struct { uint32_t bits; uint64_t pc; const char *text; } disasm_cases[] = {
    { 0x00000013, 0, "nop" },
    { 0x00008067, 0, "ret" },
    { 0x8082, 0, "ret" },
    { 0xff010113, 0, "add\tsp,sp,-16" },        /* binutils 2.40 prints addi as add */
    { 0x00113423, 0, "sd\tra,8(sp)" },
    { 0x6522, 0, "ld\ta0,8(sp)" },
    { 0x00050063, 0x1000, "beqz\ta0,1000" },
    { 0xfea61ae3, 0x18, "bne\ta2,a0,c" },
    { 0x000000ef, 0x40, "jal\t40" },
    { 0x0000006f, 0x8, "j\t8" },
    { 0x00500513, 0, "li\ta0,5" },
    { 0x857e, 0, "mv\ta0,t6" },
    { 0x0005051b, 0, "sext.w\ta0,a0" },
    { 0x0ff57513, 0, "zext.b\ta0,a0" },
    { 0xc0051553, 0, "fcvt.w.s\ta0,fa0,rtz" },
    { 0x00007053, 0, "fadd.s\tft0,ft0,ft0" },
    { 0x06b6252f, 0, "amoadd.w.aqrl\ta0,a1,(a2)" },
    { 0x0ff0000f, 0, "fence" },
    { 0x0310000f, 0, "fence\trw,w" },
    { 0x8330000f, 0, "fence.tso" },
    { 0x00102573, 0, "frflags\ta0" },
    { 0xc0002573, 0, "rdcycle\ta0" },
    { 0x7c002573, 0, "csrr\ta0,0x7c0" },
    { 0x10002573, 0, "csrr\ta0,sstatus" },
    { 0x7c02d073, 0, "csrw\t0x7c0,5" },
    { 0x22b58553, 0, "fmv.d\tfa0,fa1" },
    { 0x0800053b, 0, "zext.w\ta0,zero" },
    { 0x03f51513, 0, "sll\ta0,a0,0x3f" },
    { 0xfffff537, 0, "lui\ta0,0xfffff" },
    { 0x0000, 0, "unimp" },
    { 0x0000000b, 0, ".4byte\t0xb" },
    { 0x8000, 0, ".2byte\t0x8000" },
};

static void test_disasm(void)
{
    char buf[128];
    for (size_t i = 0; i < sizeof disasm_cases / sizeof disasm_cases[0]; i++) {
        Insn in;
        insn_decode(disasm_cases[i].bits, &in);
        insn_disasm(&in, disasm_cases[i].pc, buf, sizeof buf);
        CHECK(strcmp(buf, disasm_cases[i].text) == 0, "%08x: '%s', want '%s'",
              disasm_cases[i].bits, buf, disasm_cases[i].text);
    }
    /* Truncation: always NUL-terminated, returns what was written. */
    Insn in;
    insn_decode(0x06b6252f, &in);
    char small[6];
    int n = insn_disasm(&in, 0, small, sizeof small);
    CHECK(n == 5 && strcmp(small, "amoad") == 0, "truncated: %d '%s'", n, small);
    CHECK(strcmp(riscv_xreg_name[2], "sp") == 0 && strcmp(riscv_freg_name[10], "fa0") == 0,
          "register names");
}

/* -- Random words --------------------------------------------------------- */

static uint64_t rng = 0x123456789abcdefull;

static uint32_t rnd(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}

/* A decoded word must really match its row, and fields must be in range. */
static void check_random_word(uint32_t w)
{
    Insn in;
    char buf[128];
    bool ok = insn_decode(w, &in);
    int n = insn_disasm(&in, 0x10000, buf, sizeof buf);
    CHECK(n > 0, "%08x: empty disassembly", w);
    if (!ok) {
        CHECK(in.op == OP_illegal, "%08x: failed decode has op %u", w, in.op);
        return;
    }
    const InsnDesc *d = &insn_table[in.op];
    CHECK(in.op > 0 && in.op < OP_COUNT && (insn_raw(&in) & d->mask) == d->match,
          "%08x: decoded as %s but does not match it", w, d->name);
    CHECK(in.rd < 32 && in.rs1 < 32 && in.rs2 < 32 && in.rs3 < 32 && in.rm < 8,
          "%08x: field out of range", w);
    CHECK(in.len == ((w & 3) == 3 ? 4 : 2), "%08x: len %u", w, in.len);
}

static void test_random(void)
{
    for (uint32_t h = 0; h < 0x10000; h++)
        if ((h & 3) != 3)
            check_random_word(h);
    for (int i = 0; i < 2000000; i++)
        check_random_word(rnd());
}

int main(void)
{
    test_table();
    test_each_entry();
    test_fields();
    test_compressed();
    test_compressed_vs_32bit();
    test_disasm();
    test_random();
    if (failures) {
        printf("test_decode: %d failures\n", failures);
        return 1;
    }
    printf("test_decode: ok\n");
    return 0;
}
