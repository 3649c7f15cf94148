/*
 * RISC-V instruction decoder: turns instruction bits into an Insn.
 *
 * The instruction table (insn_table) is generated from insn.def. Decoding a
 * 32-bit word looks up a small bucket of candidate table rows by major opcode
 * (bits 6:2) and funct3 (bits 14:12), then takes the first row, in table
 * order, whose mask/match fits. The buckets are built once, on first use.
 * Operand fields are then extracted according to the row's format, so
 * consumers never look at instruction bits again.
 *
 * Compressed (RVC) halfwords are first expanded to the 32-bit instruction
 * they stand for (insn_expand_compressed), then decoded like any other word;
 * Insn.len and Insn.craw remember the original.
 */
#include "riscv/insn.h"
#include "riscv/isa.h"

#include <pthread.h>
#include <string.h>

/* -- The table ------------------------------------------------------------ */

const InsnDesc insn_table[OP_COUNT] = {
    [OP_illegal] = { "illegal", 0, 0, FMT_NONE, EXT_I },
#define INSN(id, name_, mask_, match_, fmt_, ext_) \
    [OP_##id] = { name_, mask_, match_, fmt_, ext_ },
#include "riscv/insn.def"
#undef INSN
};

const char *const riscv_xreg_name[32] = {
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2",
    "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
    "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};

const char *const riscv_freg_name[32] = {
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7",
    "fs0", "fs1", "fa0", "fa1", "fa2", "fa3", "fa4", "fa5",
    "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7",
    "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
};

/* -- Bit helpers ---------------------------------------------------------- */

/* Bits hi..lo of w, right-aligned. */
static inline uint32_t bits(uint32_t w, unsigned hi, unsigned lo)
{
    return (w >> lo) & ((1u << (hi - lo + 1)) - 1);
}

/* Sign-extend the low `width` bits of v. */
static inline int64_t sext(uint64_t v, unsigned width)
{
    uint64_t m = 1ull << (width - 1);
    v &= (m << 1) - 1;
    return (int64_t)((v ^ m) - m);
}

/* -- Lookup buckets ------------------------------------------------------- */

/*
 * Bucket key: major opcode bits 6:2 and funct3. A row whose mask does not
 * cover funct3 (lui, jal, FP ops with a rounding mode...) lands in all eight
 * funct3 buckets of its opcode. Rows keep table order inside a bucket.
 */
#define NBUCKETS 256
static uint16_t bucket_start[NBUCKETS + 1];
static uint16_t bucket_ops[OP_COUNT * 8];
static pthread_once_t buckets_once = PTHREAD_ONCE_INIT;

static unsigned bucket_key(uint32_t w)
{
    return (bits(w, 6, 2) << 3) | bits(w, 14, 12);
}

/*
 * Counting sort of the rows by key (once per process, so it is kept to a
 * pass over the table: start-up time): every row's mask covers the major
 * opcode (insn.def), so a row lands in the buckets of its opcode whose
 * funct3 its mask allows: one, or all eight.
 */
static void build_buckets(void)
{
    uint16_t count[NBUCKETS + 1] = { 0 };
    for (int pass = 0; pass < 2; pass++) {
        for (unsigned op = 1; op < OP_COUNT; op++) {
            const InsnDesc *d = &insn_table[op];
            if ((d->match & 3) != 3)
                continue;
            for (uint32_t f3 = 0; f3 < 8; f3++) {
                if (((f3 << 12) ^ d->match) & d->mask & 0x7000)
                    continue;
                unsigned k = (bucket_key(d->match) & ~7u) | f3;
                if (pass == 0)
                    count[k + 1]++;
                else
                    bucket_ops[bucket_start[k] + count[k]++] = (uint16_t)op;
            }
        }
        if (pass == 0) {
            for (unsigned k = 0; k < NBUCKETS; k++)
                count[k + 1] += count[k];
            memcpy(bucket_start, count, sizeof bucket_start);
            memset(count, 0, sizeof count);
        }
    }
}

static bool buckets_ready;             /* set (release) once build_buckets ran */

static void build_buckets_once(void)
{
    build_buckets();
    __atomic_store_n(&buckets_ready, true, __ATOMIC_RELEASE);
}

/* The table row for a 32-bit word, or OP_illegal. */
static unsigned lookup(uint32_t w)
{
    /* A flag before pthread_once: its call at every decode was 0.35 % of a
     * short process (musl's pthread_once is not inlined). */
    if (!__atomic_load_n(&buckets_ready, __ATOMIC_ACQUIRE))
        pthread_once(&buckets_once, build_buckets_once);
    unsigned key = bucket_key(w);
    for (unsigned i = bucket_start[key]; i < bucket_start[key + 1]; i++) {
        unsigned op = bucket_ops[i];
        if ((w & insn_table[op].mask) == insn_table[op].match)
            return op;
    }
    return OP_illegal;
}

/* -- Operand extraction --------------------------------------------------- */

static int64_t imm_i(uint32_t w) { return sext(w >> 20, 12); }
static int64_t imm_s(uint32_t w) { return sext((bits(w, 31, 25) << 5) | bits(w, 11, 7), 12); }
static int64_t imm_u(uint32_t w) { return sext(w & 0xfffff000u, 32); }

static int64_t imm_b(uint32_t w)
{
    uint32_t v = (bits(w, 31, 31) << 12) | (bits(w, 7, 7) << 11) |
                 (bits(w, 30, 25) << 5) | (bits(w, 11, 8) << 1);
    return sext(v, 13);
}

static int64_t imm_j(uint32_t w)
{
    uint32_t v = (bits(w, 31, 31) << 20) | (bits(w, 19, 12) << 12) |
                 (bits(w, 20, 20) << 11) | (bits(w, 30, 21) << 1);
    return sext(v, 21);
}

/* Formats whose funct3 is a rounding mode (101 and 110 are reserved). */
static bool has_rounding_mode(enum insn_format f)
{
    return f == FMT_FR_RM || f == FMT_FR4 || f == FMT_F1_RM ||
           f == FMT_XF_RM || f == FMT_FX_RM;
}

/* FP register-register formats: Insn.rm = funct3 (a rounding mode or not). */
static bool is_fp_op_format(enum insn_format f)
{
    return has_rounding_mode(f) || f == FMT_FR || f == FMT_FCMP ||
           f == FMT_XF || f == FMT_FX;
}

/* Fill the operand fields of `in` (op, raw already set) per its format. */
static void extract_fields(Insn *in)
{
    uint32_t w = in->raw;
    const InsnDesc *d = &insn_table[in->op];
    uint8_t rd = bits(w, 11, 7), rs1 = bits(w, 19, 15), rs2 = bits(w, 24, 20);

    in->rd = in->rs1 = in->rs2 = in->rs3 = 0;
    in->rm = 0;
    in->imm = 0;
    if (is_fp_op_format(d->fmt))
        in->rm = bits(w, 14, 12);

    switch (d->fmt) {
    case FMT_NONE:  break;
    case FMT_R:     in->rd = rd; in->rs1 = rs1; in->rs2 = rs2; break;
    case FMT_R1:    in->rd = rd; in->rs1 = rs1; break;
    case FMT_I:
    case FMT_L:     in->rd = rd; in->rs1 = rs1; in->imm = imm_i(w); break;
    case FMT_SH:    /* slliw & co. have 5-bit shamts, RV64 shifts 6 */
        in->rd = rd; in->rs1 = rs1;
        in->imm = bits(w, 25, 20) & ((d->mask & (1u << 25)) ? 0x1f : 0x3f);
        break;
    case FMT_S:     in->rs1 = rs1; in->rs2 = rs2; in->imm = imm_s(w); break;
    case FMT_B:     in->rs1 = rs1; in->rs2 = rs2; in->imm = imm_b(w); break;
    case FMT_U:     in->rd = rd; in->imm = imm_u(w); break;
    case FMT_J:     in->rd = rd; in->imm = imm_j(w); break;
    case FMT_FENCE: in->imm = bits(w, 31, 20); break;
    case FMT_CSR:
    case FMT_CSRI:  in->rd = rd; in->rs1 = rs1; in->imm = bits(w, 31, 20); break;
    case FMT_LR:    in->rd = rd; in->rs1 = rs1; in->rm = bits(w, 26, 25); break;
    case FMT_AMO:
        in->rd = rd; in->rs1 = rs1; in->rs2 = rs2; in->rm = bits(w, 26, 25);
        break;
    case FMT_FL:    in->rd = rd; in->rs1 = rs1; in->imm = imm_i(w); break;
    case FMT_FS:    in->rs1 = rs1; in->rs2 = rs2; in->imm = imm_s(w); break;
    case FMT_FR:
    case FMT_FR_RM:
    case FMT_FCMP:  in->rd = rd; in->rs1 = rs1; in->rs2 = rs2; break;
    case FMT_FR4:
        in->rd = rd; in->rs1 = rs1; in->rs2 = rs2; in->rs3 = bits(w, 31, 27);
        break;
    case FMT_F1_RM:
    case FMT_XF_RM:
    case FMT_XF:
    case FMT_FX_RM:
    case FMT_FX:    in->rd = rd; in->rs1 = rs1; break;
    case FMT_SFENCE: in->rs1 = rs1; in->rs2 = rs2; break;
    case FMT_COUNT: break;
    }
}

/* -- 32-bit encoders for compressed expansion ----------------------------- */

static uint32_t enc_r(uint32_t opc, unsigned f3, unsigned f7,
                      unsigned rd, unsigned rs1, unsigned rs2)
{
    return opc | (rd << 7) | (f3 << 12) | (rs1 << 15) | (rs2 << 20) | (f7 << 25);
}

static uint32_t enc_i(uint32_t opc, unsigned f3, unsigned rd, unsigned rs1, int32_t imm)
{
    return opc | (rd << 7) | (f3 << 12) | (rs1 << 15) | ((uint32_t)imm << 20);
}

static uint32_t enc_s(uint32_t opc, unsigned f3, unsigned rs1, unsigned rs2, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return opc | ((u & 0x1f) << 7) | (f3 << 12) | (rs1 << 15) | (rs2 << 20) |
           (((u >> 5) & 0x7f) << 25);
}

static uint32_t enc_b(unsigned f3, unsigned rs1, unsigned rs2, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return 0x63 | (((u >> 11) & 1) << 7) | (((u >> 1) & 0xf) << 8) | (f3 << 12) |
           (rs1 << 15) | (rs2 << 20) | (((u >> 5) & 0x3f) << 25) | (((u >> 12) & 1) << 31);
}

static uint32_t enc_j(unsigned rd, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return 0x6f | (rd << 7) | (((u >> 12) & 0xff) << 12) | (((u >> 11) & 1) << 20) |
           (((u >> 1) & 0x3ff) << 21) | (((u >> 20) & 1) << 31);
}

enum {
    OPC_LOAD = 0x03, OPC_LOAD_FP = 0x07, OPC_OP_IMM = 0x13, OPC_OP_IMM_32 = 0x1b,
    OPC_STORE = 0x23, OPC_STORE_FP = 0x27, OPC_OP = 0x33, OPC_LUI = 0x37,
    OPC_OP_32 = 0x3b, OPC_JALR = 0x67,
};
enum { X0 = 0, RA = 1, SP = 2 };

/* -- Compressed expansion ------------------------------------------------- */

/* Compressed register fields name x8..x15. */
static unsigned creg(uint16_t c, unsigned lo) { return 8 + bits(c, lo + 2, lo); }

/* CI-format 6-bit signed immediate: imm[5] = bit 12, imm[4:0] = bits 6:2. */
static int32_t ci_imm(uint16_t c) { return (int32_t)sext((bits(c, 12, 12) << 5) | bits(c, 6, 2), 6); }

/* Offsets of c.ld/c.sd/c.fld/c.fsd: uimm[5:3] = 12:10, uimm[7:6] = 6:5. */
static int32_t cl_d_off(uint16_t c) { return (bits(c, 12, 10) << 3) | (bits(c, 6, 5) << 6); }
/* Offsets of c.lw/c.sw: uimm[5:3] = 12:10, uimm[2] = 6, uimm[6] = 5. */
static int32_t cl_w_off(uint16_t c)
{
    return (bits(c, 12, 10) << 3) | (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 6);
}

static uint32_t expand_q0(uint16_t c)
{
    unsigned rdp = creg(c, 2), rs1p = creg(c, 7);
    switch (bits(c, 15, 13)) {
    case 0: { /* c.addi4spn */
        int32_t imm = (bits(c, 12, 11) << 4) | (bits(c, 10, 7) << 6) |
                      (bits(c, 6, 6) << 2) | (bits(c, 5, 5) << 3);
        return imm ? enc_i(OPC_OP_IMM, 0, rdp, SP, imm) : 0;
    }
    case 1: return enc_i(OPC_LOAD_FP, 3, rdp, rs1p, cl_d_off(c));     /* c.fld */
    case 2: return enc_i(OPC_LOAD, 2, rdp, rs1p, cl_w_off(c));        /* c.lw */
    case 3: return enc_i(OPC_LOAD, 3, rdp, rs1p, cl_d_off(c));        /* c.ld */
    case 5: return enc_s(OPC_STORE_FP, 3, rs1p, rdp, cl_d_off(c));    /* c.fsd */
    case 6: return enc_s(OPC_STORE, 2, rs1p, rdp, cl_w_off(c));       /* c.sw */
    case 7: return enc_s(OPC_STORE, 3, rs1p, rdp, cl_d_off(c));       /* c.sd */
    default: return 0;                                                /* reserved */
    }
}

/* Quadrant 1, funct3 = 100: shifts, andi and register-register ALU ops. */
static uint32_t expand_q1_alu(uint16_t c)
{
    unsigned rd = creg(c, 7), rs2 = creg(c, 2);
    unsigned shamt = (bits(c, 12, 12) << 5) | bits(c, 6, 2);
    switch (bits(c, 11, 10)) {
    case 0: return enc_i(OPC_OP_IMM, 5, rd, rd, (int32_t)shamt);          /* c.srli */
    case 1: return enc_i(OPC_OP_IMM, 5, rd, rd, (int32_t)(shamt | 0x400)); /* c.srai */
    case 2: return enc_i(OPC_OP_IMM, 7, rd, rd, ci_imm(c));                /* c.andi */
    }
    static const struct { uint8_t f3, f7; } alu[2][4] = {
        { {0, 0x20}, {4, 0}, {6, 0}, {7, 0} },  /* c.sub c.xor c.or c.and */
        { {0, 0x20}, {0, 0}, {0, 0}, {0, 0} },  /* c.subw c.addw (rest reserved) */
    };
    unsigned w = bits(c, 12, 12), f = bits(c, 6, 5);
    if (w && f >= 2)
        return 0;
    return enc_r(w ? OPC_OP_32 : OPC_OP, alu[w][f].f3, alu[w][f].f7, rd, rd, rs2);
}

static uint32_t expand_q1(uint16_t c)
{
    unsigned rd = bits(c, 11, 7), rs1p = creg(c, 7);
    switch (bits(c, 15, 13)) {
    case 0: return enc_i(OPC_OP_IMM, 0, rd, rd, ci_imm(c));               /* c.addi, c.nop */
    case 1: return rd ? enc_i(OPC_OP_IMM_32, 0, rd, rd, ci_imm(c)) : 0;   /* c.addiw */
    case 2: return enc_i(OPC_OP_IMM, 0, rd, X0, ci_imm(c));               /* c.li */
    case 3:
        if (rd == SP) { /* c.addi16sp */
            int32_t imm = (int32_t)sext((bits(c, 12, 12) << 9) | (bits(c, 6, 6) << 4) |
                                        (bits(c, 5, 5) << 6) | (bits(c, 4, 3) << 7) |
                                        (bits(c, 2, 2) << 5), 10);
            return imm ? enc_i(OPC_OP_IMM, 0, SP, SP, imm) : 0;
        } else { /* c.lui */
            int32_t imm = ci_imm(c);
            return imm ? OPC_LUI | (rd << 7) | ((uint32_t)imm << 12) : 0;
        }
    case 4: return expand_q1_alu(c);
    case 5: { /* c.j */
        int32_t imm = (int32_t)sext((bits(c, 12, 12) << 11) | (bits(c, 11, 11) << 4) |
                                    (bits(c, 10, 9) << 8) | (bits(c, 8, 8) << 10) |
                                    (bits(c, 7, 7) << 6) | (bits(c, 6, 6) << 7) |
                                    (bits(c, 5, 3) << 1) | (bits(c, 2, 2) << 5), 12);
        return enc_j(X0, imm);
    }
    default: { /* c.beqz, c.bnez */
        int32_t imm = (int32_t)sext((bits(c, 12, 12) << 8) | (bits(c, 11, 10) << 3) |
                                    (bits(c, 6, 5) << 6) | (bits(c, 4, 3) << 1) |
                                    (bits(c, 2, 2) << 5), 9);
        return enc_b(bits(c, 13, 13), rs1p, X0, imm);
    }
    }
}

static uint32_t expand_q2(uint16_t c)
{
    unsigned rd = bits(c, 11, 7), rs2 = bits(c, 6, 2);
    /* Stack-pointer-relative offsets (doubleword and word scaled). */
    int32_t ld_off = (bits(c, 12, 12) << 5) | (bits(c, 6, 5) << 3) | (bits(c, 4, 2) << 6);
    int32_t lw_off = (bits(c, 12, 12) << 5) | (bits(c, 6, 4) << 2) | (bits(c, 3, 2) << 6);
    int32_t sd_off = (bits(c, 12, 10) << 3) | (bits(c, 9, 7) << 6);
    int32_t sw_off = (bits(c, 12, 9) << 2) | (bits(c, 8, 7) << 6);

    switch (bits(c, 15, 13)) {
    case 0: /* c.slli */
        return enc_i(OPC_OP_IMM, 1, rd, rd, (int32_t)((bits(c, 12, 12) << 5) | rs2));
    case 1: return enc_i(OPC_LOAD_FP, 3, rd, SP, ld_off);                  /* c.fldsp */
    case 2: return rd ? enc_i(OPC_LOAD, 2, rd, SP, lw_off) : 0;            /* c.lwsp */
    case 3: return rd ? enc_i(OPC_LOAD, 3, rd, SP, ld_off) : 0;            /* c.ldsp */
    case 4:
        if (!bits(c, 12, 12)) {
            if (rs2)
                return enc_r(OPC_OP, 0, 0, rd, X0, rs2);                   /* c.mv */
            return rd ? enc_i(OPC_JALR, 0, X0, rd, 0) : 0;                 /* c.jr */
        }
        if (rs2)
            return enc_r(OPC_OP, 0, 0, rd, rd, rs2);                       /* c.add */
        if (rd)
            return enc_i(OPC_JALR, 0, RA, rd, 0);                          /* c.jalr */
        return 0x00100073;                                                 /* c.ebreak */
    case 5: return enc_s(OPC_STORE_FP, 3, SP, rs2, sd_off);                /* c.fsdsp */
    case 6: return enc_s(OPC_STORE, 2, SP, rs2, sw_off);                   /* c.swsp */
    default: return enc_s(OPC_STORE, 3, SP, rs2, sd_off);                  /* c.sdsp */
    }
}

uint32_t insn_expand_compressed(uint16_t c)
{
    switch (c & 3) {
    case 0: return expand_q0(c);
    case 1: return expand_q1(c);
    case 2: return expand_q2(c);
    default: return 0;
    }
}

/* -- Decoding ------------------------------------------------------------- */

bool insn_decode(uint32_t w, Insn *out)
{
    *out = (Insn){ .op = OP_illegal, .len = 4 };
    if ((w & 3) != 3) {
        out->len = 2;
        if (!(isa_mask & ISA_C))
            return false;                  /* -cpu without C */
        out->craw = (uint16_t)w;
        w = insn_expand_compressed((uint16_t)w);
        if (w == 0)
            return false;
    }
    out->raw = w;
    unsigned op = lookup(w);
    if (op == OP_illegal || !(isa_mask & ISA_BIT(insn_table[op].ext)))
        return false;                      /* unknown, or disabled by -cpu */
    /* Static rounding modes 101 and 110 are reserved: illegal instruction. */
    if (has_rounding_mode(insn_table[op].fmt) && (bits(w, 14, 12) == 5 || bits(w, 14, 12) == 6))
        return false;
    out->op = (uint16_t)op;
    extract_fields(out);
    return true;
}
