/*
 * The RISC-V privileged architecture (privileged spec 1.12): the CSRs of
 * the machine and supervisor levels, traps and their delegation, interrupt
 * selection, mret/sret, wfi and sfence.vma. See priv.h. The page walk is
 * mmu.c's.
 *
 * WARL fields keep the legal part of a write: mstatus.MPP refuses 2, the
 * trap vectors' mode refuses anything but direct and vectored, satp refuses
 * a mode other than bare/Sv39/Sv48/Sv57 as a whole (Linux probes Sv57,
 * then Sv48, by writing and reading back), xepc clears bit 0. The PMP
 * CSRs are pmp.c's (a write that changes an entry drops cached
 * translations: they carry PMP's answer). Counters: cycle and instret are the
 * interpreter's retired count, time is the machine's mtime; hpmcounters
 * read zero. mcountinhibit is hardwired to zero (WARL): the counters
 * always count.
 */
#include "riscv/priv.h"

#include <stdio.h>

#include "exec/exec.h"
#include "exec/settings.h"

#include "riscv/cpu.h"

PrivHooks priv_hooks;

#define MISA_RV64   (2ULL << 62)
#define MISA_BIT(c) (1ULL << ((c) - 'A'))
#define MISA_VALUE  (MISA_RV64 | MISA_BIT('A') | MISA_BIT('C') | MISA_BIT('D') | MISA_BIT('F') | \
                     MISA_BIT('I') | MISA_BIT('M') | MISA_BIT('S') | MISA_BIT('U'))

#define MSTATUS_WRITABLE (MSTATUS_SIE | MSTATUS_MIE | MSTATUS_SPIE | MSTATUS_MPIE | MSTATUS_SPP | \
                          MSTATUS_MPP | MSTATUS_FS | MSTATUS_MPRV | MSTATUS_SUM | MSTATUS_MXR | \
                          MSTATUS_TVM | MSTATUS_TW | MSTATUS_TSR)
#define SSTATUS_VISIBLE  (MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP | MSTATUS_FS | MSTATUS_XS | \
                          MSTATUS_SUM | MSTATUS_MXR | MSTATUS_UXL | MSTATUS_SD)
#define SSTATUS_WRITABLE (MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP | MSTATUS_FS | MSTATUS_SUM | \
                          MSTATUS_MXR)
#define MSTATUS_XL64     ((2ULL << 32) | (2ULL << 34))   /* UXL = SXL = 64 bits */

/* Exceptions S-mode may take (ecall from M never is). */
#define MEDELEG_WRITABLE 0xb3ffULL
#define MIDELEG_WRITABLE (MIP_SSIP | MIP_STIP | MIP_SEIP)
#define MIE_WRITABLE     (MIP_SSIP | MIP_MSIP | MIP_STIP | MIP_MTIP | MIP_SEIP | MIP_MEIP)
/* mip bits software may write (the rest follow the devices). */
#define MIP_M_WRITABLE   (MIP_SSIP | MIP_STIP | MIP_SEIP)

#define MENVCFG_FIOM (1ULL << 0)
#define MENVCFG_STCE (1ULL << 63)

#define SATP_MODE_SHIFT 60
#define SATP_ASID_MASK  (0xffffULL << 44)
#define SATP_PPN_MASK   ((1ULL << 44) - 1)

#define COUNTER_CY 1
#define COUNTER_TM 2
#define COUNTER_IR 4

static uint64_t mip_load(const RiscvPriv *p) { return __atomic_load_n(&p->mip, __ATOMIC_ACQUIRE); }

static uint64_t time_now(void) { return priv_hooks.time ? priv_hooks.time() : 0; }

static void mmu_changed(CPUState *cpu, bool all, uint64_t vaddr)
{
    cpu->exec_page = 0;         /* the interpreter's "this page is fetchable" */
    if (priv_hooks.mmu_changed)
        priv_hooks.mmu_changed(cpu, all, vaddr);
}

/* The TLB index of an access at privilege mode (SUM for S-mode data). */
static unsigned tlb_index(int mode, bool sum)
{
    return mode == PRV_U ? TLB_IDX_U : mode == PRV_M ? TLB_IDX_M : sum ? TLB_IDX_SUM : TLB_IDX_S;
}

