/*
 * SiFive PLIC (riscv,plic0) as QEMU's virt machine configures it: sources
 * 1..VIRT_PLIC_NDEV, 3 priority bits, two contexts per hart (2h: M-mode,
 * 2h+1: S-mode). Register layout (offsets from VIRT_PLIC_BASE, all 32-bit):
 *
 *   0x000000 + 4*irq              priority (WARL: the low 3 bits; irq 0 is 0)
 *   0x001000 + 4*word             pending bits (read-only)
 *   0x002000 + 0x80*ctx + 4*word  enable bits of context ctx
 *   0x200000 + 0x1000*ctx         priority threshold of ctx (WARL, 3 bits)
 *   0x200004 + 0x1000*ctx         claim (read) / complete (write)
 *
 * Sources are level-triggered, as in QEMU's virt: a source is pending while
 * its line is high and it is not claimed. A claim returns the enabled
 * pending source of highest priority above the context's threshold (ties:
 * the lowest id), or 0, and the source stays claimed (not pending) until
 * the same context-enabled id is written back as complete; then it is
 * pending again if its line is still high (RISC-V PLIC spec 1.0.0,
 * "Interrupt Claim Process" and "Interrupt Completion").
 *
 * Every change recomputes each context's output and drives MEIP (M
 * context) or SEIP (S context) of its hart. Lines change from device I/O
 * threads and registers from harts, so the state has its own mutex; the
 * harts' mip bits are set under it, so outputs reach them in order.
 *
 * Registers of sources above VIRT_PLIC_NDEV, of contexts beyond the harts
 * and of reserved offsets read 0 and ignore writes; so do accesses that are
 * not 4 bytes wide (QEMU faults those).
 */
#include "system/hw/plic.h"

#include <pthread.h>
#include <stdint.h>

#include "riscv/priv.h"
#include "system/hart.h"
#include "system/machine.h"

#define PLIC_NSRC      (VIRT_PLIC_NDEV + 1)   /* source 0 exists only as "none" */
#define PLIC_WORDS     ((PLIC_NSRC + 31) / 32)
#define PLIC_PRIO_MASK 7u                     /* 3 priority bits */
#define PLIC_MAX_CTX   (2 * MACHINE_MAX_HARTS)

#define PLIC_PRIORITY  0x000000u
#define PLIC_PENDING   0x001000u
#define PLIC_ENABLE    0x002000u
#define PLIC_ENABLE_STRIDE 0x80u
#define PLIC_CONTEXT   0x200000u
#define PLIC_CONTEXT_STRIDE 0x1000u

struct Plic {
    pthread_mutex_t lock;
    unsigned ncontexts;                       /* 2 * machine.nharts */
    uint8_t priority[PLIC_NSRC];
    uint32_t level[PLIC_WORDS];               /* the source's line is high */
    uint32_t claimed[PLIC_WORDS];             /* claimed, not yet completed */
    uint32_t enable[PLIC_MAX_CTX][PLIC_WORDS];
    uint8_t threshold[PLIC_MAX_CTX];
};

static Plic plic;

/* -- State ---------------------------------------------------------------- */

static bool bit_get(const uint32_t *words, unsigned irq)
{
    return words[irq / 32] >> (irq % 32) & 1;
}

static void bit_put(uint32_t *words, unsigned irq, bool on)
{
    uint32_t m = 1u << (irq % 32);
    words[irq / 32] = on ? words[irq / 32] | m : words[irq / 32] & ~m;
}

static uint32_t pending_word(const Plic *p, unsigned word)
{
    return p->level[word] & ~p->claimed[word];
}

/* The source context ctx would claim now, or 0. */
static unsigned plic_best(const Plic *p, unsigned ctx)
{
    unsigned best = 0, best_prio = p->threshold[ctx];
    for (unsigned w = 0; w < PLIC_WORDS; w++) {
        uint32_t cand = pending_word(p, w) & p->enable[ctx][w];
        for (; cand; cand &= cand - 1) {
            unsigned irq = w * 32 + (unsigned)__builtin_ctz(cand);
            if (p->priority[irq] > best_prio) {
                best = irq;
                best_prio = p->priority[irq];
            }
        }
    }
    return best;
}

/* Drive every context's output onto its hart's MEIP or SEIP. */
static void plic_update(Plic *p)
{
    for (unsigned ctx = 0; ctx < p->ncontexts; ctx++) {
        Hart *h = machine.harts[ctx / 2];
        if (h)
            hart_set_mip(h, ctx & 1 ? MIP_SEIP : MIP_MEIP, plic_best(p, ctx) != 0);
    }
}

void plic_set_irq(Plic *p, unsigned irq, bool level)
{
    if (irq == 0 || irq >= PLIC_NSRC)
        return;
    pthread_mutex_lock(&p->lock);
    if (bit_get(p->level, irq) != level) {
        bit_put(p->level, irq, level);
        plic_update(p);
    }
    pthread_mutex_unlock(&p->lock);
}

