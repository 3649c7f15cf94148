/*
 * The virt machine of system mode (xlat-system): QEMU's `-M virt` memory
 * map, RAM, the devices on the physical bus, interrupt lines and the
 * machine's clock. Harts are in hart.h; the devices themselves in hw/.
 *
 * Physical memory map (QEMU's virt board, so kernels, device trees and
 * users' habits carry over):
 *
 *   0x0010_0000  sifive,test syscon (poweroff 0x5555, reboot 0x7777)
 *   0x0010_1000  goldfish RTC                       (PLIC irq 11)
 *   0x0200_0000  ACLINT (CLINT layout: msip, mtimecmp, mtime at 10 MHz)
 *   0x0c00_0000  PLIC
 *   0x1000_0000  ns16550a UART                      (PLIC irq 10)
 *   0x1000_1000  virtio-mmio slots, 0x1000 apart    (PLIC irq 1..8)
 *   0x8000_0000  RAM (-m)
 *
 * Devices register MMIO regions (machine_add_mmio); a guest access to a
 * physical address that is neither RAM nor a region is an access fault
 * (and a -d guest_errors line). A device's callbacks run on whichever
 * host thread runs the accessing hart: devices with state shared with
 * their own I/O threads lock it themselves.
 */
#ifndef XLAT_SYSTEM_MACHINE_H
#define XLAT_SYSTEM_MACHINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VIRT_TEST_BASE    0x00100000ULL
#define VIRT_RTC_BASE     0x00101000ULL
#define VIRT_ACLINT_BASE  0x02000000ULL
#define VIRT_ACLINT_SIZE  0x00010000ULL
#define VIRT_PLIC_BASE    0x0c000000ULL
#define VIRT_PLIC_SIZE    0x04000000ULL   /* room for QEMU's 15872 contexts' window */
#define VIRT_UART0_BASE   0x10000000ULL
#define VIRT_VIRTIO_BASE  0x10001000ULL
#define VIRT_VIRTIO_SLOTS 8
#define VIRT_RAM_BASE     0x80000000ULL

#define VIRT_UART0_IRQ   10
#define VIRT_RTC_IRQ     11
#define VIRT_VIRTIO_IRQ  1             /* slot n: irq 1 + n */
#define VIRT_PLIC_NDEV   95            /* sources 1..95, as QEMU's virt */

#define MACHINE_MAX_HARTS 32
#define MTIME_HZ 10000000ULL           /* timebase-frequency: 10 MHz */

/* A device register window: offsets are from the window's base; size is
 * 1, 2, 4 or 8 (the device decides what a width it does not support does:
 * QEMU's virt devices mostly take 4, some 1). */
typedef struct MmioOps {
    uint64_t (*read)(void *opaque, uint64_t off, unsigned size);
    void (*write)(void *opaque, uint64_t off, unsigned size, uint64_t val);
} MmioOps;

typedef struct MmioRegion {
    uint64_t base, size;
    const MmioOps *ops;
    void *opaque;
    const char *name;
} MmioRegion;

struct Hart;
struct Plic;

typedef struct Machine {
    uint8_t *ram;                      /* host address of VIRT_RAM_BASE */
    uint64_t ram_size;
    unsigned nharts;
    struct Hart *harts[MACHINE_MAX_HARTS];
    MmioRegion regions[32];
    unsigned nregions;
    struct Plic *plic;                 /* interrupt lines go here */

    /* Ending the run: the first request wins (poweroff, reboot, a fatal
     * error, ctrl-a x); every hart leaves its loop. */
    pthread_mutex_t lock;
    bool exit_requested;
    int exit_status;
    bool reboot;
} Machine;

extern Machine machine;

/* Add a device register window (before any hart runs). */
void machine_add_mmio(uint64_t base, uint64_t size, const MmioOps *ops, void *opaque,
                      const char *name);

/* The region holding physical address pa, or NULL. */
const MmioRegion *machine_find_mmio(uint64_t pa);

/* Host address of physical [pa, pa+len) if it is all RAM, else NULL. */
static inline void *machine_ram_ptr(uint64_t pa, uint64_t len)
{
    uint64_t off = pa - VIRT_RAM_BASE;
    if (pa < VIRT_RAM_BASE || off >= machine.ram_size || len > machine.ram_size - off)
        return NULL;
    return machine.ram + off;
}

/* Raise or lower PLIC interrupt source irq (1..VIRT_PLIC_NDEV). Any thread. */
void machine_set_irq(unsigned irq, bool level);

/* The machine's clock (mtime, the time CSR, the timer compares): ticks of
 * MTIME_HZ since start, plus what guest writes of mtime moved it by. */
uint64_t machine_mtime(void);

/* mtime becomes t and counts on from there (an ACLINT write). The caller
 * tells the harts: their timer comparisons change. */
void machine_set_mtime(uint64_t t);

/* The host CLOCK_MONOTONIC time at which mtime reaches t (now, if it has;
 * for timed waits). */
struct timespec;
void machine_mtime_deadline(uint64_t t, struct timespec *abs);

/* End the run with status (poweroff: 0; reboot: restart unless -no-reboot).
 * Any thread; the harts stop at their next exit check. */
void machine_request_exit(int status, bool reboot);

#endif
