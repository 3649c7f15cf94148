/*
 * The translator: one block of guest RV64GC instructions -> x86-64, through
 * the backend (src/x86/backend.c) and the encoder (src/x86/emit.c).
 *
 * Each instruction is translated on its own (no IR yet) against the fixed
 * register mapping: guest registers in host registers are used in place,
 * the others are read from / written to CPUState directly (as memory
 * operands where x86 allows), x0 and immediates are folded. Every result
 * goes straight to its home, so the guest state is exact at every
 * instruction boundary (see exec_fault_restore).
 *
 * Natively translated: RV64I (ALU, loads/stores through be_guest_load/
 * be_guest_store, branches as cmp + jcc, jal/jalr, lui/auipc, ecall,
 * fence, fence.i), mul/mulw, and the Zba/Zbb/Zbs operations (clz, ctz
 * and cpop where the host has them). M, A, F, D and the FP CSRs are in
 * trans_ext.c; other CSR accesses call the interpreter's CSR code with the
 * decoded instruction (be_call_csr). Everything else (ebreak, illegal
 * encodings, privileged instructions without a translation, and the rare
 * cases trans_ext.c leaves out) calls the interpreter for that one
 * instruction (be_call_interp):
 * slower, but exactly the golden model. cpu->instret (rdcycle/rdinstret)
 * is exact in system mode once software has looked at it (be_count, under
 * TB_FLAGS_COUNT: see priv.h); user mode counts only instructions
 * run by the interpreter (no add per block), so there it undercounts: it
 * is monotonic but not a retired-instruction count.
 */
#include "riscv/translate.h"

#include <stddef.h>
#ifdef __GLIBC__
#include <sys/platform/x86.h>
#else
#include <cpuid.h>
#endif

#include "riscv/insn.h"
#include "riscv/isa.h"
#include "riscv/priv.h"
#include "exec/settings.h"
#include "x86/backend.h"
#include "riscv/translate_priv.h"

static bool have_lzcnt, have_tzcnt, have_popcnt;
bool host_has_fma;

/*
 * Host features. A cpuid instruction traps to the hypervisor in a VM
 * (about 9 microseconds each here: three leaves were 3 % of a warm
 * /usr/bin/true), so with glibc they come from the table its loader
 * filled at startup (ACTIVE also checks that the OS enabled the state
 * FMA's registers need). Another libc does not probe the CPU: one leaf is
 * asked here (popcnt and FMA can only be asked), and lzcnt and tzcnt are
 * tried.
 */
#ifdef __GLIBC__
void translate_init(void)
{
    have_popcnt = CPU_FEATURE_ACTIVE(POPCNT);
    have_lzcnt = CPU_FEATURE_ACTIVE(LZCNT);
    have_tzcnt = CPU_FEATURE_ACTIVE(BMI1);
    host_has_fma = CPU_FEATURE_ACTIVE(FMA);
}
#else
/* Has the OS enabled the SSE and AVX register state (XCR0 bits 1, 2)? */
static bool os_saves_avx(unsigned ecx1)
{
    if (!(ecx1 & bit_OSXSAVE))
        return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 6) == 6;
}

/* lzcnt and tzcnt are encoded as rep bsr and rep bsf, which a CPU without
 * them runs as bsr and bsf, without a fault: each is tried on an input for
 * which the two answer differently. bsr of 1 is 0; bsf of 0 leaves its
 * destination as it was (AMD documents it, Intel CPUs do it), never 64. */
static bool runs_lzcnt(void)
{
    uint64_t r, one = 1;
    __asm__ volatile("lzcnt %1, %0" : "=r"(r) : "r"(one) : "cc");
    return r == 63;
}

static bool runs_tzcnt(void)
{
    uint64_t r = 0, zero = 0;
    __asm__ volatile("tzcnt %1, %0" : "+r"(r) : "r"(zero) : "cc");
    return r == 64;
}

void translate_init(void)
{
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    have_popcnt = c & bit_POPCNT;
    host_has_fma = (c & bit_FMA) && (c & bit_AVX) && os_saves_avx(c);
    have_lzcnt = runs_lzcnt();
    have_tzcnt = runs_tzcnt();
}
#endif

uint64_t translate_config_word(void)
{
    return (uint64_t)have_popcnt | (uint64_t)have_lzcnt << 1 | (uint64_t)have_tzcnt << 2 |
           (uint64_t)host_has_fma << 3 | (uint64_t)isa_mask << 32;
}

/* -- ALU ---------------------------------------------------------------------------- */

static void alu_rr(T *t, int op, bool commutative, bool w32)
{
    const Insn *in = t->in;
    int d = dst(in->rd), a = in->rs1, b = in->rs2;
    if (in->rd == 0)
        return;
    if (a == 0 && commutative) {            /* c.mv is add rd, x0, rs2 */
        a = b;
        b = 0;
    }
    if (b == 0 && op != ARITH_AND) {        /* add, sub, or, xor with x0: a move */
        load_into(t->e, d, a);
        goto done;
    }
    if (d == hr(b) && b != a) {
        if (commutative) {
            arith_src(t->e, op, d, a, w32);
            goto done;
        }
        d = RAX;
    }
    load_into(t->e, d, a);
    arith_src(t->e, op, d, b, w32);
done:
    if (w32 && t->sext)
        emit_movslq(t->e, d, d);
    writeback(t->e, in->rd, d);
}

