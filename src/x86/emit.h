/*
 * x86-64 machine code encoder.
 *
 * The backend never writes raw bytes: it names an opcode (OPC_*, with the
 * 0x0f escape, operand-size prefix, REX.W and mandatory SIMD prefixes folded
 * into the constant as P_* flag bits, as QEMU's tcg/i386 does) and calls an
 * encoding primitive: emit_opc (prefixes + opcode), emit_modrm (register
 * operand), emit_modrm_mem (base + index*scale + disp operand). Everything
 * else here is a short, named instruction built from those.
 *
 * Code is emitted forwards into an Emit buffer. The buffer never checks its
 * end per byte: callers check emit_room() before each unit of work (one
 * guest instruction) with a generous margin.
 */
#ifndef XLAT_X86_EMIT_H
#define XLAT_X86_EMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef enum HostReg {
    RAX, RCX, RDX, RBX, RSP, RBP, RSI, RDI,
    R8, R9, R10, R11, R12, R13, R14, R15,
    NO_REG = -1,
} HostReg;

typedef struct Emit {
    uint8_t *start;     /* where writing started (RW view) */
    uint8_t *p;         /* next byte */
    uint8_t *end;       /* hard end of the buffer */
} Emit;

static inline bool emit_room(const Emit *e, unsigned n) { return e->p + n <= e->end; }

/* -- Opcode flags and names ----------------------------------------------- */

#define P_EXT     0x100     /* 0x0f escape */
#define P_EXT38   0x200     /* 0x0f 0x38 escape */
#define P_DATA16  0x400     /* 0x66 operand-size prefix */
#define P_REXW    0x1000    /* REX.W: 64-bit operand */
#define P_REXB_R  0x2000    /* reg field names a byte register (needs REX for sil..) */
#define P_REXB_RM 0x4000    /* r/m field names a byte register */
#define P_SIMDF3  0x10000   /* 0xf3 mandatory prefix */
#define P_SIMDF2  0x20000   /* 0xf2 mandatory prefix */
#define P_LOCK    0x40000   /* lock prefix */

#define OPC_ARITH_EvIz  0x81
#define OPC_ARITH_EvIb  0x83
#define OPC_ARITH_GvEv  0x03    /* | ARITH_x << 3 */
#define OPC_ARITH_EvGv  0x01    /* | ARITH_x << 3 */
#define OPC_BSWAP       (0xc8 | P_EXT)
#define OPC_BT_EvIb     (0xba | P_EXT)  /* /4 bt, /5 bts, /6 btr, /7 btc */
#define OPC_BTS_EvGv    (0xab | P_EXT)
#define OPC_BTR_EvGv    (0xb3 | P_EXT)
#define OPC_BTC_EvGv    (0xbb | P_EXT)
#define OPC_CALL_Jz     0xe8
#define OPC_CMOVCC      (0x40 | P_EXT)
#define OPC_GRP3_Ev     0xf7
#define OPC_GRP5        0xff
#define OPC_IMUL_GvEv   (0xaf | P_EXT)
#define OPC_JCC_long    (0x80 | P_EXT)
#define OPC_JCC_short   0x70
#define OPC_JMP_long    0xe9
#define OPC_JMP_short   0xeb
#define OPC_LEA         0x8d
#define OPC_LZCNT       (0xbd | P_EXT | P_SIMDF3)
#define OPC_MOVB_EvGv   (0x88 | P_REXB_R)
#define OPC_MOVB_EvIb   0xc6            /* /0 ib */
#define OPC_MOVL_EvGv   0x89
#define OPC_MOVL_GvEv   0x8b
#define OPC_MOVL_EvIz   0xc7
#define OPC_MOVL_Iv     0xb8
#define OPC_MOVSBL      (0xbe | P_EXT)
#define OPC_MOVSWL      (0xbf | P_EXT)
#define OPC_MOVSLQ      (0x63 | P_REXW)
#define OPC_MOVZBL      (0xb6 | P_EXT)
#define OPC_MOVZWL      (0xb7 | P_EXT)
#define OPC_NOP         0x90
#define OPC_POPCNT      (0xb8 | P_EXT | P_SIMDF3)
#define OPC_POP_r32     0x58
#define OPC_PUSH_r32    0x50
#define OPC_RET         0xc3
#define OPC_SETCC       (0x90 | P_EXT | P_REXB_RM)
#define OPC_SHIFT_Ib    0xc1
#define OPC_SHIFT_cl    0xd3
#define OPC_TESTL       0x85
#define OPC_TESTB_EbIb  0xf6            /* /0 ib */
#define OPC_TZCNT       (0xbc | P_EXT | P_SIMDF3)
#define OPC_XCHG_EvGv   0x87
#define OPC_CQO         0x99            /* cdq; with P_REXW cqo */
#define OPC_XADD_EvGv   (0xc1 | P_EXT)
#define OPC_CMPXCHG_EvGv (0xb1 | P_EXT)

