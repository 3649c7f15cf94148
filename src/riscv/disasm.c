/*
 * RISC-V disassembler: prints a decoded Insn the way GNU objdump -d
 * (binutils 2.40, the one on the build machine) prints its instruction
 * column, so our traces can be compared with objdump output line by line.
 *
 * The rules were taken from that objdump, quirks included (it prints addi
 * as "add", slli as "sll", csrrwi as "csrrw"; compressed HINTs keep a "c."
 * name), and tests/decode_vs_objdump.sh checks them against it. Branch and
 * jump targets print as bare hex addresses (objdump adds " <symbol>").
 * Where objdump refuses an encoding the ISA defines and we execute
 * (fcvt.d.w with a rounding mode other than rne, fence with non-zero
 * reserved fields), we print the natural form rather than ".4byte".
 * Undecodable words print as objdump prints them: ".4byte 0x..." or
 * ".2byte 0x...".
 */
#include "riscv/insn.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

/* -- Output buffer -------------------------------------------------------- */

typedef struct Out {
    char *buf;
    size_t size;
    size_t len;     /* characters that would have been written */
} Out;

static void put(Out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(Out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->size ? o->size - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

/* -- Operand names -------------------------------------------------------- */

#define X(r) riscv_xreg_name[(r) & 31]
#define F(r) riscv_freg_name[(r) & 31]

/* Names in place: no pointers for the static-pie start to relocate (two
 * pages copied into every process for a table only -d in_asm reads). */
static const struct { uint16_t num; char name[15]; } csr_names[] = {
#define CSR(num, name) { num, name },
#include "riscv/disasm_csr.inc"
#undef CSR
};

/* Print a CSR operand: its name if objdump knows one, else hex. */
static void put_csr(Out *o, unsigned csr)
{
    size_t lo = 0, hi = sizeof csr_names / sizeof csr_names[0];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (csr_names[mid].num == csr) {
            put(o, "%s", csr_names[mid].name);
            return;
        }
        if (csr_names[mid].num < csr)
            lo = mid + 1;
        else
            hi = mid;
    }
    put(o, "0x%x", csr);
}

static const char *const rm_names[8] = {
    "rne", "rtz", "rdn", "rup", "rmm", "unknown", "unknown", "dyn"
};

/* ",rm" unless the rounding mode is dynamic (objdump omits it then). */
static void put_rm(Out *o, unsigned rm)
{
    if (rm != RM_DYN)
        put(o, ",%s", rm_names[rm & 7]);
}

/* Fence predecessor/successor set: letters of "iorw", "unknown" if empty. */
static void put_fence_set(Out *o, unsigned set)
{
    if (!set) {
        put(o, "unknown");
        return;
    }
    static const char letters[] = "iorw";
    for (int i = 0; i < 4; i++)
        if (set & (8u >> i))
            put(o, "%c", letters[i]);
}

static void put_target(Out *o, uint64_t pc, int64_t imm)
{
    put(o, "%" PRIx64, pc + (uint64_t)imm);
}

/* -- Aliases -------------------------------------------------------------- */

enum { ZERO = 0, RA = 1 };
enum { CSR_FFLAGS = 1, CSR_FRM = 2, CSR_FCSR = 3,
       CSR_CYCLE = 0xc00, CSR_TIME = 0xc01, CSR_INSTRET = 0xc02 };

/* Float-CSR-specific names for csrrs/csrrw/csrrwi on fflags, frm, fcsr. */
static const char *fcsr_alias(unsigned csr, const char *const names[3])
{
    return csr >= CSR_FFLAGS && csr <= CSR_FCSR ? names[csr - 1] : NULL;
}

static bool alias_csr(Out *o, const Insn *in)
{
    unsigned csr = (unsigned)in->imm;
    const char *a;
    switch (in->op) {
    case OP_csrrs:
        if (in->rs1 != ZERO)
            break;
        if (csr >= CSR_CYCLE && csr <= CSR_INSTRET) {
            static const char *const rd[] = { "rdcycle", "rdtime", "rdinstret" };
            put(o, "%s\t%s", rd[csr - CSR_CYCLE], X(in->rd));
            return true;
        }
        if ((a = fcsr_alias(csr, (const char *const[]){ "frflags", "frrm", "frcsr" }))) {
            put(o, "%s\t%s", a, X(in->rd));
            return true;
        }
        put(o, "csrr\t%s,", X(in->rd));
        put_csr(o, csr);
        return true;
    case OP_csrrw:
        if (in->raw == 0xc0001073) {    /* csrrw zero,cycle,zero */
            put(o, "unimp");
            return true;
        }
        if ((a = fcsr_alias(csr, (const char *const[]){ "fsflags", "fsrm", "fscsr" }))) {
            if (in->rd == ZERO)
                put(o, "%s\t%s", a, X(in->rs1));
            else
                put(o, "%s\t%s,%s", a, X(in->rd), X(in->rs1));
            return true;
        }
        break;
    case OP_csrrwi:
        if ((a = fcsr_alias(csr, (const char *const[]){ "fsflagsi", "fsrmi", NULL }))) {
            put(o, "%s\t%s,%u", a, X(in->rd), in->rs1);
            return true;
        }
        break;
    default:
        break;
    }
    if (in->rd != ZERO)
        return false;
    /* rd = zero: csrw/csrs/csrc, also for the immediate forms. */
    static const char *const short_names[] = { "csrw", "csrs", "csrc" };
    bool imm = insn_table[in->op].fmt == FMT_CSRI;
    unsigned which = (in->raw >> 12) & 3;
    put(o, "%s\t", short_names[which - 1]);
    put_csr(o, csr);
    if (imm)
        put(o, ",%u", in->rs1);
    else
        put(o, ",%s", X(in->rs1));
    return true;
}

static bool alias_jump(Out *o, const Insn *in, uint64_t pc)
{
    if (in->op == OP_jal) {
        if (in->rd == ZERO || in->rd == RA) {
            put(o, "%s\t", in->rd == ZERO ? "j" : "jal");
            put_target(o, pc, in->imm);
            return true;
        }
        return false;
    }
    /* jalr */
    if (in->rd == ZERO && in->rs1 == RA && in->imm == 0) {
        put(o, "ret");
        return true;
    }
    if (in->rd == ZERO || in->rd == RA) {
        const char *mn = in->rd == ZERO ? "jr" : "jalr";
        if (in->imm == 0)
            put(o, "%s\t%s", mn, X(in->rs1));
        else
            put(o, "%s\t%" PRId64 "(%s)", mn, in->imm, X(in->rs1));
        return true;
    }
    if (in->imm == 0) {
        put(o, "jalr\t%s,%s", X(in->rd), X(in->rs1));
        return true;
    }
    return false;
}

static bool alias_branch(Out *o, const Insn *in, uint64_t pc)
{
    const char *mn = NULL;
    unsigned reg = 0;
    switch (in->op) {
    case OP_beq: if (in->rs2 == ZERO) { mn = "beqz"; reg = in->rs1; } break;
    case OP_bne: if (in->rs2 == ZERO) { mn = "bnez"; reg = in->rs1; } break;
    case OP_bge:
        if (in->rs1 == ZERO) { mn = "blez"; reg = in->rs2; }
        else if (in->rs2 == ZERO) { mn = "bgez"; reg = in->rs1; }
        break;
    case OP_blt:
        if (in->rs2 == ZERO) { mn = "bltz"; reg = in->rs1; }
        else if (in->rs1 == ZERO) { mn = "bgtz"; reg = in->rs2; }
        break;
    default: break;
    }
    if (!mn)
        return false;
    put(o, "%s\t%s,", mn, X(reg));
    put_target(o, pc, in->imm);
    return true;
}

/* Integer ALU aliases: nop, li, mv, not, neg, seqz, sext.w, zext.b ... */
static bool alias_alu(Out *o, const Insn *in)
{
    unsigned rd = in->rd, rs1 = in->rs1, rs2 = in->rs2;
    int64_t imm = in->imm;
    switch (in->op) {
    case OP_addi:
        if (rd == ZERO && rs1 == ZERO && imm == 0) { put(o, "nop"); return true; }
        if (rs1 == ZERO) { put(o, "li\t%s,%" PRId64, X(rd), imm); return true; }
        if (imm == 0) { put(o, "mv\t%s,%s", X(rd), X(rs1)); return true; }
        return false;
    case OP_andi:
        if (imm == 255) { put(o, "zext.b\t%s,%s", X(rd), X(rs1)); return true; }
        return false;
    case OP_xori:
        if (imm == -1) { put(o, "not\t%s,%s", X(rd), X(rs1)); return true; }
        return false;
    case OP_sltiu:
        if (imm == 1) { put(o, "seqz\t%s,%s", X(rd), X(rs1)); return true; }
        return false;
    case OP_addiw:
        if (imm == 0) { put(o, "sext.w\t%s,%s", X(rd), X(rs1)); return true; }
        return false;
    case OP_sub:
        if (rs1 == ZERO) { put(o, "neg\t%s,%s", X(rd), X(rs2)); return true; }
        return false;
    case OP_subw:
        if (rs1 == ZERO) { put(o, "negw\t%s,%s", X(rd), X(rs2)); return true; }
        return false;
    case OP_sltu:
        if (rs1 == ZERO) { put(o, "snez\t%s,%s", X(rd), X(rs2)); return true; }
        return false;
    case OP_slt:
        if (rs2 == ZERO) { put(o, "sltz\t%s,%s", X(rd), X(rs1)); return true; }
        if (rs1 == ZERO) { put(o, "sgtz\t%s,%s", X(rd), X(rs2)); return true; }
        return false;
    case OP_add_uw:
        if (rs2 == ZERO) { put(o, "zext.w\t%s,%s", X(rd), X(rs1)); return true; }
        return false;
    default:
        return false;
    }
}

/* fmv/fneg/fabs: sign injection with rs1 == rs2. */
static bool alias_fp(Out *o, const Insn *in)
{
    static const char *const names[] = { "fmv", "fneg", "fabs" };
    unsigned k;
    char sz;
    switch (in->op) {
    case OP_fsgnj_s:  k = 0; sz = 's'; break;
    case OP_fsgnjn_s: k = 1; sz = 's'; break;
    case OP_fsgnjx_s: k = 2; sz = 's'; break;
    case OP_fsgnj_d:  k = 0; sz = 'd'; break;
    case OP_fsgnjn_d: k = 1; sz = 'd'; break;
    case OP_fsgnjx_d: k = 2; sz = 'd'; break;
    default: return false;
    }
    if (in->rs1 != in->rs2)
        return false;
    put(o, "%s.%c\t%s,%s", names[k], sz, F(in->rd), F(in->rs1));
    return true;
}

static bool alias_fence(Out *o, const Insn *in)
{
    unsigned fm = (unsigned)in->imm >> 8, pred = (in->imm >> 4) & 15, succ = in->imm & 15;
    if (fm == 8 && pred == 3 && succ == 3) {
        put(o, "fence.tso");
        return true;
    }
    if (pred == 15 && succ == 15) {
        put(o, "fence");
        return true;
    }
    put(o, "fence\t");
    put_fence_set(o, pred);
    put(o, ",");
    put_fence_set(o, succ);
    return true;
}

static bool print_alias(Out *o, const Insn *in, uint64_t pc)
{
    switch (insn_table[in->op].fmt) {
    case FMT_CSR:
    case FMT_CSRI:  return alias_csr(o, in);
    case FMT_J:     return alias_jump(o, in, pc);
    case FMT_B:     return alias_branch(o, in, pc);
    case FMT_FENCE: return alias_fence(o, in);
    case FMT_FR:    return alias_fp(o, in);
    default:
        if (in->op == OP_jalr)
            return alias_jump(o, in, pc);
        return alias_alu(o, in);
    }
}

/* -- Generic formats ------------------------------------------------------ */

/*
 * Conversions that are exact whatever the rounding mode: objdump prints them
 * without a rounding mode when rm is rne (and refuses any other rm; we print
 * that one, dyn included).
 */
static bool is_exact_conversion(unsigned op)
{
    return op == OP_fcvt_d_s || op == OP_fcvt_d_w || op == OP_fcvt_d_wu;
}

static void put_rm_of(Out *o, const Insn *in)
{
    if (!is_exact_conversion(in->op))
        put_rm(o, in->rm);
    else if (in->rm != RM_RNE)
        put(o, ",%s", rm_names[in->rm & 7]);
}

/*
 * binutils 2.40 prints most register-immediate ALU instructions and the
 * immediate CSR instructions under the register-register mnemonic
 * ("add a0,a0,4" for addi, "sll" for slli, "csrrw" for csrrwi).
 * slti, sltiu and slli.uw keep their names.
 */
static const char *objdump_name(unsigned op)
{
    switch (op) {
    case OP_addi:   return "add";
    case OP_addiw:  return "addw";
    case OP_andi:   return "and";
    case OP_ori:    return "or";
    case OP_xori:   return "xor";
    case OP_slli:   return "sll";
    case OP_srli:   return "srl";
    case OP_srai:   return "sra";
    case OP_slliw:  return "sllw";
    case OP_srliw:  return "srlw";
    case OP_sraiw:  return "sraw";
    case OP_rori:   return "ror";
    case OP_roriw:  return "rorw";
    case OP_bclri:  return "bclr";
    case OP_bexti:  return "bext";
    case OP_binvi:  return "binv";
    case OP_bseti:  return "bset";
    case OP_csrrwi: return "csrrw";
    case OP_csrrsi: return "csrrs";
    case OP_csrrci: return "csrrc";
    default:        return insn_table[op].name;
    }
}

static void print_generic(Out *o, const Insn *in, uint64_t pc)
{
    const InsnDesc *d = &insn_table[in->op];
    static const char *const aqrl[4] = { "", ".rl", ".aq", ".aqrl" };

    put(o, "%s", objdump_name(in->op));
    switch (d->fmt) {
    case FMT_NONE:  return;
    case FMT_COUNT: return;
    case FMT_SFENCE:
        if (in->rs1 == 0 && in->rs2 == 0)
            return;
        put(o, "\t");
        break;
    case FMT_LR:
    case FMT_AMO:   put(o, "%s\t", aqrl[in->rm & 3]); break;
    default:        put(o, "\t"); break;
    }

    switch (d->fmt) {
    case FMT_R:     put(o, "%s,%s,%s", X(in->rd), X(in->rs1), X(in->rs2)); break;
    case FMT_R1:    put(o, "%s,%s", X(in->rd), X(in->rs1)); break;
    case FMT_I:     put(o, "%s,%s,%" PRId64, X(in->rd), X(in->rs1), in->imm); break;
    case FMT_SH:    put(o, "%s,%s,0x%" PRIx64, X(in->rd), X(in->rs1), in->imm); break;
    case FMT_L:     put(o, "%s,%" PRId64 "(%s)", X(in->rd), in->imm, X(in->rs1)); break;
    case FMT_S:     put(o, "%s,%" PRId64 "(%s)", X(in->rs2), in->imm, X(in->rs1)); break;
    case FMT_B:
        put(o, "%s,%s,", X(in->rs1), X(in->rs2));
        put_target(o, pc, in->imm);
        break;
    case FMT_U:
        put(o, "%s,0x%" PRIx64, X(in->rd), ((uint64_t)in->imm >> 12) & 0xfffff);
        break;
    case FMT_J:
        put(o, "%s,", X(in->rd));
        put_target(o, pc, in->imm);
        break;
    case FMT_CSR:
        put(o, "%s,", X(in->rd));
        put_csr(o, (unsigned)in->imm);
        put(o, ",%s", X(in->rs1));
        break;
    case FMT_CSRI:
        put(o, "%s,", X(in->rd));
        put_csr(o, (unsigned)in->imm);
        put(o, ",%u", in->rs1);
        break;
    case FMT_LR:    put(o, "%s,(%s)", X(in->rd), X(in->rs1)); break;
    case FMT_AMO:   put(o, "%s,%s,(%s)", X(in->rd), X(in->rs2), X(in->rs1)); break;
    case FMT_FL:    put(o, "%s,%" PRId64 "(%s)", F(in->rd), in->imm, X(in->rs1)); break;
    case FMT_FS:    put(o, "%s,%" PRId64 "(%s)", F(in->rs2), in->imm, X(in->rs1)); break;
    case FMT_FR:    put(o, "%s,%s,%s", F(in->rd), F(in->rs1), F(in->rs2)); break;
    case FMT_FR_RM:
        put(o, "%s,%s,%s", F(in->rd), F(in->rs1), F(in->rs2));
        put_rm_of(o, in);
        break;
    case FMT_FR4:
        put(o, "%s,%s,%s,%s", F(in->rd), F(in->rs1), F(in->rs2), F(in->rs3));
        put_rm_of(o, in);
        break;
    case FMT_F1_RM: put(o, "%s,%s", F(in->rd), F(in->rs1)); put_rm_of(o, in); break;
    case FMT_FCMP:  put(o, "%s,%s,%s", X(in->rd), F(in->rs1), F(in->rs2)); break;
    case FMT_XF_RM: put(o, "%s,%s", X(in->rd), F(in->rs1)); put_rm_of(o, in); break;
    case FMT_XF:    put(o, "%s,%s", X(in->rd), F(in->rs1)); break;
    case FMT_FX_RM: put(o, "%s,%s", F(in->rd), X(in->rs1)); put_rm_of(o, in); break;
    case FMT_FX:    put(o, "%s,%s", F(in->rd), X(in->rs1)); break;
    case FMT_SFENCE:    /* objdump leaves out trailing zero operands */
        if (in->rs2)
            put(o, "%s,%s", X(in->rs1), X(in->rs2));
        else
            put(o, "%s", X(in->rs1));
        break;
    case FMT_NONE:
    case FMT_FENCE:
    case FMT_COUNT: break;
    }
}

/* -- Compressed forms ----------------------------------------------------- */

/*
 * objdump prints most compressed instructions like their expansion. These
 * are the ones it prints differently: c.mv, c.addi with a zero immediate,
 * and the HINT encodings, which keep a "c." name.
 */
static bool print_compressed(Out *o, const Insn *in)
{
    uint16_t c = in->craw;
    unsigned quadrant_f3 = ((c >> 13) << 2) | (c & 3);
    unsigned rd = in->rd;
    switch (quadrant_f3) {
    case (0 << 2) | 1:                                  /* c.addi / c.nop */
        if (rd == ZERO && in->imm == 0)
            put(o, "nop");
        else if (rd == ZERO)
            put(o, "c.nop\t%" PRId64, in->imm);
        else
            put(o, "add\t%s,%s,%" PRId64, X(rd), X(rd), in->imm);
        return true;
    case (2 << 2) | 1:                                  /* c.li */
        if (rd != ZERO)
            return false;
        put(o, "c.li\tzero,%" PRId64, in->imm);
        return true;
    case (3 << 2) | 1:                                  /* c.lui */
        if (rd != ZERO)
            return false;
        put(o, "c.lui\tzero,0x%" PRIx64, ((uint64_t)in->imm >> 12) & 0xfffff);
        return true;
    case (4 << 2) | 1:                                  /* c.srli / c.srai */
        if (in->imm != 0 || (in->op != OP_srli && in->op != OP_srai))
            return false;
        put(o, "%s\t%s", in->op == OP_srli ? "c.srli64" : "c.srai64", X(rd));
        return true;
    case (0 << 2) | 2:                                  /* c.slli */
        if (in->imm == 0)
            put(o, "c.slli64\t%s", X(rd));
        else if (rd == ZERO)
            put(o, "c.slli\tzero,0x%" PRIx64, in->imm);
        else
            return false;
        return true;
    case (4 << 2) | 2:                                  /* c.mv / c.add */
        if (in->op != OP_add)
            return false;
        if (rd == ZERO)
            put(o, "%s\tzero,%s", (c & 0x1000) ? "c.add" : "c.mv", X(in->rs2));
        else if (!(c & 0x1000))
            put(o, "mv\t%s,%s", X(rd), X(in->rs2));
        else
            return false;
        return true;
    default:
        return false;
    }
}

/* -- Entry point ---------------------------------------------------------- */

int insn_disasm(const Insn *in, uint64_t pc, char *buf, size_t size)
{
    Out o = { buf, size, 0 };
    if (size)
        buf[0] = '\0';
    if (in->op == OP_illegal || in->op >= OP_COUNT) {
        if (in->len == 2 && in->craw == 0)
            put(&o, "unimp");
        else if (in->len == 2)
            put(&o, ".2byte\t0x%x", in->craw);
        else
            put(&o, ".4byte\t0x%x", in->raw);
    } else if (!(in->len == 2 && print_compressed(&o, in)) && !print_alias(&o, in, pc)) {
        print_generic(&o, in, pc);
    }
    if (size == 0)
        return 0;
    return (int)(o.len < size ? o.len : size - 1);
}
