/*
 * The JIT audit over privileged state (issue 19): random short blocks of
 * the instructions system mode translates its own way, run from random
 * privileged states through the JIT and through the interpreter (the
 * golden model), which must end in the same state.
 *
 * The machine: 128 KiB of RAM at VIRT_RAM_BASE, one hart, the JIT set up
 * as xlat-system's main does, no devices and no SBI (an S-mode ecall
 * traps). Each trial builds in RAM:
 *
 *   page tables   an Sv39 root (entry 1: a gigapage onto RAM's gigabyte;
 *                 entry 2: an L1 table whose entry 0 is an L0 table that
 *                 maps RAM's pages at their own addresses, and whose
 *                 entry 1 is a megapage onto RAM), and an Sv48 root above
 *                 it; leaves get random V/R/W/X/U/A/D bits, some are
 *                 invalid, superpages are sometimes misaligned
 *   M and S trap  twelve instructions (trap CSR reads, writes and swaps,
 *   handlers      sometimes a load or store at the new privilege) and then
 *                 either a jump to the stop address or epc += 4 and xret
 *   the block     1-12 random instructions and a jump to the stop address,
 *                 sometimes running into a second page with other rights:
 *                 loads and stores of every size, FP loads and stores, FP
 *                 operations, LR/SC and AMOs, CSR accesses (the trap CSRs,
 *                 status, satp, tvecs, delegation, interrupt enables and
 *                 pending bits, PMP, counters, FP CSRs, a missing CSR),
 *                 ecall, ebreak, sret, mret, wfi, sfence.vma, fence.i,
 *                 fence, forward branches, ALU operations, illegal words
 *   data pages    random bytes, reached through pointer registers (s0-a2,
 *                 never written by the block) at their identity address,
 *                 aligned or not, near a page end, through the superpages,
 *                 or where nothing is mapped, or non-canonical
 *
 * and a random state: privilege, mstatus (SIE/MIE/SPIE/MPIE/SPP/MPP, FS,
 * MPRV, SUM, MXR, TVM, TW, TSR), medeleg, mideleg, mie and pending mip
 * bits, the trap vectors (direct or vectored), the epcs, satp (Bare, Sv39,
 * Sv48, and rarely Sv57 or a mode WARL refuses), the counter enables, and
 * PMP (open to S and U as the SBI leaves it, or with a NAPOT or TOR entry
 * before that closing, splitting or locking part of a data page, or with
 * no entry at all), and TLBs warmed by a few lookups. Registers t0-t2, t3
 * and t4 hold values a CSR write of each class wants (a status, a satp, a
 * handler address, interrupt or delegation bits, a PMP value). Half the
 * trials have a second phase: once the first reached the stop, the block
 * runs again from a new state (often with the same tb_flags, so that its
 * translation is reused) after some PTEs of the code and data pages were
 * rewritten (the code may no longer be executable). Half the trials run
 * with the generic trap and xret entries (--tune no-entry-specialize).
 *
 * Both engines run from the same state and RAM through the same loop,
 * hart.c's in miniature (drive): interrupts and exceptions are taken
 * there, until the hart fetches from the stop address (STOP_PC, where
 * nothing is ever mapped: every path of the code ends there), or
 * MAX_TRAPS traps have been taken there (a handler that faults again and
 * again). The JIT is not bounded otherwise: the code has no backward jump
 * and handlers only go forward or stop, so runs end, but for the rare one
 * that loops (an xret back to an epc a handler left in the block): the
 * interpreter runs first, at most MAX_STEPS instructions, and a trial it
 * does not finish is not run through the JIT; an alarm catches a JIT that
 * hangs where the interpreter did not. After each phase, pc, x1-x31,
 * f0-f31, fflags, frm, instret, the reservation, the privilege, every CSR
 * of RiscvPriv (PMP included), how the phase ended (with the fault of the
 * last exit), and at the end the RAM region (A/D bits of the page tables
 * included), must be equal; a mismatch prints the trial's seed, its
 * states, the code and the fields that differ.
 *
 * Left out: compressed instructions, self-modifying code, stores to page
 * tables without sfence.vma (stale translations may legally differ),
 * devices and MMIO, the SBI, timers (time, stimecmp, Sstc), more than
 * one hart.
 *
 * Usage: test_system_audit [TRIALS [SEED]]; AUDIT_TRIAL=S runs the one
 * trial of seed S (what a failure prints), AUDIT_LOG=1 logs translations,
 * traps and page faults.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/settings.h"
#include "riscv/insn.h"
#include "riscv/mmu.h"
#include "system/hart.h"
#include "system/machine.h"
#include "system/sys_mem.h"
#include "system/tlb.h"

/* RAM is the region the runs restore and compare: the code cannot reach
 * memory they would not see (superpages map beyond it onto nothing). */
#define REGION_LEN  0x20000
#define RAM_SIZE    REGION_LEN
#define RAM         VIRT_RAM_BASE
#define SCRATCH     (RAM + 0x0000)      /* where the special value 0x80000000 points */
#define PT_ROOT39   (RAM + 0x1000)
#define PT_L1       (RAM + 0x2000)
#define PT_L0       (RAM + 0x3000)
#define PT_ROOT48   (RAM + 0x4000)
#define M_HANDLER   (RAM + 0x8000)
#define S_HANDLER   (RAM + 0x9000)
#define CODE        (RAM + 0xa000)      /* two pages: a block may run into the second */
#define DATA        (RAM + 0x10000)
#define DATA_PAGES  8
#define GIGA_VA     0x40000000ULL       /* root entry 1: RAM's gigabyte */
#define MEGA_VA     (RAM + 0x200000)    /* L1 entry 1: RAM's 2 MiB */
#define HOLE_PAGE   (RAM + 0x6000)      /* in the region, never mapped */
#define UNMAPPED_VA (RAM + 0x400000)    /* L1 entry 2 (invalid), and no RAM */
#define STOP_PC     0ULL                /* never fetchable: root entry 0 invalid, no RAM */

#define MAX_BLOCK   12
#define MAX_TRAPS   6                   /* taken by drive(): then the run ends */
#define MAX_STEPS   4000                /* the interpreter's bound: more is a loop */
#define HANDLER_LEN 16

/* Registers: pointers (memory instructions' bases, never written by the
 * code), CSR values by class, and the handlers' scratch. */
enum { R_PTR0 = 8, R_NPTR = 5 };        /* s0, s1, a0, a1, a2 */
enum { R_STATUS = 5, R_SATP = 6, R_ADDR = 7, R_BITS = 28, R_PMP = 29, R_HSCRATCH = 31 };
enum { R_HPTR = 27 };                   /* the handlers' pointer: a data page's address */


/* -- Random numbers ------------------------------------------------------------ */

static uint64_t rng;

static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static unsigned below(unsigned n) { return (unsigned)(rnd() % n); }
static bool chance(unsigned one_in) { return below(one_in) == 0; }

/* The seed of trial i of a run seeded with seed (splitmix64). */
static uint64_t trial_seed(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return z ? z : 1;
}

static uint64_t rnd_value(void)
{
    static const uint64_t special[] = {
        0, 1, 2, (uint64_t)-1, 0x7fffffffffffffffULL, 0x8000000000000000ULL, 0x7fffffff,
        0x80000000, 0xffffffff, 0xffffffff80000000ULL, 31, 32, 63, 64, 0x100000000ULL, 0xff,
    };
    switch (below(4)) {
    case 0:  return special[below(sizeof special / sizeof special[0])];
    case 1:  return rnd() & 0xff;
    default: return rnd();
    }
}