static uint32_t plic_claim(Plic *p, unsigned ctx)
{
    unsigned irq = plic_best(p, ctx);
    if (irq) {
        bit_put(p->claimed, irq, true);
        plic_update(p);
    }
    return irq;
}

/* Completion of an id not enabled for ctx is ignored (PLIC spec). */
static void plic_complete(Plic *p, unsigned ctx, uint32_t irq)
{
    if (irq == 0 || irq >= PLIC_NSRC || !bit_get(p->enable[ctx], irq))
        return;
    if (bit_get(p->claimed, irq)) {
        bit_put(p->claimed, irq, false);
        plic_update(p);
    }
}

/* -- Registers ------------------------------------------------------------ */

/* What an offset names. */
typedef enum { REG_NONE, REG_PRIORITY, REG_PENDING, REG_ENABLE, REG_THRESHOLD,
               REG_CLAIM } PlicReg;

typedef struct {
    PlicReg reg;
    unsigned index;         /* irq (priority) or word (pending, enable) */
    unsigned ctx;           /* enable, threshold, claim */
} PlicDecoded;

static PlicDecoded plic_decode(const Plic *p, uint64_t off)
{
    PlicDecoded d = { REG_NONE, 0, 0 };
    if (off < PLIC_PENDING) {
        d.index = (unsigned)(off / 4);
        if (d.index > 0 && d.index < PLIC_NSRC)
            d.reg = REG_PRIORITY;
    } else if (off < PLIC_ENABLE) {
        d.index = (unsigned)((off - PLIC_PENDING) / 4);
        if (d.index < PLIC_WORDS)
            d.reg = REG_PENDING;
    } else if (off < PLIC_CONTEXT) {
        d.ctx = (unsigned)((off - PLIC_ENABLE) / PLIC_ENABLE_STRIDE);
        d.index = (unsigned)((off - PLIC_ENABLE) % PLIC_ENABLE_STRIDE / 4);
        if (d.ctx < p->ncontexts && d.index < PLIC_WORDS)
            d.reg = REG_ENABLE;
    } else {
        uint64_t ctx = (off - PLIC_CONTEXT) / PLIC_CONTEXT_STRIDE;
        uint64_t reg = (off - PLIC_CONTEXT) % PLIC_CONTEXT_STRIDE;
        d.ctx = ctx < p->ncontexts ? (unsigned)ctx : 0;
        if (ctx < p->ncontexts && reg == 0)
            d.reg = REG_THRESHOLD;
        else if (ctx < p->ncontexts && reg == 4)
            d.reg = REG_CLAIM;
    }
    return d;
}

/* Enable bits of sources that do not exist (0, and above the last) are 0. */
static uint32_t enable_mask(unsigned word)
{
    uint32_t m = word == 0 ? ~1u : ~0u;
    unsigned first = word * 32;
    if (first + 32 > PLIC_NSRC)
        m &= (1u << (PLIC_NSRC - first)) - 1;
    return m;
}

static uint64_t plic_read(void *opaque, uint64_t off, unsigned size)
{
    Plic *p = opaque;
    if (size != 4 || off % 4)
        return 0;
    PlicDecoded d = plic_decode(p, off);
    uint32_t val = 0;
    pthread_mutex_lock(&p->lock);
    switch (d.reg) {
    case REG_PRIORITY:  val = p->priority[d.index]; break;
    case REG_PENDING:   val = pending_word(p, d.index); break;
    case REG_ENABLE:    val = p->enable[d.ctx][d.index]; break;
    case REG_THRESHOLD: val = p->threshold[d.ctx]; break;
    case REG_CLAIM:     val = plic_claim(p, d.ctx); break;
    case REG_NONE:      break;
    }
    pthread_mutex_unlock(&p->lock);
    return val;
}

static void plic_write(void *opaque, uint64_t off, unsigned size, uint64_t val64)
{
    Plic *p = opaque;
    if (size != 4 || off % 4)
        return;
    PlicDecoded d = plic_decode(p, off);
    uint32_t val = (uint32_t)val64;
    pthread_mutex_lock(&p->lock);
    switch (d.reg) {
    case REG_PRIORITY:
        p->priority[d.index] = (uint8_t)(val & PLIC_PRIO_MASK);
        plic_update(p);
        break;
    case REG_ENABLE:
        p->enable[d.ctx][d.index] = val & enable_mask(d.index);
        plic_update(p);
        break;
    case REG_THRESHOLD:
        p->threshold[d.ctx] = (uint8_t)(val & PLIC_PRIO_MASK);
        plic_update(p);
        break;
    case REG_CLAIM:
        plic_complete(p, d.ctx, val);
        break;
    case REG_PENDING:       /* read-only */
    case REG_NONE:
        break;
    }
    pthread_mutex_unlock(&p->lock);
}

static const MmioOps plic_ops = { plic_read, plic_write };

Plic *plic_init(void)
{
    Plic *p = &plic;
    pthread_mutex_init(&p->lock, NULL);
    p->ncontexts = 2 * machine.nharts;
    machine_add_mmio(VIRT_PLIC_BASE, VIRT_PLIC_SIZE, &plic_ops, p, "plic");
    machine.plic = p;
    return p;
}
