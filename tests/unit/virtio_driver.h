/*
 * What the virtio unit tests' small drivers share: the virtio-mmio
 * register offsets and bits, a fake guest RAM (machine.ram) fenced by
 * PROT_NONE pages so a host access past either end crashes the test, the
 * bus as a hart reaches it (machine_find_mmio(pa)->ops), the PLIC pending
 * bit of a slot's interrupt, and the -d guest_errors log captured in
 * memory (main sets log_file = open_memstream(&log_buf, &log_len)).
 * Included once per test program, after check.h.
 */
#ifndef XLAT_TESTS_UNIT_VIRTIO_DRIVER_H
#define XLAT_TESTS_UNIT_VIRTIO_DRIVER_H

#include <endian.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "exec/settings.h"
#include "system/hw/plic.h"
#include "system/hw/virtio.h"
#include "system/hw/virtio_mmio.h"
#include "system/machine.h"

enum {
    MAGIC = 0x000, VERSION = 0x004, DEVICE_ID = 0x008, VENDOR_ID = 0x00c,
    DEV_FEATURES = 0x010, DEV_FEATURES_SEL = 0x014, DRV_FEATURES = 0x020,
    DRV_FEATURES_SEL = 0x024, QUEUE_ALIGN = 0x03c, QUEUE_SEL = 0x030, QUEUE_NUM_MAX = 0x034,
    QUEUE_NUM = 0x038, QUEUE_PFN = 0x040, QUEUE_READY = 0x044, QUEUE_NOTIFY = 0x050,
    ISR = 0x060, ISR_ACK = 0x064, STATUS = 0x070, DESC_LO = 0x080, DESC_HI = 0x084,
    DRIVER_LO = 0x090, DRIVER_HI = 0x094, DEVICE_LO = 0x0a0, DEVICE_HI = 0x0a4,
    SHM_LEN_LO = 0x0b0, GENERATION = 0x0fc, CONFIG = 0x100,
};

#define ST_ACK 1
#define ST_DRIVER 2
#define ST_DRIVER_OK 4
#define ST_FEATURES_OK 8
#define ST_NEEDS_RESET 0x40

#define D_NEXT 1
#define D_WRITE 2
#define D_INDIRECT 4

#define F(bit) (1ULL << (bit))

/* -- Fake RAM and the bus --------------------------------------------------- */

#define RAM_SIZE (4ULL << 20)
#define GUARD    4096ULL

static inline uint64_t pa(uint64_t off) { return VIRT_RAM_BASE + off; }
static inline uint8_t *host(uint64_t off) { return machine.ram + off; }

static inline void ram_setup(void)
{
    uint8_t *p = mmap(NULL, RAM_SIZE + 2 * GUARD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED || mprotect(p + GUARD, RAM_SIZE, PROT_READ | PROT_WRITE) < 0) {
        perror("mmap");
        exit(1);
    }
    machine.ram = p + GUARD;
    machine.ram_size = RAM_SIZE;
}

static inline uint64_t slot_pa(unsigned slot) { return VIRT_VIRTIO_BASE + 0x1000ULL * slot; }

static inline const MmioRegion *slot_region(unsigned slot, uint64_t off)
{
    const MmioRegion *r = machine_find_mmio(slot_pa(slot) + off);
    if (!r) {
        printf("FAIL: no device at slot %u\n", slot);
        failures++;
    }
    return r;
}

static inline uint64_t rd(unsigned slot, uint64_t off, unsigned size)
{
    const MmioRegion *r = slot_region(slot, off);
    return r ? r->ops->read(r->opaque, slot_pa(slot) + off - r->base, size) : 0;
}

static inline void wr(unsigned slot, uint64_t off, unsigned size, uint64_t v)
{
    const MmioRegion *r = slot_region(slot, off);
    if (r)
        r->ops->write(r->opaque, slot_pa(slot) + off - r->base, size, v);
}

static inline uint32_t rd32(unsigned slot, uint64_t off) { return (uint32_t)rd(slot, off, 4); }
static inline void wr32(unsigned slot, uint64_t off, uint32_t v) { wr(slot, off, 4, v); }

/* The PLIC's pending bit for the slot's interrupt. */
static inline bool irq_line(unsigned slot)
{
    const MmioRegion *r = machine_find_mmio(VIRT_PLIC_BASE);
    unsigned irq = VIRT_VIRTIO_IRQ + slot;
    return r->ops->read(r->opaque, 0x1000 + 4 * (irq / 32), 4) >> (irq % 32) & 1;
}

/* Ring fields in RAM, little-endian; 16-bit indices with the ordering a
 * device on another thread needs. */
static inline void put16(uint64_t off, uint16_t v)
{
    __atomic_store_n((uint16_t *)(void *)host(off), htole16(v), __ATOMIC_RELEASE);
}

static inline uint16_t get16(uint64_t off)
{
    return le16toh(__atomic_load_n((uint16_t *)(void *)host(off), __ATOMIC_ACQUIRE));
}

static inline uint32_t get32(uint64_t off) { uint32_t v; memcpy(&v, host(off), 4); return le32toh(v); }

/* Descriptor i of the table at RAM offset table. */
static inline void desc_at(uint64_t table, unsigned i, uint64_t addr, uint32_t len,
                           uint16_t flags, uint16_t next)
{
    uint8_t *d = host(table + 16ULL * i);
    addr = htole64(addr);
    len = htole32(len);
    flags = htole16(flags);
    next = htole16(next);
    memcpy(d, &addr, 8);
    memcpy(d + 8, &len, 4);
    memcpy(d + 12, &flags, 2);
    memcpy(d + 14, &next, 2);
}

/* -- The guest_errors log ---------------------------------------------------- */

static char *log_buf;
static size_t log_len, log_mark;

/* The log since the last call contains needle. */
static inline bool logged(const char *needle)
{
    fflush(log_file);
    bool found = log_buf && strstr(log_buf + log_mark, needle) != NULL;
    if (!found)
        printf("  (log since the last check: %s)\n", log_buf ? log_buf + log_mark : "");
    log_mark = log_len;
    return found;
}

static inline void log_skip(void)
{
    fflush(log_file);
    log_mark = log_len;
}

#endif
