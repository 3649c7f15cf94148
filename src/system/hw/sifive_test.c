/*
 * The sifive,test finisher (QEMU's hw/misc/sifive_test behaviour): a write
 * to offset 0 whose low 16 bits are
 *
 *   0x5555  FINISHER_PASS    power off, exit status 0
 *   0x7777  FINISHER_RESET   reboot
 *   0x3333  FINISHER_FAIL    power off, exit status = the value's bits 31..16
 *
 * ends the run through machine_request_exit(). Other values and offsets are
 * ignored; reads return 0. Linux reaches it through syscon-poweroff (0x5555)
 * and syscon-reboot (0x7777); bare-metal tests use FAIL to report a code.
 */
#include "system/hw/test_dev.h"

#include <stdint.h>

#include "system/machine.h"

#define TEST_SIZE   0x1000u

enum { FINISHER_FAIL = 0x3333, FINISHER_PASS = 0x5555, FINISHER_RESET = 0x7777 };

static uint64_t test_read(void *opaque, uint64_t off, unsigned size)
{
    (void)opaque, (void)off, (void)size;
    return 0;
}

static void test_write(void *opaque, uint64_t off, unsigned size, uint64_t val)
{
    (void)opaque, (void)size;
    if (off != 0)
        return;
    switch (val & 0xffff) {
    case FINISHER_PASS:  machine_request_exit(0, false); break;
    case FINISHER_RESET: machine_request_exit(0, true); break;
    case FINISHER_FAIL:  machine_request_exit((int)(val >> 16 & 0xffff), false); break;
    default:             break;
    }
}

static const MmioOps test_ops = { test_read, test_write };

void sifive_test_init(void)
{
    machine_add_mmio(VIRT_TEST_BASE, TEST_SIZE, &test_ops, NULL, "sifive_test");
}
