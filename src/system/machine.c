/*
 * The machine's bus, interrupt lines and clock (see machine.h).
 */
#define _GNU_SOURCE
#include "system/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "system/gdbstub.h"
#include "system/hart.h"
#include "system/hw/plic.h"

Machine machine = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t start_ns;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t machine_mtime(void)
{
    if (!start_ns)
        start_ns = now_ns();
    return (now_ns() - start_ns) / (1000000000ULL / MTIME_HZ);
}

void machine_mtime_deadline(uint64_t t, struct timespec *abs)
{
    machine_mtime();                                    /* sets start_ns */
    uint64_t step = 1000000000ULL / MTIME_HZ;
    uint64_t ns = t > (UINT64_MAX - start_ns) / step ? UINT64_MAX / 2 : start_ns + t * step;
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
