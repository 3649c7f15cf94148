/*
 * The bare-metal test library of tests/system/ (lib.c, start.S): what a
 * test of xlat-system's privileged architecture and devices needs.
 *
 * A test is one C file with main(); start.S enters it in M-mode (-bios
 * none) or, built with -DSMODE, in S-mode under the SBI (-bios default),
 * with a trap handler installed at every level the test owns. Each check
 * prints one line on the UART, "ok   WHAT" or "FAIL WHAT: got X want Y";
 * after main() returns, finish() prints "END n checks, f failed" and ends
 * the run through the syscon (0x5555: pass; (f << 16) | 0x3333: fail) or,
 * in S-mode, through SBI SRST.
 *
 * Traps: every trap that is not the end of a run_in_mode() call is logged
 * (trap_log, trap_count), offered to trap_hook, and otherwise handled by
 * default: an interrupt is disabled in mie/sie (so a test sees which ones
 * came, in order), a fetch fault returns to the caller (epc = ra: the
 * probe_fetch() convention), any other exception skips the instruction.
 *
 * Values are those of the privileged spec 1.12 and the virt machine
 * (QEMU's memory map); nothing here is taken from xlat's sources.
 */
#ifndef TESTS_SYSTEM_SYS_H
#define TESTS_SYSTEM_SYS_H

#include <stdint.h>

/* -- The machine --------------------------------------------------------- */

#define SYSCON_BASE   0x00100000UL
#define RTC_BASE      0x00101000UL
#define CLINT_BASE    0x02000000UL
#define CLINT_MSIP(h)     (CLINT_BASE + 4 * (h))
#define CLINT_MTIMECMP(h) (CLINT_BASE + 0x4000 + 8 * (h))
#define CLINT_MTIME       (CLINT_BASE + 0xbff8)
#define PLIC_BASE     0x0c000000UL
#define PLIC_PRIORITY(irq)   (PLIC_BASE + 4 * (irq))
#define PLIC_PENDING(word)   (PLIC_BASE + 0x1000 + 4 * (word))
#define PLIC_ENABLE(ctx)     (PLIC_BASE + 0x2000 + 0x80 * (ctx))
#define PLIC_THRESHOLD(ctx)  (PLIC_BASE + 0x200000 + 0x1000 * (ctx))
#define PLIC_CLAIM(ctx)      (PLIC_BASE + 0x200004 + 0x1000 * (ctx))
#define UART_BASE     0x10000000UL
#define UART_IRQ      10
#define RAM_BASE      0x80000000UL
#define NOTHING_ADDR  0x00200000UL   /* no device, no RAM (QEMU's map too) */

#define MMIO8(a)  (*(volatile uint8_t *)(uintptr_t)(a))
#define MMIO32(a) (*(volatile uint32_t *)(uintptr_t)(a))
#define MMIO64(a) (*(volatile uint64_t *)(uintptr_t)(a))

/* -- Privileged architecture --------------------------------------------- */

enum { PRV_U = 0, PRV_S = 1, PRV_M = 3 };

#define MSTATUS_SIE   (1UL << 1)
#define MSTATUS_MIE   (1UL << 3)
#define MSTATUS_SPIE  (1UL << 5)
#define MSTATUS_MPIE  (1UL << 7)
#define MSTATUS_SPP   (1UL << 8)
#define MSTATUS_MPP   (3UL << 11)
#define MSTATUS_FS    (3UL << 13)
#define MSTATUS_MPRV  (1UL << 17)
#define MSTATUS_SUM   (1UL << 18)
#define MSTATUS_MXR   (1UL << 19)
#define MSTATUS_TVM   (1UL << 20)
#define MSTATUS_TW    (1UL << 21)
#define MSTATUS_TSR   (1UL << 22)
#define MSTATUS_UXL   (3UL << 32)
#define MSTATUS_SXL   (3UL << 34)
#define MSTATUS_SD    (1UL << 63)
#define MPP_SHIFT 11

#define IRQ_SSI 1
#define IRQ_MSI 3
#define IRQ_STI 5
#define IRQ_MTI 7
#define IRQ_SEI 9
#define IRQ_MEI 11
#define MIP(irq) (1UL << (irq))
#define INTERRUPT (1UL << 63)

enum {
    EXC_FETCH_MISALIGNED = 0, EXC_FETCH_ACCESS = 1, EXC_ILLEGAL = 2, EXC_BREAKPOINT = 3,
    EXC_LOAD_MISALIGNED = 4, EXC_LOAD_ACCESS = 5, EXC_STORE_MISALIGNED = 6,
    EXC_STORE_ACCESS = 7, EXC_ECALL_U = 8, EXC_ECALL_S = 9, EXC_ECALL_M = 11,
    EXC_FETCH_PAGE = 12, EXC_LOAD_PAGE = 13, EXC_STORE_PAGE = 15,
};

#define MENVCFG_STCE (1UL << 63)
#define SATP_MODE(m) ((uint64_t)(m) << 60)
enum { SATP_BARE = 0, SATP_SV39 = 8, SATP_SV48 = 9, SATP_SV57 = 10 };

