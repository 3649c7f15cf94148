/*
 * Unit test of the interpreter (src/riscv/interp.c) and the host fault
 * path (src/user/fault.c).
 *
 * Instruction words are built from insn_table's match values (or written
 * out as the GNU assembler encodes them, for compressed forms), stored into
 * a mapped code page of the guest window and run with interp_step or
 * interp_run; registers, memory and exit details are then checked.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "riscv/cpu.h"
#include "riscv/insn.h"
#include "riscv/interp.h"
#include "user/fault.h"
#include "user/mm.h"
#include "user/options.h"
#include "check.h"

/* main.c (not linked into unit tests) owns the real one. */
__attribute__((weak)) Options opt;

#define CODE     0x10000ULL      /* 64 KiB, RWX */
#define CODE_LEN 0x10000ULL
#define DATA     0x40000ULL      /* 8 KiB, RW */
#define DATA_LEN 0x2000ULL
#define HOLE     0x50000ULL      /* in the window, never mapped */

static CPUState cpu;

/* The signal user mode makes of cpu's memory fault (user/fault.c). */
#define FSIG  (fault_signal_of(&cpu, EXIT_FAULT).signo)
#define FCODE (fault_signal_of(&cpu, EXIT_FAULT).code)

/* -- Encoding helpers (fields OR'ed into the table's match value) --------- */

static uint32_t r_type(int op, unsigned rd, unsigned rs1, unsigned rs2)
{
    return insn_table[op].match | rd << 7 | rs1 << 15 | rs2 << 20;
}

static uint32_t i_type(int op, unsigned rd, unsigned rs1, int32_t imm)
{
    return insn_table[op].match | rd << 7 | rs1 << 15 | ((uint32_t)imm & 0xfff) << 20;
}

static uint32_t s_type(int op, unsigned rs2, unsigned rs1, int32_t imm)
{
    uint32_t u = (uint32_t)imm;
    return insn_table[op].match | (u & 0x1f) << 7 | rs1 << 15 | rs2 << 20 | ((u >> 5) & 0x7f) << 25;
}

static uint32_t b_type(int op, unsigned rs1, unsigned rs2, int32_t off)
{
    uint32_t u = (uint32_t)off;
    return insn_table[op].match | rs1 << 15 | rs2 << 20 | ((u >> 12) & 1) << 31 |
           ((u >> 5) & 0x3f) << 25 | ((u >> 1) & 0xf) << 8 | ((u >> 11) & 1) << 7;
}

static uint32_t u_type(int op, unsigned rd, uint32_t imm20)
{
    return insn_table[op].match | rd << 7 | imm20 << 12;
}

static uint32_t j_type(unsigned rd, int32_t off)
{
    uint32_t u = (uint32_t)off;
    return insn_table[OP_jal].match | rd << 7 | ((u >> 20) & 1) << 31 |
           ((u >> 1) & 0x3ff) << 21 | ((u >> 11) & 1) << 20 | ((u >> 12) & 0xff) << 12;
}

static uint32_t csr_type(int op, unsigned rd, unsigned rs1, unsigned csr)
{
    return insn_table[op].match | rd << 7 | rs1 << 15 | csr << 20;
}

#define ECALL 0x00000073u

/* -- Running code --------------------------------------------------------- */

static void put32(uint64_t ga, uint32_t w) { memcpy(g2h(ga), &w, 4); }
static void put16(uint64_t ga, uint16_t h) { memcpy(g2h(ga), &h, 2); }
static uint64_t get64(uint64_t ga) { uint64_t v; memcpy(&v, g2h(ga), 8); return v; }
static void set64(uint64_t ga, uint64_t v) { memcpy(g2h(ga), &v, 8); }

static void reset_cpu(void)
{
    interp_cpu_exit(&cpu);
    memset(&cpu, 0, sizeof cpu);
    cpu.pc = CODE;
}

/* Execute one 32-bit instruction at CODE with the current registers. */
static enum exit_reason step1(uint32_t w)
{
    put32(CODE, w);
    cpu.pc = CODE;
    return interp_step(&cpu);
}

/* Store words at CODE followed by ecall and run to the ecall. */
static enum exit_reason run_words(const uint32_t *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        put32(CODE + 4 * i, w[i]);
    put32(CODE + 4 * n, ECALL);
    cpu.pc = CODE;
    return interp_run(&cpu);
}

/* rd = op(a, b) for an R-type instruction. */
static uint64_t alu(int op, uint64_t a, uint64_t b)
{
    cpu.x[5] = a;
    cpu.x[6] = b;
    cpu.x[7] = 0xdeadbeef;
    enum exit_reason r = step1(r_type(op, 7, 5, 6));
    CHECK_EQ(r, EXIT_NONE);
    CHECK_EQ(cpu.pc, CODE + 4);
    return cpu.x[7];
}

/* rd = op(a) for a unary instruction (the rs2 field is part of the opcode). */
static uint64_t alu1(int op, uint64_t a)
{
    cpu.x[5] = a;
    cpu.x[7] = 0xdeadbeef;
    enum exit_reason r = step1(r_type(op, 7, 5, 0));
    CHECK_EQ(r, EXIT_NONE);
    return cpu.x[7];
}