/* An FP register value: random bits, or a NaN-boxed single. */
static uint64_t rnd_fp(void)
{
    static const uint64_t special[] = {
        0, 0x8000000000000000ULL, 0x7ff0000000000000ULL, 0x7ff8000000000000ULL,
        0x7ff4000000000000ULL, 0x3ff0000000000000ULL, 0x0000000000000001ULL,
        0xffffffff3f800000ULL, 0xffffffff7fc00000ULL, 0xffffffff00000001ULL,
    };
    switch (below(3)) {
    case 0:  return special[below(sizeof special / sizeof special[0])];
    case 1:  return 0xffffffff00000000ULL | (rnd() & 0xffffffff);
    default: return rnd();
    }
}

/* -- Encodings ----------------------------------------------------------------- */

/* op with register fields rd, rs1, rs2 (where the format has them). */
static uint32_t enc(int op, unsigned rd, unsigned rs1, unsigned rs2)
{
    const InsnDesc *d = &insn_table[op];
    uint32_t fields = (rd & 31) << 7 | (rs1 & 31) << 15 | (rs2 & 31) << 20;
    return d->match | (fields & ~d->mask);
}

/* I-type: loads, jalr, addi, CSRs (imm = the CSR number). */
static uint32_t enc_i(int op, unsigned rd, unsigned rs1, int32_t imm)
{
    return enc(op, rd, rs1, 0) | ((uint32_t)imm & 0xfff) << 20;
}

static uint32_t enc_s(int op, unsigned rs1, unsigned rs2, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return enc(op, 0, rs1, rs2) | (u & 0x1f) << 7 | ((u >> 5) & 0x7f) << 25;
}

static uint32_t enc_b(int op, unsigned rs1, unsigned rs2, int32_t off)
{
    uint32_t u = (uint32_t)off;
    return enc(op, 0, rs1, rs2) | ((u >> 12) & 1) << 31 | ((u >> 5) & 0x3f) << 25 |
           ((u >> 1) & 0xf) << 8 | ((u >> 11) & 1) << 7;
}

#define JALR_STOP 0x00000067u           /* jalr x0, 0(x0): to STOP_PC */

/* -- The code ------------------------------------------------------------------- */

static unsigned rnd_ptr_reg(void) { return R_PTR0 + below(R_NPTR); }

/* A register the code may write: anything but x0 and the pointers. */
static unsigned rnd_dest(void)
{
    for (;;) {
        unsigned r = 1 + below(31);
        if ((r < R_PTR0 || r >= R_PTR0 + R_NPTR) && r != R_HPTR)
            return r;
    }
}

static unsigned rnd_src(void) { return below(32); }

static int32_t mem_imm(unsigned size)
{
    switch (below(6)) {
    case 0:  return 0;
    case 1:
    case 2:  return (int32_t)(below(8) * size);
    case 3:  return (int32_t)below(33) - 16;
    case 4:  return (int32_t)below(4096) - 2048;
    default: return (int32_t)(below(16) * 8) - 64;
    }
}

/* CSRs the code reads and writes, with the register class a write wants. */
enum { V_ANY, V_STATUS, V_SATP, V_ADDR, V_BITS, V_PMP };
static const struct { uint16_t csr; uint8_t cls; } audit_csrs[] = {
    { 0x100, V_STATUS }, { 0x104, V_BITS }, { 0x105, V_ADDR }, { 0x106, V_BITS },
    { 0x140, V_ANY }, { 0x141, V_ADDR }, { 0x142, V_ANY }, { 0x143, V_ANY },
    { 0x140, V_ANY }, { 0x141, V_ADDR }, { 0x142, V_ANY }, { 0x143, V_ANY },
    { 0x144, V_BITS }, { 0x180, V_SATP }, { 0x180, V_SATP },
    { 0x300, V_STATUS }, { 0x300, V_STATUS }, { 0x301, V_ANY }, { 0x302, V_BITS },
    { 0x303, V_BITS }, { 0x304, V_BITS }, { 0x305, V_ADDR }, { 0x306, V_BITS },
    { 0x340, V_ANY }, { 0x341, V_ADDR }, { 0x342, V_ANY }, { 0x343, V_ANY },
    { 0x340, V_ANY }, { 0x341, V_ADDR }, { 0x342, V_ANY }, { 0x343, V_ANY },
    { 0x344, V_BITS }, { 0x3a0, V_PMP }, { 0x3b0, V_PMP }, { 0x3b1, V_PMP },
    { 0x001, V_BITS }, { 0x002, V_BITS }, { 0x003, V_BITS },
    { 0xc00, V_ANY }, { 0xc02, V_ANY }, { 0xb02, V_ANY }, { 0xf14, V_ANY },
    { 0x320, V_ANY }, { 0x7c0, V_ANY },        /* mcountinhibit; no such CSR */
};

static const unsigned class_reg[] = {
    [V_STATUS] = R_STATUS, [V_SATP] = R_SATP, [V_ADDR] = R_ADDR, [V_BITS] = R_BITS,
    [V_PMP] = R_PMP,
};

static uint32_t gen_csr(void)
{
    static const int ops[] = { OP_csrrw, OP_csrrs, OP_csrrc, OP_csrrwi, OP_csrrsi, OP_csrrci };
    unsigned k = below(sizeof audit_csrs / sizeof audit_csrs[0]);
    int op = ops[below(6)];
    unsigned rd = chance(4) ? 0 : rnd_dest(), rs1;
    if (insn_table[op].fmt == FMT_CSRI)
        rs1 = below(32);                                /* uimm */
    else if (chance(4))
        rs1 = 0;                                        /* a plain read (csrrs/c) */
    else if (audit_csrs[k].cls != V_ANY && !chance(3))
        rs1 = class_reg[audit_csrs[k].cls];
    else
        rs1 = rnd_src();
    return enc_i(op, rd, rs1, audit_csrs[k].csr);
}

static uint32_t gen_load(void)
{
    static const int ops[] = { OP_lb, OP_lh, OP_lw, OP_ld, OP_lbu, OP_lhu, OP_lwu };
    static const unsigned size[] = { 1, 2, 4, 8, 1, 2, 4 };
    unsigned k = below(7);
    return enc_i(ops[k], rnd_dest(), rnd_ptr_reg(), mem_imm(size[k]));
}

static uint32_t gen_store(void)
{
    static const int ops[] = { OP_sb, OP_sh, OP_sw, OP_sd };
    unsigned k = below(4);
    return enc_s(ops[k], rnd_ptr_reg(), rnd_src(), mem_imm(1u << k));
}

static uint32_t gen_fp_mem(void)
{
    switch (below(4)) {
    case 0:  return enc_i(OP_flw, below(32), rnd_ptr_reg(), mem_imm(4));
    case 1:  return enc_i(OP_fld, below(32), rnd_ptr_reg(), mem_imm(8));
    case 2:  return enc_s(OP_fsw, rnd_ptr_reg(), below(32), mem_imm(4));
    default: return enc_s(OP_fsd, rnd_ptr_reg(), below(32), mem_imm(8));
    }
}