static void alu_ri(T *t, int op, bool w32)
{
    const Insn *in = t->in;
    int d = dst(in->rd);
    if (in->rd == 0)
        return;
    load_into(t->e, d, in->rs1);
    emit_arith_ri(t->e, op, d, (int32_t)in->imm, w32);
    if (w32 && t->sext)
        emit_movslq(t->e, d, d);
    writeback(t->e, in->rd, d);
}

static void tr_addi(T *t, bool w32)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    uint64_t v;
    if (addi_constant(t, &v)) {
        if (known_pcrel(t, in->rs1) && !w32) {
            set_guest_imm(t->e, in->rd, v, RAX);
            return;
        }
        set_imm(t->e, in->rd, v, RAX);
        if (known_pcrel(t, in->rs1))
            emit_reloc_pin();           /* addiw of an address: not linear in the pc */
        return;
    }
    int d = dst(in->rd);
    int s = src(t->e, in->rs1, RAX);
    if (in->imm == 0 && !w32)                               /* mv */
        emit_mov_rr(t->e, d, s);
    else
        emit_lea(t->e, d, s, NO_REG, 0, (int32_t)in->imm, w32);
    if (w32 && t->sext)
        emit_movslq(t->e, d, d);
    writeback(t->e, in->rd, d);
}

static void tr_setcc_rr(T *t, int cc)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int a = src(t->e, in->rs1, RAX);
    arith_src(t->e, ARITH_CMP, a, in->rs2, false);
    emit_setcc(t->e, cc, dst(in->rd));
    writeback(t->e, in->rd, dst(in->rd));
}

static void tr_setcc_ri(T *t, int cc)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int a = src(t->e, in->rs1, RAX);
    emit_arith_ri(t->e, ARITH_CMP, a, (int32_t)in->imm, false);
    emit_setcc(t->e, cc, dst(in->rd));
    writeback(t->e, in->rd, dst(in->rd));
}

static void shift_imm(T *t, int op, bool w32)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int d = dst(in->rd);
    load_into(t->e, d, in->rs1);
    emit_shift_ri(t->e, op, d, (unsigned)in->imm & (w32 ? 31 : 63), w32);
    if (w32 && t->sext)
        emit_movslq(t->e, d, d);
    writeback(t->e, in->rd, d);
}

static void shift_reg(T *t, int op, bool w32)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int d = dst(in->rd);
    load_into(t->e, RCX, in->rs2);          /* before d: rd may be rs2 */
    load_into(t->e, d, in->rs1);
    emit_shift_cl(t->e, op, d, w32);
    if (w32 && t->sext)
        emit_movslq(t->e, d, d);
    writeback(t->e, in->rd, d);
}

static void tr_mul(T *t, bool w32)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int d = dst(in->rd), a = in->rs1, b = in->rs2;
    if (d == hr(b) && a != b) {             /* commutative: d already holds rs2 */
        b = a;
    } else {
        load_into(t->e, d, a);
    }
    int s = src(t->e, b, RCX);
    emit_imul_rr(t->e, d, s, w32);
    if (w32 && t->sext)
        emit_movslq(t->e, d, d);
    writeback(t->e, in->rd, d);
}

/* rd = (zext32?(rs1) << n) + rs2 */
static void tr_shadd(T *t, int n, bool uw)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int a = src(t->e, in->rs1, RAX);
    if (uw) {
        emit_movzlq(t->e, RAX, a);
        a = RAX;
    }
    int b = src(t->e, in->rs2, RCX);
    emit_lea(t->e, dst(in->rd), b, a, n, 0, false);
    writeback(t->e, in->rd, dst(in->rd));
}

/* rd = rs1 op ~rs2 (andn, orn), or ~(rs1 ^ rs2) (xnor) */
static void tr_logic_not(T *t, int op)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    if (op == ARITH_XOR) {
        load_into(t->e, RAX, in->rs1);
        arith_src(t->e, ARITH_XOR, RAX, in->rs2, false);
        emit_grp3(t->e, EXT3_NOT, RAX, false);
    } else {
        load_into(t->e, RAX, in->rs2);
        emit_grp3(t->e, EXT3_NOT, RAX, false);
        arith_src(t->e, op, RAX, in->rs1, false);
    }
    writeback(t->e, in->rd, RAX);
}

static void tr_minmax(T *t, int cc)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    load_into(t->e, RAX, in->rs1);
    load_into(t->e, RCX, in->rs2);
    emit_arith_rr(t->e, ARITH_CMP, RAX, RCX, false);
    emit_cmov(t->e, cc, RAX, RCX);
    writeback(t->e, in->rd, RAX);
}

/* Unary: rd = f(rs1) with a host instruction reading rs1 and writing d. */
static void tr_unary(T *t, int opc, bool w32)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int s = src(t->e, in->rs1, RAX);
    emit_bitop_rr(t->e, opc, dst(in->rd), s, w32);
    writeback(t->e, in->rd, dst(in->rd));
}