/* SSE scalar: OPC_SSE_x | P_SIMDF2 for double (sd), | P_SIMDF3 for single (ss). */
#define OPC_SSE_SQRT    (0x51 | P_EXT)
#define OPC_SSE_ADD     (0x58 | P_EXT)
#define OPC_SSE_MUL     (0x59 | P_EXT)
#define OPC_SSE_CVTS2S  (0x5a | P_EXT)  /* cvtsd2ss (F2) / cvtss2sd (F3) */
#define OPC_SSE_SUB     (0x5c | P_EXT)
#define OPC_SSE_DIV     (0x5e | P_EXT)
#define OPC_SSE_CVTSI2S (0x2a | P_EXT)  /* integer (REX.W: 64-bit) -> fp */
#define OPC_SSE_CVTS2SI (0x2d | P_EXT)  /* fp -> integer, rounding per MXCSR */
#define OPC_UCOMISS     (0x2e | P_EXT)  /* | P_DATA16: ucomisd */
#define OPC_COMISS      (0x2f | P_EXT)  /* | P_DATA16: comisd */
#define OPC_MOVQ_VqWq   (0x7e | P_EXT | P_SIMDF3)   /* xmm <- m64 */
#define OPC_MOVQ_WqVq   (0xd6 | P_EXT | P_DATA16)   /* m64 <- xmm */
#define OPC_MOVD_VdEd   (0x6e | P_EXT | P_DATA16)   /* xmm <- r/m32 */
#define OPC_MOVD_EdVd   (0x7e | P_EXT | P_DATA16)   /* r/m32 <- xmm */
#define OPC_GRP15       (0xae | P_EXT)  /* /2 ldmxcsr, /3 stmxcsr */
enum { EXT15_LDMXCSR = 2, EXT15_STMXCSR = 3 };
/* FMA3 213 forms (VEX 66 0F38, W1 double): r = r * v +- m */
#define OPC_VFMADD213S  (0xa9 | P_EXT38)
#define OPC_VFMSUB213S  (0xab | P_EXT38)
#define OPC_VFNMADD213S (0xad | P_EXT38)    /* -(r * v) + m */
#define OPC_VFNMSUB213S (0xaf | P_EXT38)    /* -(r * v) - m */

/* Group 1 arithmetic (the /r of 0x81/0x83, bits 5:3 of 0x01-0x3b). */
enum { ARITH_ADD = 0, ARITH_OR = 1, ARITH_ADC = 2, ARITH_SBB = 3,
       ARITH_AND = 4, ARITH_SUB = 5, ARITH_XOR = 6, ARITH_CMP = 7 };
/* Group 2 shifts (the /r of 0xc1/0xd3). */
enum { SHIFT_ROL = 0, SHIFT_ROR = 1, SHIFT_SHL = 4, SHIFT_SHR = 5, SHIFT_SAR = 7 };
/* Group 3 (0xf7) and group 5 (0xff) extensions. */
enum { EXT3_NOT = 2, EXT3_NEG = 3, EXT3_MUL = 4, EXT3_IMUL = 5, EXT3_DIV = 6, EXT3_IDIV = 7 };
enum { EXT5_CALLN_Ev = 2, EXT5_JMPN_Ev = 4 };
/* Group 8 bit tests (0x0f 0xba). */
enum { BT_BT = 4, BT_BTS = 5, BT_BTR = 6, BT_BTC = 7 };

/* Condition codes (low nibble of jcc/setcc/cmovcc). */
enum {
    CC_O = 0x0, CC_NO = 0x1, CC_B = 0x2, CC_AE = 0x3, CC_E = 0x4, CC_NE = 0x5,
    CC_BE = 0x6, CC_A = 0x7, CC_S = 0x8, CC_NS = 0x9, CC_P = 0xa, CC_NP = 0xb, CC_L = 0xc, CC_GE = 0xd,
    CC_LE = 0xe, CC_G = 0xf,
};