#define STR_(x) #x
#define STR(x) STR_(x)
#define csr_read(csr) ({ uint64_t v_;                                         \
        asm volatile("csrr %0, " STR(csr) : "=r"(v_) :: "memory"); v_; })
#define csr_write(csr, v) asm volatile("csrw " STR(csr) ", %0" :: "r"((uint64_t)(v)) : "memory")
#define csr_set(csr, v)   asm volatile("csrs " STR(csr) ", %0" :: "r"((uint64_t)(v)) : "memory")
#define csr_clear(csr, v) asm volatile("csrc " STR(csr) ", %0" :: "r"((uint64_t)(v)) : "memory")
#define csr_swap(csr, v) ({ uint64_t o_;                                      \
        asm volatile("csrrw %0, " STR(csr) ", %1" : "=r"(o_) : "r"((uint64_t)(v)) : "memory"); \
        o_; })

static inline uint64_t rdtime(void) { return csr_read(time); }
static inline void sfence_vma(void) { asm volatile("sfence.vma" ::: "memory"); }
static inline void sfence_vma_addr(uint64_t va)
{
    asm volatile("sfence.vma %0" :: "r"(va) : "memory");
}

/* Ticks of the time CSR (10 MHz on the virt machine) in us microseconds. */
#define TICKS_PER_US 10UL

/* Spin until cond holds or us microseconds of time pass: cond's value. */
#define WAIT_FOR(cond, us) ({                                           \
        uint64_t t0_ = rdtime();                                        \
        while (!(cond) && rdtime() - t0_ < (uint64_t)(us) * TICKS_PER_US) \
            ;                                                           \
        (cond) ? 1 : 0;                                                 \
    })

/* -- Output and checks --------------------------------------------------- */

void put_char(char c);
void put_str(const char *s);
void put_hex(uint64_t v);
void put_dec(uint64_t v);
void section(const char *name);          /* "== name" */

void check(const char *what, int ok);
void check_eq(const char *what, uint64_t got, uint64_t want);
void check_range(const char *what, uint64_t got, uint64_t lo, uint64_t hi);
void check_bits(const char *what, uint64_t got, uint64_t mask, uint64_t want);
#define CHECK(what, cond)              check(what, (cond) != 0)
#define CHECK_EQ(what, got, want)      check_eq(what, (uint64_t)(got), (uint64_t)(want))
#define CHECK_BITS(what, got, m, want) \
    check_bits(what, (uint64_t)(got), (uint64_t)(m), (uint64_t)(want))

/* End the run now: a summary line, then the syscon (or SBI SRST). */
__attribute__((noreturn)) void finish(void);

/* -- Traps --------------------------------------------------------------- */

/* What the trap entry saved (start.S): x[2] is the interrupted sp. */
typedef struct Frame {
    uint64_t x[32];
    uint64_t cause, epc, tval, status;    /* xstatus as the trap left it */
} Frame;

typedef struct TrapRec {
    uint64_t cause, epc, tval, status;
    int level;                            /* PRV_M or PRV_S: who took it */
} TrapRec;

#define TRAP_LOG 32
extern volatile TrapRec trap_log[TRAP_LOG];
extern volatile int trap_count;
void traps_reset(void);

/* Called for every logged trap before the default action; nonzero: done. */
typedef int (*TrapHook)(Frame *f, int level);
extern volatile TrapHook trap_hook;

#define ANY ((uint64_t)-1)      /* expect_trap: a field not checked */
/* Exactly one trap since traps_reset(), with these values. */
void expect_trap(const char *what, int level, uint64_t cause, uint64_t epc, uint64_t tval);
void expect_no_trap(const char *what);

/* Take one M-mode interrupt of the mie bits: traps reset, hook installed,
 * mie and mstatus.MIE on until a trap arrives or us microseconds pass, then
 * all off again. Whether one came: trap_count > 0. */
void take_m_interrupt(TrapHook hook, uint64_t mie_bits, uint64_t us);

/*
 * Run fn(arg) in mode (PRV_U or PRV_S; from M) with mret or (PRV_U,
 * from S) with sret, and return its result when it returns: it returns to
 * an ecall that trap_dispatch turns back into this call's return (U's ecall
 * delegated to S is passed on to M when M made the call). code_alias is
 * added to fn, to its stack and return addresses: U code under paging runs
 * in an alias mapping of the image with U set.
 */
long run_in_mode_m(int mode, long (*fn)(long), long arg);
long run_in_mode_s(int mode, long (*fn)(long), long arg);
extern uint64_t code_alias;

/* -- Probes (start.S): the first instruction is the one under test ------- */