static uint32_t gen_fp_op(void)
{
    static const int ops[] = { OP_fadd_d, OP_fmul_s, OP_fsqrt_d, OP_fsgnj_d, OP_fmv_x_d,
                               OP_fmv_d_x, OP_fcvt_d_l, OP_feq_d, OP_fmadd_d, OP_fclass_d };
    int op = ops[below(sizeof ops / sizeof ops[0])];
    bool x_rd = op == OP_fmv_x_d || op == OP_feq_d || op == OP_fclass_d;
    bool x_rs = op == OP_fmv_d_x || op == OP_fcvt_d_l;
    uint32_t w = enc(op, x_rd ? rnd_dest() : below(32), x_rs ? rnd_src() : below(32), below(32));
    if (!(insn_table[op].mask & (7u << 12)))
        w |= (chance(2) ? 7u : below(5)) << 12;         /* rm: dynamic, or a static mode */
    if (op == OP_fmadd_d)
        w |= below(32) << 27;                           /* rs3 */
    return w;
}

static uint32_t gen_atomic(void)
{
    static const int amos[] = { OP_amoswap_w, OP_amoadd_w, OP_amoor_w, OP_amomax_w,
                                OP_amoswap_d, OP_amoadd_d, OP_amoand_d, OP_amominu_d };
    uint32_t aqrl = below(4) << 25;
    switch (below(4)) {
    case 0:  return enc(chance(2) ? OP_lr_w : OP_lr_d, rnd_dest(), rnd_ptr_reg(), 0) | aqrl;
    case 1:  return enc(chance(2) ? OP_sc_w : OP_sc_d, rnd_dest(), rnd_ptr_reg(), rnd_src()) | aqrl;
    default:
        return enc(amos[below(sizeof amos / sizeof amos[0])], rnd_dest(), rnd_ptr_reg(),
                   rnd_src()) | aqrl;
    }
}

static uint32_t gen_system(void)
{
    switch (below(9)) {
    case 0:  return 0x00000073;                         /* ecall */
    case 1:  return 0x00100073;                         /* ebreak */
    case 2:  return 0x10200073;                         /* sret */
    case 3:  return 0x30200073;                         /* mret */
    case 4:  return 0x10500073;                         /* wfi */
    case 5:  return 0x0000100f;                         /* fence.i */
    case 6:  return 0x0ff0000f;                         /* fence iorw, iorw */
    default:                                            /* sfence.vma */
        return enc(OP_sfence_vma, 0, chance(2) ? 0 : rnd_ptr_reg(), chance(2) ? 0 : rnd_src());
    }
}

static uint32_t gen_alu(void)
{
    switch (below(5)) {
    case 0:  return enc_i(OP_addi, rnd_dest(), rnd_src(), (int32_t)below(4096) - 2048);
    case 1:  return enc(OP_add, rnd_dest(), rnd_src(), rnd_src());
    case 2:  return enc(OP_xor, rnd_dest(), rnd_src(), rnd_src());
    case 3:  return enc_i(OP_slli, rnd_dest(), rnd_src(), (int32_t)below(64));
    default: return enc(OP_lui, rnd_dest(), 0, 0) | (uint32_t)(rnd() & 0xfffff000);
    }
}

static uint32_t gen_illegal(void)
{
    switch (below(3)) {
    case 0: return 0x00000000;                          /* c.unimp */
    case 1: return 0xffffffff;
    default:
        for (;;) {
            uint32_t w = (uint32_t)rnd() | 3;
            Insn in;
            if (!insn_decode(w, &in))
                return w;
        }
    }
}

/* Instruction i of a block of n (then the jump to STOP_PC at index n),
 * one of every kind system mode translates its own way. */
static uint32_t gen_insn(unsigned i, unsigned n)
{
    static const int br[] = { OP_beq, OP_bne, OP_blt, OP_bge, OP_bltu, OP_bgeu };
    unsigned k = below(100);
    uint32_t w;
    if (k < 2)
        return gen_illegal();
    if (k < 16)      w = gen_load();
    else if (k < 28) w = gen_store();
    else if (k < 35) w = gen_fp_mem();
    else if (k < 40) w = gen_fp_op();
    else if (k < 48) w = gen_atomic();
    else if (k < 68) w = gen_csr();
    else if (k < 81) w = gen_system();
    else if (k < 89) w = gen_alu();
    else             w = enc_b(br[below(6)], rnd_src(), rnd_src(), 4 * (int32_t)(1 + below(n - i)));
    Insn in;
    if (!insn_decode(w, &in)) {
        printf("FAIL: the generator made %#x, which does not decode\n", w);
        exit(1);
    }
    return w;
}

/* -- Handlers ------------------------------------------------------------------ */

/*
 * A trap handler for M (m) or S: HANDLER_LEN instructions, the first
 * twelve straight-line (a vectored interrupt lands in them): trap CSR
 * reads, writes and swaps, and in a third of the handlers a load or store
 * through R_HPTR (at the handler's privilege: MPRV, PMP and the page's
 * rights apply; one that faults traps into the handler again, until
 * MAX_TRAPS); then the end: a jump to STOP_PC, or epc += 4 and xret (back
 * into the block, after the instruction that trapped).
 */
static void gen_handler(uint32_t *w, bool m)
{
    unsigned base = m ? 0x300 : 0x100;
    for (unsigned i = 0; i < 12; i++) {
        switch (below(5)) {
        case 0:  w[i] = enc_i(OP_csrrw, 30, 30, (int32_t)(base + 0x40)); break; /* swap scratch */
        case 1:  w[i] = enc_i(OP_csrrs, 29, 0, (int32_t)(base + 0x42)); break;  /* read cause */
        case 2:  w[i] = enc_i(OP_csrrs, 28, 0, (int32_t)(base + 0x43 - 2 * below(2))); break;
        default: w[i] = enc_i(OP_addi, 31, 31, (int32_t)below(64)); break;
        }
    }
    if (chance(3))
        w[below(12)] = chance(2) ? enc_i(OP_ld, 26, R_HPTR, 8 * (int32_t)below(4))
                                 : enc_s(OP_sd, R_HPTR, 29, 8 * (int32_t)below(4));
    if (chance(3)) {
        for (unsigned i = 12; i < HANDLER_LEN - 1; i++)
            w[i] = enc_i(OP_addi, 30, 30, 1);
        w[HANDLER_LEN - 1] = JALR_STOP;
        return;
    }
    w[12] = enc_i(OP_csrrs, R_HSCRATCH, 0, (int32_t)(base + 0x41));          /* csrr epc */
    w[13] = enc_i(OP_addi, R_HSCRATCH, R_HSCRATCH, 4);
    w[14] = enc_i(OP_csrrw, 0, R_HSCRATCH, (int32_t)(base + 0x41));          /* csrw epc */
    w[15] = m ? 0x30200073 : 0x10200073;                                     /* mret / sret */
}

/* -- A trial's initial state ----------------------------------------------------- */

/* The architectural state both engines start from and end in. */
typedef struct Arch {
    uint64_t x[32], f[32], pc, instret;
    uint32_t fflags, frm;
    bool res_valid;
    uint64_t res_addr, res_val;
    MemFault fault;
    RiscvPriv priv;
} Arch;

/*
 * One run of the block from a state. A second phase starts the block
 * again after the first reached the stop, in RAM as the first left it
 * but for some rewritten PTEs, from a new state: often one with the same
 * tb_flags, so that the block translated in the first phase runs again
 * (or must not: its page may no longer be executable).
 */
#define MAX_PTE_WRITES 4
#define MAX_WARM (MAX_BLOCK + 2)
typedef struct Phase {
    Arch init;
    struct { uint64_t pa, pte; } pte[MAX_PTE_WRITES];  /* written before the phase */
    unsigned npte;
    /* TLB lookups before the phase, so that translated code's inline
     * probes also hit (every phase starts with the TLBs flushed), each in
     * one privilege's view (exec/softmmu.h's TLB_IDX_*). */
    struct { uint64_t va; enum mem_access access; unsigned view; } warm[MAX_WARM];
    unsigned nwarm;
} Phase;