/* cpu->tb_flags from the mode and mstatus (see priv.h). */
static void update_tb_flags(CPUState *cpu)
{
    const RiscvPriv *p = &cpu->priv;
    int data_mode = p->mode;
    if (p->mode == PRV_M && (p->mstatus & MSTATUS_MPRV))
        data_mode = (int)((p->mstatus & MSTATUS_MPP) >> 11);
    uint32_t flags = tlb_index(p->mode, false) |
                     tlb_index(data_mode, p->mstatus & MSTATUS_SUM) << 2 |
                     ((p->mstatus & MSTATUS_FS) == MSTATUS_FS ? 0 : TB_FLAGS_FP_GATED) |
                     (p->counted ? TB_FLAGS_COUNT : 0);
    if (flags != cpu->tb_flags) {
        cpu->tb_flags = flags;
        exec_flags_changed(cpu);            /* the jump cache of these flags */
    }
}

/* mstatus changed from old: what translation depends on (MPRV, SUM, MXR,
 * and MPP while MPRV is set) drops cached translations; a mode change only
 * the interpreter's fetchable-page note (cached translations carry their
 * mode). */
static void status_changed(CPUState *cpu, uint64_t old, int old_mode)
{
    uint64_t now = cpu->priv.mstatus;
    update_tb_flags(cpu);
    /* MPRV, MPP and SUM only choose another TLB; MXR changes what loads
     * may read through every entry. */
    if ((old ^ now) & MSTATUS_MXR)
        mmu_changed(cpu, true, 0);
    else if (cpu->priv.mode != old_mode || ((old ^ now) & (MSTATUS_MPRV | MSTATUS_MPP | MSTATUS_SUM)))
        cpu->exec_page = 0;
}

/* mip with SEIP = software's own bit (what csrrs/csrrc modify): STIP
 * is stimer_due while Sstc is on. */
static uint64_t mip_with_stip(const CPUState *cpu, bool stimer_due)
{
    const RiscvPriv *p = &cpu->priv;
    uint64_t raw = mip_load(p);
    uint64_t v = (raw & ~(MIP_SEIP | MIP_SEIP_SW)) | (raw & MIP_SEIP_SW ? MIP_SEIP : 0);
    if (p->menvcfg & MENVCFG_STCE)
        v = stimer_due ? v | MIP_STIP : v & ~MIP_STIP;
    return v;
}

/* The same with STIP following stimecmp now. */
static uint64_t mip_software(const CPUState *cpu)
{
    const RiscvPriv *p = &cpu->priv;
    return mip_with_stip(cpu, (p->menvcfg & MENVCFG_STCE) && time_now() >= p->stimecmp);
}

/* mip as software reads it: SEIP is software's bit or the interrupt
 * controller's line. */
static uint64_t mip_value(const CPUState *cpu)
{
    return mip_software(cpu) | (mip_load(&cpu->priv) & MIP_SEIP);
}

/* mip as interrupts see it: mip_value with Sstc's STIP as last looked at. */
static uint64_t mip_pending(const CPUState *cpu)
{
    return mip_with_stip(cpu, cpu->priv.stimer_due) | (mip_load(&cpu->priv) & MIP_SEIP);
}

void priv_stimer_update(CPUState *cpu)
{
    RiscvPriv *p = &cpu->priv;
    p->stimer_due = (p->menvcfg & MENVCFG_STCE) && time_now() >= p->stimecmp;
}

static uint64_t mstatus_value(const RiscvPriv *p)
{
    uint64_t v = p->mstatus | MSTATUS_XL64;
    if ((v & MSTATUS_FS) == MSTATUS_FS)
        v |= MSTATUS_SD;
    return v;
}

/* -- CSR access checks ------------------------------------------------------------ */

/* Counters from U or S: gated by mcounteren (and scounteren for U). */
static bool counter_ok(const RiscvPriv *p, unsigned bit)
{
    if (p->mode < PRV_M && !(p->mcounteren & bit))
        return false;
    if (p->mode < PRV_S && !(p->scounteren & bit))
        return false;
    return true;
}

static bool fs_on(const RiscvPriv *p) { return (p->mstatus & MSTATUS_FS) != 0; }