/* rd = op(a, imm) for an I-type or shift-immediate instruction. */
static uint64_t alui(int op, uint64_t a, int32_t imm)
{
    cpu.x[5] = a;
    enum exit_reason r = step1(i_type(op, 7, 5, imm));
    CHECK_EQ(r, EXIT_NONE);
    return cpu.x[7];
}

/* -- Tests ---------------------------------------------------------------- */

static void test_x0(void)
{
    reset_cpu();
    const uint32_t prog[] = {
        i_type(OP_addi, 0, 0, 5),       /* addi x0, x0, 5 */
        r_type(OP_add, 1, 0, 0),        /* add  x1, x0, x0 */
        u_type(OP_lui, 0, 0x12345),     /* lui  x0, ... */
        j_type(0, 4),                   /* jal  x0, +4 */
        i_type(OP_addi, 2, 0, 0),       /* addi x2, x0, 0 */
    };
    cpu.x[1] = cpu.x[2] = 77;
    CHECK_EQ(run_words(prog, 5), EXIT_ECALL);
    CHECK_EQ(cpu.x[0], 0);
    CHECK_EQ(cpu.x[1], 0);
    CHECK_EQ(cpu.x[2], 0);
    CHECK_EQ(cpu.pc, CODE + 20);
    CHECK_EQ(cpu.instret, 5);
}

static void test_alu(void)
{
    reset_cpu();
    CHECK_EQ(alu(OP_add, 1, UINT64_MAX), 0);
    CHECK_EQ(alu(OP_sub, 0, 1), UINT64_MAX);
    CHECK_EQ(alu(OP_slt, UINT64_MAX, 0), 1);
    CHECK_EQ(alu(OP_sltu, UINT64_MAX, 0), 0);
    CHECK_EQ(alui(OP_sltiu, 5, -1), 1);          /* imm sign-extends, compares unsigned */
    CHECK_EQ(alui(OP_slti, 5, -1), 0);
    CHECK_EQ(alui(OP_xori, 0x0f, -1), ~0x0fULL);
    CHECK_EQ(alui(OP_andi, 0x1234, 0x7f0), 0x230);

    /* W operations sign-extend their 32-bit results. */
    CHECK_EQ(alu(OP_addw, 0x7fffffff, 1), 0xffffffff80000000ULL);
    CHECK_EQ(alu(OP_subw, 0, 1), UINT64_MAX);
    CHECK_EQ(alu(OP_addw, 0xffffffff00000005ULL, 0), 5);
    CHECK_EQ(alui(OP_addiw, 0x7fffffff, 1), 0xffffffff80000000ULL);
    CHECK_EQ(alui(OP_addiw, 0x123456789ULL, 0), 0x23456789);   /* sext.w */

    /* Shifts use the low 6 (64-bit) or 5 (W) bits of the amount. */
    CHECK_EQ(alu(OP_sll, 1, 65), 2);
    CHECK_EQ(alu(OP_srl, 0x8000000000000000ULL, 63 + 64), 1);
    CHECK_EQ(alu(OP_sra, 0x8000000000000000ULL, 63), UINT64_MAX);
    CHECK_EQ(alu(OP_sllw, 1, 33), 2);
    CHECK_EQ(alu(OP_sllw, 1, 31), 0xffffffff80000000ULL);
    CHECK_EQ(alu(OP_srlw, 0xffffffff80000000ULL, 31), 1);
    CHECK_EQ(alu(OP_srlw, 0x80000000ULL, 0), 0xffffffff80000000ULL);
    CHECK_EQ(alu(OP_sraw, 0x80000000ULL, 4), 0xfffffffff8000000ULL);
    CHECK_EQ(alui(OP_slli, 1, 63), 0x8000000000000000ULL);
    CHECK_EQ(alui(OP_srai, 0x8000000000000000ULL, 60), UINT64_MAX << 3);
    CHECK_EQ(alui(OP_srliw, 0xffffffffULL, 0), UINT64_MAX);
    CHECK_EQ(alui(OP_sraiw, 0x80000000ULL, 31), UINT64_MAX);
}

static void test_lui_auipc_jumps(void)
{
    reset_cpu();
    CHECK_EQ(step1(u_type(OP_lui, 5, 0x80000)), EXIT_NONE);
    CHECK_EQ(cpu.x[5], 0xffffffff80000000ULL);
    CHECK_EQ(step1(u_type(OP_auipc, 5, 0x1)), EXIT_NONE);
    CHECK_EQ(cpu.x[5], CODE + 0x1000);
    CHECK_EQ(step1(u_type(OP_auipc, 5, 0xfffff)), EXIT_NONE);
    CHECK_EQ(cpu.x[5], CODE - 0x1000);

    CHECK_EQ(step1(j_type(1, 0x100)), EXIT_NONE);               /* jal ra, +0x100 */
    CHECK_EQ(cpu.x[1], CODE + 4);
    CHECK_EQ(cpu.pc, CODE + 0x100);

    cpu.x[5] = CODE + 0x201;                                    /* jalr clears bit 0 */
    CHECK_EQ(step1(i_type(OP_jalr, 1, 5, 0x10)), EXIT_NONE);
    CHECK_EQ(cpu.x[1], CODE + 4);
    CHECK_EQ(cpu.pc, CODE + 0x210);

    cpu.x[5] = CODE + 0x300;                                    /* jalr rd == rs1 */
    CHECK_EQ(step1(i_type(OP_jalr, 5, 5, -3)), EXIT_NONE);
    CHECK_EQ(cpu.x[5], CODE + 4);
    CHECK_EQ(cpu.pc, CODE + 0x2fc);

    cpu.x[5] = 3; cpu.x[6] = (uint64_t)-3;
    CHECK_EQ(step1(b_type(OP_blt, 6, 5, -8)), EXIT_NONE);
    CHECK_EQ(cpu.pc, CODE - 8);
    CHECK_EQ(step1(b_type(OP_bltu, 6, 5, -8)), EXIT_NONE);
    CHECK_EQ(cpu.pc, CODE + 4);
    CHECK_EQ(step1(b_type(OP_bgeu, 6, 5, 0x800)), EXIT_NONE);
    CHECK_EQ(cpu.pc, CODE + 0x800);
}

