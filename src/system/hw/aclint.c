/*
 * The ACLINT of QEMU's virt machine with its default CLINT layout (RISC-V
 * ACLINT spec 1.0: an MSWI device at offset 0 and an MTIMER device whose
 * compare registers are at 0x4000 and whose counter is at 0xbff8):
 *
 *   0x0000 + 4*hart   msip: bit 0 is the hart's MSIP (other bits read 0)
 *   0x4000 + 8*hart   mtimecmp (64-bit; 4-byte accesses reach either half)
 *   0xbff8            mtime, ticks of MTIME_HZ (machine_mtime())
 *
 * MTIP follows a write of mtimecmp at once (mip read right after it shows
 * the new comparison); as mtime advances, the hart loop compares
 * machine_mtime() with Hart.mtimecmp, and is told of every new compare
 * value through hart_timer_changed(). mtime is writable (8 bytes, or
 * either half), as on QEMU: the write sets machine_mtime() itself
 * (machine_set_mtime), so the time CSR, both timer compares (mtimecmp,
 * Sstc's stimecmp) and the harts' timed waits all follow it; every hart's
 * MTIP is compared again at once and its wake-up re-armed. The goldfish
 * RTC keeps host wall time.
 *
 * mtimecmp is written under Hart.lock and stored atomically (the harts'
 * timer thread reads it without the lock).
 *
 * Accesses must be naturally aligned, 4 bytes wide to msip and 4 or 8 to
 * the timer registers (the sizes QEMU accepts); other accesses, and the
 * registers of harts that do not exist, read 0 and ignore writes.
 */
#include "system/hw/aclint.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "riscv/priv.h"
#include "system/hart.h"
#include "system/machine.h"

#define ACLINT_MSIP      0x0000u
#define ACLINT_MTIMECMP  0x4000u
#define ACLINT_MTIME     0xbff8u
#define ACLINT_END       0xc000u

typedef struct Aclint {
    pthread_mutex_t lock;       /* msip writes reach a hart in order */
    bool msip[MACHINE_MAX_HARTS];
} Aclint;

static Aclint aclint = { .lock = PTHREAD_MUTEX_INITIALIZER };

static Hart *aclint_hart(uint64_t index)
{
    return index < machine.nharts ? machine.harts[index] : NULL;
}

/* The size-byte part at byte offset part (0 or 4) of a 64-bit register. */
static uint64_t reg64_read(uint64_t reg, unsigned part, unsigned size)
{
    return size == 8 ? reg : (uint32_t)(reg >> (8 * part));
}

static uint64_t reg64_write(uint64_t reg, unsigned part, unsigned size, uint64_t val)
{
    if (size == 8)
        return val;
    uint64_t mask = 0xffffffffULL << (8 * part);
    return (reg & ~mask) | ((uint64_t)(uint32_t)val << (8 * part));
}

/* -- msip ----------------------------------------------------------------- */

static uint64_t msip_read(uint64_t hart)
{
    if (!aclint_hart(hart))
        return 0;
    pthread_mutex_lock(&aclint.lock);
    uint64_t v = aclint.msip[hart];
    pthread_mutex_unlock(&aclint.lock);
    return v;
}

static void msip_write(uint64_t hart, uint64_t val)
{
    Hart *h = aclint_hart(hart);
    if (!h)
        return;
    pthread_mutex_lock(&aclint.lock);
    aclint.msip[hart] = val & 1;
    hart_set_mip(h, MIP_MSIP, val & 1);
    pthread_mutex_unlock(&aclint.lock);
}

/* -- mtimecmp ------------------------------------------------------------- */

static uint64_t mtimecmp_read(uint64_t off, unsigned size)
{
    Hart *h = aclint_hart((off - ACLINT_MTIMECMP) / 8);
    if (!h)
        return 0;
    pthread_mutex_lock(&h->lock);
    uint64_t cmp = h->mtimecmp;
    pthread_mutex_unlock(&h->lock);
    return reg64_read(cmp, off % 8, size);
}

/* The comparator's output now (MTIP) for compare value cmp, and the hart's
 * timed wake-up re-armed: after a write of mtimecmp or of mtime. */
static void compare(Hart *h, uint64_t cmp)
{
    hart_set_mip(h, MIP_MTIP, machine_mtime() >= cmp);
    hart_timer_changed(h);
}

static void mtimecmp_write(uint64_t off, unsigned size, uint64_t val)
{
    Hart *h = aclint_hart((off - ACLINT_MTIMECMP) / 8);
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    uint64_t cmp = reg64_write(h->mtimecmp, off % 8, size, val);
    __atomic_store_n(&h->mtimecmp, cmp, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&h->lock);
    compare(h, cmp);
}

/* -- mtime ---------------------------------------------------------------- */

static void mtime_write(uint64_t off, unsigned size, uint64_t val)
{
    machine_set_mtime(reg64_write(machine_mtime(), off % 8, size, val));
    for (unsigned i = 0; i < machine.nharts; i++) {
        Hart *h = machine.harts[i];
        compare(h, __atomic_load_n(&h->mtimecmp, __ATOMIC_ACQUIRE));
    }
}

/* -- The window ----------------------------------------------------------- */

static bool access_ok(uint64_t off, unsigned size)
{
    return (size == 4 || size == 8) && off % size == 0 && off < ACLINT_END;
}

static uint64_t aclint_read(void *opaque, uint64_t off, unsigned size)
{
    (void)opaque;
    if (!access_ok(off, size))
        return 0;
    if (off < ACLINT_MTIMECMP)
        return size == 4 ? msip_read((off - ACLINT_MSIP) / 4) : 0;
    if (off < ACLINT_MTIME)
        return mtimecmp_read(off, size);
    return reg64_read(machine_mtime(), off % 8, size);
}

static void aclint_write(void *opaque, uint64_t off, unsigned size, uint64_t val)
{
    (void)opaque;
    if (!access_ok(off, size))
        return;
    if (off < ACLINT_MTIMECMP) {
        if (size == 4)
            msip_write((off - ACLINT_MSIP) / 4, val);
    } else if (off < ACLINT_MTIME)
        mtimecmp_write(off, size, val);
    else
        mtime_write(off, size, val);
}

static const MmioOps aclint_ops = { aclint_read, aclint_write };

void aclint_init(void)
{
    machine_add_mmio(VIRT_ACLINT_BASE, VIRT_ACLINT_SIZE, &aclint_ops, &aclint, "aclint");
}
