/*
 * The machine's bus, interrupt lines and clock (see machine.h).
 */
#define _GNU_SOURCE
#include "system/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "exec/exec.h"
#include "system/gdbstub.h"
#include "system/hart.h"
#include "system/hw/plic.h"

Machine machine = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* mtime = host CLOCK_MONOTONIC ticks since start_ns + mtime_offset (mod
 * 2^64): the offset is what guest writes of mtime change. */
static uint64_t start_ns;
static uint64_t mtime_offset;

#define NS_PER_TICK (1000000000ULL / MTIME_HZ)

/* Ticks since the start at host time ns. */
static uint64_t raw_ticks(uint64_t ns)
{
    if (!start_ns)
        start_ns = ns;
    return (ns - start_ns) / NS_PER_TICK;
}

uint64_t machine_mtime(void)
{
    return raw_ticks(monotonic_ns()) + __atomic_load_n(&mtime_offset, __ATOMIC_ACQUIRE);
}

void machine_set_mtime(uint64_t t)
{
    __atomic_store_n(&mtime_offset, t - raw_ticks(monotonic_ns()), __ATOMIC_RELEASE);
}

void machine_mtime_deadline(uint64_t t, struct timespec *abs)
{
    uint64_t ns = monotonic_ns(), raw = raw_ticks(ns);
    uint64_t m = raw + __atomic_load_n(&mtime_offset, __ATOMIC_ACQUIRE);
    if (t > m) {                                        /* the start of tick t */
        uint64_t tick_ns = start_ns + raw * NS_PER_TICK, d = t - m;
        ns = d > (UINT64_MAX / 2 - tick_ns) / NS_PER_TICK ? UINT64_MAX / 2
                                                          : tick_ns + d * NS_PER_TICK;
    }
    abs->tv_sec = (time_t)(ns / 1000000000ULL);
    abs->tv_nsec = (long)(ns % 1000000000ULL);
}

void machine_add_mmio(uint64_t base, uint64_t size, const MmioOps *ops, void *opaque,
                      const char *name)
{
    if (machine.nregions == sizeof machine.regions / sizeof machine.regions[0]) {
        fprintf(stderr, "xlat-system: too many device regions (%s)\n", name);
        exit(1);
    }
    machine.regions[machine.nregions++] = (MmioRegion){ base, size, ops, opaque, name };
}

const MmioRegion *machine_find_mmio(uint64_t pa)
{
    for (unsigned i = 0; i < machine.nregions; i++) {
        const MmioRegion *r = &machine.regions[i];
        if (pa - r->base < r->size)
            return r;
    }
    return NULL;
}

void machine_set_irq(unsigned irq, bool level)
{
    if (machine.plic)
        plic_set_irq(machine.plic, irq, level);
}

void machine_request_exit(int status, bool reboot)
{
    pthread_mutex_lock(&machine.lock);
    if (!machine.exit_requested) {
        machine.exit_requested = true;
        machine.exit_status = status;
        machine.reboot = reboot;
    }
    pthread_mutex_unlock(&machine.lock);
    for (unsigned i = 0; i < machine.nharts; i++)
        hart_kick(machine.harts[i]);
    gdbstub_wake();                     /* harts gdb holds, and its thread */
}
