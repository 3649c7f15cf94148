/*
 * Boot loading for xlat-system: -kernel, -initrd and the device tree into
 * guest RAM, placed where QEMU's virt board (hw/riscv/boot.c, QEMU 10.0)
 * puts them, so a kernel finds the same layout under both:
 *
 *   kernel   an ELF (riscv64 ET_EXEC: PT_LOAD segments at their physical
 *            addresses, entry e_entry); a Linux `Image` (the RISC-V boot
 *            header: at RAM base + text_offset, 0x200000 for RV64, entry =
 *            load address, image_size reserved for its BSS); anything else
 *            a raw binary at RAM base (entry = RAM base: with the SBI built
 *            in there is no firmware below it)
 *   initrd   at kernel low + min(RAM / 2, 512 MiB), moved up past the
 *            kernel's end when a large kernel in a small RAM would overlap
 *            (QEMU does not check; the kernel's BSS clearing would eat it)
 *   DTB      2 MiB-aligned, as high as it fits below the end of RAM (QEMU
 *            10 on RV64; QEMU 7.2 capped it at 3 GiB), and above low_limit
 *
 * Every function checks what it reads (sizes, offsets, ranges against
 * RAM) and reports failure as -1 with one line in err ("kernel FILE:
 * segment 2 [0x..., 0x...) lies outside RAM [...)"); nothing is written to
 * RAM unless the whole image fits. RAM is passed explicitly (BootRam), so
 * the loader needs no machine and tests can give it a buffer.
 */
#ifndef XLAT_SYSTEM_LOADER_H
#define XLAT_SYSTEM_LOADER_H

#include <stddef.h>
#include <stdint.h>

/* Guest RAM: host bytes of physical [base, base + size). */
typedef struct BootRam {
    uint8_t *host;
    uint64_t base, size;
} BootRam;

typedef enum { IMAGE_ELF, IMAGE_LINUX, IMAGE_RAW } ImageKind;

typedef struct LoadedImage {
    ImageKind kind;
    uint64_t entry;          /* physical address the boot hart starts at */
    uint64_t low, high;      /* physical [low, high) it occupies, BSS included */
    uint64_t tohost;         /* ELF symbol `tohost` (riscv-tests' HTIF), 0: none */
    uint64_t fromhost;       /* ELF symbol `fromhost`, 0: none */
    uint64_t text_offset;    /* IMAGE_LINUX: the header's load offset */
} LoadedImage;

/* Load the kernel file at path into RAM. 0, or -1 with a message in err. */
int load_kernel(const BootRam *ram, const char *path, LoadedImage *out, char *err,
                size_t errlen);

/* The same from bytes in memory; name is used in messages. */
int load_kernel_mem(const BootRam *ram, const void *data, size_t len, const char *name,
                    LoadedImage *out, char *err, size_t errlen);

/* Where the initrd goes for this kernel (see above). */
uint64_t initrd_place(const BootRam *ram, const LoadedImage *kernel);

/* Load the initrd at path after kernel: [*start, *end) for /chosen.
 * 0, or -1 with a message in err. */
int load_initrd(const BootRam *ram, const char *path, const LoadedImage *kernel,
                uint64_t *start, uint64_t *end, char *err, size_t errlen);

/* Where a DTB of size bytes goes, or 0 if it does not fit in RAM. */
uint64_t fdt_place(const BootRam *ram, size_t size);

/* Copy the DTB (size bytes) to fdt_place(); *addr is what a1 gets. It must
 * land at or above low_limit (the end of the initrd, else of the kernel;
 * 0: no check). 0, or -1 with a message in err. */
int load_fdt(const BootRam *ram, const void *fdt, size_t size, uint64_t low_limit,
             uint64_t *addr, char *err, size_t errlen);

#endif