/* FS = Dirty (an FP register or CSR written): the kernel saves them. */
static void fs_dirty(CPUState *cpu)
{
    if ((cpu->priv.mstatus & MSTATUS_FS) != MSTATUS_FS) {
        cpu->priv.mstatus |= MSTATUS_FS;
        update_tb_flags(cpu);
    }
}

bool priv_fp_use(CPUState *cpu)
{
    if (!fs_on(&cpu->priv))
        return false;
    fs_dirty(cpu);
    return true;
}

/* -- Reads ------------------------------------------------------------------------ */

/* The value of csr, or false if it does not exist (for this hart at all). */
static bool csr_get(CPUState *cpu, unsigned csr, uint64_t *v)
{
    RiscvPriv *p = &cpu->priv;
    switch (csr) {
    case CSR_FFLAGS:  *v = cpu->fflags & 0x1f; return fs_on(p);
    case CSR_FRM:     *v = cpu->frm & 7; return fs_on(p);
    case CSR_FCSR:    *v = (uint64_t)(cpu->frm & 7) << 5 | (cpu->fflags & 0x1f); return fs_on(p);
    case CSR_CYCLE:   *v = cpu->instret; return counter_ok(p, COUNTER_CY);
    case CSR_TIME:    *v = time_now(); return counter_ok(p, COUNTER_TM);
    case CSR_INSTRET: *v = cpu->instret; return counter_ok(p, COUNTER_IR);

    case 0x100: *v = mstatus_value(p) & SSTATUS_VISIBLE; return true;          /* sstatus */
    case 0x104: *v = p->mie & p->mideleg; return true;                          /* sie */
    case 0x105: *v = p->stvec; return true;
    case 0x106: *v = p->scounteren; return true;
    case 0x10a: *v = p->senvcfg; return true;
    case 0x140: *v = p->sscratch; return true;
    case 0x141: *v = p->sepc; return true;
    case 0x142: *v = p->scause; return true;
    case 0x143: *v = p->stval; return true;
    case 0x144: *v = mip_value(cpu) & p->mideleg; return true;                 /* sip */
    case 0x14d:                                                                 /* stimecmp */
        *v = p->stimecmp;
        return p->mode == PRV_M || ((p->menvcfg & MENVCFG_STCE) && (p->mcounteren & COUNTER_TM));
    case 0x180:                                                                 /* satp */
        *v = p->satp;
        return !(p->mode == PRV_S && (p->mstatus & MSTATUS_TVM));

    case 0xf11: case 0xf12: case 0xf13: case 0xf15: *v = 0; return true;      /* ids, mconfigptr */
    case 0xf14: *v = p->mhartid; return true;
    case 0x300: *v = mstatus_value(p); return true;
    case 0x301: *v = MISA_VALUE; return true;
    case 0x302: *v = p->medeleg; return true;
    case 0x303: *v = p->mideleg; return true;
    case 0x304: *v = p->mie; return true;
    case 0x305: *v = p->mtvec; return true;
    case 0x306: *v = p->mcounteren; return true;
    case 0x30a: *v = p->menvcfg; return true;
    case 0x320: *v = 0; return true;                        /* mcountinhibit */
    case 0x340: *v = p->mscratch; return true;
    case 0x341: *v = p->mepc; return true;
    case 0x342: *v = p->mcause; return true;
    case 0x343: *v = p->mtval; return true;
    case 0x344: *v = mip_value(cpu); return true;
    case 0xb00: case 0xb02: *v = cpu->instret; return true;                    /* mcycle, minstret */
    case 0x7a0: case 0x7a1: case 0x7a2: case 0x7a3: *v = 0; return true;      /* no triggers */
    default:
        break;
    }
    if (csr >= 0x3a0 && csr <= 0x3ef)                      /* pmpcfg0..15, pmpaddr0..63 */
        return pmp_csr_read(&p->pmp, csr, v);
    if ((csr >= 0xc03 && csr <= 0xc1f) || (csr >= 0xb03 && csr <= 0xb1f) ||   /* hpmcounters */
        (csr >= 0x323 && csr <= 0x33f)) {                                      /* mhpmevents */
        *v = 0;
        return csr < 0xc00 || counter_ok(p, 1u << (csr & 31));
    }
    return false;
}

