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
 * Compressed (RVC) halfwords are decoded straight from a table of their
 * forms (which 32-bit instruction each stands for, where its operands are),
 * without making the 32-bit word: insn_raw() encodes it when asked.
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

/*
 * What each format takes from the word: its register fields (a mask of 31
 * or 0), how its immediate is made and what Insn.rm holds. Extraction is a
 * table lookup rather than a switch on the format: an indirect branch that
 * a mixed instruction stream mispredicts cost more than computing every
 * candidate immediate (decoding is about a third of an interpreted first run).
 */
enum { IMM_NONE, IMM_I, IMM_S, IMM_B, IMM_U, IMM_J, IMM_SH, IMM_HI12, IMM_KINDS };
enum { RMF_NONE, RMF_FUNCT3, RMF_AQRL, RMF_KINDS };

typedef struct FmtInfo {
    uint8_t rd, rs1, rs2, rs3;  /* 31: the field is an operand; 0: it is not */
    uint8_t imm, rm;            /* IMM_*, RMF_* */
    bool static_rm;             /* funct3 is a rounding mode: 101 and 110 are reserved */
} FmtInfo;

#define R 31
static const FmtInfo fmt_info[FMT_COUNT] = {
    [FMT_NONE]   = { 0, 0, 0, 0, IMM_NONE, RMF_NONE, false },
    [FMT_R]      = { R, R, R, 0, IMM_NONE, RMF_NONE, false },
    [FMT_R1]     = { R, R, 0, 0, IMM_NONE, RMF_NONE, false },
    [FMT_I]      = { R, R, 0, 0, IMM_I, RMF_NONE, false },
    [FMT_SH]     = { R, R, 0, 0, IMM_SH, RMF_NONE, false },
    [FMT_L]      = { R, R, 0, 0, IMM_I, RMF_NONE, false },
    [FMT_S]      = { 0, R, R, 0, IMM_S, RMF_NONE, false },
    [FMT_B]      = { 0, R, R, 0, IMM_B, RMF_NONE, false },
    [FMT_U]      = { R, 0, 0, 0, IMM_U, RMF_NONE, false },
    [FMT_J]      = { R, 0, 0, 0, IMM_J, RMF_NONE, false },
    [FMT_FENCE]  = { 0, 0, 0, 0, IMM_HI12, RMF_NONE, false },
    [FMT_CSR]    = { R, R, 0, 0, IMM_HI12, RMF_NONE, false },
    [FMT_CSRI]   = { R, R, 0, 0, IMM_HI12, RMF_NONE, false },
    [FMT_LR]     = { R, R, 0, 0, IMM_NONE, RMF_AQRL, false },
    [FMT_AMO]    = { R, R, R, 0, IMM_NONE, RMF_AQRL, false },
    [FMT_FL]     = { R, R, 0, 0, IMM_I, RMF_NONE, false },
    [FMT_FS]     = { 0, R, R, 0, IMM_S, RMF_NONE, false },
    [FMT_FR]     = { R, R, R, 0, IMM_NONE, RMF_FUNCT3, false },
    [FMT_FR_RM]  = { R, R, R, 0, IMM_NONE, RMF_FUNCT3, true },
    [FMT_FR4]    = { R, R, R, R, IMM_NONE, RMF_FUNCT3, true },
    [FMT_F1_RM]  = { R, R, 0, 0, IMM_NONE, RMF_FUNCT3, true },
    [FMT_FCMP]   = { R, R, R, 0, IMM_NONE, RMF_FUNCT3, false },
    [FMT_XF_RM]  = { R, R, 0, 0, IMM_NONE, RMF_FUNCT3, true },
    [FMT_XF]     = { R, R, 0, 0, IMM_NONE, RMF_FUNCT3, false },
    [FMT_FX_RM]  = { R, R, 0, 0, IMM_NONE, RMF_FUNCT3, true },
    [FMT_FX]     = { R, R, 0, 0, IMM_NONE, RMF_FUNCT3, false },
    [FMT_SFENCE] = { 0, R, R, 0, IMM_NONE, RMF_NONE, false },
};
#undef R