typedef struct Trial {
    uint64_t seed;
    Phase phase[2];
    unsigned nphases;
    uint64_t block_pc;
    unsigned n;                         /* instructions before the stop jump */
    uint32_t block[MAX_BLOCK + 1];
    uint8_t ram[REGION_LEN];
} Trial;

static Hart *h;

static void *ram_at(uint8_t *ram, uint64_t pa) { return ram + (pa - RAM); }

static void set_pte(uint8_t *ram, uint64_t table, unsigned i, uint64_t pte)
{
    memcpy(ram_at(ram, table + 8 * i), &pte, 8);
}

static uint64_t leaf(uint64_t pa, uint64_t flags) { return (pa >> 12) << 10 | flags; }

/* Random leaf rights: mostly valid and accessed, every R/W/X/U mix (W
 * without R is reserved), D often, a reserved bit rarely. */
static uint64_t rnd_rights(void)
{
    uint64_t f = (chance(12) ? 0 : PTE_V) | (rnd() & (PTE_R | PTE_W | PTE_X | PTE_U));
    if (!(f & (PTE_R | PTE_W | PTE_X)))
        f |= PTE_R;                                     /* a leaf, not a pointer */
    f |= chance(6) ? 0 : PTE_A;
    f |= chance(2) ? PTE_D : 0;
    if (chance(40))
        f |= 1ULL << 54;                                /* reserved */
    return f;
}

/* Code rights for privilege mode: executable there, or (rarely) random. */
static uint64_t code_rights(int mode)
{
    if (chance(12))
        return rnd_rights();
    return PTE_V | PTE_R | PTE_X | PTE_A | (mode == PRV_U ? PTE_U : 0);
}

static void build_page_tables(uint8_t *ram, int mode)
{
    /* Root: 0 invalid (STOP_PC), 1 a gigapage, 2 the L1 table. */
    uint64_t giga = leaf(chance(10) ? RAM + 0x10000 : RAM, rnd_rights());     /* misaligned? */
    set_pte(ram, PT_ROOT39, 1, chance(6) ? 0 : giga);
    set_pte(ram, PT_ROOT39, 2, leaf(PT_L1, PTE_V) | (chance(30) ? PTE_A : 0));
    set_pte(ram, PT_ROOT48, 0, leaf(PT_ROOT39, PTE_V));
    set_pte(ram, PT_L1, 0, leaf(PT_L0, PTE_V));
    set_pte(ram, PT_L1, 1, chance(4) ? 0 : leaf(chance(10) ? RAM + 0x1000 : RAM, rnd_rights()));
    /* L0: RAM's pages at their own addresses. */
    set_pte(ram, PT_L0, 0, leaf(SCRATCH, rnd_rights()));
    set_pte(ram, PT_L0, (M_HANDLER - RAM) >> 12, chance(2) ? 0 : leaf(M_HANDLER, rnd_rights()));
    set_pte(ram, PT_L0, (S_HANDLER - RAM) >> 12, leaf(S_HANDLER, code_rights(PRV_S)));
    uint64_t code = code_rights(mode);
    set_pte(ram, PT_L0, (CODE - RAM) >> 12, leaf(CODE, code));
    set_pte(ram, PT_L0, (CODE - RAM) / 4096 + 1,
            leaf(CODE + 0x1000, chance(2) ? code : code_rights(mode)));
    for (unsigned k = 0; k < DATA_PAGES; k++) {
        uint64_t pa = DATA + 4096ULL * k;
        set_pte(ram, PT_L0, (unsigned)((pa - RAM) >> 12), chance(10) ? 0 : leaf(pa, rnd_rights()));
    }
}

/* A pointer register's value: into a data page (aligned, misaligned, at
 * its end), through a superpage, or somewhere nothing is. */
static uint64_t rnd_pointer(void)
{
    uint64_t page = 4096ULL * below(DATA_PAGES), off;
    switch (below(3)) {
    case 0:  off = 8 * below(512); break;
    case 1:  off = below(4096); break;
    default: off = 4096 - 1 - below(12); break;
    }
    uint64_t data = DATA - RAM + page + off;
    switch (below(10)) {
    case 0:  return GIGA_VA + data;
    case 1:  return MEGA_VA + data;
    case 2:                                             /* unmapped, or non-canonical */
        return chance(3) ? UNMAPPED_VA + off : chance(2) ? HOLE_PAGE + off : (1ULL << 39) + data;
    case 3:  return chance(2) ? SCRATCH + off : rnd_value();
    default: return RAM + data;
    }
}

