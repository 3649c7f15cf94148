/*
 * Decoded RISC-V instructions.
 *
 * insn.def is the single instruction table; this header turns it into the
 * opcode enum and declares the decoder and disassembler that read it.
 * A decoded Insn carries every operand field already extracted and
 * sign-extended, so consumers never look at instruction bits again.
 */
#ifndef XLAT_RISCV_INSN_H
#define XLAT_RISCV_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Operand formats. Register letters: x = integer register, f = FP register. */
enum insn_format {
    FMT_NONE,   /* no operands: ecall, ebreak, fence.i */
    FMT_R,      /* x rd, x rs1, x rs2 */
    FMT_R1,     /* x rd, x rs1 (unary: clz, sext.b, rev8, ...) */
    FMT_I,      /* x rd, x rs1, imm (sign-extended 12 bits) */
    FMT_SH,     /* x rd, x rs1, shamt (imm = 5 or 6 bit shift amount) */
    FMT_L,      /* x rd, imm(x rs1): integer loads and jalr */
    FMT_S,      /* x rs2, imm(x rs1): integer stores */
    FMT_B,      /* x rs1, x rs2, pc + imm */
    FMT_U,      /* x rd, imm (already shifted: imm = sext(bits[31:12] << 12)) */
    FMT_J,      /* x rd, pc + imm */
    FMT_FENCE,  /* pred, succ (imm = fm:pred:succ, bits 31:20) */
    FMT_CSR,    /* x rd, csr, x rs1 (imm = csr number) */
    FMT_CSRI,   /* x rd, csr, uimm (imm = csr number, rs1 = uimm 0..31) */
    FMT_LR,     /* x rd, (x rs1), aq/rl */
    FMT_AMO,    /* x rd, x rs2, (x rs1), aq/rl */
    FMT_FL,     /* f rd, imm(x rs1) */
    FMT_FS,     /* f rs2, imm(x rs1) */
    FMT_FR,     /* f rd, f rs1, f rs2 (no rounding mode) */
    FMT_FR_RM,  /* f rd, f rs1, f rs2, rm */
    FMT_FR4,    /* f rd, f rs1, f rs2, f rs3, rm */
    FMT_F1_RM,  /* f rd, f rs1, rm (fsqrt, fcvt.s.d, fcvt.d.s) */
    FMT_FCMP,   /* x rd, f rs1, f rs2 */
    FMT_XF_RM,  /* x rd, f rs1, rm (fcvt.w.s ...) */
    FMT_XF,     /* x rd, f rs1 (fmv.x.w, fclass) */
    FMT_FX_RM,  /* f rd, x rs1, rm (fcvt.s.w ...) */
    FMT_FX,     /* f rd, x rs1 (fmv.w.x) */
    FMT_SFENCE, /* x rs1, x rs2 (sfence.vma: vaddr, asid) */
    FMT_COUNT
};

enum insn_ext {
    EXT_I, EXT_M, EXT_A, EXT_F, EXT_D, EXT_ZICSR, EXT_ZIFENCEI,
    EXT_ZBA, EXT_ZBB, EXT_ZBS, EXT_COUNT
};

enum insn_op {
    OP_illegal = 0,
#define INSN(id, name, mask, match, fmt, ext) OP_##id,
#include "riscv/insn.def"
#undef INSN
    OP_COUNT
};

/* One row of the instruction table. */
typedef struct InsnDesc {
    char name[12];          /* mnemonic as objdump prints it (in place: no
                             * pointer for the static-pie start to relocate) */
    uint32_t mask, match;   /* w is this instruction iff (w & mask) == match */
    enum insn_format fmt;
    enum insn_ext ext;
} InsnDesc;

/* insn_table[OP_x] describes OP_x; insn_table[OP_illegal] has name "illegal". */
extern const InsnDesc insn_table[OP_COUNT];

/* Rounding-mode field values (instruction rm and the frm CSR). */
enum { RM_RNE = 0, RM_RTZ = 1, RM_RDN = 2, RM_RUP = 3, RM_RMM = 4, RM_DYN = 7 };

