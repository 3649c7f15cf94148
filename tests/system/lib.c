/*
 * The bare-metal test library (see sys.h): UART output, checks, the trap
 * dispatcher behind start.S's entries, page tables, SBI calls.
 */
#include "sys.h"

/* -- Output ------------------------------------------------------------------ */

#define UART_THR 0
#define UART_LSR 5
#define LSR_THRE 0x20

void put_char(char c)
{
    while (!(MMIO8(UART_BASE + UART_LSR) & LSR_THRE))
        ;
    MMIO8(UART_BASE + UART_THR) = (uint8_t)c;
}

void put_str(const char *s)
{
    while (*s)
        put_char(*s++);
}

void put_hex(uint64_t v)
{
    put_str("0x");
    int shift = 60;
    while (shift > 0 && !((v >> shift) & 0xf))
        shift -= 4;
    for (; shift >= 0; shift -= 4)
        put_char("0123456789abcdef"[(v >> shift) & 0xf]);
}

void put_dec(uint64_t v)
{
    char buf[24];
    int n = 0;
    do
        buf[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        put_char(buf[--n]);
}

void section(const char *name)
{
    put_str("== ");
    put_str(name);
    put_char('\n');
}

/* -- Checks -------------------------------------------------------------------- */

static volatile int nchecks, nfails;

static void verdict(const char *what, const char *field, int ok)
{
    nchecks++;
    if (!ok)
        nfails++;
    put_str(ok ? "ok   " : "FAIL ");
    put_str(what);
    if (field) {
        put_str(" (");
        put_str(field);
        put_char(')');
    }
}

void check(const char *what, int ok)
{
    verdict(what, 0, ok);
    put_char('\n');
}

static void check_eq_field(const char *what, const char *field, uint64_t got, uint64_t want)
{
    verdict(what, field, got == want);
    if (got == want) {
        put_str(" = ");
        put_hex(got);
    } else {
        put_str(": got ");
        put_hex(got);
        put_str(" want ");
        put_hex(want);
    }
    put_char('\n');
}

void check_eq(const char *what, uint64_t got, uint64_t want)
{
    check_eq_field(what, 0, got, want);
}

void check_bits(const char *what, uint64_t got, uint64_t mask, uint64_t want)
{
    verdict(what, 0, (got & mask) == want);
    put_str(": ");
    put_hex(got);
    put_str(" & ");
    put_hex(mask);
    if ((got & mask) != want) {
        put_str(" want ");
        put_hex(want);
    }
    put_char('\n');
}

void check_range(const char *what, uint64_t got, uint64_t lo, uint64_t hi)
{
    int ok = got >= lo && got <= hi;
    verdict(what, 0, ok);
    put_str(ok ? " = " : ": got ");
    put_hex(got);
    put_str(" in [");
    put_hex(lo);
    put_str(", ");
    put_hex(hi);
    put_str("]\n");
}

void finish(void)
{
    put_str("END ");
    put_dec((uint64_t)nchecks);
    put_str(" checks, ");
    put_dec((uint64_t)nfails);
    put_str(" failed\n");
#ifdef SMODE
    if (!nfails) {
        sbi_call(0x53525354, 0, 0, 0, 0);          /* SRST: shutdown, no reason */
        put_str("FAIL SBI system_reset(shutdown) returned\n");
        nfails = 1;
    }
#endif
    MMIO32(SYSCON_BASE) = nfails ? ((uint32_t)nfails << 16) | 0x3333 : 0x5555;
    for (;;)
        ;
}

/* -- Traps ----------------------------------------------------------------------- */

volatile TrapRec trap_log[TRAP_LOG];
volatile int trap_count;
volatile TrapHook trap_hook;
uint64_t code_alias;

/* run_in_mode's saved caller (start.S writes them): ra, sp, s0..s11. */
typedef struct RimCtx { uint64_t ra, sp, s[12]; } RimCtx;
RimCtx rim_ctx[4];
uint64_t rim_active[4];

extern char __image_start[], __image_end[], strap_stack_top[];
void forward_end_to_m(uint64_t value);

#define MAGIC 0x5a17
static unsigned trap_total;

void take_m_interrupt(TrapHook hook, uint64_t mie_bits, uint64_t us)
{
    traps_reset();
    trap_hook = hook;
    csr_write(mie, mie_bits);
    csr_set(mstatus, MSTATUS_MIE);
    WAIT_FOR(trap_count > 0, us);
    csr_clear(mstatus, MSTATUS_MIE);
    csr_write(mie, 0);
    trap_hook = 0;
}

void traps_reset(void)
{
    trap_count = 0;
}

static unsigned insn_len(uint64_t epc)
{
    uint64_t a = epc;
    if (code_alias && a - code_alias - (uint64_t)__image_start <
                          (uint64_t)(__image_end - __image_start))
        a -= code_alias;
    return (*(volatile uint16_t *)(uintptr_t)a & 3) == 3 ? 4 : 2;
}

/* The end of a run_in_mode: resume its caller at its level. */
static void rim_return(Frame *f, int level)
{
    RimCtx *c = &rim_ctx[level];
    f->x[1] = c->ra;
    f->x[2] = c->sp;
    f->x[8] = c->s[0];
    f->x[9] = c->s[1];
    for (int i = 2; i < 12; i++)
        f->x[16 + i] = c->s[i];
    f->epc = c->ra;
    rim_active[level] = 0;
    if (level == PRV_M) {
        csr_set(mstatus, MSTATUS_MPP);
        csr_clear(mstatus, MSTATUS_MPIE);
#ifndef SMODE
        csr_write(sscratch, strap_stack_top);     /* an S frame may be abandoned */
#endif
    } else {
        csr_set(sstatus, MSTATUS_SPP);
        csr_clear(sstatus, MSTATUS_SPIE);
    }
}

void trap_dispatch(Frame *f, long level)
{
    uint64_t c = f->cause;
    if ((c == EXC_ECALL_U || c == EXC_ECALL_S || c == EXC_ECALL_M) && f->x[17] == MAGIC &&
        f->x[16] == MAGIC) {
        if (rim_active[level]) {
            rim_return(f, (int)level);
            return;
        }
        if (level == PRV_S)
            forward_end_to_m(f->x[10]);
    }
    if (++trap_total > 20000) {
        put_str("FAIL trap storm: cause ");
        put_hex(c);
        put_str(" epc ");
        put_hex(f->epc);
        put_char('\n');
        MMIO32(SYSCON_BASE) = (0x7eU << 16) | 0x3333;
    }
    if (trap_count < TRAP_LOG) {
        volatile TrapRec *r = &trap_log[trap_count];
        r->cause = c;
        r->epc = f->epc;
        r->tval = f->tval;
        r->status = f->status;
        r->level = (int)level;
    }
    trap_count++;
    TrapHook hook = trap_hook;
    if (hook && hook(f, (int)level))
        return;
    if (c & INTERRUPT) {
        uint64_t bit = 1UL << (c & 63);
        if (level == PRV_M)
            csr_clear(mie, bit);
        else
            csr_clear(sie, bit);
    } else if (c == EXC_FETCH_MISALIGNED || c == EXC_FETCH_ACCESS || c == EXC_FETCH_PAGE) {
        f->epc = f->x[1];
    } else {
        f->epc += insn_len(f->epc);
    }
}

static const char *level_name(int level)
{
    return level == PRV_M ? "M" : level == PRV_S ? "S" : "?";
}

void expect_trap(const char *what, int level, uint64_t cause, uint64_t epc, uint64_t tval)
{
    int n = trap_count;
    check_eq_field(what, "traps taken", (uint64_t)n, 1);
    if (n < 1)
        return;
    volatile TrapRec *r = &trap_log[0];
    if (r->level != level) {
        verdict(what, "taken in", 0);
        put_str(": got ");
        put_str(level_name(r->level));
        put_str("-mode want ");
        put_str(level_name(level));
        put_str("-mode\n");
    }
    check_eq_field(what, level == PRV_M ? "mcause" : "scause", r->cause, cause);
    if (epc != ANY)
        check_eq_field(what, level == PRV_M ? "mepc" : "sepc", r->epc, epc);
    if (tval != ANY)
        check_eq_field(what, level == PRV_M ? "mtval" : "stval", r->tval, tval);
}

void expect_no_trap(const char *what)
{
    check_eq_field(what, "no trap", (uint64_t)trap_count, 0);
}

/* -- Devices ------------------------------------------------------------------------ */

uint64_t rtc_ns(void)
{
    uint32_t lo = MMIO32(RTC_BASE + 0x00);     /* TIME_LOW latches TIME_HIGH */
    uint32_t hi = MMIO32(RTC_BASE + 0x04);
    return (uint64_t)hi << 32 | lo;
}

/* -- Page tables -------------------------------------------------------------------- */

#define PT_POOL 48
static uint64_t pt_pool[PT_POOL][512] __attribute__((aligned(4096)));
static int pt_used;
uint8_t test_pages[16][4096] __attribute__((aligned(4096)));

void pt_reset(void)
{
    pt_used = 0;
}

uint64_t *pt_alloc(void)
{
    if (pt_used == PT_POOL) {
        put_str("FAIL page-table pool exhausted\n");
        finish();
    }
    uint64_t *t = pt_pool[pt_used++];
    for (int i = 0; i < 512; i++)
        t[i] = 0;
    return t;
}

uint64_t *pt_entry(uint64_t *root, int levels, uint64_t va, int leaf_level)
{
    uint64_t *t = root;
    for (int level = levels - 1; level > leaf_level; level--) {
        uint64_t *e = &t[(va >> (12 + 9 * level)) & 511];
        if (!(*e & PTE_V))
            *e = ((uint64_t)(uintptr_t)pt_alloc() >> 12) << 10 | PTE_V;
        t = (uint64_t *)(uintptr_t)((*e >> 10) << 12);
    }
    return &t[(va >> (12 + 9 * leaf_level)) & 511];
}

void pt_map(uint64_t *root, int levels, uint64_t va, uint64_t pa, uint64_t flags, int leaf_level)
{
    *pt_entry(root, levels, va, leaf_level) = pte_leaf(pa, flags);
}

uint64_t *pt_identity(int levels)
{
    uint64_t *root = pt_alloc();
    pt_map(root, levels, 0, 0, PTE_V | PTE_R | PTE_W | PTE_A | PTE_D, 2);
    pt_map(root, levels, RAM_BASE, RAM_BASE, PTE_RWX_AD, 2);
    return root;
}

/* -- SBI -------------------------------------------------------------------------------- */

SbiRet sbi_call(long eid, long fid, long a0, long a1, long a2)
{
    register long r0 asm("a0") = a0;
    register long r1 asm("a1") = a1;
    register long r2 asm("a2") = a2;
    register long r6 asm("a6") = fid;
    register long r7 asm("a7") = eid;
    asm volatile("ecall" : "+r"(r0), "+r"(r1) : "r"(r2), "r"(r6), "r"(r7) : "memory");
    return (SbiRet){ r0, r1 };
}

/* -- Start --------------------------------------------------------------------------------- */

__attribute__((weak)) void secondary_main(uint64_t hartid, uint64_t opaque)
{
    (void)hartid;
    (void)opaque;
}

void sys_main(uint64_t hartid, uint64_t dtb)
{
#ifndef SMODE
    /* Let S and U reach all memory (one NAPOT region) and read the counters. */
    csr_write(pmpaddr0, ~0UL >> 10);
    csr_write(pmpcfg0, 0x1f);
    csr_write(mcounteren, 7);
#endif
    csr_write(scounteren, 7);
    test_main(hartid, dtb);
    finish();
}
