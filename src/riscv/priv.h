/*
 * The RISC-V privileged architecture (machine and supervisor levels, Sv39/
 * Sv48/Sv57 paging): the state a hart carries beside its user registers,
 * and the operations on it that the interpreter (CSR instructions, mret,
 * sret, sfence.vma, wfi) and a machine's hart loop (traps, interrupts) use.
 * priv.c implements the CSRs, traps and interrupts, mmu.c the page walk,
 * pmp.c physical memory protection.
 *
 * User mode has none of it: cpu->priv.on is false there, the hart is
 * always in U-mode, and every privileged CSR or instruction is illegal.
 * In system mode it is on, and the CPU starts in M-mode (-bios none, or
 * firmware) or S-mode (xlat's own SBI).
 */
#ifndef XLAT_RISCV_PRIV_H
#define XLAT_RISCV_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "riscv/pmp.h"

/* Privilege levels. */
enum { PRV_U = 0, PRV_S = 1, PRV_M = 3 };

/* mstatus / sstatus bits. */
#define MSTATUS_SIE   (1ULL << 1)
#define MSTATUS_MIE   (1ULL << 3)
#define MSTATUS_SPIE  (1ULL << 5)
#define MSTATUS_UBE   (1ULL << 6)
#define MSTATUS_MPIE  (1ULL << 7)
#define MSTATUS_SPP   (1ULL << 8)
#define MSTATUS_MPP   (3ULL << 11)
#define MSTATUS_FS    (3ULL << 13)
#define MSTATUS_XS    (3ULL << 15)
#define MSTATUS_MPRV  (1ULL << 17)
#define MSTATUS_SUM   (1ULL << 18)
#define MSTATUS_MXR   (1ULL << 19)
#define MSTATUS_TVM   (1ULL << 20)
#define MSTATUS_TW    (1ULL << 21)
#define MSTATUS_TSR   (1ULL << 22)
#define MSTATUS_UXL   (3ULL << 32)
#define MSTATUS_SXL   (3ULL << 34)
#define MSTATUS_SD    (1ULL << 63)

/* Interrupt numbers (mip/mie bit positions, cause codes with the top bit). */
enum {
    IRQ_S_SOFT = 1, IRQ_M_SOFT = 3, IRQ_S_TIMER = 5, IRQ_M_TIMER = 7,
    IRQ_S_EXT = 9, IRQ_M_EXT = 11,
};
#define MIP_SSIP (1ULL << IRQ_S_SOFT)
#define MIP_MSIP (1ULL << IRQ_M_SOFT)
#define MIP_STIP (1ULL << IRQ_S_TIMER)
#define MIP_MTIP (1ULL << IRQ_M_TIMER)
#define MIP_SEIP (1ULL << IRQ_S_EXT)
#define MIP_MEIP (1ULL << IRQ_M_EXT)
/* Not an architectural bit: RiscvPriv.mip keeps M-mode software's own SEIP
 * bit here, while bit 9 is the interrupt controller's line (devices drive
 * it); mip reads show SEIP as the OR of the two (spec 3.1.9). */
#define MIP_SEIP_SW (1ULL << 32)

/* Exception causes. */
enum {
    CAUSE_MISALIGNED_FETCH = 0, CAUSE_FETCH_ACCESS = 1, CAUSE_ILLEGAL_INSN = 2,
    CAUSE_BREAKPOINT = 3, CAUSE_MISALIGNED_LOAD = 4, CAUSE_LOAD_ACCESS = 5,
    CAUSE_MISALIGNED_STORE = 6, CAUSE_STORE_ACCESS = 7, CAUSE_ECALL_U = 8,
    CAUSE_ECALL_S = 9, CAUSE_ECALL_M = 11, CAUSE_FETCH_PAGE_FAULT = 12,
    CAUSE_LOAD_PAGE_FAULT = 13, CAUSE_STORE_PAGE_FAULT = 15,
};
#define CAUSE_INTERRUPT (1ULL << 63)

/* satp modes. */
enum { SATP_BARE = 0, SATP_SV39 = 8, SATP_SV48 = 9, SATP_SV57 = 10 };