static void tr_rev8(T *t)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int d = dst(in->rd);
    load_into(t->e, d, in->rs1);
    emit_bswap(t->e, d);
    writeback(t->e, in->rd, d);
}

/* bset/bclr/binv by register (bit index mod 64 in rcx) */
static void tr_bitreg(T *t, int opc)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int d = dst(in->rd);
    load_into(t->e, RCX, in->rs2);
    load_into(t->e, d, in->rs1);
    emit_modrm(t->e, opc | P_REXW, RCX, d);
    writeback(t->e, in->rd, d);
}

static void tr_bitimm(T *t, int ext)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int d = dst(in->rd);
    load_into(t->e, d, in->rs1);
    emit_bt_ri(t->e, ext, d, (unsigned)in->imm & 63);
    writeback(t->e, in->rd, d);
}

static void tr_bext(T *t, bool imm)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int d = dst(in->rd);
    if (imm) {
        load_into(t->e, d, in->rs1);
        emit_shift_ri(t->e, SHIFT_SHR, d, (unsigned)in->imm & 63, false);
    } else {
        load_into(t->e, RCX, in->rs2);
        load_into(t->e, d, in->rs1);
        emit_shift_cl(t->e, SHIFT_SHR, d, false);
    }
    emit_arith_ri(t->e, ARITH_AND, d, 1, false);
    writeback(t->e, in->rd, d);
}

/*
 * orc.b: each byte 0xff if it is nonzero, else 0 (the kernel's Zbb string
 * functions). (x & 0x7f..) + 0x7f.. | x sets a byte's high bit iff the
 * byte is nonzero; with only those bits kept (z), z | (z - (z >> 7)) fills
 * each such byte without borrowing from the next.
 */
static void tr_orc_b(T *t)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    if (in->rd == 0)
        return;
    emit_mov_ri(e, RCX, 0x7f7f7f7f7f7f7f7fULL);
    load_into(e, RAX, in->rs1);
    emit_arith_rr(e, ARITH_AND, RAX, RCX, false);
    emit_arith_rr(e, ARITH_ADD, RAX, RCX, false);
    if (hr(in->rs1) < 0)
        emit_arith_rm(e, ARITH_OR, RAX, REG_CPU, CPU_X_OFF(in->rs1), false);   /* x0's home: 0 */
    else
        emit_arith_rr(e, ARITH_OR, RAX, hr(in->rs1), false);
    emit_grp3(e, EXT3_NOT, RCX, false);
    emit_arith_rr(e, ARITH_AND, RAX, RCX, false);
    emit_mov_rr(e, RCX, RAX);
    emit_shift_ri(e, SHIFT_SHR, RCX, 7, false);
    emit_grp3(e, EXT3_NEG, RCX, false);
    emit_arith_rr(e, ARITH_ADD, RCX, RAX, false);
    emit_arith_rr(e, ARITH_OR, RAX, RCX, false);
    writeback(e, in->rd, RAX);
}

static void tr_ext(T *t, int opc)
{
    const Insn *in = t->in;
    if (in->rd == 0)
        return;
    int s = src(t->e, in->rs1, RAX);
    emit_modrm(t->e, opc | P_REXB_RM, dst(in->rd), s);
    writeback(t->e, in->rd, dst(in->rd));
}

/* -- Memory ------------------------------------------------------------------------- */

/* The address of a load or store, if known at translation time and inside
 * the window (a global reached through auipc). */
static bool const_address(const T *t, int size, uint64_t *addr)
{
    uint64_t base;
    if (!known_value(t, t->in->rs1, &base))
        return false;
    *addr = base + (uint64_t)t->in->imm;
    if (!guest_mem_in_window(*addr, (uint64_t)size))
        return false;
    note_address_use(t, t->in->rs1);
    return true;
}

static bool tr_load(T *t, int size, bool sign)
{
    const Insn *in = t->in;
    uint64_t addr;
    if (const_address(t, size, &addr)) {
        int d = in->rd ? dst(in->rd) : RAX;
        be_guest_load_abs(t->c, d, addr, size, sign);
        writeback(t->e, in->rd, d);
        return true;
    }
    if (in->rs1 == 0)
        return false;                       /* absolute address: rare, use the helper */
    int a = src(t->e, in->rs1, RCX);
    int d = in->rd ? dst(in->rd) : RAX;
    tr_plan_group(t, size, false);
    be_guest_load(t->c, d, a, in->rs1, (int32_t)in->imm, size, sign, t->pc);
    writeback(t->e, in->rd, d);
    return true;
}

static bool tr_store(T *t, int size)
{
    const Insn *in = t->in;
    uint64_t addr;
    if (const_address(t, size, &addr)) {
        be_guest_store_abs(t->c, src(t->e, in->rs2, RAX), addr, size);
        return true;
    }
    if (in->rs1 == 0)
        return false;
    int v = src(t->e, in->rs2, be_store_scratch());
    int a = src(t->e, in->rs1, RCX);
    tr_plan_group(t, size, true);
    be_guest_store(t->c, v, a, in->rs1, (int32_t)in->imm, size, t->pc);
    return true;
}