static void test_muldiv(void)
{
    const uint64_t MIN = 0x8000000000000000ULL, M1 = UINT64_MAX;
    reset_cpu();
    CHECK_EQ(alu(OP_div, 7, 0), M1);
    CHECK_EQ(alu(OP_divu, 7, 0), M1);
    CHECK_EQ(alu(OP_rem, 7, 0), 7);
    CHECK_EQ(alu(OP_remu, 7, 0), 7);
    CHECK_EQ(alu(OP_div, MIN, M1), MIN);
    CHECK_EQ(alu(OP_rem, MIN, M1), 0);
    CHECK_EQ(alu(OP_div, (uint64_t)-7, 2), (uint64_t)-3);
    CHECK_EQ(alu(OP_rem, (uint64_t)-7, 2), (uint64_t)-1);
    CHECK_EQ(alu(OP_divu, (uint64_t)-7, 2), 0x7ffffffffffffffcULL);

    CHECK_EQ(alu(OP_divw, 0x80000000ULL, M1), 0xffffffff80000000ULL);
    CHECK_EQ(alu(OP_remw, 0x80000000ULL, M1), 0);
    CHECK_EQ(alu(OP_divw, 5, 0x100000000ULL), M1);              /* divisor's low 32 bits are 0 */
    CHECK_EQ(alu(OP_remw, 0x1fffffff5ULL, 0), (uint64_t)-11);   /* remainder = sext(dividend) */
    CHECK_EQ(alu(OP_divuw, 5, 0), M1);
    CHECK_EQ(alu(OP_remuw, 0x80000001ULL, 0), 0xffffffff80000001ULL);
    CHECK_EQ(alu(OP_divuw, 0xffffffffULL, 1), M1);
    CHECK_EQ(alu(OP_divw, (uint64_t)-7, 2), (uint64_t)-3);

    CHECK_EQ(alu(OP_mul, 0x100000001ULL, 0x100000001ULL), 0x200000001ULL);
    CHECK_EQ(alu(OP_mulw, 0x10000ULL, 0x8000ULL), 0xffffffff80000000ULL);
    CHECK_EQ(alu(OP_mulh, M1, M1), 0);
    CHECK_EQ(alu(OP_mulhu, M1, M1), M1 - 1);
    CHECK_EQ(alu(OP_mulhsu, M1, M1), M1);
    CHECK_EQ(alu(OP_mulhsu, 2, M1), 1);
    CHECK_EQ(alu(OP_mulh, MIN, MIN), 0x4000000000000000ULL);
    CHECK_EQ(alu(OP_mulhsu, MIN, M1), 0x8000000000000000ULL);
}