/* Fill the operand fields of `in` (op, raw already set) per its format. */
static void extract_fields(Insn *in, const InsnDesc *d, const FmtInfo *f)
{
    uint32_t w = in->raw;
    in->rd = (w >> 7) & f->rd;
    in->rs1 = (w >> 15) & f->rs1;
    in->rs2 = (w >> 20) & f->rs2;
    in->rs3 = (w >> 27) & f->rs3;
    /* slliw & co. (mask covers bit 25) have 5-bit shamts, RV64 shifts 6 */
    uint32_t shamt = bits(w, 25, 20) & ~(d->mask >> 20) & 0x3f;
    const int64_t imm[IMM_KINDS] = {
        [IMM_NONE] = 0, [IMM_I] = imm_i(w), [IMM_S] = imm_s(w), [IMM_B] = imm_b(w),
        [IMM_U] = imm_u(w), [IMM_J] = imm_j(w), [IMM_SH] = shamt, [IMM_HI12] = w >> 20,
    };
    const uint8_t rm[RMF_KINDS] = { 0, bits(w, 14, 12), bits(w, 26, 25) };
    in->imm = imm[f->imm];
    in->rm = rm[f->rm];
}

/* -- Compressed instructions ---------------------------------------------- */

/*
 * Every compressed instruction stands for a 32-bit one; its operands are
 * bit fields of the halfword, moved into place: a form. The form is picked
 * by quadrant and funct3 (and, in three of them, a few more bits), and the
 * Insn is made from it without a branch on which form it is: a mixed
 * instruction stream mispredicts a switch per instruction, and decoding is
 * a third of an interpreted first run. The 32-bit word (Insn.raw) is not made
 * here: insn_raw() encodes it for the few that print or inspect it.
 */

/* A field of c moved into the immediate: its bits of c, and a right shift
 * of them placed at bit 32 (32 + src - dst: one shift either way). */
typedef struct CMove { uint16_t mask; uint8_t shr; } CMove;
#define MV(src, len, dst) { (uint16_t)(((1u << (len)) - 1) << (src)), (uint8_t)(32 + (src) - (dst)) }
#define CMOVES 4

/* Where a register operand comes from. */
enum { CR_X0, CR_RA, CR_SP, CR_HI, CR_LO, CR_PHI, CR_PLO, CR_KINDS };
static const struct { uint8_t shift, mask, add; } creg_src[CR_KINDS] = {
    [CR_X0] = { 0, 0, 0 }, [CR_RA] = { 0, 0, 1 }, [CR_SP] = { 0, 0, 2 },
    [CR_HI] = { 7, 31, 0 },     /* c[11:7] */
    [CR_LO] = { 2, 31, 0 },     /* c[6:2] */
    [CR_PHI] = { 7, 7, 8 },     /* c[9:7]: x8..x15 */
    [CR_PLO] = { 2, 7, 8 },     /* c[4:2]: x8..x15 */
};

typedef struct CForm {
    uint16_t op;                /* enum insn_op; OP_illegal: reserved */
    uint16_t nz;                /* reserved unless one of these bits of c is set */
    uint8_t rd, rs1, rs2;       /* CR_* */
    uint64_t sign;              /* immediate bits that copy c[12], its sign */
    CMove imm[CMOVES];
} CForm;

#define SIGN(bit)  (~0ull << (bit))
#define NZ_IMM     0x107cu          /* c[12], c[6:2]: a CI immediate */
#define NZ_RD      0x0f80u
#define CI_IMM     MV(2, 5, 0)      /* imm[4:0] = c[6:2] */
#define SHAMT      MV(2, 5, 0), MV(12, 1, 5)
#define OFF_D      MV(10, 3, 3), MV(5, 2, 6)               /* c.ld, c.sd, c.fld, c.fsd */
#define OFF_W      MV(10, 3, 3), MV(6, 1, 2), MV(5, 1, 6)  /* c.lw, c.sw */
#define OFF_DSP    MV(12, 1, 5), MV(5, 2, 3), MV(2, 3, 6)  /* c.ldsp, c.fldsp */
#define OFF_SDSP   MV(10, 3, 3), MV(7, 3, 6)               /* c.sdsp, c.fsdsp */
#define OFF_B      MV(10, 2, 3), MV(5, 2, 6), MV(3, 2, 1), MV(2, 1, 5)