/* -- Writes ----------------------------------------------------------------------- */

static void set_mstatus(CPUState *cpu, uint64_t v, uint64_t writable)
{
    RiscvPriv *p = &cpu->priv;
    uint64_t old = p->mstatus;
    if ((v & MSTATUS_MPP) == (2ULL << 11))                  /* reserved: keep MPP */
        v = (v & ~MSTATUS_MPP) | (old & MSTATUS_MPP);
    p->mstatus = (old & ~writable) | (v & writable);
    status_changed(cpu, old, p->mode);
}

static uint64_t legal_tvec(uint64_t v, uint64_t old)
{
    return (v & 3) >= 2 ? old : v & ~2ULL;
}

static void set_satp(CPUState *cpu, uint64_t v)
{
    unsigned mode = (unsigned)(v >> SATP_MODE_SHIFT);
    if (mode != SATP_BARE && mode != SATP_SV39 && mode != SATP_SV48 && mode != SATP_SV57)
        return;                                             /* WARL: the write is ignored */
    if (mode == SATP_BARE)
        v = 0;
    cpu->priv.satp = v & ((0xfULL << SATP_MODE_SHIFT) | SATP_ASID_MASK | SATP_PPN_MASK);
    /* Another address space (or the same): no flush is implied, and the
     * machine may keep each ASID's translations (tlb.h). */
    cpu->exec_page = 0;
    if (priv_hooks.satp_changed)
        priv_hooks.satp_changed(cpu);
    else
        mmu_changed(cpu, true, 0);
}

static void mip_write(RiscvPriv *p, uint64_t mask, uint64_t v)
{
    uint64_t old = mip_load(p), nv;
    do
        nv = (old & ~mask) | (v & mask);
    while (!__atomic_compare_exchange_n(&p->mip, &old, nv, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE));
}

/* Write csr (already read: it exists here). False if it is read-only. */
static bool csr_set(CPUState *cpu, unsigned csr, uint64_t v)
{
    RiscvPriv *p = &cpu->priv;
    switch (csr) {
    case CSR_FFLAGS: cpu->fflags = v & 0x1f; fs_dirty(cpu); return true;
    case CSR_FRM:    cpu->frm = v & 7; fs_dirty(cpu); return true;
    case CSR_FCSR:
        cpu->fflags = v & 0x1f;
        cpu->frm = (v >> 5) & 7;
        fs_dirty(cpu);
        return true;

    case 0x100: set_mstatus(cpu, v, SSTATUS_WRITABLE); return true;
    case 0x104: p->mie = (p->mie & ~p->mideleg) | (v & p->mideleg & MIE_WRITABLE); return true;
    case 0x105: p->stvec = legal_tvec(v, p->stvec); return true;
    case 0x106: p->scounteren = v & 0xffffffffULL; return true;
    case 0x10a: p->senvcfg = v & MENVCFG_FIOM; return true;
    case 0x140: p->sscratch = v; return true;
    case 0x141: p->sepc = v & ~1ULL; return true;
    case 0x142: p->scause = v; return true;
    case 0x143: p->stval = v; return true;
    case 0x144: mip_write(p, MIP_SSIP & p->mideleg, v); return true;
    case 0x14d:
        p->stimecmp = v;
        priv_stimer_update(cpu);
        if (priv_hooks.timer_changed)
            priv_hooks.timer_changed(cpu);
        return true;
    case 0x180: set_satp(cpu, v); return true;

    case 0x300: set_mstatus(cpu, v, MSTATUS_WRITABLE); return true;
    case 0x301: return true;                                /* misa: fixed */
    case 0x302: p->medeleg = v & MEDELEG_WRITABLE; return true;
    case 0x303: p->mideleg = v & MIDELEG_WRITABLE; return true;
    case 0x304: p->mie = v & MIE_WRITABLE; return true;
    case 0x305: p->mtvec = legal_tvec(v, p->mtvec); return true;
    case 0x306: p->mcounteren = v & 0xffffffffULL; return true;
    case 0x30a:
        p->menvcfg = v & (MENVCFG_FIOM | MENVCFG_STCE);
        priv_stimer_update(cpu);
        return true;
    case 0x320: return true;                                /* mcountinhibit: hardwired 0 */
    case 0x340: p->mscratch = v; return true;
    case 0x341: p->mepc = v & ~1ULL; return true;
    case 0x342: p->mcause = v; return true;
    case 0x343: p->mtval = v; return true;
    case 0x344:                                             /* SEIP: software's own bit */
        mip_write(p, (MIP_M_WRITABLE & ~MIP_SEIP) | MIP_SEIP_SW,
                  (v & ~MIP_SEIP) | (v & MIP_SEIP ? MIP_SEIP_SW : 0));
        return true;
    case 0xb00: case 0xb02:
        /* The written value is what the next instruction reads: this
         * instruction's own retirement (the interpreter's increment) does
         * not count (riscv-tests rv64mi instret_overflow). */
        cpu->instret = v - 1;
        return true;
    case 0x7a0: case 0x7a1: case 0x7a2: case 0x7a3: return true;
    default:
        break;
    }
    if (csr >= 0x3a0 && csr <= 0x3ef) {
        if (pmp_csr_write(&p->pmp, csr, v))
            mmu_changed(cpu, true, 0);
        return true;
    }
    return (csr >= 0xb03 && csr <= 0xb1f) || (csr >= 0x323 && csr <= 0x33f);   /* read 0 */
}