/* -- Control transfers -------------------------------------------------------------- */

static int swap_cc(int cc)
{
    switch (cc) {
    case CC_L:  return CC_G;
    case CC_GE: return CC_LE;
    case CC_B:  return CC_A;
    case CC_AE: return CC_BE;
    default:    return cc;      /* E, NE */
    }
}

/*
 * Does the block go on past a conditional branch (the taken side leaving
 * through a side exit)? While a side exit and a two-way end still fit in
 * the slots; not with -d stats, whose block profile counts basic blocks.
 */
static bool continue_past_branch(const T *t)
{
    return tune.superblock && be_free_slots(t->c) >= 3 && !(log_mask & LOG_STATS);
}

/* A conditional branch; returns true if it ends the block. */
static bool tr_branch(T *t, int cc)
{
    const Insn *in = t->in;
    uint64_t taken = t->pc + (uint64_t)in->imm, next = t->pc + in->len;
    if (in->rs1 == 0 && in->rs2 == 0) {
        bool always = cc == CC_E || cc == CC_GE || cc == CC_AE;
        be_goto_tb(t->c, always ? taken : next);
        return true;
    }
    bool go_on = continue_past_branch(t);
    be_branch_begin(t->c, t->pc, taken, go_on ? 0 : next);
    if (in->rs2 == 0 || in->rs1 == 0) {      /* test r, r: the flags of cmp r, 0 */
        int a = src(t->e, in->rs1 | in->rs2, RAX);
        emit_test_rr(t->e, a, a);
        if (in->rs1 == 0)
            cc = swap_cc(cc);
    } else {
        int a = src(t->e, in->rs1, RAX);
        arith_src(t->e, ARITH_CMP, a, in->rs2, false);
    }
    if (go_on) {
        be_side_exit(t->c, cc, taken);
        return false;
    }
    be_branch_end(t->c, cc, taken, next);
    return true;
}

/* The RISC-V calling convention's link registers: ra and t0. */
static bool is_link(int r) { return r == 1 || r == 5; }

/* jal, or jalr to a known target: a call (link register) or a jump. */
static void tr_jump_static(T *t, uint64_t target)
{
    const Insn *in = t->in;
    uint64_t ret_pc = t->pc + in->len;
    set_guest_imm(t->e, in->rd, ret_pc, RAX);
    if (tune.ras && is_link(in->rd))
        be_call_direct(t->c, target, ret_pc);
    else
        be_goto_tb(t->c, target);
}

static void tr_jalr(T *t)
{
    const Insn *in = t->in;
    uint64_t ret_pc = t->pc + in->len, base;
    if (known_value(t, in->rs1, &base)) {                   /* auipc+jalr: a static target */
        note_address_use(t, in->rs1);
        tr_jump_static(t, (base + (uint64_t)in->imm) & ~1ULL);
        return;
    }
    t->indirect_exit = true;
    int a = src(t->e, in->rs1, RAX);
    emit_lea(t->e, RAX, a, NO_REG, 0, (int32_t)in->imm, false);
    emit_arith_ri(t->e, ARITH_AND, RAX, -2, false);
    set_guest_imm(t->e, in->rd, ret_pc, RCX);
    if (tune.ras && is_link(in->rd))
        be_call_ptr(t->c, ret_pc);
    else if (tune.ras && in->rd == 0 && is_link(in->rs1))
        be_return(t->c);
    else
        be_goto_ptr(t->c);
}

/* -- One instruction ------------------------------------------------------------------ */

/* The entry translated code calls for an ecall (seed 004: the one for the
 * block's privilege; one generic entry with --tune no-entry-specialize). */
static uint64_t (*ecall_entry(const T *t))(CPUState *)
{
    if (!tune.entry_specialize)
        return priv_entry_ecall;
    int p = block_priv(t);
    return p == PRV_U ? priv_entry_ecall_u : p == PRV_S ? priv_entry_ecall_s : priv_entry_ecall_m;
}

/* The entry for sret or mret, or NULL where the interpreter runs it: user
 * mode, or too low a privilege (illegal). An sret may run in M-mode too,
 * where mstatus.TSR does not apply: it has an entry of its own. */
static uint64_t (*xret_entry(const T *t))(CPUState *)
{
    bool mret = t->in->op == OP_mret;
    int p = block_priv(t);
    if (!guest_mem.softmmu || p < (mret ? PRV_M : PRV_S))
        return NULL;
    if (!tune.entry_specialize)
        return mret ? priv_entry_mret : priv_entry_sret;
    if (mret)
        return priv_entry_mret_m;
    return p == PRV_M ? priv_entry_sret_m : priv_entry_sret_s;
}

/*
 * Translate one instruction; returns true if it ends the block. Anything
 * not handled natively goes to the interpreter helper.
 */