enum {
    /* quadrant 0 */
    F_ADDI4SPN, F_FLD, F_LW, F_LD, F_Q0_RES, F_FSD, F_SW, F_SD,
    /* quadrant 1 */
    F_ADDI, F_ADDIW, F_LI, F_LUI, F_ADDI16SP, F_SRLI, F_SRAI, F_ANDI,
    F_SUB, F_XOR, F_OR, F_AND, F_SUBW, F_ADDW, F_ALU_RES6, F_ALU_RES7, F_J, F_BEQZ, F_BNEZ,
    /* quadrant 2: c.jr/c.mv/c.ebreak/c.jalr/c.add by c[12], rs2 != 0, rd != 0 */
    F_SLLI, F_FLDSP, F_LWSP, F_LDSP, F_CR_RES, F_JR, F_MV_X0, F_MV, F_EBREAK, F_JALR,
    F_ADD_X0, F_ADD, F_FSDSP, F_SWSP, F_SDSP, F_COUNT
};

/* A form with no immediate: its registers only. */
#define REGS(op, rd, rs1, rs2) { op, 0, rd, rs1, rs2, 0, { { 0, 0 } } }
#define CALU(op) REGS(op, CR_PHI, CR_PHI, CR_PLO)
static const CForm cforms[F_COUNT] = {
    [F_ADDI4SPN] = { OP_addi, 0x1fe0, CR_PLO, CR_SP, CR_X0, 0,
                     { MV(11, 2, 4), MV(7, 4, 6), MV(6, 1, 2), MV(5, 1, 3) } },
    [F_FLD]  = { OP_fld, 0, CR_PLO, CR_PHI, CR_X0, 0, { OFF_D } },
    [F_LW]   = { OP_lw, 0, CR_PLO, CR_PHI, CR_X0, 0, { OFF_W } },
    [F_LD]   = { OP_ld, 0, CR_PLO, CR_PHI, CR_X0, 0, { OFF_D } },
    [F_Q0_RES] = REGS(OP_illegal, 0, 0, 0),
    [F_FSD]  = { OP_fsd, 0, CR_X0, CR_PHI, CR_PLO, 0, { OFF_D } },
    [F_SW]   = { OP_sw, 0, CR_X0, CR_PHI, CR_PLO, 0, { OFF_W } },
    [F_SD]   = { OP_sd, 0, CR_X0, CR_PHI, CR_PLO, 0, { OFF_D } },

    [F_ADDI]  = { OP_addi, 0, CR_HI, CR_HI, CR_X0, SIGN(5), { CI_IMM } },
    [F_ADDIW] = { OP_addiw, NZ_RD, CR_HI, CR_HI, CR_X0, SIGN(5), { CI_IMM } },
    [F_LI]    = { OP_addi, 0, CR_HI, CR_X0, CR_X0, SIGN(5), { CI_IMM } },
    [F_LUI]   = { OP_lui, NZ_IMM, CR_HI, CR_X0, CR_X0, SIGN(17), { MV(2, 5, 12) } },
    [F_ADDI16SP] = { OP_addi, NZ_IMM, CR_SP, CR_SP, CR_X0, SIGN(9),
                     { MV(6, 1, 4), MV(5, 1, 6), MV(3, 2, 7), MV(2, 1, 5) } },
    [F_SRLI] = { OP_srli, 0, CR_PHI, CR_PHI, CR_X0, 0, { SHAMT } },
    [F_SRAI] = { OP_srai, 0, CR_PHI, CR_PHI, CR_X0, 0, { SHAMT } },
    [F_ANDI] = { OP_andi, 0, CR_PHI, CR_PHI, CR_X0, SIGN(5), { CI_IMM } },
    [F_SUB]  = CALU(OP_sub), [F_XOR] = CALU(OP_xor), [F_OR] = CALU(OP_or),
    [F_AND]  = CALU(OP_and), [F_SUBW] = CALU(OP_subw), [F_ADDW] = CALU(OP_addw),
    [F_ALU_RES6] = CALU(OP_illegal), [F_ALU_RES7] = CALU(OP_illegal),
    /* c.j's seven fields: the first four here, the rest in decode_compressed */
    [F_J]    = { OP_jal, 0, CR_X0, CR_X0, CR_X0, SIGN(11),
                 { MV(11, 1, 4), MV(9, 2, 8), MV(8, 1, 10), MV(7, 1, 6) } },
    [F_BEQZ] = { OP_beq, 0, CR_X0, CR_PHI, CR_X0, SIGN(8), { OFF_B } },
    [F_BNEZ] = { OP_bne, 0, CR_X0, CR_PHI, CR_X0, SIGN(8), { OFF_B } },

    [F_SLLI]  = { OP_slli, 0, CR_HI, CR_HI, CR_X0, 0, { SHAMT } },
    [F_FLDSP] = { OP_fld, 0, CR_HI, CR_SP, CR_X0, 0, { OFF_DSP } },
    [F_LWSP]  = { OP_lw, NZ_RD, CR_HI, CR_SP, CR_X0, 0,
                  { MV(12, 1, 5), MV(4, 3, 2), MV(2, 2, 6) } },
    [F_LDSP]  = { OP_ld, NZ_RD, CR_HI, CR_SP, CR_X0, 0, { OFF_DSP } },
    [F_CR_RES] = REGS(OP_illegal, 0, 0, 0),
    [F_JR]     = REGS(OP_jalr, CR_X0, CR_HI, CR_X0),
    [F_MV_X0]  = REGS(OP_add, CR_HI, CR_X0, CR_LO),    /* the same: rd only picks the row */
    [F_MV]     = REGS(OP_add, CR_HI, CR_X0, CR_LO),
    [F_EBREAK] = REGS(OP_ebreak, CR_X0, CR_X0, CR_X0),
    [F_JALR]   = REGS(OP_jalr, CR_RA, CR_HI, CR_X0),
    [F_ADD_X0] = REGS(OP_add, CR_HI, CR_HI, CR_LO),
    [F_ADD]    = REGS(OP_add, CR_HI, CR_HI, CR_LO),
    [F_FSDSP] = { OP_fsd, 0, CR_X0, CR_SP, CR_LO, 0, { OFF_SDSP } },
    [F_SWSP]  = { OP_sw, 0, CR_X0, CR_SP, CR_LO, 0, { MV(9, 4, 2), MV(7, 2, 6) } },
    [F_SDSP]  = { OP_sd, 0, CR_X0, CR_SP, CR_LO, 0, { OFF_SDSP } },
};
#undef CALU
#undef REGS