/* CSRs whose writes change what the hart must look at next. PMP's change
 * whether the next instruction may be fetched at all, which translated
 * code checks only where a block begins (as satp's). */
static bool csr_write_stops(unsigned csr)
{
    switch (csr) {
    case 0x100: case 0x104: case 0x144: case 0x14d: case 0x180:
    case 0x300: case 0x302: case 0x303: case 0x304: case 0x30a: case 0x344:
        return true;
    default:
        return csr >= 0x3a0 && csr <= 0x3ef;            /* pmpcfg, pmpaddr */
    }
}

/* cycle, instret, mcycle, minstret (all read cpu->instret). */
static bool is_counter(unsigned csr)
{
    return csr == CSR_CYCLE || csr == CSR_INSTRET || csr == 0xb00 || csr == 0xb02;
}

int priv_csr(CPUState *cpu, unsigned csr, int op, uint64_t src, bool write, uint64_t *old)
{
    RiscvPriv *p = &cpu->priv;
    unsigned need = (csr >> 8) & 3;
    bool read_only = (csr >> 10) == 3;
    if (need > p->mode || (write && read_only) || !csr_get(cpu, csr, old))
        return PRIV_ILLEGAL;
    bool start_counting = is_counter(csr) && !p->counted;
    if (start_counting) {               /* from now on translated code counts too */
        p->counted = true;
        update_tb_flags(cpu);
    }
    if (!write)
        return start_counting ? PRIV_STOP : PRIV_OK;
    /* mip's read-modify-write sees software's SEIP bit, not the line's. */
    uint64_t base = csr == 0x344 ? mip_software(cpu) : *old;
    uint64_t v = op == CSR_OP_WRITE ? src : op == CSR_OP_SET ? base | src : base & ~src;
    if (!csr_set(cpu, csr, v))
        return PRIV_ILLEGAL;
    return start_counting || csr_write_stops(csr) ? PRIV_STOP : PRIV_OK;
}

bool priv_debug_csr(CPUState *cpu, unsigned csr, bool write, uint64_t *val)
{
    /* The hart is stopped, so borrowing M-mode for the access is invisible:
     * csr_get's and csr_set's checks then see no lower-level gate. */
    RiscvPriv *p = &cpu->priv;
    uint8_t mode = p->mode;
    uint64_t old;
    bool read_only = (csr >> 10) == 3;
    p->mode = PRV_M;
    bool ok = csr_get(cpu, csr, &old) && !(write && read_only);
    if (ok && write)
        ok = csr_set(cpu, csr, *val);
    p->mode = mode;
    if (ok && !write)
        *val = old;
    return ok;
}

bool priv_debug_set_mode(CPUState *cpu, int mode)
{
    if (mode != PRV_U && mode != PRV_S && mode != PRV_M)
        return false;
    cpu->priv.mode = (uint8_t)mode;
    update_tb_flags(cpu);
    mmu_changed(cpu, true, 0);
    return true;
}