static bool translate_insn(T *t)
{
    const Insn *in = t->in;
    Emit *e = t->e;
    switch ((enum insn_op)in->op) {
    case OP_lui:
        if (!completed_by_next(t))
            set_imm(e, in->rd, (uint64_t)in->imm, RAX);
        return false;
    case OP_auipc:
        if (!completed_by_next(t))
            set_guest_imm(e, in->rd, t->pc + (uint64_t)in->imm, RAX);
        return false;
    case OP_jal:  tr_jump_static(t, t->pc + (uint64_t)in->imm); return true;
    case OP_jalr: tr_jalr(t); return true;
    case OP_beq:  return tr_branch(t, CC_E);
    case OP_bne:  return tr_branch(t, CC_NE);
    case OP_blt:  return tr_branch(t, CC_L);
    case OP_bge:  return tr_branch(t, CC_GE);
    case OP_bltu: return tr_branch(t, CC_B);
    case OP_bgeu: return tr_branch(t, CC_AE);

    case OP_lb:  if (tr_load(t, 1, true)) return false; break;
    case OP_lh:  if (tr_load(t, 2, true)) return false; break;
    case OP_lw:  if (tr_load(t, 4, true)) return false; break;
    case OP_ld:  if (tr_load(t, 8, false)) return false; break;
    case OP_lbu: if (tr_load(t, 1, false)) return false; break;
    case OP_lhu: if (tr_load(t, 2, false)) return false; break;
    case OP_lwu: if (tr_load(t, 4, false)) return false; break;
    case OP_sb:  if (tr_store(t, 1)) return false; break;
    case OP_sh:  if (tr_store(t, 2)) return false; break;
    case OP_sw:  if (tr_store(t, 4)) return false; break;
    case OP_sd:  if (tr_store(t, 8)) return false; break;

    case OP_addi:  tr_addi(t, false); return false;
    case OP_addiw: tr_addi(t, true); return false;
    case OP_slti:  tr_setcc_ri(t, CC_L); return false;
    case OP_sltiu: tr_setcc_ri(t, CC_B); return false;
    case OP_xori:  alu_ri(t, ARITH_XOR, false); return false;
    case OP_ori:   alu_ri(t, ARITH_OR, false); return false;
    case OP_andi:  alu_ri(t, ARITH_AND, false); return false;
    case OP_slli:  shift_imm(t, SHIFT_SHL, false); return false;
    case OP_srli:  shift_imm(t, SHIFT_SHR, false); return false;
    case OP_srai:  shift_imm(t, SHIFT_SAR, false); return false;
    case OP_slliw: shift_imm(t, SHIFT_SHL, true); return false;
    case OP_srliw: shift_imm(t, SHIFT_SHR, true); return false;
    case OP_sraiw: shift_imm(t, SHIFT_SAR, true); return false;
    case OP_add:   alu_rr(t, ARITH_ADD, true, false); return false;
    case OP_sub:   alu_rr(t, ARITH_SUB, false, false); return false;
    case OP_xor:   alu_rr(t, ARITH_XOR, true, false); return false;
    case OP_or:    alu_rr(t, ARITH_OR, true, false); return false;
    case OP_and:   alu_rr(t, ARITH_AND, true, false); return false;
    case OP_addw:  alu_rr(t, ARITH_ADD, true, true); return false;
    case OP_subw:  alu_rr(t, ARITH_SUB, false, true); return false;
    case OP_slt:   tr_setcc_rr(t, CC_L); return false;
    case OP_sltu:  tr_setcc_rr(t, CC_B); return false;
    case OP_sll:   shift_reg(t, SHIFT_SHL, false); return false;
    case OP_srl:   shift_reg(t, SHIFT_SHR, false); return false;
    case OP_sra:   shift_reg(t, SHIFT_SAR, false); return false;
    case OP_sllw:  shift_reg(t, SHIFT_SHL, true); return false;
    case OP_srlw:  shift_reg(t, SHIFT_SHR, true); return false;
    case OP_sraw:  shift_reg(t, SHIFT_SAR, true); return false;

    case OP_fence:                          /* TSO orders all but a store before a load */
        if (fence_is_pause(in->imm, in->rd, in->rs1) && priv_hooks.pause && tune.pause_exit) {
            be_set_pc(t->c, t->pc + in->len);   /* a spin loop's hint: maybe yield */
            be_call_helper(t->c, priv_hooks.pause);
            be_goto_tb(t->c, t->pc + in->len);
            return true;
        }
        if (fence_orders_store_load(in->imm))
            be_fence_store_load(t->c);
        return false;
    case OP_fence_i:
        be_set_pc(t->c, t->pc + in->len);
        be_exit(t->c, EXIT_FENCEI);
        return true;
    case OP_ecall:
        be_set_pc(t->c, t->pc);
        if (guest_mem.softmmu) {            /* straight to the entry of the block's privilege */
            be_call_helper(t->c, ecall_entry(t));
            if (block_priv(t) == PRV_S && priv_hooks.sbi_call && tune.entry_specialize)
                be_goto_tb(t->c, t->pc + in->len);  /* an SBI call served: on after it */
            else
                be_goto_cpu_pc(t->c);       /* the trap vector */
            return true;
        }
        be_exit(t->c, EXIT_ECALL);
        return true;
    case OP_sret:
    case OP_mret:
        if (!xret_entry(t))
            break;                          /* illegal at this privilege: the interpreter */
        be_set_pc(t->c, t->pc);
        be_call_helper(t->c, xret_entry(t));
        be_goto_cpu_pc(t->c);               /* sepc or mepc, at the new privilege */
        return true;

    case OP_mul:  tr_mul(t, false); return false;
    case OP_mulw: tr_mul(t, true); return false;

    case OP_sh1add:    tr_shadd(t, 1, false); return false;
    case OP_sh2add:    tr_shadd(t, 2, false); return false;
    case OP_sh3add:    tr_shadd(t, 3, false); return false;
    case OP_add_uw:    tr_shadd(t, 0, true); return false;
    case OP_sh1add_uw: tr_shadd(t, 1, true); return false;
    case OP_sh2add_uw: tr_shadd(t, 2, true); return false;
    case OP_sh3add_uw: tr_shadd(t, 3, true); return false;
    case OP_slli_uw:
        if (in->rd) {
            int s = src(e, in->rs1, RAX);
            emit_movzlq(e, RAX, s);
            emit_shift_ri(e, SHIFT_SHL, RAX, (unsigned)in->imm & 63, false);
            writeback(e, in->rd, RAX);
        }
        return false;

    case OP_andn: tr_logic_not(t, ARITH_AND); return false;
    case OP_orn:  tr_logic_not(t, ARITH_OR); return false;
    case OP_xnor: tr_logic_not(t, ARITH_XOR); return false;
    case OP_clz:   if (have_lzcnt) { tr_unary(t, OPC_LZCNT, false); return false; } break;
    case OP_clzw:  if (have_lzcnt) { tr_unary(t, OPC_LZCNT, true); return false; } break;
    case OP_ctz:   if (have_tzcnt) { tr_unary(t, OPC_TZCNT, false); return false; } break;
    case OP_ctzw:  if (have_tzcnt) { tr_unary(t, OPC_TZCNT, true); return false; } break;
    case OP_cpop:  if (have_popcnt) { tr_unary(t, OPC_POPCNT, false); return false; } break;
    case OP_cpopw: if (have_popcnt) { tr_unary(t, OPC_POPCNT, true); return false; } break;
    case OP_sext_b: tr_ext(t, OPC_MOVSBL | P_REXW); return false;
    case OP_sext_h: tr_ext(t, OPC_MOVSWL | P_REXW); return false;
    case OP_zext_h: tr_ext(t, OPC_MOVZWL); return false;
    case OP_max:  tr_minmax(t, CC_L); return false;
    case OP_min:  tr_minmax(t, CC_G); return false;
    case OP_maxu: tr_minmax(t, CC_B); return false;
    case OP_minu: tr_minmax(t, CC_A); return false;
    case OP_rol:  shift_reg(t, SHIFT_ROL, false); return false;
    case OP_ror:  shift_reg(t, SHIFT_ROR, false); return false;
    case OP_rolw: shift_reg(t, SHIFT_ROL, true); return false;
    case OP_rorw: shift_reg(t, SHIFT_ROR, true); return false;
    case OP_rori:  shift_imm(t, SHIFT_ROR, false); return false;
    case OP_roriw: shift_imm(t, SHIFT_ROR, true); return false;
    case OP_rev8: tr_rev8(t); return false;
    case OP_orc_b: tr_orc_b(t); return false;
    case OP_bset:  tr_bitreg(t, OPC_BTS_EvGv); return false;
    case OP_bclr:  tr_bitreg(t, OPC_BTR_EvGv); return false;
    case OP_binv:  tr_bitreg(t, OPC_BTC_EvGv); return false;
    case OP_bseti: tr_bitimm(t, BT_BTS); return false;
    case OP_bclri: tr_bitimm(t, BT_BTR); return false;
    case OP_binvi: tr_bitimm(t, BT_BTC); return false;
    case OP_bext:  tr_bext(t, false); return false;
    case OP_bexti: tr_bext(t, true); return false;

    case OP_ebreak:
    case OP_illegal:
        be_call_interp(t->c, t->pc);        /* always leaves with the reason */
        be_goto_tb(t->c, t->pc + in->len);
        return true;
    default:
        if (translate_ext(t))               /* M, A, F, D: trans_ext.c */
            return false;
        break;
    }
    if (insn_is_csr(in->op)) {
        be_call_csr(t->c, t->pc, JIT_CSR_INFO(in->op, in->rd, in->rs1, in->imm));
        return false;
    }
    be_call_interp(t->c, t->pc);
    return false;
}

