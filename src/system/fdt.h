/*
 * The device tree of the virt machine (xlat-system), built with libfdt: what
 * the guest kernel learns about the machine, as QEMU's `-M virt` describes
 * it (QEMU 10.0's tree is the model; the devices and addresses are those of
 * machine.h). fdt_build() makes the blob; the loader (loader.h) places it in
 * RAM and hands its address to the boot hart in a1.
 *
 * Nodes: /cpus (timebase-frequency, cpu@N with riscv,isa, riscv,isa-base,
 * riscv,isa-extensions, mmu-type and an interrupt-controller child, and a
 * cpu-map), /memory, /soc (plic, clint, serial, rtc, test syscon, the
 * virtio-mmio transports), /poweroff and /reboot (syscon on the test
 * device), /aliases, /chosen (bootargs, stdout-path, initrd, rng-seed) and,
 * when firmware runs in M-mode, /reserved-memory for it.
 */
#ifndef XLAT_SYSTEM_FDT_H
#define XLAT_SYSTEM_FDT_H

#include <stddef.h>
#include <stdint.h>

/* All eight virtio-mmio slots, as QEMU's virt lists them (an empty slot
 * answers device ID 0 and the kernel skips it). */
#define FDT_VIRTIO_ALL ((1u << 8) - 1)

/* What the tree describes. Zero-initialise, then fill in; fields left zero
 * take the default named beside them. */
typedef struct FdtConfig {
    uint64_t ram_base, ram_size;       /* /memory */
    unsigned nharts;                   /* cpu@0 .. cpu@nharts-1 (1..MACHINE_MAX_HARTS) */
    const char *bootargs;              /* /chosen bootargs; NULL: none */
    uint64_t initrd_start, initrd_end; /* physical, end exclusive; 0, 0: none */

    /* The ISA advertised, one extension per entry: single letters first
     * ("i", "m", ...), then multi-letter ones in canonical order; NULL-
     * terminated. riscv,isa is derived from it. NULL: fdt_default_isa. */
    const char *const *isa;
    unsigned satp_max;                 /* mmu-type: 39, 48 or 57; 0: 57 */
    uint32_t timebase_hz;              /* 0: MTIME_HZ (10 MHz) */
    unsigned virtio_slots;             /* bit n: a transport at slot n */

    /* M-mode firmware (-bios FILE) at [fw_base, fw_base + fw_size): the
     * tree reserves it (/reserved-memory/firmware@BASE, no-map). fw_size 0:
     * no node, for the SBI built into xlat (no guest memory is taken) and
     * for OpenSBI, which adds its own nodes at boot as it does on QEMU. */
    uint64_t fw_base, fw_size;

    const uint8_t *rng_seed;           /* /chosen rng-seed; NULL: none */
    size_t rng_seed_len;
} FdtConfig;

/* rv64imafdc_zicsr_zifencei_zba_zbb_zbs_sstc: what xlat's harts implement. */
extern const char *const fdt_default_isa[];

/* Build the tree. Returns a malloc'd, packed blob (free() it) and its size
 * in *size, or NULL (bad configuration, libfdt failure: a message on
 * stderr). */
void *fdt_build(const FdtConfig *cfg, size_t *size);

/* Write the blob to path (-machine dumpdtb=FILE). 0, or -errno. */
int fdt_dump(const char *path, const void *fdt);

#endif