/* -- Traps ---------------------------------------------------------------------- */

/*
 * Entry paths between privilege levels (seed 004): one always-inline
 * worker per path takes the privilege it comes from as a constant, and
 * each level gets its own small entry, so the entry a caller knows the
 * level for (translated code knows it when it is translated) tests
 * nothing at run time about it. The generic entries (--tune
 * no-entry-specialize, and callers that do not know) call a copy of the
 * worker that reads the level instead.
 */
static inline __attribute__((always_inline)) void trap_worker(CPUState *cpu, uint64_t cause,
                                                              uint64_t tval, const int from)
{
    RiscvPriv *p = &cpu->priv;
    bool irq = cause & CAUSE_INTERRUPT;
    unsigned code = (unsigned)(cause & 63);
    uint64_t deleg = irq ? p->mideleg : p->medeleg;
    uint64_t old_status = p->mstatus;
    if (log_mask & LOG_INT)
        fprintf(log_file ? log_file : stderr,
                "int: hart %u %s %llu at pc %#llx tval %#llx (from %c-mode)\n",
                (unsigned)p->mhartid, irq ? "interrupt" : "exception", (unsigned long long)code,
                (unsigned long long)cpu->pc, (unsigned long long)tval, "USHM"[from]);
    if (from <= PRV_S && ((deleg >> code) & 1)) {
        p->sepc = cpu->pc;
        p->scause = cause;
        p->stval = tval;
        uint64_t s = p->mstatus & ~(MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE);
        if (p->mstatus & MSTATUS_SIE)
            s |= MSTATUS_SPIE;
        if (from == PRV_S)
            s |= MSTATUS_SPP;
        p->mstatus = s;
        p->mode = PRV_S;
        cpu->pc = (p->stvec & ~3ULL) + ((p->stvec & 1) && irq ? 4ULL * code : 0);
    } else {
        p->mepc = cpu->pc;
        p->mcause = cause;
        p->mtval = tval;
        uint64_t s = p->mstatus & ~(MSTATUS_MPP | MSTATUS_MPIE | MSTATUS_MIE);
        if (p->mstatus & MSTATUS_MIE)
            s |= MSTATUS_MPIE;
        s |= (uint64_t)from << 11;
        p->mstatus = s;
        p->mode = PRV_M;
        cpu->pc = (p->mtvec & ~3ULL) + ((p->mtvec & 1) && irq ? 4ULL * code : 0);
    }
    cpu->res_valid = false;
    status_changed(cpu, old_status, from);
}

void priv_trap_from_u(CPUState *cpu, uint64_t cause, uint64_t tval) { trap_worker(cpu, cause, tval, PRV_U); }
void priv_trap_from_s(CPUState *cpu, uint64_t cause, uint64_t tval) { trap_worker(cpu, cause, tval, PRV_S); }
void priv_trap_from_m(CPUState *cpu, uint64_t cause, uint64_t tval) { trap_worker(cpu, cause, tval, PRV_M); }

static __attribute__((noinline)) void trap_generic(CPUState *cpu, uint64_t cause, uint64_t tval)
{
    trap_worker(cpu, cause, tval, cpu->priv.mode);
}

void priv_trap(CPUState *cpu, uint64_t cause, uint64_t tval)
{
    if (!tune.entry_specialize) {
        trap_generic(cpu, cause, tval);
        return;
    }
    switch (cpu->priv.mode) {
    case PRV_U: priv_trap_from_u(cpu, cause, tval); break;
    case PRV_S: priv_trap_from_s(cpu, cause, tval); break;
    default:    priv_trap_from_m(cpu, cause, tval); break;
    }
}

/* Highest-priority interrupt of set: MEI, MSI, MTI, SEI, SSI, STI. */
static int highest(uint64_t set)
{
    static const int order[] = { IRQ_M_EXT, IRQ_M_SOFT, IRQ_M_TIMER,
                                 IRQ_S_EXT, IRQ_S_SOFT, IRQ_S_TIMER };
    for (unsigned i = 0; i < sizeof order / sizeof order[0]; i++)
        if (set & (1ULL << order[i]))
            return order[i];
    return -1;
}