/* -- Encoding primitives ---------------------------------------------------- */

/* Little-endian immediates as one store each (x86 hosts only). */
static inline void emit_u8(Emit *e, uint8_t v)  { *e->p++ = v; }
static inline void emit_imm32(Emit *e, uint32_t v)
{
    memcpy(e->p, &v, 4);
    e->p += 4;
}
static inline void emit_imm64(Emit *e, uint64_t v)
{
    memcpy(e->p, &v, 8);
    e->p += 8;
}

/* Prefixes, REX (from r, rm, index) and the opcode bytes of opc. */
void emit_opc(Emit *e, int opc, int r, int rm, int index);
/* opc with a register-direct operand: modrm mod=3. */
void emit_modrm(Emit *e, int opc, int r, int rm);
/* opc with memory operand [base + index << shift + disp] (index NO_REG: none;
 * base NO_REG: none, disp32 always). */
void emit_modrm_mem(Emit *e, int opc, int r, int base, int index, int shift, int32_t disp);
/*
 * VEX-encoded 0x66 0x0f 0x38 opc (FMA3 scalar): r = r op v op [base + disp],
 * W selects double. LIG: scalar, L = 0.
 */
void emit_vex_mem(Emit *e, int opc, bool w, int r, int v, int base, int32_t disp);

/* -- Instructions ----------------------------------------------------------- */

/* rd = rs (64-bit); nothing if they are the same register. */
void emit_mov_rr(Emit *e, int rd, int rs);
/* rd = imm, in the shortest form (xor, mov r32, mov r64 sign-extended, movabs). */
void emit_mov_ri(Emit *e, int rd, uint64_t imm);
/* 64-bit load/store at [base + disp] (and the same with an index register). */
void emit_ld64(Emit *e, int rd, int base, int32_t disp);
void emit_st64(Emit *e, int rs, int base, int32_t disp);
/* Store sign-extended imm32 to the qword at [base + disp]. */
void emit_st64_imm(Emit *e, int base, int32_t disp, int32_t imm);
/* Sized guest loads: size 1/2/4/8 bytes, sign- or zero-extended to 64 bits. */
void emit_load_sized(Emit *e, int rd, int base, int index, int32_t disp, int size, bool sign);
void emit_store_sized(Emit *e, int rs, int base, int index, int32_t disp, int size);
/* Group 1 arithmetic, 64-bit (w32 false) or 32-bit. */
void emit_arith_rr(Emit *e, int op, int rd, int rs, bool w32);
void emit_arith_ri(Emit *e, int op, int rd, int32_t imm, bool w32);
void emit_arith_rm(Emit *e, int op, int rd, int base, int32_t disp, bool w32);
/* Shifts by an immediate or by cl. */
void emit_shift_ri(Emit *e, int op, int rd, unsigned n, bool w32);
void emit_shift_cl(Emit *e, int op, int rd, bool w32);
/* rd = sign-extend the low 32 bits of rs. */
void emit_movslq(Emit *e, int rd, int rs);
/* rd = zero-extend the low 32 bits of rs (mov r32, r32). */
void emit_movzlq(Emit *e, int rd, int rs);
void emit_lea(Emit *e, int rd, int base, int index, int shift, int32_t disp, bool w32);
void emit_setcc(Emit *e, int cc, int rd);       /* rd = cc ? 1 : 0 (all 64 bits) */
void emit_cmov(Emit *e, int cc, int rd, int rs);
void emit_imul_rr(Emit *e, int rd, int rs, bool w32);
void emit_test_rr(Emit *e, int a, int b);
/* Unary ops: NOT/NEG (group 3), BSWAP, LZCNT/TZCNT/POPCNT. */
void emit_grp3(Emit *e, int ext, int rd, bool w32);
void emit_bswap(Emit *e, int rd);
void emit_bitop_rr(Emit *e, int opc, int rd, int rs, bool w32);
void emit_bt_ri(Emit *e, int ext, int rd, unsigned bit);
void emit_push(Emit *e, int r);
void emit_pop(Emit *e, int r);
void emit_ret(Emit *e);
/* call/jmp through a register. */
void emit_call_r(Emit *e, int r);
void emit_jmp_r(Emit *e, int r);
void emit_jmp_mem(Emit *e, int base, int32_t disp);