uint64_t probe_ld(uint64_t addr);
uint64_t probe_lw(uint64_t addr);
uint64_t probe_lbu(uint64_t addr);
uint64_t probe_sd(uint64_t addr, uint64_t val);    /* return addr */
uint64_t probe_sw(uint64_t addr, uint64_t val);
uint64_t probe_amoadd_w(uint64_t addr, uint64_t val);
uint64_t probe_amoadd_d(uint64_t addr, uint64_t val);
uint64_t probe_sc_w(uint64_t addr, uint64_t val);
uint64_t probe_sc_d(uint64_t addr, uint64_t val);
uint64_t probe_lr_w(uint64_t addr);
uint64_t probe_lr_d(uint64_t addr);
uint64_t probe_fetch(uint64_t addr);               /* jalr addr */
void probe_unimp(void);                  /* .word 0xc0001073 (csrrw x0, cycle, x0) */
void probe_c_illegal(void);              /* .half 0x0004 (c.addi4spn, imm 0: reserved) */
void probe_ecall(void);
void probe_ebreak(void);
void probe_c_ebreak(void);
void probe_mret(void);
void probe_sret(void);
void probe_wfi(void);
void probe_sfence(void);
uint64_t probe_csrr_mstatus(void);       /* csrr a0, mstatus */
uint64_t probe_rdtime(void);
uint64_t probe_rdcycle(void);
uint64_t probe_rdinstret(void);
uint64_t probe_rdhpm3(void);             /* csrr a0, hpmcounter3 */
void probe_fadd(void);                   /* fadd.d f0, f1, f2 */
void probe_fmv(uint64_t v);              /* fmv.d.x f1, a0 */
uint64_t probe_frcsr(void);              /* frcsr a0 */
uint64_t probe_stimecmp(void);           /* csrr a0, stimecmp */
/* M-mode loads and stores with mstatus bits (MPRV, MPP, SUM, MXR) set just
 * around them (the C code around them keeps running untranslated). */
uint64_t mprv_ld(uint64_t addr, uint64_t mstatus_bits);
uint64_t mprv_sd(uint64_t addr, uint64_t val, uint64_t mstatus_bits);
/* Wait up to n loop turns for the machine timer through a vectored mtvec
 * whose entry 7 alone reports (7); another entry reports 99; 0: none came. */
long vectored_mti_wait(long n);
/* The number of instructions retired by `li; loop of n (addi, bnez)`
 * as minstret counts them between two reads. */
uint64_t instret_loop(long n);

extern const uint32_t insn_unimp, insn_fadd, insn_csrr_mstatus, insn_rdtime, insn_rdcycle,
    insn_rdinstret, insn_rdhpm3, insn_mret, insn_sret, insn_wfi, insn_sfence, insn_frcsr,
    insn_stimecmp;

/* -- Devices ------------------------------------------------------------- */

static inline uint64_t mtime(void) { return MMIO64(CLINT_MTIME); }
static inline void set_mtimecmp(uint64_t v) { MMIO64(CLINT_MTIMECMP(0)) = v; }
uint64_t rtc_ns(void);                   /* goldfish RTC: ns since the epoch */

/* -- Page tables ----------------------------------------------------------- */

#define PTE_V (1UL << 0)
#define PTE_R (1UL << 1)
#define PTE_W (1UL << 2)
#define PTE_X (1UL << 3)
#define PTE_U (1UL << 4)
#define PTE_G (1UL << 5)
#define PTE_A (1UL << 6)
#define PTE_D (1UL << 7)
#define PTE_RWX_AD (PTE_V | PTE_R | PTE_W | PTE_X | PTE_A | PTE_D)

void pt_reset(void);                     /* free every table */
uint64_t *pt_alloc(void);                /* a zeroed, page-aligned table */
/* The entry of va at leaf_level (0: 4 KiB, 1: 2 MiB, 2: 1 GiB...) in a
 * tree of levels levels, making the tables above it. */
uint64_t *pt_entry(uint64_t *root, int levels, uint64_t va, int leaf_level);
void pt_map(uint64_t *root, int levels, uint64_t va, uint64_t pa, uint64_t flags, int leaf_level);
static inline uint64_t pte_leaf(uint64_t pa, uint64_t flags) { return (pa >> 12) << 10 | flags; }
/* A tree (3, 4 or 5 levels) with the devices' first GiB (RW) and RAM's
 * first GiB (RWX) mapped to themselves as gigapages, A and D set. */
uint64_t *pt_identity(int levels);
static inline uint64_t satp_of(int mode, uint64_t *root)
{
    return SATP_MODE(mode) | (uint64_t)(uintptr_t)root >> 12;
}
static inline int satp_levels(int mode) { return mode - SATP_SV39 + 3; }

/* 16 data pages for tests to map. */
extern uint8_t test_pages[16][4096];

/* -- SBI (S-mode tests) -------------------------------------------------- */

typedef struct SbiRet { long error; long value; } SbiRet;
SbiRet sbi_call(long eid, long fid, long a0, long a1, long a2);

/* -- What a test provides ------------------------------------------------- */

void test_main(uint64_t hartid, uint64_t dtb);
/* A second hart's entry (HSM hart_start of secondary_entry), if any. */
void secondary_main(uint64_t hartid, uint64_t opaque);
extern void secondary_entry(void);

#endif