bool priv_interrupt(const CPUState *cpu, uint64_t *cause)
{
    const RiscvPriv *p = &cpu->priv;
    uint64_t pending = mip_pending(cpu) & p->mie;
    if (!pending)
        return false;
    uint64_t m = pending & ~p->mideleg, s = pending & p->mideleg;
    bool m_on = p->mode < PRV_M || (p->mstatus & MSTATUS_MIE);
    bool s_on = p->mode < PRV_S || (p->mode == PRV_S && (p->mstatus & MSTATUS_SIE));
    int irq = m_on ? highest(m) : -1;
    if (irq < 0 && s_on)
        irq = highest(s);
    if (irq < 0)
        return false;
    *cause = CAUSE_INTERRUPT | (uint64_t)irq;
    return true;
}

/* -- Returns, wfi, fences --------------------------------------------------------- */

/* mret (ret = PRV_M) or sret (PRV_S) from privilege `from` (both constants
 * in the specialized entries). */
static inline __attribute__((always_inline)) int xret_worker(CPUState *cpu, const int ret,
                                                             const int from, uint64_t *npc)
{
    RiscvPriv *p = &cpu->priv;
    if (from < ret || (ret == PRV_S && from == PRV_S && (p->mstatus & MSTATUS_TSR)))
        return PRIV_ILLEGAL;
    uint64_t s = p->mstatus;
    if (ret == PRV_M) {
        p->mode = (int)((s >> 11) & 3);
        s = (s & ~MSTATUS_MIE) | ((s & MSTATUS_MPIE) ? MSTATUS_MIE : 0);
        s = (s | MSTATUS_MPIE) & ~MSTATUS_MPP;
        *npc = p->mepc;
    } else {
        p->mode = (s & MSTATUS_SPP) ? PRV_S : PRV_U;
        s = (s & ~MSTATUS_SIE) | ((s & MSTATUS_SPIE) ? MSTATUS_SIE : 0);
        s = (s | MSTATUS_SPIE) & ~MSTATUS_SPP;
        *npc = p->sepc;
    }
    if (p->mode != PRV_M)
        s &= ~MSTATUS_MPRV;
    uint64_t old_status = p->mstatus;
    p->mstatus = s;
    cpu->res_valid = false;
    status_changed(cpu, old_status, from);
    return PRIV_STOP;
}

static __attribute__((noinline)) int xret_generic(CPUState *cpu, int ret, uint64_t *npc)
{
    return xret_worker(cpu, ret, cpu->priv.mode, npc);
}

int priv_xret(CPUState *cpu, int from, uint64_t *npc)
{
    return xret_generic(cpu, from, npc);
}

/*
 * The translated-code entries (riscv/translate.c calls the one for the
 * block's privilege): cpu->pc is the instruction's; they leave with
 * cpu->pc where the hart goes on and return what translated code does
 * next: 0 (go on at cpu->pc, under the new privilege: translated code
 * stays in the JIT), EXIT_REQUEST (an interrupt the new state enables:
 * the hart loop takes it) or EXIT_ILLEGAL. An xret that returns retires
 * here (cpu->instret): only the entry knows whether it was illegal.
 */
static inline __attribute__((always_inline)) uint64_t xret_entry(CPUState *cpu, const int ret,
                                                                 const int from)
{
    uint64_t npc, cause;
    int r = from < 0 ? xret_generic(cpu, ret, &npc) : xret_worker(cpu, ret, from, &npc);
    if (r == PRIV_ILLEGAL)
        return EXIT_ILLEGAL;
    cpu->instret++;
    cpu->pc = npc;
    return priv_interrupt(cpu, &cause) ? EXIT_REQUEST : 0;
}

uint64_t priv_entry_sret_s(CPUState *cpu) { return xret_entry(cpu, PRV_S, PRV_S); }
uint64_t priv_entry_sret_m(CPUState *cpu) { return xret_entry(cpu, PRV_S, PRV_M); }
uint64_t priv_entry_mret_m(CPUState *cpu) { return xret_entry(cpu, PRV_M, PRV_M); }
uint64_t priv_entry_sret(CPUState *cpu) { return xret_entry(cpu, PRV_S, -1); }
uint64_t priv_entry_mret(CPUState *cpu) { return xret_entry(cpu, PRV_M, -1); }