static void test_bitmanip(void)
{
    reset_cpu();
    CHECK_EQ(alu(OP_sh3add, 2, 1), 17);
    CHECK_EQ(alu(OP_add_uw, 0xffffffff00000001ULL, 1), 2);
    CHECK_EQ(alu(OP_sh1add_uw, 0x180000000ULL, 0), 0x100000000ULL);
    CHECK_EQ(alui(OP_slli_uw, 0xffffffffffffffffULL, 4), 0xffffffff0ULL);
    CHECK_EQ(alu(OP_andn, 0xff, 0x0f), 0xf0);
    CHECK_EQ(alu(OP_orn, 0, 0xff), ~0xffULL);
    CHECK_EQ(alu(OP_xnor, 0xff, 0x0f), ~0xf0ULL);
    CHECK_EQ(alu1(OP_clz, 0), 64);
    CHECK_EQ(alu1(OP_clz, 1), 63);
    CHECK_EQ(alu1(OP_ctz, 0), 64);
    CHECK_EQ(alu1(OP_clzw, 0xffffffff00000000ULL), 32);
    CHECK_EQ(alu1(OP_ctzw, 0x100000000ULL), 32);
    CHECK_EQ(alu1(OP_cpopw, UINT64_MAX), 32);
    CHECK_EQ(alu1(OP_cpop, UINT64_MAX), 64);
    CHECK_EQ(alu1(OP_sext_b, 0x80), (uint64_t)-128);
    CHECK_EQ(alu1(OP_sext_h, 0x18000), 0xffffffffffff8000ULL);
    CHECK_EQ(alu1(OP_zext_h, (uint64_t)-1), 0xffff);
    CHECK_EQ(alu(OP_max, (uint64_t)-1, 1), 1);
    CHECK_EQ(alu(OP_maxu, (uint64_t)-1, 1), (uint64_t)-1);
    CHECK_EQ(alu(OP_min, (uint64_t)-1, 1), (uint64_t)-1);
    CHECK_EQ(alu(OP_minu, (uint64_t)-1, 1), 1);
    CHECK_EQ(alu(OP_rol, 0x8000000000000001ULL, 65), 3);
    CHECK_EQ(alu(OP_ror, 3, 1), 0x8000000000000001ULL);
    CHECK_EQ(alu(OP_rolw, 0x80000001ULL, 1), 3);
    CHECK_EQ(alu(OP_rorw, 3, 33), 0xffffffff80000001ULL);
    CHECK_EQ(alui(OP_rori, 1, 0), 1);
    CHECK_EQ(alui(OP_rori, 1, 63), 2);
    CHECK_EQ(alui(OP_roriw, 1, 1), 0xffffffff80000000ULL);
    CHECK_EQ(alu1(OP_orc_b, 0x0100002000000003ULL), 0xff0000ff000000ffULL);
    CHECK_EQ(alu1(OP_rev8, 0x0102030405060708ULL), 0x0807060504030201ULL);
    CHECK_EQ(alu(OP_bset, 0, 64 + 3), 8);
    CHECK_EQ(alu(OP_bclr, 0xff, 3), 0xf7);
    CHECK_EQ(alu(OP_binv, 0, 63), 0x8000000000000000ULL);
    CHECK_EQ(alu(OP_bext, 0x8000000000000000ULL, 63), 1);
    CHECK_EQ(alui(OP_bseti, 0, 63), 0x8000000000000000ULL);
    CHECK_EQ(alui(OP_bclri, UINT64_MAX, 0), UINT64_MAX - 1);
    CHECK_EQ(alui(OP_binvi, 1, 0), 0);
    CHECK_EQ(alui(OP_bexti, 4, 2), 1);
}

static void test_compressed(void)
{
    reset_cpu();
    /* c.addi a0,1; c.li a1,-3; c.add a0,a1; c.addiw a0,-1; c.mv a5,a0;
     * c.addi16sp sp,-64; c.sdsp a3,16(sp); c.ldsp a3,8(sp); c.lui a2,0xfffe1;
     * c.fldsp fa0,8(sp); c.j +6 (skips c.nop); c.nop; c.jalr a4 */
    const uint16_t prog[] = { 0x0505, 0x55f5, 0x952e, 0x357d, 0x87aa, 0x7139,
                              0xe836, 0x66a2, 0x7605, 0x2522, 0xa019, 0x0001,
                              0x0001, 0x9702 };
    for (size_t i = 0; i < sizeof prog / 2; i++)
        put16(CODE + 2 * i, prog[i]);
    put32(CODE + 0x40, ECALL);
    cpu.x[2] = DATA + 0x100;
    cpu.x[10] = 0x7fffffff;
    cpu.x[13] = 0x1122334455667788ULL;
    cpu.x[14] = CODE + 0x40;
    set64(DATA + 0x100 - 64 + 8, 0xabcdef);
    cpu.pc = CODE;
    CHECK_EQ(interp_run(&cpu), EXIT_ECALL);
    CHECK_EQ(cpu.pc, CODE + 0x40);
    CHECK_EQ(cpu.x[11], (uint64_t)-3);
    /* 0x7fffffff + 1 - 3 = 0x7ffffffd (64-bit add), then addiw -1 */
    CHECK_EQ(cpu.x[10], 0x7ffffffc);
    CHECK_EQ(cpu.x[15], 0x7ffffffc);
    CHECK_EQ(cpu.x[2], DATA + 0x100 - 64);
    CHECK_EQ(get64(DATA + 0x100 - 64 + 16), 0x1122334455667788ULL);
    CHECK_EQ(cpu.x[13], 0xabcdef);
    CHECK_EQ(cpu.x[12], 0xfffffffffffe1000ULL);
    CHECK_EQ(cpu.f[10], 0xabcdef);
    CHECK_EQ(cpu.x[1], CODE + 0x1c);        /* c.jalr links pc + 2 */
    CHECK_EQ(cpu.instret, 12);
}