/* A decoded instruction. */
typedef struct Insn {
    uint16_t op;        /* enum insn_op; OP_illegal if undecodable */
    uint8_t  len;       /* 2 (compressed) or 4 */
    uint8_t  rd, rs1, rs2, rs3;
    uint8_t  rm;        /* funct3 for FP ops (rounding mode); aq<<1|rl for LR/SC/AMO */
    int64_t  imm;       /* immediate, sign-extended as the format says */
    uint32_t raw;       /* the 32-bit instruction; 0 if compressed (insn_raw) */
    uint16_t craw;      /* the original 16 bits when len == 2 */
} Insn;

/*
 * Decode the instruction whose first bytes are `bits` (the low 16 bits are
 * enough for a compressed instruction: bits & 3 != 3). A compressed one
 * decodes as the 32-bit instruction it stands for. Returns false, with
 * out->op = OP_illegal and out->len set, for reserved or unknown encodings.
 */
bool insn_decode(uint32_t bits, Insn *out);

/* The 32-bit instruction of a decoded one: Insn.raw, or the expansion of a
 * compressed one (Insn.raw, 0, if it is illegal). */
uint32_t insn_raw(const Insn *in);

/*
 * Expand a 16-bit compressed instruction to the 32-bit instruction it stands
 * for (RV64C, including the F/D load/store forms). Returns 0 for a reserved
 * or illegal encoding (including the all-zero halfword).
 */
uint32_t insn_expand_compressed(uint16_t c);

/* Length in bytes of the instruction starting with halfword `lo16`: 2 or 4. */
static inline unsigned insn_length(uint16_t lo16) { return (lo16 & 3) == 3 ? 4 : 2; }

/*
 * The instruction bits at a 4-byte aligned pc from the 32-bit word there,
 * read in one load (the four bytes never cross a page, and a concurrent
 * rewrite is then never seen half old, half new): a compressed instruction
 * keeps only its halfword.
 */
static inline uint32_t insn_bits_of_word(uint32_t w) { return insn_length((uint16_t)w) == 4 ? w : w & 0xffff; }

/*
 * Disassemble `in` located at guest address `pc` into buf, as GNU objdump
 * prints it (mnemonic, a tab, operands with ABI register names, aliases such
 * as li/mv/ret/j/nop/beqz, branch targets as absolute hex addresses).
 * Compressed instructions print as their 32-bit expansion, as objdump does
 * by default (it shows c.addi as "addi").
 * Returns the length written (not counting the NUL).
 */
int insn_disasm(const Insn *in, uint64_t pc, char *buf, size_t size);

/* Print the guest instruction at pc in objdump's layout to f (for -d in_asm
 * and exec), read through guest_mem.ops->read; nothing if unreadable. */
void insn_print_at(FILE *f, uint64_t pc);

/*
 * Does a fence (its imm: fm, pred, succ) order an earlier store before a
 * later load? The one ordering RVWMO's fences ask for that x86-TSO does
 * not give: a store may still sit in the host's store buffer when a later
 * load reads memory. Device input and output (I, O) count as loads and
 * stores. fence.tso (fm 1000) leaves exactly that pair unordered.
 */
static inline bool fence_orders_store_load(int64_t imm)
{
    unsigned fm = (unsigned)(imm >> 8) & 0xf, pred = (unsigned)(imm >> 4) & 0xf;
    unsigned succ = (unsigned)imm & 0xf;
    return fm != 8 && (pred & 0x5) && (succ & 0xa);    /* pred O|W, succ I|R */
}

/* csrrw, csrrs, csrrc and their immediate forms (Zicsr). */
static inline bool insn_is_csr(unsigned op)
{
    return op == OP_csrrw || op == OP_csrrs || op == OP_csrrc ||
           op == OP_csrrwi || op == OP_csrrsi || op == OP_csrrci;
}

/* Zihintpause's pause: fence with pred = W, succ = 0, fm = 0 (and rd =
 * rs1 = x0), which Linux's cpu_relax() runs in every spin-wait loop. */
static inline bool fence_is_pause(int64_t imm, unsigned rd, unsigned rs1)
{
    return (imm & 0xfff) == 0x010 && rd == 0 && rs1 == 0;
}

/* ABI register names: "zero", "ra", ... and "ft0", "fa0", ... */
extern const char *const riscv_xreg_name[32];
extern const char *const riscv_freg_name[32];

#endif