/*
 * Relative branches to labels that may not exist yet: each returns the
 * address of its rel32 field; emit_patch_rel32 points it at target.
 * emit_jmp_patchable keeps the rel32 field inside one cache line (nop
 * padding before the opcode) so it can later be repatched with one atomic
 * store (emit_store_rel32).
 */
uint8_t *emit_jcc(Emit *e, int cc);
/* A short jcc (rel8) over at most 127 bytes; emit_patch_rel8 points it. */
uint8_t *emit_jcc8(Emit *e, int cc);
void emit_patch_rel8(uint8_t *field, const uint8_t *target);
uint8_t *emit_jmp(Emit *e);
uint8_t *emit_call(Emit *e);
uint8_t *emit_jmp_patchable(Emit *e);
uint8_t *emit_jcc_patchable(Emit *e, int cc);
uint8_t *emit_call_patchable(Emit *e);
/* Point a patchable branch's rel32 field at target while other threads may
 * be running it: one 4-byte store, which need not be aligned (hence asm). */
static inline void emit_store_rel32(uint8_t *field, const uint8_t *target)
{
    int32_t rel = (int32_t)(target - (field + 4));
    __asm__ volatile("movl %1, (%0)" : : "r"(field), "r"(rel) : "memory");
}

/* -- Relocations ---------------------------------------------------------------------
 *
 * What emitted code embeds about where things are, recorded while the
 * persistent translation cache (exec/pcache.c) keeps a copy of the code
 * being translated, so that another process can move it: each rel32 field
 * and its target (emit_patch_rel32, always), and each immediate the
 * backend marks: a guest address (moved with the code's guest address),
 * a TB pointer, a host function. emit_relocs is NULL otherwise (and
 * whenever code is patched at run time: chaining).
 */
enum emit_reloc_kind {
    ER_REL32,           /* rel32 field at `at`: target */
    ER_GUEST_S32,       /* 4 bytes: a guest address, sign-extended (a disp32, a simm32) */
    ER_GUEST_U32,       /* 4 bytes: a guest address, zero-extended (mov r32, imm32) */
    ER_GUEST64,         /* 8 bytes: a guest address */
    ER_TB,              /* 8 bytes: the TB being translated + aux (a slot, a field) */
    ER_HOSTFN,          /* 8 bytes: the address of a C function of xlat's */
};
typedef struct EmitReloc {
    uint8_t *at;        /* the field (RW view) */
    const uint8_t *target; /* ER_REL32: where it points */
    uint64_t aux;       /* ER_GUEST_*: bytes accessed there (0: a pc); ER_TB: the offset */
    uint8_t kind;
} EmitReloc;
typedef struct EmitRelocs {
    EmitReloc *r;
    unsigned n, cap;
    /* The code depends on its guest address beyond what the marks say
     * (a constant computed from the pc by a non-linear operation, an
     * absolute address compared with the pc): keep it only where it was. */
    bool pinned;
    bool lost;          /* out of memory: the record is incomplete, keep nothing */
} EmitRelocs;
extern EmitRelocs *emit_relocs;
void emit_reloc_add(uint8_t *at, unsigned kind, const uint8_t *target, uint64_t aux);
/* The code depends on its address beyond its marks (see pinned). */
static inline void emit_reloc_pin(void)
{
    if (emit_relocs)
        emit_relocs->pinned = true;
}
/* Mark the n-byte field that ends at e->p. */
static inline void emit_reloc_mark(Emit *e, unsigned kind, unsigned n, uint64_t aux)
{
    if (emit_relocs)
        emit_reloc_add(e->p - n, kind, NULL, aux);
}

static inline void emit_patch_rel32(uint8_t *field, const uint8_t *target)
{
    int32_t rel = (int32_t)(target - (field + 4));
    for (int i = 0; i < 4; i++)
        field[i] = (uint8_t)((uint32_t)rel >> (8 * i));
    if (emit_relocs)
        emit_reloc_add(field, ER_REL32, target, 0);
}
/* mov rd, addr for a guest address (marked; never the xor form). */
void emit_mov_guest(Emit *e, int rd, uint64_t addr);
/* mov rd, imm64 in the 10-byte form whatever the value (marked by the caller). */
void emit_mov_ri64(Emit *e, int rd, uint64_t imm);
/* mfence: orders every earlier store before every later load. */
void emit_mfence(Emit *e);

/* n bytes of padding (multi-byte nops). */
void emit_nops(Emit *e, unsigned n);

#endif