/*
 * The form of halfword c (c & 3 != 3): its quadrant and funct3 pick a
 * row, and three rows go on by other bits (SUB_*: the index added is
 * worked out for every c and used by those).
 */
enum { SUB_NONE, SUB_LUI, SUB_ALU, SUB_CR, SUB_KINDS };
static const struct { uint8_t form, sub; } cgroup[24] = {
    { F_ADDI4SPN, 0 }, { F_FLD, 0 }, { F_LW, 0 }, { F_LD, 0 }, { F_Q0_RES, 0 }, { F_FSD, 0 },
    { F_SW, 0 }, { F_SD, 0 },
    { F_ADDI, 0 }, { F_ADDIW, 0 }, { F_LI, 0 }, { F_LUI, SUB_LUI }, { F_SRLI, SUB_ALU },
    { F_J, 0 }, { F_BEQZ, 0 }, { F_BNEZ, 0 },
    { F_SLLI, 0 }, { F_FLDSP, 0 }, { F_LWSP, 0 }, { F_LDSP, 0 }, { F_CR_RES, SUB_CR },
    { F_FSDSP, 0 }, { F_SWSP, 0 }, { F_SDSP, 0 },
};

static const CForm *cform_of(uint16_t c)
{
    unsigned rd = bits(c, 11, 7), alu = bits(c, 11, 10);
    const uint8_t sub[SUB_KINDS] = {
        [SUB_NONE] = 0,
        [SUB_LUI] = rd == 2,                                    /* c.addi16sp */
        /* srli srai andi, then (c[12], c[6:5]) sub xor or and subw addw - - */
        [SUB_ALU] = (uint8_t)(alu + (alu == 3) * (bits(c, 12, 12) << 2 | bits(c, 6, 5))),
        [SUB_CR] = (uint8_t)(bits(c, 12, 12) << 2 | (bits(c, 6, 2) != 0) << 1 | (rd != 0)),
    };
    unsigned g = (c & 3) << 3 | c >> 13;
    return &cforms[cgroup[g].form + sub[cgroup[g].sub]];
}