/* -- One block ------------------------------------------------------------------------- */

/* The host bytes of the block being translated: code_bias + pc on its
 * first page, next_bias + pc on the next, which only a first instruction
 * that crosses into it reaches (the window is contiguous; a mode's own
 * translation names that page in the key: tb.h). Translation is
 * serialized (tb_lock). */
static uintptr_t code_bias, next_bias;
static uint64_t code_page;

static const void *code_at(uint64_t pc)
{
    uintptr_t bias = pc / TARGET_PAGE_SIZE == code_page ? code_bias : next_bias;
    return (const void *)(bias + (uintptr_t)pc);
}

static void code_begin(const TB *tb)
{
    code_page = tb->pc / TARGET_PAGE_SIZE;
    code_bias = (uintptr_t)guest_mem_code(tb->phys) - (uintptr_t)tb->pc;
    next_bias = code_bias;
    if (tb->next_page != TB_NO_PAGE)
        next_bias = (uintptr_t)guest_mem_code(tb->next_page << TARGET_PAGE_BITS) -
                    (uintptr_t)(code_page + 1) * TARGET_PAGE_SIZE;
}

/* The instruction bits at pc: one load if aligned (never torn by a
 * concurrent rewrite; 4 aligned bytes never cross a page), else by parcels. */
static uint32_t fetch(uint64_t pc)
{
    if ((pc & 3) == 0)
        return insn_bits_of_word(__atomic_load_n((const uint32_t *)code_at(pc), __ATOMIC_RELAXED));
    uint32_t bits = *(const uint16_t *)code_at(pc);
    if ((bits & 3) == 3)
        bits |= (uint32_t)*(const uint16_t *)code_at(pc + 2) << 16;
    return bits;
}