static inline __attribute__((always_inline)) uint64_t ecall_entry(CPUState *cpu, const int from)
{
    if (from == PRV_S && priv_hooks.sbi_call)
        return priv_hooks.sbi_call(cpu);
    trap_worker(cpu, CAUSE_ECALL_U + (uint64_t)from, 0, from);
    return 0;
}

uint64_t priv_entry_ecall_u(CPUState *cpu) { return ecall_entry(cpu, PRV_U); }
uint64_t priv_entry_ecall_s(CPUState *cpu) { return ecall_entry(cpu, PRV_S); }
uint64_t priv_entry_ecall_m(CPUState *cpu) { return ecall_entry(cpu, PRV_M); }

uint64_t priv_entry_ecall(CPUState *cpu)
{
    int from = cpu->priv.mode;
    if (from == PRV_S && priv_hooks.sbi_call)
        return priv_hooks.sbi_call(cpu);
    trap_generic(cpu, CAUSE_ECALL_U + (uint64_t)from, 0);
    return 0;
}

int priv_wfi(CPUState *cpu)
{
    const RiscvPriv *p = &cpu->priv;
    if (p->mode == PRV_U || (p->mode == PRV_S && (p->mstatus & MSTATUS_TW)))
        return PRIV_ILLEGAL;
    return PRIV_OK;
}

int priv_sfence_vma(CPUState *cpu, uint64_t vaddr, uint64_t asid, bool one_addr, bool one_asid)
{
    const RiscvPriv *p = &cpu->priv;
    if (p->mode == PRV_U || (p->mode == PRV_S && (p->mstatus & MSTATUS_TVM)))
        return PRIV_ILLEGAL;
    cpu->exec_page = 0;
    if (priv_hooks.sfence)
        priv_hooks.sfence(cpu, one_addr, vaddr, one_asid, asid);
    else
        mmu_changed(cpu, !one_addr, vaddr);
    return PRIV_STOP;
}

void priv_reset(CPUState *cpu, uint64_t hartid, int mode)
{
    cpu->priv = (RiscvPriv){ .on = true, .mode = (uint8_t)mode, .mhartid = hartid };
    cpu->priv.misa = MISA_VALUE;
    if (mode != PRV_M) {
        /* What firmware leaves for an S-mode kernel: S-mode counters and
         * the FPU usable, Sstc on, the usual exceptions and interrupts
         * delegated (OpenSBI's choices). */
        cpu->priv.mcounteren = COUNTER_CY | COUNTER_TM | COUNTER_IR;
        cpu->priv.scounteren = COUNTER_CY | COUNTER_TM | COUNTER_IR;    /* rdtime in U */
        cpu->priv.menvcfg = MENVCFG_STCE;
        cpu->priv.mideleg = MIDELEG_WRITABLE;
        cpu->priv.medeleg = (1ULL << CAUSE_MISALIGNED_FETCH) | (1ULL << CAUSE_FETCH_ACCESS) |
                            (1ULL << CAUSE_ILLEGAL_INSN) | (1ULL << CAUSE_BREAKPOINT) |
                            (1ULL << CAUSE_MISALIGNED_LOAD) | (1ULL << CAUSE_LOAD_ACCESS) |
                            (1ULL << CAUSE_MISALIGNED_STORE) | (1ULL << CAUSE_STORE_ACCESS) |
                            (1ULL << CAUSE_ECALL_U) | (1ULL << CAUSE_FETCH_PAGE_FAULT) |
                            (1ULL << CAUSE_LOAD_PAGE_FAULT) | (1ULL << CAUSE_STORE_PAGE_FAULT);
        cpu->priv.stimecmp = UINT64_MAX;
        /* and PMP open to S and U (OpenSBI's last entry): with no entry
         * on, every S and U access would fail. */
        pmp_open_all(&cpu->priv.pmp);
    }
    cpu->priv.mstatus = mode == PRV_M ? 0 : MSTATUS_FS & (1ULL << 13);    /* FS Initial */
    update_tb_flags(cpu);
    mmu_changed(cpu, true, 0);
}