static uint64_t rnd_status(void)
{
    static const uint64_t bits[] = {
        MSTATUS_SIE, MSTATUS_MIE, MSTATUS_SPIE, MSTATUS_MPIE, MSTATUS_SPP, MSTATUS_MPRV,
        MSTATUS_SUM, MSTATUS_MXR,
    };
    static const uint64_t traps[] = { MSTATUS_TVM, MSTATUS_TW, MSTATUS_TSR };
    uint64_t s = (uint64_t)below(4) << 13;              /* FS: off, initial, clean, dirty */
    s |= (uint64_t)(below(3) == 2 ? 3 : below(2)) << 11;  /* MPP: U, S, M */
    for (unsigned i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (chance(3))
            s |= bits[i];
    for (unsigned i = 0; i < sizeof traps / sizeof traps[0]; i++)
        if (chance(5))                                  /* rarer: a handler's sret loops */
            s |= traps[i];
    return s;
}

static uint64_t rnd_satp(void)
{
    uint64_t asid = (rnd() & 0xffff) << 44;
    switch (below(8)) {
    case 0: case 1: return 0;
    case 2:         return 9ULL << 60 | asid | PT_ROOT48 >> 12;
    case 3:                                             /* Sv57 (no tables for it), bad */
        return chance(4) ? 10ULL << 60 | PT_ROOT48 >> 12 : 1ULL << 60;
    default:        return 8ULL << 60 | asid | PT_ROOT39 >> 12;
    }
}

static uint64_t rnd_address(void)
{
    switch (below(6)) {
    case 0:  return M_HANDLER | below(2);
    case 1:  return S_HANDLER | below(2);
    case 2:  return STOP_PC;
    case 3:  return rnd_value();
    default: return chance(2) ? M_HANDLER : S_HANDLER;
    }
}

static uint64_t rnd_bits(void)
{
    switch (below(4)) {
    case 0:  return 0xb3ff;                             /* every delegable exception */
    case 1:  return rnd() & 0xaaa;                      /* interrupt bits */
    case 2:  return rnd() & 7;                          /* counter enables, fflags, ... */
    default: return rnd_value();
    }
}

static void csr_write(unsigned csr, uint64_t v)
{
    if (!priv_debug_csr(&h->cpu, csr, true, &v)) {
        printf("FAIL: the set-up cannot write CSR %#x\n", csr);
        exit(1);
    }
}

/* NAPOT pmpaddr of the 4 KiB page at pa; the all-memory one. */
static uint64_t napot_4k(uint64_t pa) { return (pa >> 2) | 0x1ff; }
#define PMPADDR_ALL ((1ULL << 54) - 1)
#define PMP_NAPOT_RWX 0x1f

/* PMP: open to S and U as the SBI leaves it (entry 0, NAPOT over all),
 * or an entry before that closing, splitting (TOR) or locking a data page,
 * or nothing on (S and U reach nothing). */
static void setup_pmp(void)
{
    uint64_t page = DATA + 4096ULL * below(DATA_PAGES);
    uint64_t rights = below(8) == 2 ? 1 : below(8) & ~2ULL;  /* R/X mixes; W only with R */
    if (chance(4) && (rights & 1))
        rights |= 2;
    uint64_t lock = chance(4) ? 0x80 : 0;
    switch (below(20)) {
    case 0:
        return;
    case 1: case 2:                                     /* NAPOT over one page */
        csr_write(0x3b0, napot_4k(page));
        csr_write(0x3b1, PMPADDR_ALL);
        csr_write(0x3a0, (uint64_t)PMP_NAPOT_RWX << 8 | 0x18 | rights | lock);
        return;
    case 3: case 4:                                     /* TOR over half a page */
        csr_write(0x3b0, page >> 2);
        csr_write(0x3b1, (page + 0x800) >> 2);
        csr_write(0x3b2, PMPADDR_ALL);
        csr_write(0x3a0, (uint64_t)PMP_NAPOT_RWX << 16 | (0x08 | rights | lock) << 8);
        return;
    default:
        csr_write(0x3b0, PMPADDR_ALL);
        csr_write(0x3a0, PMP_NAPOT_RWX);
        return;
    }
}

/* The mstatus bits tb_flags follow (riscv/priv.c: update_tb_flags). */
#define FLAG_BITS (MSTATUS_MPRV | MSTATUS_MPP | MSTATUS_SUM | MSTATUS_FS)

/* The privileged state of a phase, written through the debugger's CSR
 * access (WARL applies: the state is one the hart can be in); keep: the
 * mstatus whose FLAG_BITS it keeps, or NULL. */
static void setup_priv(int mode, const uint64_t *keep)
{
    CPUState *cpu = &h->cpu;
    priv_reset(cpu, 0, PRV_M);
    /* instret exact in translated code from the start (priv.h,
     * TB_FLAGS_COUNT), as after software's first look at a counter. */
    cpu->priv.counted = true;
    uint64_t status = rnd_status();
    if (keep)
        status = (status & ~FLAG_BITS) | (*keep & FLAG_BITS);
    csr_write(0x300, status);
    csr_write(0x302, chance(2) ? 0xb3ff : chance(2) ? rnd() & 0xb3ff : 0);
    csr_write(0x303, rnd() & 0x222);
    csr_write(0x304, rnd() & 0xaaa);
    if (chance(4))
        csr_write(0x344, rnd() & 0x222);                /* SSIP, STIP, SEIP pending */
    if (chance(16))
        cpu->priv.mip |= chance(2) ? MIP_MSIP : MIP_MTIP;   /* a device's line */
    csr_write(0x305, chance(12) ? rnd_address() : M_HANDLER | (chance(4) ? 1 : 0));
    csr_write(0x105, chance(12) ? rnd_address() : S_HANDLER | (chance(4) ? 1 : 0));
    csr_write(0x341, rnd_address());
    csr_write(0x141, rnd_address());
    csr_write(0x306, rnd() & 7);
    csr_write(0x106, rnd() & 7);
    static const unsigned plain[] = { 0x340, 0x342, 0x343, 0x140, 0x142, 0x143 };
    for (unsigned i = 0; i < sizeof plain / sizeof plain[0]; i++)
        csr_write(plain[i], rnd_value());
    csr_write(0x180, rnd_satp());
    setup_pmp();
    priv_debug_set_mode(cpu, mode);
}

/* Values the CSR writes of each class take (class_reg). */
static void setup_registers(CPUState *cpu)
{
    for (int i = 1; i < 32; i++)
        cpu->x[i] = rnd_value();
    for (int i = 0; i < R_NPTR; i++)
        cpu->x[R_PTR0 + i] = rnd_pointer();
    cpu->x[R_HPTR] = DATA + 4096ULL * below(DATA_PAGES) + 8 * below(500);
    cpu->x[R_STATUS] = rnd_status();
    cpu->x[R_SATP] = rnd_satp();
    cpu->x[R_ADDR] = rnd_address();
    cpu->x[R_BITS] = rnd_bits();
    static const uint64_t pmp_values[] = {
        PMP_NAPOT_RWX, 0, 0x19, 0x98, 0x99, PMPADDR_ALL, (DATA + 0x3000) >> 2 | 0x1ff,
    };                                  /* 0x98, 0x99: locked, none or R: M loses X too */
    cpu->x[R_PMP] = pmp_values[below(sizeof pmp_values / sizeof pmp_values[0])];
    for (int i = 0; i < 32; i++)
        cpu->f[i] = rnd_fp();
    cpu->fflags = chance(2) ? 0 : rnd() & 0x1f;
    cpu->frm = chance(8) ? below(8) : below(4);
    cpu->instret = rnd() & 0xffffff;
    cpu->res_valid = chance(4);
    cpu->res_addr = cpu->x[R_PTR0 + below(R_NPTR)];
    cpu->res_val = rnd_value();
    cpu->fault = (MemFault){ 0 };
}

static void arch_save(const CPUState *c, Arch *a)
{
    memcpy(a->x, c->x, sizeof a->x);
    memcpy(a->f, c->f, sizeof a->f);
    a->pc = c->pc;
    a->instret = c->instret;
    a->fflags = c->fflags;
    a->frm = c->frm;
    a->res_valid = c->res_valid;
    a->res_addr = c->res_addr;
    a->res_val = c->res_val;
    a->fault = c->fault;
    a->priv = c->priv;
}

/* The hart in state a: the privileged state as a whole, then the mode
 * again, which recomputes tb_flags and drops every cached translation. */
static void arch_load(CPUState *c, const Arch *a)
{
    memcpy(c->x, a->x, sizeof a->x);
    memcpy(c->f, a->f, sizeof a->f);
    c->pc = a->pc;
    c->instret = a->instret;
    c->fflags = a->fflags;
    c->frm = a->frm;
    c->res_valid = a->res_valid;
    c->res_addr = a->res_addr;
    c->res_val = a->res_val;
    c->fault = a->fault;
    c->priv = a->priv;
    c->exit_request = 0;
    priv_debug_set_mode(c, a->priv.mode);
}

static void add_warm(Phase *ph, uint64_t va, enum mem_access access)
{
    ph->warm[ph->nwarm].va = va;
    ph->warm[ph->nwarm].access = access;
    ph->warm[ph->nwarm++].view = below(TLB_NIDX);
}

/* Lookups that fill the TLBs before a phase: the block's code, the data
 * its accesses reach (through pointers, which it never writes), or
 * around the handlers' pointer. */
static void gen_warm(Phase *ph, const Trial *t)
{
    ph->nwarm = 0;
    if (chance(2))
        add_warm(ph, t->block_pc, MEM_FETCH);
    for (unsigned i = 0; i < t->n; i++) {
        Insn in;
        insn_decode(t->block[i], &in);
        enum insn_format f = insn_table[in.op].fmt;
        bool load = f == FMT_L || f == FMT_FL || f == FMT_LR;
        if ((load || f == FMT_S || f == FMT_FS || f == FMT_AMO) && !chance(3))
            add_warm(ph, ph->init.x[in.rs1] + (uint64_t)in.imm, load ? MEM_LOAD : MEM_STORE);
    }
    if (chance(2))
        add_warm(ph, ph->init.x[R_HPTR], chance(2) ? MEM_LOAD : MEM_STORE);
}

/*
 * Fill the TLBs as if the hart had just run at other privileges (a kernel
 * returning to user code leaves its own entries behind): each lookup with
 * the mode, SUM and tb_flags of its view, then the hart's own put back as
 * they were (set directly: the update functions would flush the TLBs).
 */
static void warm_tlb(CPUState *cpu, const Phase *ph)
{
    static const uint8_t view_mode[TLB_NIDX] = {
        [TLB_IDX_U] = PRV_U, [TLB_IDX_S] = PRV_S, [TLB_IDX_SUM] = PRV_S, [TLB_IDX_M] = PRV_M,
    };
    uint8_t mode = cpu->priv.mode;
    uint64_t status = cpu->priv.mstatus;
    uint32_t flags = cpu->tb_flags;
    for (unsigned i = 0; i < ph->nwarm; i++) {
        unsigned v = ph->warm[i].view;
        cpu->priv.mode = view_mode[v];
        cpu->priv.mstatus = (status & ~(MSTATUS_SUM | MSTATUS_MPRV)) |
                            (v == TLB_IDX_SUM ? MSTATUS_SUM : 0);
        cpu->tb_flags = v | v << 2;                     /* TB_FLAGS_FETCH_TLB, _DATA_TLB */
        TlbHit hit;
        MemFault f;
        tlb_lookup(cpu, ph->warm[i].va, 1, ph->warm[i].access, &hit, &f);
    }
    cpu->priv.mode = mode;
    cpu->priv.mstatus = status;
    cpu->tb_flags = flags;
}

/* The second phase's rewritten PTEs: the code pages' or data pages'. */
static void gen_pte_writes(Phase *ph, int mode)
{
    ph->npte = below(MAX_PTE_WRITES + 1);
    for (unsigned i = 0; i < ph->npte; i++) {
        uint64_t pa = chance(3) ? CODE + 0x1000ULL * below(2)
                                : DATA + 4096ULL * below(DATA_PAGES);
        ph->pte[i].pa = PT_L0 + 8 * ((pa - RAM) >> 12);
        ph->pte[i].pte = leaf(pa, pa < DATA ? code_rights(mode) : rnd_rights());
    }
}

/* The state of phase p (the first: mode; the second: often the first's
 * mode and tb_flags bits). */
static void gen_phase(Trial *t, unsigned p, int mode)
{
    Phase *ph = &t->phase[p];
    const uint64_t *keep = NULL;
    if (p > 0 && !chance(3)) {
        mode = t->phase[0].init.priv.mode;
        keep = &t->phase[0].init.priv.mstatus;
    } else if (p > 0) {
        mode = below(3) == 2 ? PRV_M : (int)below(2);
    }
    CPUState *cpu = &h->cpu;
    setup_priv(mode, keep);
    setup_registers(cpu);
    cpu->pc = t->block_pc;
    arch_save(cpu, &ph->init);
    ph->npte = 0;
    if (p > 0)
        gen_pte_writes(ph, mode);
    gen_warm(ph, t);
}

static void build_trial(Trial *t, uint64_t seed)
{
    rng = t->seed = seed;
    int mode = below(3) == 2 ? PRV_M : (int)below(2);
    uint8_t *ram = t->ram;
    memset(ram, 0, REGION_LEN);
    for (size_t i = DATA - RAM; i < DATA - RAM + DATA_PAGES * 4096ULL; i++)
        ram[i] = (uint8_t)rnd();
    build_page_tables(ram, mode);
    uint32_t handler[HANDLER_LEN];
    gen_handler(handler, true);
    memcpy(ram_at(ram, M_HANDLER), handler, sizeof handler);
    gen_handler(handler, false);
    memcpy(ram_at(ram, S_HANDLER), handler, sizeof handler);

    t->n = 1 + below(MAX_BLOCK);
    uint64_t off = chance(3) ? 4096 - 4 * (1 + below(t->n + 1))     /* into the next page */
                             : 4 * below((4096 - 4 * (MAX_BLOCK + 1)) / 4);
    t->block_pc = CODE + off;
    for (unsigned i = 0; i < t->n; i++)
        t->block[i] = gen_insn(i, t->n);
    t->block[t->n] = JALR_STOP;
    memcpy(ram_at(ram, t->block_pc), t->block, 4 * (t->n + 1));

    t->nphases = chance(2) ? 2 : 1;
    for (unsigned p = 0; p < t->nphases; p++)
        gen_phase(t, p, mode);
}

/* -- Running: hart.c's loop in miniature ------------------------------------------ */

enum run_end { END_STOP, END_TRAPS, END_STEPS };

/* What a run did: each phase's end, and the RAM after the last. */
typedef struct Outcome {
    unsigned nphases;                   /* run: the second only after a stop */
    enum run_end end[2];
    int last_exit[2];                   /* the exit that ended the phase */
    Arch arch[2];
    unsigned traps, steps;              /* taken and run by drive() (statistics) */
    uint8_t ram[REGION_LEN];
} Outcome;

/*
 * Run the hart through the JIT (exec_run, as xlat-system does) or one
 * instruction at a time through the interpreter (interp_step, the golden
 * model; stepping takes the same traps at the same places as interp_run,
 * since only an exit can change whether an interrupt is due), taking
 * interrupts and exceptions as hart_run does, until the fetch from
 * STOP_PC or the MAX_TRAPS'th trap.
 */
static enum run_end drive(CPUState *cpu, bool jit, int *last, unsigned *taken, unsigned *stepped)
{
    unsigned traps = 0, steps = 0;
    *last = EXIT_NONE;
    for (;;) {
        uint64_t cause;
        if (priv_interrupt(cpu, &cause)) {
            if (traps++ == MAX_TRAPS)
                return END_TRAPS;
            priv_trap(cpu, cause, 0);
            ++*taken;
        }
        enum exit_reason r = jit ? exec_run(cpu) : interp_step(cpu);
        *last = r;
        if (!jit) {
            ++*stepped;
            if (++steps > MAX_STEPS)
                return END_STEPS;
        }
        uint64_t tval = 0;
        switch (r) {
        case EXIT_NONE:
        case EXIT_REQUEST:
        case EXIT_WFI:                  /* no interrupt will come: a wfi is a nop here */
            continue;
        case EXIT_ECALL:                /* the interpreter's; translated code traps itself */
            priv_entry_ecall(cpu);
            ++*taken;
            continue;
        case EXIT_FAULT:
            if (cpu->fault.access == MEM_FETCH && cpu->pc == STOP_PC)
                return END_STOP;
            cause = hart_fault_cause(&cpu->fault);
            tval = cpu->fault.addr;
            break;
        case EXIT_EBREAK:
            cause = CAUSE_BREAKPOINT;
            tval = cpu->pc;
            break;
        default:
            cause = CAUSE_ILLEGAL_INSN;
            tval = hart_insn_bits_at(cpu);
            break;
        }
        if (traps++ == MAX_TRAPS)
            return END_TRAPS;
        priv_trap(cpu, cause, tval);
        ++*taken;
    }
}

/* What the alarm prints if a JIT run never ends. */
static char hang_note[128];

static void on_alarm(int sig)
{
    (void)sig;
    ssize_t ignored = write(STDOUT_FILENO, hang_note, strlen(hang_note));
    (void)ignored;
    _exit(1);
}

static void run(const Trial *t, bool jit, Outcome *o)
{
    CPUState *cpu = &h->cpu;
    memcpy(machine.ram, t->ram, REGION_LEN);
    tlb_dma_written(RAM, REGION_LEN);   /* drops the translations of the old code */
    o->traps = o->steps = 0;
    for (unsigned p = 0; p < t->nphases; p++) {
        const Phase *ph = &t->phase[p];
        for (unsigned i = 0; i < ph->npte; i++)
            memcpy(ram_at(machine.ram, ph->pte[i].pa), &ph->pte[i].pte, 8);
        arch_load(cpu, &ph->init);
        warm_tlb(cpu, ph);
        alarm(5);
        o->end[p] = drive(cpu, jit, &o->last_exit[p], &o->traps, &o->steps);
        alarm(0);
        arch_save(cpu, &o->arch[p]);
        o->nphases = p + 1;
        if (o->end[p] != END_STOP)
            break;
    }
    memcpy(o->ram, machine.ram, REGION_LEN);
}

/* -- Comparing -------------------------------------------------------------------- */

#define ARCH_FIELD(f) { #f, offsetof(Arch, f) }
static const struct { const char *name; size_t off; } u64_fields[] = {
    ARCH_FIELD(pc), ARCH_FIELD(instret),
    ARCH_FIELD(priv.mstatus), ARCH_FIELD(priv.medeleg), ARCH_FIELD(priv.mideleg),
    ARCH_FIELD(priv.mie), ARCH_FIELD(priv.mip), ARCH_FIELD(priv.mtvec),
    ARCH_FIELD(priv.mscratch), ARCH_FIELD(priv.mepc), ARCH_FIELD(priv.mcause),
    ARCH_FIELD(priv.mtval), ARCH_FIELD(priv.stvec), ARCH_FIELD(priv.sscratch),
    ARCH_FIELD(priv.sepc), ARCH_FIELD(priv.scause), ARCH_FIELD(priv.stval),
    ARCH_FIELD(priv.satp), ARCH_FIELD(priv.mcounteren), ARCH_FIELD(priv.scounteren),
    ARCH_FIELD(priv.menvcfg), ARCH_FIELD(priv.senvcfg), ARCH_FIELD(priv.stimecmp),
    ARCH_FIELD(priv.misa), ARCH_FIELD(priv.mhartid),
};

static uint64_t u64_at(const Arch *a, size_t off)
{
    uint64_t v;
    memcpy(&v, (const uint8_t *)a + off, 8);
    return v;
}

static int diffs;
static bool quiet;                      /* compare() only counts */

static void differ(const char *name, uint64_t jit, uint64_t ref)
{
    if (jit == ref)
        return;
    if (!quiet)
        printf("  %-20s jit %#018llx  interp %#018llx\n", name, (unsigned long long)jit,
               (unsigned long long)ref);
    diffs++;
}

static const char *region_name(size_t off)
{
    uint64_t pa = RAM + off;
    if (pa >= PT_ROOT39 && pa < PT_ROOT48 + 0x1000) return "page tables";
    if (pa >= M_HANDLER && pa < CODE) return "handlers";
    if (pa >= CODE && pa < CODE + 0x2000) return "code";
    if (pa >= DATA && pa < DATA + DATA_PAGES * 4096ULL) return "data";
    return "other";
}

/* One phase's architectural state (names prefixed "p2 " for the second). */
static void compare_arch(const Arch *j, const Arch *r, bool fault, const char *prefix)
{
    char name[48];
#define NAMED(...) (snprintf(name, sizeof name, __VA_ARGS__), name)
    for (size_t i = 0; i < sizeof u64_fields / sizeof u64_fields[0]; i++)
        differ(NAMED("%s%s", prefix, u64_fields[i].name), u64_at(j, u64_fields[i].off),
               u64_at(r, u64_fields[i].off));
    for (int i = 1; i < 32; i++)
        differ(NAMED("%s%s", prefix, riscv_xreg_name[i]), j->x[i], r->x[i]);
    for (int i = 0; i < 32; i++)
        differ(NAMED("%s%s", prefix, riscv_freg_name[i]), j->f[i], r->f[i]);
    differ(NAMED("%sfflags", prefix), j->fflags, r->fflags);
    differ(NAMED("%sfrm", prefix), j->frm, r->frm);
    differ(NAMED("%smode", prefix), j->priv.mode, r->priv.mode);
    differ(NAMED("%sres_valid", prefix), j->res_valid, r->res_valid);
    if (j->res_valid && r->res_valid) {
        differ(NAMED("%sres_addr", prefix), j->res_addr, r->res_addr);
        differ(NAMED("%sres_val", prefix), j->res_val, r->res_val);
    }
    if (fault) {
        differ(NAMED("%sfault.kind", prefix), j->fault.kind, r->fault.kind);
        differ(NAMED("%sfault.access", prefix), j->fault.access, r->fault.access);
        differ(NAMED("%sfault.addr", prefix), j->fault.addr, r->fault.addr);
    }
    for (int i = 0; i < PMP_ENTRIES; i++) {
        differ(NAMED("%spmpcfg[%d]", prefix, i), j->priv.pmp.cfg[i], r->priv.pmp.cfg[i]);
        differ(NAMED("%spmpaddr[%d]", prefix, i), j->priv.pmp.addr[i], r->priv.pmp.addr[i]);
    }
#undef NAMED
}

static void compare_ram(const uint8_t *j, const uint8_t *r)
{
    int shown = 0;
    for (size_t off = 0; off < REGION_LEN; off += 8) {
        uint64_t a, b;
        memcpy(&a, j + off, 8);
        memcpy(&b, r + off, 8);
        if (a == b)
            continue;
        if (shown++ < 6) {
            char name[48];
            snprintf(name, sizeof name, "%#llx (%s)", (unsigned long long)(RAM + off),
                     region_name(off));
            differ(name, a, b);
        } else {
            diffs++;
        }
    }
}

/* The number of differences; each printed unless only_count. */
static int compare(const Outcome *j, const Outcome *r, bool only_count)
{
    int before = diffs;
    quiet = only_count;
    differ("phases", j->nphases, r->nphases);
    unsigned n = j->nphases < r->nphases ? j->nphases : r->nphases;
    for (unsigned p = 0; p < n; p++) {
        const char *prefix = p ? "p2 " : "";
        char name[24];
        snprintf(name, sizeof name, "%send", prefix);
        differ(name, j->end[p], r->end[p]);
        snprintf(name, sizeof name, "%slast exit", prefix);
        differ(name, (uint64_t)j->last_exit[p], (uint64_t)r->last_exit[p]);
        bool fault = j->last_exit[p] == EXIT_FAULT && r->last_exit[p] == EXIT_FAULT;
        compare_arch(&j->arch[p], &r->arch[p], fault, prefix);
    }
    compare_ram(j->ram, r->ram);
    return diffs - before;
}

static void print_code(const char *what, uint64_t pc, const uint32_t *w, unsigned n)
{
    printf("  %s:\n", what);
    for (unsigned i = 0; i < n; i++) {
        Insn in;
        char text[96];
        insn_decode(w[i], &in);
        insn_disasm(&in, pc + 4 * i, text, sizeof text);
        printf("    %#llx: %08x  %s\n", (unsigned long long)(pc + 4 * i), w[i], text);
    }
}

static void print_phase(const Trial *t, unsigned p)
{
    const Phase *ph = &t->phase[p];
    const RiscvPriv *v = &ph->init.priv;
    printf("  phase %u: %c-mode mstatus %#llx satp %#llx medeleg %#llx mideleg %#llx mie %#llx "
           "mip %#llx\n", p + 1, "USHM"[v->mode], (unsigned long long)v->mstatus,
           (unsigned long long)v->satp, (unsigned long long)v->medeleg,
           (unsigned long long)v->mideleg, (unsigned long long)v->mie, (unsigned long long)v->mip);
    printf("    mtvec %#llx stvec %#llx mepc %#llx sepc %#llx pmpcfg0-1 %#x %#x; pointers",
           (unsigned long long)v->mtvec, (unsigned long long)v->stvec,
           (unsigned long long)v->mepc, (unsigned long long)v->sepc, v->pmp.cfg[0],
           v->pmp.cfg[1]);
    for (int i = 0; i < R_NPTR; i++)
        printf(" %s=%#llx", riscv_xreg_name[R_PTR0 + i],
               (unsigned long long)ph->init.x[R_PTR0 + i]);
    printf("\n");
    for (unsigned i = 0; i < ph->npte; i++)
        printf("    PTE at %#llx := %#llx\n", (unsigned long long)ph->pte[i].pa,
               (unsigned long long)ph->pte[i].pte);
}

static void report(const Trial *t, const Outcome *j, const Outcome *r)
{
    printf("FAIL trial seed %#llx (AUDIT_TRIAL=%#llx reruns it), %s entries\n",
           (unsigned long long)t->seed, (unsigned long long)t->seed,
           (t->seed >> 7) & 1 ? "specialized" : "generic");
    for (unsigned p = 0; p < t->nphases; p++)
        print_phase(t, p);
    print_code("block", t->block_pc, t->block, t->n + 1);
    print_code("M handler", M_HANDLER, ram_at((uint8_t *)t->ram, M_HANDLER), HANDLER_LEN);
    print_code("S handler", S_HANDLER, ram_at((uint8_t *)t->ram, S_HANDLER), HANDLER_LEN);
    printf("  differences (end: 0 stop, 1 trap limit, 2 step limit; p2: the second phase):\n");
    compare(j, r, false);
}

/* -- Main ------------------------------------------------------------------------- */

static Trial trial;
static Outcome out_jit, out_ref;

/* What the interpreter's runs did, to show the trials are not degenerate. */
static struct {
    unsigned ends[3], second_phases, runs;
    uint64_t steps, traps;
} totals;

static void count(const Trial *t, const Outcome *r)
{
    (void)t;
    for (unsigned p = 0; p < r->nphases; p++) {
        totals.ends[r->end[p]]++;
        totals.runs++;
    }
    totals.second_phases += r->nphases > 1;
    totals.traps += r->traps;
    totals.steps += r->steps;
}

/* One trial; true if both engines agree. */
/* Both engines through trial t; true if they agree (or the code loops). */
static bool check(const Trial *t)
{
    snprintf(hang_note, sizeof hang_note, "FAIL: the JIT never ended trial seed %#llx\n",
             (unsigned long long)t->seed);
    /* Half the trials with the generic entries (--tune no-entry-specialize). */
    tune.entry_specialize = (t->seed >> 7) & 1;
    run(t, false, &out_ref);
    count(t, &out_ref);
    if (out_ref.end[out_ref.nphases - 1] == END_STEPS) {
        /* The code loops (an xret back to an epc a handler left in the
         * block, say): any engine would too, and the JIT has no bound. */
        tune.entry_specialize = true;
        return true;
    }
    run(t, true, &out_jit);
    tune.entry_specialize = true;
    if (compare(&out_jit, &out_ref, true) == 0)
        return true;
    report(t, &out_jit, &out_ref);
    return false;
}

static bool audit(uint64_t seed)
{
    build_trial(&trial, seed);
    return check(&trial);
}

/* -- The cases that found bugs ---------------------------------------------------- */

/*
 * What random trials found JIT bugs with, rebuilt so that they stay
 * whatever the generator becomes: a random trial's surroundings (its
 * handlers, data, CSRs), with this privilege, these mstatus bits, paging
 * off, PMP open, one phase, and this block (then the stop jump).
 */
typedef struct Directed {
    const char *what;
    int mode;
    uint64_t status;                    /* mstatus bits set */
    uint64_t a2;                        /* the block's operand */
    uint32_t block[MAX_BLOCK];
    unsigned n;
} Directed;

static const Directed directed[] = {
    /* priv_entry_sret_s ran it, as from S-mode */
    { "sret in M-mode with mstatus.TSR (legal)", PRV_M, MSTATUS_TSR, 0, { 0x10200073 }, 1 },
    /* counted as retired before the entry refused it */
    { "sret in S-mode with mstatus.TSR (illegal)", PRV_S, MSTATUS_TSR, 0, { 0x10200073 }, 1 },
    /* csrw pmpcfg0, a2 (a locked entry without rights over all memory, as
     * pmpaddr0 is); then addi a3, a3, 1, whose fetch PMP now refuses: the
     * translated block went on and ran it */
    { "a PMP write refusing the next fetch", PRV_M, 0, 0x98, { 0x3a061073, 0x00168693 }, 2 },
};

static bool audit_directed(const Directed *d, uint64_t seed)
{
    build_trial(&trial, seed);
    Trial *t = &trial;
    Arch *a = &t->phase[0].init;
    t->nphases = 1;
    a->priv.mode = (uint8_t)d->mode;
    a->priv.mstatus |= d->status;
    a->priv.satp = 0;
    pmp_open_all(&a->priv.pmp);
    a->x[12] = d->a2;
    memset(ram_at(t->ram, t->block_pc), 0, 4 * (t->n + 1));
    t->n = d->n;
    memcpy(t->block, d->block, 4 * d->n);
    t->block[t->n] = JALR_STOP;
    memcpy(ram_at(t->ram, t->block_pc), t->block, 4 * (t->n + 1));
    if (check(t))
        return true;
    printf("  (the directed case: %s)\n", d->what);
    return false;
}

static void setup_machine(void)
{
    machine.ram = mmap(NULL, RAM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    if (machine.ram == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    machine.ram_size = RAM_SIZE;
    sys_mem_init();
    /* As xlat-system's main does with the JIT on; but every block here
     * runs once, and the first runs of a block are interpreted (--tune
     * first-interp): off, or the JIT would never see the code. */
    hart_use_jit = true;
    tune.fork_warm = false;
    tune.first_interp = false;
    exec_init();
    machine.nharts = 1;
    machine.harts[0] = h = hart_create(0);
    sys_mem_bind_thread(&h->cpu);
    signal(SIGALRM, on_alarm);
}

int main(int argc, char **argv)
{
    unsigned trials = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 3000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed;
    const char *one = getenv("AUDIT_TRIAL");
    log_file = stdout;
    if (getenv("AUDIT_LOG"))
        log_mask = LOG_IN_ASM | LOG_INT | LOG_MMU;
    setup_machine();

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned failed = 0, done = 0;
    if (one) {
        failed = !audit(strtoull(one, NULL, 0));
        done = 1;
    } else {
        for (size_t k = 0; k < sizeof directed / sizeof directed[0]; k++)
            for (uint64_t i = 0; i < 16 && failed < 5; i++, done++)
                failed += !audit_directed(&directed[k], trial_seed(seed + 1 + k, i));
        for (unsigned i = 0; i < trials && failed < 5; i++, done++)
            failed += !audit(trial_seed(seed, i));
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("test_system_audit: %u runs: %u to the stop, %u at the trap limit, %u at the step "
           "limit (a loop: not compared); %u second phases; %.1f instructions (interpreter "
           "steps) and %.1f traps a run\n", totals.runs,
           totals.ends[END_STOP], totals.ends[END_TRAPS], totals.ends[END_STEPS],
           totals.second_phases, (double)totals.steps / totals.runs,
           (double)totals.traps / totals.runs);
    printf("test_system_audit: %u trials (seed %#llx), %u mismatches, %.2f s: %s\n", done,
           (unsigned long long)seed, failed, s, failed ? "FAILED" : "ok");
    return failed != 0;
}