typedef struct RiscvPriv {
    bool on;                /* the privileged architecture exists (system mode) */
    uint8_t mode;           /* PRV_U, PRV_S or PRV_M */
    uint64_t mhartid;
    uint64_t mstatus;
    uint64_t misa;
    uint64_t medeleg, mideleg;
    uint64_t mie;
    uint64_t mip;           /* atomic: devices set bits from other threads */
    uint64_t mtvec, mscratch, mepc, mcause, mtval;
    uint64_t stvec, sscratch, sepc, scause, stval;
    uint64_t satp;
    uint64_t mcounteren, scounteren;
    uint64_t menvcfg, senvcfg;
    uint64_t stimecmp;      /* Sstc: STIP while time >= this (menvcfg.STCE) */
    PmpState pmp;           /* pmpcfg, pmpaddr and their regions (pmp.c) */
    bool counted;           /* a counter CSR was accessed: translated code counts instret */
    bool stimer_due;        /* Sstc: time >= stimecmp when last looked (priv_stimer_update) */
} RiscvPriv;

struct CPUState;

/*
 * cpu->tb_flags in system mode (the TBKey flags of translated code): the
 * TLB index (exec/softmmu.h) of instruction fetches in bits 0-1 and of loads
 * and stores in bits 2-3 (the effective privilege with MPRV, and SUM).
 * priv.c keeps them current at every change of mode or mstatus.
 */
#define TB_FLAGS_FETCH_TLB(f) ((f) & 3u)
#define TB_FLAGS_DATA_TLB(f)  (((f) >> 2) & 3u)
/* FP instructions and CSRs must go through the interpreter: mstatus.FS is
 * not Dirty (Off: they are illegal; Initial or Clean: the first makes it
 * Dirty, which tells the kernel to save the FP registers). */
#define TB_FLAGS_FP_GATED     (1u << 4)
/* Translated code keeps cpu->instret exact (be_count). Off until software
 * first reads or writes cycle or instret (or the M ones): the counters
 * count from an arbitrary point (their reset value is arbitrary), and
 * until someone looks they need not count at all, which saves a
 * read-modify-write of one memory word per block, a dependency chain
 * that bounds how fast short blocks run. The interpreter always counts. */
#define TB_FLAGS_COUNT        (1u << 5)

/* What priv_* operations tell the interpreter. */
enum { PRIV_OK, PRIV_STOP, PRIV_ILLEGAL };

/* CSR instruction operations. */
enum { CSR_OP_WRITE, CSR_OP_SET, CSR_OP_CLEAR };

/*
 * A CSR instruction (csrrw/s/c and the immediate forms) on a hart with the
 * privileged architecture: every CSR, user-level ones included (their
 * counter-enable and FS checks). *old receives the value read; write says
 * whether the instruction writes (csrrs/c with x0 do not). PRIV_ILLEGAL
 * for a CSR that does not exist at this privilege or a read-only write;
 * PRIV_STOP when the write may change what the hart must do next (an
 * interrupt enabled, a new translation mode): finish the instruction and
 * let the loop look.
 */
int priv_csr(struct CPUState *cpu, unsigned csr, int op, uint64_t src, bool write,
             uint64_t *old);

/* An F/D instruction is about to run: false if mstatus.FS is Off (illegal);
 * otherwise FS becomes Dirty (the kernel then saves the FP state). */
bool priv_fp_use(struct CPUState *cpu);

/* mret (from = PRV_M) or sret (PRV_S): the new pc, or PRIV_ILLEGAL. */
int priv_xret(struct CPUState *cpu, int from, uint64_t *npc);

/* wfi: PRIV_OK (the hart may sleep until an interrupt is pending) or
 * PRIV_ILLEGAL (U-mode; S-mode with mstatus.TW). */
int priv_wfi(struct CPUState *cpu);

/* sfence.vma rs1, rs2: PRIV_STOP, or PRIV_ILLEGAL (U-mode; S with TVM). */
int priv_sfence_vma(struct CPUState *cpu, uint64_t vaddr, uint64_t asid, bool one_addr,
                    bool one_asid);

/* Reset a hart: mode (PRV_M from reset, PRV_S under xlat's own SBI),
 * mhartid, misa, the rest zero; priv.on. */
void priv_reset(struct CPUState *cpu, uint64_t hartid, int mode);

/* Take an exception (cause) or interrupt (cause | CAUSE_INTERRUPT) at
 * cpu->pc, delegated to S-mode where medeleg/mideleg say: epc, cause, tval,
 * status, mode and pc = the trap vector (logged under -d int). The
 * _from_ entries are for a caller that knows the hart's privilege (seed
 * 004: priv.c); priv_trap reads it (and with --tune no-entry-specialize
 * runs one generic path). */