/* How a block ended by op leaves (-d stats); page-end and length-limit
 * fallthroughs are direct (the TB_EXIT_DIRECT default). */
static uint8_t exit_kind(const T *t, int op)
{
    switch (op) {
    case OP_jalr:
        return t->indirect_exit ? TB_EXIT_INDIRECT : TB_EXIT_DIRECT;
    case OP_jal: case OP_beq: case OP_bne: case OP_blt: case OP_bge: case OP_bltu: case OP_bgeu:
        return TB_EXIT_DIRECT;
    default:
        return TB_EXIT_OTHER;               /* ecall, fence.i, ebreak, illegal */
    }
}


/*
 * With exact instret (be_count), count before an instruction that leaves
 * the block or may: a control transfer or fence.i retires, so it counts
 * itself; ecall, ebreak and an illegal instruction trap without retiring;
 * an xret's entry counts it if it retires (an sret with mstatus.TSR in
 * S-mode is illegal). True if the instruction is dealt with.
 */
static bool count_before(T *t)
{
    switch ((enum insn_op)t->in->op) {
    case OP_beq: case OP_bne: case OP_blt: case OP_bge: case OP_bltu: case OP_bgeu:
    case OP_jal: case OP_jalr: case OP_fence_i:
        be_count(t->c, 1);
        return true;
    case OP_ecall: case OP_ebreak: case OP_illegal:
        be_count(t->c, 0);
        return true;
    case OP_sret: case OP_mret:
        if (!xret_entry(t))
            return false;                   /* the interpreter counts it */
        be_count(t->c, 0);
        return true;
    default:
        return false;
    }
}

/* Does the instruction at n (> 0) in a block from page start a new block? */
static bool block_limit(unsigned n, uint64_t pc, uint64_t page)
{
    if (n == TB_MAX_INSNS || pc / TARGET_PAGE_SIZE != page)
        return true;
    return (pc + insn_length(*(const uint16_t *)code_at(pc)) - 1) / TARGET_PAGE_SIZE != page;
}

/*
 * Decode the instructions a block at pc may hold into pre[]: through
 * conditional branches (a superblock goes on past them) to its first jump or
 * system instruction or its limit. Returns how many were decoded; the block
 * translated may end sooner (at a branch, when it has no slot left). Counts
 * how often the first basic block uses each integer register, for
 * be_choose_remap: only the first, as a superblock is often left at an early
 * side exit, and a mapping paid for at the entry must pay off before it (cc1
 * -O2 was 6% slower counting the whole superblock). The counts are an
 * estimate: the mapping they lead to is correct for whatever the block
 * turns out to be.
 */
static unsigned predecode(uint64_t pc, Insn pre[TB_MAX_INSNS], uint8_t uses[32])
{
    uint64_t page = pc / TARGET_PAGE_SIZE;
    bool first_bb = true;
    unsigned n;
    memset(uses, 0, 32);
    for (n = 0; n == 0 || !block_limit(n, pc, page); n++) {
        Insn *in = &pre[n];
        insn_decode(fetch(pc), in);
        const uint8_t regs[3] = { in->rd, in->rs1, in->rs2 };
        for (int i = 0; i < 3 && first_bb; i++)
            if (regs[i] < 32 && uses[regs[i]] < UINT8_MAX)
                uses[regs[i]]++;
        switch (in->op) {
        case OP_beq: case OP_bne: case OP_blt: case OP_bge: case OP_bltu: case OP_bgeu:
            first_bb = false;
            break;
        case OP_jal: case OP_jalr: case OP_ecall: case OP_ebreak: case OP_fence_i:
        case OP_illegal:
            return n + 1;
        default:
            break;
        }
        pc += in->len;
    }
    return n;       /* the page end or the length limit */
}

/* -- Narrow results (--tune narrow) ------------------------------------------------- */

/*
 * How an instruction treats the upper 32 bits of its integer operands, for
 * stays_narrow. Only instructions translated inline that cannot fault, call
 * out or end a block are classified; everything else is NARROW_BARRIER.
 */