static unsigned creg(uint16_t c, unsigned kind)
{
    return ((c >> creg_src[kind].shift) & creg_src[kind].mask) + creg_src[kind].add;
}

/* Decode halfword c (c & 3 != 3) into out (len, craw set): false if reserved. */
static bool decode_compressed(uint16_t c, Insn *out)
{
    const CForm *f = cform_of(c);
    if (f->op == OP_illegal || (f->nz && !(c & f->nz)))
        return false;
    uint64_t imm = f->sign & (0 - (uint64_t)bits(c, 12, 12));
#pragma GCC unroll 8
    for (int i = 0; i < CMOVES; i++)
        imm |= ((uint64_t)(c & f->imm[i].mask) << 32) >> f->imm[i].shr;
    if (f == &cforms[F_J])                  /* rare enough to predict */
        imm |= (uint64_t)(bits(c, 6, 6) << 7 | bits(c, 5, 3) << 1 | bits(c, 2, 2) << 5);
    out->op = f->op;
    out->rd = (uint8_t)creg(c, f->rd);
    out->rs1 = (uint8_t)creg(c, f->rs1);
    out->rs2 = (uint8_t)creg(c, f->rs2);
    out->imm = (int64_t)imm;
    return true;
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
        if (decode_compressed((uint16_t)w, out) && (isa_mask & ISA_BIT(insn_table[out->op].ext)))
            return true;
        *out = (Insn){ .op = OP_illegal, .len = 2, .craw = (uint16_t)w };
        return false;                      /* reserved, or c.fld & co. without D */
    }
    out->raw = w;
    unsigned op = lookup(w);
    const InsnDesc *d = &insn_table[op];
    const FmtInfo *f = &fmt_info[d->fmt];
    if (op == OP_illegal || !(isa_mask & ISA_BIT(d->ext)))
        return false;                      /* unknown, or disabled by -cpu */
    /* Static rounding modes 101 and 110 are reserved: illegal instruction. */
    if (f->static_rm && (bits(w, 14, 12) == 5 || bits(w, 14, 12) == 6))
        return false;
    out->op = (uint16_t)op;
    extract_fields(out, d, f);
    return true;
}

/* The 32-bit word of in (a valid instruction): its row's match with the
 * operand fields put back where extract_fields takes them from. */
static uint32_t insn_encode(const Insn *in)
{
    const InsnDesc *d = &insn_table[in->op];
    const FmtInfo *f = &fmt_info[d->fmt];
    uint32_t imm = (uint32_t)in->imm, w = d->match;
    w |= (uint32_t)(in->rd & f->rd) << 7 | (uint32_t)(in->rs1 & f->rs1) << 15 |
         (uint32_t)(in->rs2 & f->rs2) << 20 | (uint32_t)(in->rs3 & f->rs3) << 27;
    switch (f->imm) {
    case IMM_I:
    case IMM_HI12: w |= imm << 20; break;
    case IMM_SH:   w |= (imm & 0x3f) << 20; break;
    case IMM_S:    w |= (imm & 0x1f) << 7 | (imm >> 5 & 0x7f) << 25; break;
    case IMM_B:    w |= (imm >> 11 & 1) << 7 | (imm >> 1 & 0xf) << 8 |
                        (imm >> 5 & 0x3f) << 25 | (imm >> 12 & 1) << 31; break;
    case IMM_U:    w |= imm & 0xfffff000u; break;
    case IMM_J:    w |= (imm >> 12 & 0xff) << 12 | (imm >> 11 & 1) << 20 |
                        (imm >> 1 & 0x3ff) << 21 | (imm >> 20 & 1) << 31; break;
    default:       break;
    }
    if (f->rm == RMF_FUNCT3)
        w |= (uint32_t)in->rm << 12;
    else if (f->rm == RMF_AQRL)
        w |= (uint32_t)in->rm << 25;
    return w;
}

uint32_t insn_raw(const Insn *in)
{
    return in->len == 4 || in->op == OP_illegal ? in->raw : insn_encode(in);
}

uint32_t insn_expand_compressed(uint16_t c)
{
    Insn in = { .op = OP_illegal, .len = 2, .craw = c };
    if ((c & 3) == 3 || !decode_compressed(c, &in))
        return 0;
    return insn_encode(&in);
}