static void test_loads_stores(void)
{
    reset_cpu();
    cpu.x[5] = DATA;
    set64(DATA, 0x8081828384858687ULL);
    CHECK_EQ(step1(i_type(OP_lb, 6, 5, 0)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], (uint64_t)(int8_t)0x87);
    CHECK_EQ(step1(i_type(OP_lbu, 6, 5, 0)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0x87);
    CHECK_EQ(step1(i_type(OP_lh, 6, 5, 2)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0xffffffffffff8485ULL);
    CHECK_EQ(step1(i_type(OP_lhu, 6, 5, 2)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0x8485);
    CHECK_EQ(step1(i_type(OP_lw, 6, 5, 4)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0xffffffff80818283ULL);
    CHECK_EQ(step1(i_type(OP_lwu, 6, 5, 4)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0x80818283ULL);
    /* misaligned load and store are allowed */
    CHECK_EQ(step1(i_type(OP_ld, 6, 5, 1)), EXIT_NONE);
    CHECK_EQ(cpu.x[6] & 0x00ffffffffffffffULL, 0x0080818283848586ULL);
    cpu.x[7] = 0x1122334455667788ULL;
    CHECK_EQ(step1(s_type(OP_sd, 7, 5, 0x103)), EXIT_NONE);
    CHECK_EQ(get64(DATA + 0x100) >> 24, 0x4455667788ULL);
    CHECK_EQ(step1(i_type(OP_ld, 8, 5, 0x103)), EXIT_NONE);
    CHECK_EQ(cpu.x[8], 0x1122334455667788ULL);
    CHECK_EQ(step1(s_type(OP_sh, 7, 5, 0)), EXIT_NONE);
    CHECK_EQ(get64(DATA), 0x8081828384857788ULL);
    CHECK_EQ(step1(s_type(OP_sb, 7, 5, 7)), EXIT_NONE);
    CHECK_EQ(get64(DATA), 0x8881828384857788ULL);
    CHECK_EQ(step1(s_type(OP_sw, 7, 5, 0)), EXIT_NONE);
    CHECK_EQ(get64(DATA), 0x8881828355667788ULL);

    /* flw NaN-boxes; fsw stores the low 32 bits */
    CHECK_EQ(step1(i_type(OP_flw, 3, 5, 0)), EXIT_NONE);
    CHECK_EQ(cpu.f[3], 0xffffffff55667788ULL);
    cpu.f[4] = 0x123456789abcdef0ULL;
    CHECK_EQ(step1(s_type(OP_fsw, 4, 5, 8)), EXIT_NONE);
    CHECK_EQ(get64(DATA + 8) & 0xffffffff, 0x9abcdef0);
    CHECK_EQ(step1(s_type(OP_fsd, 4, 5, 16)), EXIT_NONE);
    CHECK_EQ(step1(i_type(OP_fld, 9, 5, 16)), EXIT_NONE);
    CHECK_EQ(cpu.f[9], 0x123456789abcdef0ULL);
}

static uint32_t amo(int op, unsigned rd, unsigned rs1, unsigned rs2)
{
    return r_type(op, rd, rs1, rs2);
}

static void test_atomics(void)
{
    reset_cpu();
    uint64_t a = DATA + 0x200;
    cpu.x[10] = a;
    set64(a, 5);

    /* lr/sc success */
    CHECK_EQ(step1(amo(OP_lr_d, 1, 10, 0)), EXIT_NONE);
    CHECK_EQ(cpu.x[1], 5);
    cpu.x[3] = 99;
    CHECK_EQ(step1(amo(OP_sc_d, 2, 10, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[2], 0);
    CHECK_EQ(get64(a), 99);
    /* sc without reservation fails and does not store */
    cpu.x[3] = 100;
    CHECK_EQ(step1(amo(OP_sc_d, 2, 10, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[2], 1);
    CHECK_EQ(get64(a), 99);
    /* reservation broken by a store of a different value */
    CHECK_EQ(step1(amo(OP_lr_d, 1, 10, 0)), EXIT_NONE);
    set64(a, 7);
    CHECK_EQ(step1(amo(OP_sc_d, 2, 10, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[2], 1);
    CHECK_EQ(get64(a), 7);
    /* sc to another address fails */
    CHECK_EQ(step1(amo(OP_lr_d, 1, 10, 0)), EXIT_NONE);
    cpu.x[11] = a + 8;
    CHECK_EQ(step1(amo(OP_sc_d, 2, 11, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[2], 1);
    /* lr.w sign-extends; sc.w stores 32 bits */
    set64(a, 0x11111111f0000000ULL);
    CHECK_EQ(step1(amo(OP_lr_w, 1, 10, 0)), EXIT_NONE);
    CHECK_EQ(cpu.x[1], 0xfffffffff0000000ULL);
    cpu.x[3] = 0xaaaaaaaa12345678ULL;
    CHECK_EQ(step1(amo(OP_sc_w, 2, 10, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[2], 0);
    CHECK_EQ(get64(a), 0x1111111112345678ULL);

    /* AMOs return the old value, sign-extended for .w */
    set64(a, 0x00000000fffffffeULL);
    cpu.x[3] = 3;
    CHECK_EQ(step1(amo(OP_amoadd_w, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[4], 0xfffffffffffffffeULL);
    CHECK_EQ(get64(a), 1);
    cpu.x[3] = (uint64_t)-5;
    CHECK_EQ(step1(amo(OP_amomin_w, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(get64(a), 0xfffffffbULL);
    cpu.x[3] = 2;
    CHECK_EQ(step1(amo(OP_amomaxu_w, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(get64(a), 0xfffffffbULL);
    CHECK_EQ(step1(amo(OP_amomax_w, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[4], (uint64_t)-5);
    CHECK_EQ(get64(a), 2);
    set64(a, 0xf0);
    cpu.x[3] = 0x3c;
    CHECK_EQ(step1(amo(OP_amoand_d, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(get64(a), 0x30);
    CHECK_EQ(step1(amo(OP_amoor_d, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(get64(a), 0x3c);
    CHECK_EQ(step1(amo(OP_amoxor_d, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(get64(a), 0);
    cpu.x[3] = (uint64_t)-1;
    CHECK_EQ(step1(amo(OP_amominu_d, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(get64(a), 0);
    CHECK_EQ(step1(amo(OP_amomin_d, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(get64(a), (uint64_t)-1);
    cpu.x[3] = 42;
    CHECK_EQ(step1(amo(OP_amoswap_d, 4, 10, 3)), EXIT_NONE);
    CHECK_EQ(cpu.x[4], (uint64_t)-1);
    CHECK_EQ(get64(a), 42);

    /* misaligned AMO: SIGBUS/BUS_ADRALN, nothing changed */
    cpu.x[11] = a + 4;
    cpu.x[4] = 1234;
    CHECK_EQ(step1(amo(OP_amoadd_d, 4, 11, 3)), EXIT_FAULT);
    CHECK_EQ(cpu.fault.kind, MEM_FAULT_MISALIGNED);
    CHECK_EQ(cpu.fault.access, MEM_AMO);
    CHECK_EQ(FSIG, SIGBUS);
    CHECK_EQ(FCODE, BUS_ADRALN);
    CHECK_EQ(cpu.fault.addr, a + 4);
    CHECK_EQ(cpu.pc, CODE);
    CHECK_EQ(cpu.x[4], 1234);

    /* misaligned LR: SIGBUS/BUS_ADRALN too, reported as a load's fault */
    cpu.x[11] = a + 2;
    CHECK_EQ(step1(amo(OP_lr_w, 4, 11, 0)), EXIT_FAULT);
    CHECK_EQ(cpu.fault.kind, MEM_FAULT_MISALIGNED);
    CHECK_EQ(cpu.fault.access, MEM_LOAD);
    CHECK_EQ(FSIG, SIGBUS);
    CHECK_EQ(FCODE, BUS_ADRALN);
    CHECK_EQ(cpu.fault.addr, a + 2);
    CHECK_EQ(cpu.x[4], 1234);
    CHECK_EQ(step1(amo(OP_sc_d, 4, 11, 3)), EXIT_FAULT);
    CHECK_EQ(cpu.fault.kind, MEM_FAULT_MISALIGNED);
    CHECK_EQ(cpu.fault.access, MEM_AMO);
    CHECK_EQ(FCODE, BUS_ADRALN);
}

static void test_csr(void)
{
    reset_cpu();
    cpu.x[5] = 0xff;
    CHECK_EQ(step1(csr_type(OP_csrrw, 6, 5, CSR_FCSR)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0);
    CHECK_EQ(cpu.fflags, 0x1f);
    CHECK_EQ(cpu.frm, 7);
    CHECK_EQ(step1(csr_type(OP_csrrs, 6, 0, CSR_FCSR)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0xff);
    CHECK_EQ(step1(csr_type(OP_csrrci, 6, 0x3, CSR_FFLAGS)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 0x1f);
    CHECK_EQ(cpu.fflags, 0x1c);
    CHECK_EQ(step1(csr_type(OP_csrrwi, 6, 1, CSR_FRM)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 7);
    CHECK_EQ(cpu.frm, 1);
    CHECK_EQ(step1(csr_type(OP_csrrsi, 6, 4, CSR_FRM)), EXIT_NONE);
    CHECK_EQ(cpu.frm, 5);
    CHECK_EQ(step1(csr_type(OP_csrrs, 6, 0, CSR_FCSR)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 5 << 5 | 0x1c);
    cpu.x[5] = 0x3;
    CHECK_EQ(step1(csr_type(OP_csrrc, 6, 5, CSR_FCSR)), EXIT_NONE);
    CHECK_EQ(cpu.fflags, 0x1c);
    cpu.x[5] = 0x1e1;
    CHECK_EQ(step1(csr_type(OP_csrrw, 0, 5, CSR_FFLAGS)), EXIT_NONE);
    CHECK_EQ(cpu.fflags, 1);

    /* counters: readable, not writable */
    cpu.instret = 1000;
    CHECK_EQ(step1(csr_type(OP_csrrs, 6, 0, CSR_INSTRET)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 1000);
    CHECK_EQ(step1(csr_type(OP_csrrs, 6, 0, CSR_CYCLE)), EXIT_NONE);
    CHECK_EQ(cpu.x[6], 1001);
    CHECK_EQ(step1(csr_type(OP_csrrs, 6, 0, CSR_TIME)), EXIT_NONE);
    uint64_t t0 = cpu.x[6];
    CHECK_EQ(step1(csr_type(OP_csrrs, 6, 0, CSR_TIME)), EXIT_NONE);
    CHECK(cpu.x[6] >= t0);
    cpu.x[6] = 55;
    CHECK_EQ(step1(csr_type(OP_csrrw, 6, 5, CSR_CYCLE)), EXIT_ILLEGAL);
    CHECK_EQ(cpu.x[6], 55);
    CHECK_EQ(step1(csr_type(OP_csrrsi, 6, 1, CSR_TIME)), EXIT_ILLEGAL);
    CHECK_EQ(step1(csr_type(OP_csrrs, 6, 0, 0x300)), EXIT_ILLEGAL);   /* mstatus */
    CHECK_EQ(cpu.pc, CODE);
    CHECK_EQ(cpu.x[6], 55);
}

static void test_exits(void)
{
    reset_cpu();
    put32(CODE + 8, 0);                 /* .word 0 */
    cpu.pc = CODE + 8;
    CHECK_EQ(interp_run(&cpu), EXIT_ILLEGAL);
    CHECK_EQ(cpu.pc, CODE + 8);
    CHECK_EQ(fault_signal_of(&cpu, EXIT_ILLEGAL).signo, SIGILL);
    CHECK_EQ(fault_signal_of(&cpu, EXIT_ILLEGAL).code, ILL_ILLOPC);
    CHECK_EQ(fault_signal_of(&cpu, EXIT_ILLEGAL).addr, CODE + 8);

    CHECK_EQ(step1(0x00100073), EXIT_EBREAK);
    CHECK_EQ(cpu.pc, CODE);
    CHECK_EQ(step1(ECALL), EXIT_ECALL);
    CHECK_EQ(cpu.pc, CODE);

    /* an infinite loop stops on exit_request */
    cpu.exit_request = 1;
    CHECK_EQ(step1(j_type(0, 0)), EXIT_NONE);    /* interp_step ignores it */
    CHECK_EQ(interp_run(&cpu), EXIT_REQUEST);
    CHECK_EQ(cpu.pc, CODE);
    cpu.exit_request = 0;
}

static void test_faults(void)
{
    reset_cpu();
    /* addi x5,x5,1 ; ld x6, 8(x7) ; addi x5,x5,1  with x7 in an unmapped page */
    const uint32_t prog[] = {
        i_type(OP_addi, 5, 5, 1),
        i_type(OP_ld, 6, 7, 8),
        i_type(OP_addi, 5, 5, 1),
    };
    cpu.x[6] = 0x66;
    cpu.x[7] = HOLE;
    CHECK_EQ(run_words(prog, 3), EXIT_FAULT);
    CHECK_EQ(cpu.pc, CODE + 4);
    CHECK_EQ(cpu.fault.kind, MEM_FAULT_PROT);        /* the host's view of an unmapped page */
    CHECK_EQ(cpu.fault.access, MEM_LOAD);
    CHECK_EQ(FSIG, SIGSEGV);
    CHECK_EQ(cpu.fault.addr, HOLE + 8);
    CHECK_EQ(FCODE, SEGV_MAPERR);
    CHECK_EQ(cpu.x[5], 1);
    CHECK_EQ(cpu.x[6], 0x66);
    CHECK_EQ(cpu.instret, 1);

    /* store to an unmapped page; then the same store outside the window */
    reset_cpu();
    cpu.x[7] = HOLE;
    CHECK_EQ(step1(s_type(OP_sw, 5, 7, -4)), EXIT_FAULT);
    CHECK_EQ(cpu.fault.access, MEM_STORE);
    CHECK_EQ(cpu.fault.addr, HOLE - 4);
    cpu.x[7] = 1ULL << 45;
    CHECK_EQ(step1(i_type(OP_lw, 6, 7, 0)), EXIT_FAULT);
    CHECK_EQ(cpu.fault.kind, MEM_FAULT_UNMAPPED);
    CHECK_EQ(FSIG, SIGSEGV);
    CHECK_EQ(FCODE, SEGV_MAPERR);
    CHECK_EQ(cpu.fault.addr, 1ULL << 45);
    CHECK_EQ(cpu.pc, CODE);
    cpu.x[7] = GUEST_SPACE_SIZE - 4;                /* straddles the window end */
    CHECK_EQ(step1(i_type(OP_ld, 6, 7, 0)), EXIT_FAULT);
    CHECK_EQ(FCODE, SEGV_MAPERR);

    /* store into a read-only page: nothing written, ACCERR */
    set64(DATA + 0x1000, 0);
    CHECK_EQ(guest_mprotect(DATA + 0x1000, 0x1000, PROT_READ), 0);
    cpu.x[7] = DATA + 0x1000;
    cpu.x[5] = 0x55;
    CHECK_EQ(step1(s_type(OP_sd, 5, 7, 0)), EXIT_FAULT);
    CHECK_EQ(cpu.fault.kind, MEM_FAULT_PROT);
    CHECK_EQ(cpu.fault.access, MEM_STORE);
    CHECK_EQ(FSIG, SIGSEGV);
    CHECK_EQ(FCODE, SEGV_ACCERR);
    CHECK_EQ(cpu.fault.addr, DATA + 0x1000);
    CHECK_EQ(get64(DATA + 0x1000), 0);
    CHECK_EQ(step1(amo(OP_amoadd_d, 4, 7, 5)), EXIT_FAULT);
    CHECK_EQ(FCODE, SEGV_ACCERR);
    CHECK_EQ(step1(i_type(OP_ld, 6, 7, 0)), EXIT_NONE);
    CHECK_EQ(guest_mprotect(DATA + 0x1000, 0x1000, PROT_READ | PROT_WRITE), 0);

    /* fetch from an unmapped page */
    cpu.pc = HOLE + 0x10;
    CHECK_EQ(interp_run(&cpu), EXIT_FAULT);
    CHECK_EQ(cpu.pc, HOLE + 0x10);
    CHECK_EQ(cpu.fault.addr, HOLE + 0x10);
    CHECK_EQ(FCODE, SEGV_MAPERR);
    cpu.pc = 1ULL << 50;
    CHECK_EQ(interp_run(&cpu), EXIT_FAULT);
    CHECK_EQ(cpu.fault.addr, 1ULL << 50);

    /* fetch from a readable page without PROT_EXEC */
    put32(DATA + 0x20, i_type(OP_addi, 5, 0, 1));
    cpu.pc = DATA + 0x20;
    CHECK_EQ(interp_run(&cpu), EXIT_FAULT);
    CHECK_EQ(cpu.fault.kind, MEM_FAULT_PROT);
    CHECK_EQ(cpu.fault.access, MEM_FETCH);
    CHECK_EQ(FSIG, SIGSEGV);
    CHECK_EQ(FCODE, SEGV_ACCERR);
    CHECK_EQ(cpu.fault.addr, DATA + 0x20);

    /* code that loses PROT_EXEC after it ran (and was cached) */
    uint64_t pg = CODE + 0x8000;
    put32(pg, i_type(OP_addi, 5, 0, 1));
    cpu.pc = pg;
    CHECK_EQ(interp_step(&cpu), EXIT_NONE);
    CHECK_EQ(guest_mprotect(pg, 0x1000, PROT_READ), 0);
    interp_flush_cache();
    cpu.pc = pg;
    CHECK_EQ(interp_step(&cpu), EXIT_FAULT);
    CHECK_EQ(FCODE, SEGV_ACCERR);
    CHECK_EQ(guest_mprotect(pg, 0x1000, PROT_READ | PROT_WRITE | PROT_EXEC), 0);
    cpu.pc = pg;
    CHECK_EQ(interp_step(&cpu), EXIT_NONE);

    /* a compressed instruction in the last 2 bytes of the last mapped page
     * runs without touching the next page; a 32-bit one there faults */
    uint64_t end = CODE + CODE_LEN;             /* HOLE side: CODE+CODE_LEN unmapped */
    put32(end - 6, i_type(OP_addi, 5, 0, 9));
    put16(end - 2, 0x0505);                     /* c.addi a0,1 */
    cpu.x[10] = 1;
    cpu.pc = end - 6;
    CHECK_EQ(interp_step(&cpu), EXIT_NONE);
    CHECK_EQ(interp_step(&cpu), EXIT_NONE);
    CHECK_EQ(cpu.x[10], 2);
    CHECK_EQ(cpu.pc, end);
    CHECK_EQ(interp_step(&cpu), EXIT_FAULT);
    CHECK_EQ(cpu.fault.addr, end);
    put16(end - 2, 0x0513);                     /* first half of a 32-bit addi */
    cpu.pc = end - 2;
    CHECK_EQ(interp_step(&cpu), EXIT_FAULT);
    CHECK_EQ(cpu.pc, end - 2);
    CHECK_EQ(cpu.fault.addr, end);

    /* the fault handler is still armed after all that */
    cpu.x[7] = HOLE;
    CHECK_EQ(step1(i_type(OP_ld, 6, 7, 0)), EXIT_FAULT);
}

static void test_self_modifying(void)
{
    reset_cpu();
    const uint32_t a[] = { i_type(OP_addi, 5, 0, 1) };
    const uint32_t b[] = { i_type(OP_addi, 5, 0, 2) };
    CHECK_EQ(run_words(a, 1), EXIT_ECALL);
    CHECK_EQ(cpu.x[5], 1);
    CHECK_EQ(run_words(b, 1), EXIT_ECALL);
    CHECK_EQ(cpu.x[5], 2);
}

/* A small loop: sum 1..100 with a backward branch. */
static void test_loop(void)
{
    reset_cpu();
    const uint32_t prog[] = {
        i_type(OP_addi, 5, 0, 100),     /* t0 = 100 */
        i_type(OP_addi, 6, 0, 0),       /* t1 = 0 */
        r_type(OP_add, 6, 6, 5),        /* loop: t1 += t0 */
        i_type(OP_addi, 5, 5, -1),      /* t0-- */
        b_type(OP_bne, 5, 0, -8),       /* bnez t0, loop */
    };
    CHECK_EQ(run_words(prog, 5), EXIT_ECALL);
    CHECK_EQ(cpu.x[6], 5050);
    CHECK_EQ(cpu.instret, 2 + 300);
}

int main(void)
{
    mm_init();
    fault_init();
    if (guest_map_fixed(CODE, CODE_LEN, PROT_READ | PROT_WRITE | PROT_EXEC, "code") != 0 ||
        guest_map_fixed(DATA, DATA_LEN, PROT_READ | PROT_WRITE, "data") != 0) {
        printf("FAIL: guest_map_fixed\n");
        return 1;
    }

    test_x0();
    test_alu();
    test_lui_auipc_jumps();
    test_muldiv();
    test_bitmanip();
    test_compressed();
    test_loads_stores();
    test_atomics();
    test_csr();
    test_exits();
    test_faults();
    test_self_modifying();
    test_loop();

    if (failures) {
        printf("test_interp: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_interp: ok\n");
    return 0;
}