enum {
    NARROW_BARRIER,
    NARROW_W,       /* reads only the low 32 bits of its sources (addw, slliw, ...) */
    NARROW_CLOSED,  /* the low 32 bits of rd depend only on those of its sources (add, or, sll, ...) */
    NARROW_FULL,    /* reads all 64 bits (srl, slt, ...), or no register (lui, auipc) */
};

static int narrow_class(const Insn *in)
{
    switch ((enum insn_op)in->op) {
    case OP_addw: case OP_subw: case OP_sllw: case OP_srlw: case OP_sraw: case OP_mulw:
    case OP_addiw: case OP_slliw: case OP_srliw: case OP_sraiw:
        return NARROW_W;
    case OP_add: case OP_sub: case OP_and: case OP_or: case OP_xor: case OP_sll: case OP_mul:
    case OP_addi: case OP_andi: case OP_ori: case OP_xori: case OP_slli:
        return NARROW_CLOSED;
    case OP_srl: case OP_sra: case OP_slt: case OP_sltu:
    case OP_srli: case OP_srai: case OP_slti: case OP_sltiu: case OP_lui: case OP_auipc:
        return NARROW_FULL;
    default:
        return NARROW_BARRIER;
    }
}

static uint32_t int_sources(const Insn *in)
{
    switch (insn_table[in->op].fmt) {
    case FMT_R: return (1u << in->rs1 | 1u << in->rs2) & ~1u;
    case FMT_I: case FMT_SH: return (1u << in->rs1) & ~1u;
    default: return 0;
    }
}

/*
 * May the 32-bit operation pre[n] leave its result unextended (upper half
 * zero, not a copy of bit 31)? Yes if, before anything can see the whole
 * register (a branch, a memory access that may fault, a call out, the end
 * of the block), every instruction that reads it (or a value computed from
 * it by add, or, ...) uses only its low 32 bits, and such values are all
 * overwritten. pre[] ends where the block can end at the latest, and the
 * block cannot end at an instruction classified here.
 */
static bool stays_narrow(const Insn *pre, unsigned npre, unsigned n)
{
    uint32_t narrow = 1u << pre[n].rd;
    for (unsigned j = n + 1; j < npre && narrow; j++) {
        const Insn *in = &pre[j];
        int k = narrow_class(in);
        bool reads = int_sources(in) & narrow;
        if (k == NARROW_BARRIER || (reads && k == NARROW_FULL))
            return false;
        uint32_t rd = (1u << in->rd) & ~1u;
        narrow &= ~rd;
        if (reads && k == NARROW_CLOSED)
            narrow |= rd;
    }
    return narrow == 0;
}

void translate_block(TB *tb, Emit *e, Emit *cold, uint16_t map[][2])
{
    BeCtx c = { .e = *e, .cold = *cold, .tb = tb, .entry = e->p,
                .tlb_idx = (uint8_t)TB_FLAGS_DATA_TLB(tb->flags),
                .count = guest_mem.softmmu && (tb->flags & TB_FLAGS_COUNT) };
    uint64_t page = tb->pc / TARGET_PAGE_SIZE;
    uint64_t pc = tb->pc;
    Insn in;
    uint8_t uses[32];
    Insn pre[TB_MAX_INSNS];
    T t = { .c = &c, .e = &c.e, .in = &in, .known = 1, .pre = pre };    /* x0 = 0 */
    code_begin(tb);
    unsigned npre = predecode(pc, pre, uses);     /* the loop below goes through pc in order */
    t.npre = npre;

    be_choose_remap(&c, uses);
    be_tb_start(&c);
    for (unsigned n = 0;; n++) {
        if (n > 0 && block_limit(n, pc, page)) {     /* the page end, the length limit */
            be_count(&c, 0);
            be_goto_tb(&c, pc);
            break;
        }
        if (n < npre)
            in = pre[n];
        else
            insn_decode(fetch(pc), &in);
        map[n][0] = (uint16_t)(c.e.p - c.entry);
        map[n][1] = (uint16_t)(pc - tb->pc);
        tb->ninsns = (uint8_t)(n + 1);
        t.pc = pc;
        t.n = n;
        t.next = n + 1 < npre ? &pre[n + 1] : NULL;
        t.sext = !(tune.narrow && in.rd != 0 && n < npre &&
                   narrow_class(&in) == NARROW_W && stays_narrow(pre, npre, n));
        c.interp_called = false;
        bool counted = count_before(&t);
        bool end = translate_insn(&t);
        if (!counted && !c.interp_called)
            c.pending++;
        be_insn_done(&c);
        track_constants(&t);
        be_forget(&c, in.rd);       /* rd (or an FP rd: harmlessly the same bit) */
        pc += in.len;
        if (end) {
            tb->exit_kind = exit_kind(&t, in.op);
            break;
        }
    }
    tb->guest_size = (uint16_t)(pc - tb->pc);
    be_tb_finish(&c);
    be_end_remap();
    e->p = c.e.p;
    cold->p = c.cold.p;
}