void priv_trap(struct CPUState *cpu, uint64_t cause, uint64_t tval);
void priv_trap_from_u(struct CPUState *cpu, uint64_t cause, uint64_t tval);
void priv_trap_from_s(struct CPUState *cpu, uint64_t cause, uint64_t tval);
void priv_trap_from_m(struct CPUState *cpu, uint64_t cause, uint64_t tval);

/*
 * What translated code calls for ecall, sret and mret (system mode): the
 * entry for the privilege the block was translated at (_u, _s, _m), or
 * the generic one that reads it (--tune no-entry-specialize). cpu->pc is
 * the instruction's; an xret that returns counts itself in cpu->instret.
 * They return 0 (go on at cpu->pc: a trap was taken,
 * xret returned, an SBI call was served), EXIT_REQUEST (xret enabled an
 * interrupt that is pending, or the SBI call needs the hart loop),
 * EXIT_ILLEGAL (sret in S-mode with mstatus.TSR), or what priv_hooks.sbi_call
 * returns for an S-mode ecall.
 */
uint64_t priv_entry_ecall_u(struct CPUState *cpu);
uint64_t priv_entry_ecall_s(struct CPUState *cpu);
uint64_t priv_entry_ecall_m(struct CPUState *cpu);
uint64_t priv_entry_ecall(struct CPUState *cpu);
uint64_t priv_entry_sret_s(struct CPUState *cpu);
uint64_t priv_entry_sret_m(struct CPUState *cpu);
uint64_t priv_entry_mret_m(struct CPUState *cpu);
uint64_t priv_entry_sret(struct CPUState *cpu);
uint64_t priv_entry_mret(struct CPUState *cpu);

/* The interrupt to take now, if any (pending, enabled, by the spec's
 * priority): its cause (with CAUSE_INTERRUPT). Sstc's STIP as of the last
 * priv_stimer_update: the check runs after every xret and interrupt-
 * enabling CSR write, and reading the clock there each time cost a
 * system call's round trip an eighth of its time. */
bool priv_interrupt(const struct CPUState *cpu, uint64_t *cause);
/* Look at the clock for Sstc's STIP (stimer_due). Done when stimecmp or
 * menvcfg is written, and by the machine's loop whenever it looks for
 * interrupts (its timer wakes the hart when stimecmp is due). */
void priv_stimer_update(struct CPUState *cpu);

/* A debugger's CSR access (gdb): csr as M-mode sees it, whatever the
 * hart's privilege (the gates of lower levels, TVM and the counter
 * enables, do not apply); a write has the instruction's effects (a satp
 * write drops cached translations). False if the hart has no such CSR or
 * it is read-only. Only while the hart is not running. */
bool priv_debug_csr(struct CPUState *cpu, unsigned csr, bool write, uint64_t *val);

/* A debugger sets the privilege level (PRV_U, PRV_S or PRV_M; false for
 * another value). */
bool priv_debug_set_mode(struct CPUState *cpu, int mode);

/* What the privileged architecture needs from the machine. */
typedef struct PrivHooks {
    uint64_t (*time)(void);                   /* the time CSR (mtime) */
    /* Address translation may have changed (satp, sfence.vma, the mode,
     * MPRV/SUM/MXR): drop cached translations. */
    void (*mmu_changed)(struct CPUState *cpu, bool all, uint64_t vaddr);
    /* satp was written: the translations cached for its address space
     * become current (or are dropped). NULL: mmu_changed(all). */
    void (*satp_changed)(struct CPUState *cpu);
    /* sfence.vma: the page of vaddr (one_addr: rs1 != x0) of the address
     * spaces of asid (one_asid: rs2 != x0). NULL: mmu_changed. */
    void (*sfence)(struct CPUState *cpu, bool one_addr, uint64_t vaddr, bool one_asid,
                   uint64_t asid);
    void (*timer_changed)(struct CPUState *cpu);  /* stimecmp written */
    /* An S-mode ecall the machine serves itself (an SBI in the emulator),
     * or NULL: it traps. Leaves cpu->pc after the ecall; returns 0, or
     * EXIT_REQUEST if the hart loop must look (the hart stopped, ...). */
    uint64_t (*sbi_call)(struct CPUState *cpu);
    /* pause (Zihintpause: a spin-wait loop's hint) in translated code,
     * cpu->pc after it: 0 to go on, or EXIT_REQUEST to leave (the hart
     * gives its host thread up). NULL: pause is a no-op. */
    uint64_t (*pause)(struct CPUState *cpu);
} PrivHooks;

extern PrivHooks priv_hooks;

#endif
