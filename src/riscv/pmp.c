/*
 * Physical memory protection (see pmp.h): the WARL rules of the pmpcfg
 * and pmpaddr CSRs, the regions derived from them, and the check.
 *
 * WARL: a locked entry (L) keeps its pmpcfg byte and its pmpaddr until
 * reset, and so does pmpaddr[i-1] while entry i is locked with A = TOR
 * (it is that entry's bottom). pmpcfg's bits 6:5 read 0. R = 0 with W = 1
 * is reserved (3.7.1): such a byte keeps its old value, as QEMU does (Spike
 * clears W instead; either is a legal WARL mapping, and keeping the entry
 * unchanged never opens memory that was closed).
 */
#include "riscv/pmp.h"

#include "riscv/priv.h"

#define PMP_A_SHIFT 3
#define PMP_L       0x80
#define PMP_CFG_MASK 0x9f           /* L, A, X, W, R: bits 6:5 are reserved (0) */
#define PMPADDR_MASK ((1ULL << 54) - 1)

enum { A_OFF = 0, A_TOR = 1, A_NA4 = 2, A_NAPOT = 3 };

#define CSR_PMPCFG0  0x3a0
#define CSR_PMPCFG15 0x3af
#define CSR_PMPADDR0 0x3b0
#define CSR_PMPADDR63 0x3ef

static unsigned a_field(uint8_t cfg) { return (cfg >> PMP_A_SHIFT) & 3; }
static bool locked(const PmpState *s, unsigned i) { return s->cfg[i] & PMP_L; }

/* pmpaddr[i] is locked by its own entry or by entry i+1 as its TOR bottom. */
static bool addr_locked(const PmpState *s, unsigned i)
{
    return locked(s, i) ||
           (i + 1 < PMP_ENTRIES && locked(s, i + 1) && a_field(s->cfg[i + 1]) == A_TOR);
}

/* -- Regions --------------------------------------------------------------------- */

/* Entry i's bytes [*lo, *hi) (empty when lo >= hi). */
static void region_of(const PmpState *s, unsigned i, uint64_t *lo, uint64_t *hi)
{
    uint64_t a = s->addr[i];
    *lo = *hi = 0;
    switch (a_field(s->cfg[i])) {
    case A_TOR:                     /* pmpaddr[i-1] <= pa < pmpaddr[i]; bottom 0 for entry 0 */
        *lo = i ? s->addr[i - 1] << 2 : 0;
        *hi = a << 2;
        break;
    case A_NA4:
        *lo = a << 2;
        *hi = *lo + 4;
        break;
    case A_NAPOT: {                 /* t trailing ones: 2^(t+3) bytes (t <= 54) */
        unsigned t = (unsigned)__builtin_ctzll(~a);
        *lo = (a & ~((1ULL << t) - 1)) << 2;
        *hi = *lo + (1ULL << (t + 3));
        break;
    }
    default:
        break;
    }
}

static void derive(PmpState *s)
{
    s->active = 0;
    for (unsigned i = 0; i < PMP_ENTRIES; i++) {
        region_of(s, i, &s->lo[i], &s->hi[i]);
        if (s->lo[i] < s->hi[i])
            s->active |= 1u << i;
    }
}

void pmp_open_all(PmpState *s)
{
    *s = (PmpState){ 0 };
    s->addr[0] = PMPADDR_MASK;
    s->cfg[0] = (uint8_t)(A_NAPOT << PMP_A_SHIFT | PMP_RWX);
    derive(s);
}

/* -- CSRs ------------------------------------------------------------------------ */

bool pmp_csr_read(const PmpState *s, unsigned csr, uint64_t *v)
{
    *v = 0;
    if (csr >= CSR_PMPCFG0 && csr <= CSR_PMPCFG15) {
        if (csr & 1)
            return false;           /* the odd ones are RV32's */
        unsigned first = (csr - CSR_PMPCFG0) * 4;
        for (unsigned b = 0; b < 8 && first + b < PMP_ENTRIES; b++)
            *v |= (uint64_t)s->cfg[first + b] << (8 * b);
        return true;
    }
    if (csr >= CSR_PMPADDR0 && csr <= CSR_PMPADDR63) {
        unsigned i = csr - CSR_PMPADDR0;
        *v = i < PMP_ENTRIES ? s->addr[i] : 0;
        return true;
    }
    return false;
}

/* One pmpcfg byte: true if it changed. */
static bool cfg_write(PmpState *s, unsigned i, uint8_t b)
{
    b &= PMP_CFG_MASK;
    if (locked(s, i) || (b & (PMP_R | PMP_W)) == PMP_W || b == s->cfg[i])
        return false;               /* locked; reserved R=0 W=1 (see the top); same */
    s->cfg[i] = b;
    return true;
}

bool pmp_csr_write(PmpState *s, unsigned csr, uint64_t v)
{
    bool changed = false;
    if (csr >= CSR_PMPCFG0 && csr <= CSR_PMPCFG15) {
        unsigned first = (csr - CSR_PMPCFG0) * 4;
        for (unsigned b = 0; b < 8 && first + b < PMP_ENTRIES; b++)
            changed |= cfg_write(s, first + b, (uint8_t)(v >> (8 * b)));
    } else {
        unsigned i = csr - CSR_PMPADDR0;
        v &= PMPADDR_MASK;
        if (i < PMP_ENTRIES && !addr_locked(s, i) && s->addr[i] != v) {
            s->addr[i] = v;
            changed = true;
        }
    }
    if (changed)
        derive(s);
    return changed;
}

/* -- The check ------------------------------------------------------------------- */

unsigned pmp_perms(const PmpState *s, int priv, uint64_t pa, uint64_t size, bool *page_wide)
{
    uint64_t end = pa + size, page = pa & ~0xfffULL, page_end = page + 0x1000;
    bool wide = true;               /* no lower entry touches the page */
    for (uint32_t m = s->active; m; m &= m - 1) {
        unsigned i = (unsigned)__builtin_ctz(m);
        uint64_t lo = s->lo[i], hi = s->hi[i];
        if (pa < hi && lo < end) {                  /* entry i matches a byte */
            if (pa < lo || end > hi) {              /* not all of them: fails */
                *page_wide = false;
                return 0;
            }
            *page_wide = wide && lo <= page && page_end <= hi;
            if (priv == PRV_M && !locked(s, i))
                return PMP_RWX;
            return s->cfg[i] & PMP_RWX;
        }
        if (page < hi && lo < page_end)
            wide = false;
    }
    *page_wide = wide;
    return priv == PRV_M ? PMP_RWX : 0;             /* no match: only M succeeds */
}

bool pmp_check(const PmpState *s, int priv, uint64_t pa, uint64_t size, enum mem_access access)
{
    bool page_wide;
    unsigned need = pmp_need(access);
    return (pmp_perms(s, priv, pa, size, &page_wide) & need) == need;
}
