/*
 * The virt machine's device tree (see fdt.h), written front to back with
 * libfdt's sequential-write API: every phandle is known before it is
 * referenced (fixed numbers, see PH_*), so one pass builds the tree.
 *
 * Facts taken from QEMU 10.0's tree (`-M virt,dumpdtb=`), checked against
 * QEMU 7.2's where they differ:
 *  - phandle-referenced interrupt wiring: per hart, the PLIC lists context
 *    2h (M external, hwirq 11) and 2h+1 (S external, 9) in that order (the
 *    position in interrupts-extended IS the context number), the CLINT M
 *    software (3) and M timer (7);
 *  - riscv,ndev = the highest source number (95: QEMU 10; 7.2 said 96);
 *  - linux,initrd-start/end as 64-bit values (7.2 wrote 32-bit cells; the
 *    kernel reads either);
 *  - the virtio-mmio nodes in descending address order (the kernel makes
 *    its platform devices in tree order: slot 7 comes first, as on QEMU);
 *  - poweroff/reboot: syscon nodes at the root, regmap = the test device.
 * QEMU's fw-cfg, flash, PCIe, platform-bus and pmu nodes are left out:
 * xlat has none of those devices.
 */
#include "system/fdt.h"

#include <errno.h>
#include <fcntl.h>
#include <libfdt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "riscv/priv.h"
#include "system/machine.h"

/* Register window sizes of the small devices (QEMU's virt memmap). */
#define TEST_SIZE   0x1000
#define RTC_SIZE    0x1000
#define UART_SIZE   0x100
#define VIRTIO_SIZE 0x1000
#define UART_CLOCK_HZ 3686400          /* ns16550a clock-frequency */
#define CBO_BLOCK   64                 /* Zicbom/Zicboz/Zicbop block size */

const char *const fdt_default_isa[] = {
    "i", "m", "a", "f", "d", "c",
    "zicntr", "zicsr", "zifencei", "zba", "zbb", "zbs", "sstc",
    NULL,
};

/* phandles: cpu h and its interrupt controller, then the PLIC and test. */
#define PH_CPU(h)   (1u + 2u * (h))
#define PH_INTC(h)  (2u + 2u * (h))
#define PH_PLIC(n)  (1u + 2u * (n))
#define PH_TEST(n)  (2u + 2u * (n))

/* A string list property from a literal with embedded NULs ("a\0b"). */
#define PROP_STRS(fdt, name, lit) fdt_property(fdt, name, lit, sizeof(lit))

/* Stop the builder at the first libfdt error. */
#define TRY(expr) do { int err_ = (expr); if (err_ < 0) return err_; } while (0)

/* -- Property helpers --------------------------------------------------- */

static int prop_cells(void *fdt, const char *name, const uint32_t *cells, unsigned n)
{
    fdt32_t be[4 * MACHINE_MAX_HARTS];
    if (n > sizeof be / sizeof be[0])
        return -FDT_ERR_BADVALUE;
    for (unsigned i = 0; i < n; i++)
        be[i] = cpu_to_fdt32(cells[i]);
    return fdt_property(fdt, name, be, (int)(n * sizeof be[0]));
}

/* reg = <base size> with #address-cells = #size-cells = 2. */
static int prop_reg(void *fdt, uint64_t base, uint64_t size)
{
    uint32_t c[4] = { (uint32_t)(base >> 32), (uint32_t)base,
                      (uint32_t)(size >> 32), (uint32_t)size };
    return prop_cells(fdt, "reg", c, 4);
}

static int begin_node_at(void *fdt, const char *name, uint64_t addr)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s@%llx", name, (unsigned long long)addr);
    return fdt_begin_node(fdt, buf);
}

static int prop_cells2(void *fdt)
{
    TRY(fdt_property_u32(fdt, "#address-cells", 2));
    return fdt_property_u32(fdt, "#size-cells", 2);
}

/* Per hart: <intc(h) a intc(h) b>, the interrupts-extended of the PLIC and
 * CLINT. */
static int prop_per_hart_irqs(void *fdt, unsigned nharts, uint32_t a, uint32_t b)
{
    uint32_t c[4 * MACHINE_MAX_HARTS];
    for (unsigned h = 0; h < nharts; h++) {
        c[4 * h + 0] = PH_INTC(h);
        c[4 * h + 1] = a;
        c[4 * h + 2] = PH_INTC(h);
        c[4 * h + 3] = b;
    }
    return prop_cells(fdt, "interrupts-extended", c, 4 * nharts);
}

/* A device interrupt wired to the PLIC. */
static int prop_plic_irq(void *fdt, unsigned nharts, uint32_t irq)
{
    TRY(fdt_property_u32(fdt, "interrupt-parent", PH_PLIC(nharts)));
    return fdt_property_u32(fdt, "interrupts", irq);
}

/* -- /cpus -------------------------------------------------------------- */

static const char *const *isa_of(const FdtConfig *c)
{
    return c->isa ? c->isa : fdt_default_isa;
}

static bool isa_has(const char *const *isa, const char *ext)
{
    for (; *isa; isa++)
        if (!strcmp(*isa, ext))
            return true;
    return false;
}

/* riscv,isa from the table: "rv64" + the letters + "_multi" per extension.
 * -1 unless the table starts with "i" and has its letters before the
 * multi-letter names, or when the string is too long. */
static int isa_string(const char *const *isa, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "rv64");
    bool multi = false;
    if (!isa[0] || strcmp(isa[0], "i"))
        return -1;
    for (; *isa; isa++) {
        bool letter = strlen(*isa) == 1;
        if ((letter && multi) || !**isa)
            return -1;
        multi |= !letter;
        n += (size_t)snprintf(buf + n, len - n, "%s%s", letter ? "" : "_", *isa);
        if (n >= len)
            return -1;
    }
    return 0;
}

/* riscv,isa-extensions: the table as a string list. */
static int prop_isa_extensions(void *fdt, const char *const *isa)
{
    char buf[1024];
    size_t n = 0;
    for (; *isa; isa++) {
        size_t l = strlen(*isa) + 1;
        if (n + l > sizeof buf)
            return -FDT_ERR_NOSPACE;
        memcpy(buf + n, *isa, l);
        n += l;
    }
    return fdt_property(fdt, "riscv,isa-extensions", buf, (int)n);
}

static const char *mmu_type(unsigned satp_max)
{
    switch (satp_max) {
    case 39: return "riscv,sv39";
    case 48: return "riscv,sv48";
    case 0:
    case 57: return "riscv,sv57";
    default: return NULL;
    }
}

static int cpu_isa_props(void *fdt, const FdtConfig *c)
{
    const char *const *isa = isa_of(c);
    char str[1024];
    if (isa_string(isa, str, sizeof str) < 0)
        return -FDT_ERR_BADVALUE;
    if (isa_has(isa, "zicbom"))
        TRY(fdt_property_u32(fdt, "riscv,cbom-block-size", CBO_BLOCK));
    if (isa_has(isa, "zicboz"))
        TRY(fdt_property_u32(fdt, "riscv,cboz-block-size", CBO_BLOCK));
    if (isa_has(isa, "zicbop"))
        TRY(fdt_property_u32(fdt, "riscv,cbop-block-size", CBO_BLOCK));
    TRY(prop_isa_extensions(fdt, isa));
    TRY(fdt_property_string(fdt, "riscv,isa-base", "rv64i"));
    return fdt_property_string(fdt, "riscv,isa", str);
}

static int cpu_node(void *fdt, const FdtConfig *c, unsigned h)
{
    char name[32];
    snprintf(name, sizeof name, "cpu@%u", h);
    TRY(fdt_begin_node(fdt, name));
    TRY(fdt_property_u32(fdt, "phandle", PH_CPU(h)));
    TRY(fdt_property_string(fdt, "device_type", "cpu"));
    TRY(fdt_property_u32(fdt, "reg", h));
    TRY(fdt_property_string(fdt, "status", "okay"));
    TRY(fdt_property_string(fdt, "compatible", "riscv"));
    TRY(cpu_isa_props(fdt, c));
    TRY(fdt_property_string(fdt, "mmu-type", mmu_type(c->satp_max)));

    TRY(fdt_begin_node(fdt, "interrupt-controller"));
    TRY(fdt_property_u32(fdt, "#interrupt-cells", 1));
    TRY(fdt_property(fdt, "interrupt-controller", NULL, 0));
    TRY(fdt_property_string(fdt, "compatible", "riscv,cpu-intc"));
    TRY(fdt_property_u32(fdt, "phandle", PH_INTC(h)));
    TRY(fdt_end_node(fdt));
    return fdt_end_node(fdt);
}

/* cpu-map: one cluster, one core per hart (QEMU's single socket). */
static int cpu_map(void *fdt, unsigned nharts)
{
    TRY(fdt_begin_node(fdt, "cpu-map"));
    TRY(fdt_begin_node(fdt, "cluster0"));
    for (unsigned h = 0; h < nharts; h++) {
        char name[32];
        snprintf(name, sizeof name, "core%u", h);
        TRY(fdt_begin_node(fdt, name));
        TRY(fdt_property_u32(fdt, "cpu", PH_CPU(h)));
        TRY(fdt_end_node(fdt));
    }
    TRY(fdt_end_node(fdt));
    return fdt_end_node(fdt);
}

static int cpus_node(void *fdt, const FdtConfig *c)
{
    TRY(fdt_begin_node(fdt, "cpus"));
    TRY(fdt_property_u32(fdt, "#address-cells", 1));
    TRY(fdt_property_u32(fdt, "#size-cells", 0));
    TRY(fdt_property_u32(fdt, "timebase-frequency", c->timebase_hz ? c->timebase_hz
                                                                   : (uint32_t)MTIME_HZ));
    for (unsigned h = 0; h < c->nharts; h++)
        TRY(cpu_node(fdt, c, h));
    TRY(cpu_map(fdt, c->nharts));
    return fdt_end_node(fdt);
}

/* -- /memory, /reserved-memory ---------------------------------------- */

static int memory_node(void *fdt, const FdtConfig *c)
{
    TRY(begin_node_at(fdt, "memory", c->ram_base));
    TRY(fdt_property_string(fdt, "device_type", "memory"));
    TRY(prop_reg(fdt, c->ram_base, c->ram_size));
    return fdt_end_node(fdt);
}

/* The M-mode firmware's memory, kept from the kernel. QEMU's own tree has
 * no such node: OpenSBI adds its own at boot (under QEMU 10:
 * mmode_resv1@80000000, 256 KiB RX, and mmode_resv0@80040000, 128 KiB RW,
 * both no-map), so for OpenSBI leave fw_size 0 (Linux would report the
 * overlap, harmlessly). This node is for firmware that does not. */
static int reserved_node(void *fdt, const FdtConfig *c)
{
    TRY(fdt_begin_node(fdt, "reserved-memory"));
    TRY(prop_cells2(fdt));
    TRY(fdt_property(fdt, "ranges", NULL, 0));
    TRY(begin_node_at(fdt, "firmware", c->fw_base));
    TRY(prop_reg(fdt, c->fw_base, c->fw_size));
    TRY(fdt_property(fdt, "no-map", NULL, 0));
    TRY(fdt_end_node(fdt));
    return fdt_end_node(fdt);
}

/* -- /soc ----------------------------------------------------------------- */

static int rtc_node(void *fdt, unsigned nharts)
{
    TRY(begin_node_at(fdt, "rtc", VIRT_RTC_BASE));
    TRY(prop_plic_irq(fdt, nharts, VIRT_RTC_IRQ));
    TRY(prop_reg(fdt, VIRT_RTC_BASE, RTC_SIZE));
    TRY(fdt_property_string(fdt, "compatible", "google,goldfish-rtc"));
    return fdt_end_node(fdt);
}

static int serial_node(void *fdt, unsigned nharts)
{
    TRY(begin_node_at(fdt, "serial", VIRT_UART0_BASE));
    TRY(prop_plic_irq(fdt, nharts, VIRT_UART0_IRQ));
    TRY(fdt_property_u32(fdt, "clock-frequency", UART_CLOCK_HZ));
    TRY(prop_reg(fdt, VIRT_UART0_BASE, UART_SIZE));
    TRY(fdt_property_string(fdt, "compatible", "ns16550a"));
    return fdt_end_node(fdt);
}

static int test_node(void *fdt, unsigned nharts)
{
    TRY(begin_node_at(fdt, "test", VIRT_TEST_BASE));
    TRY(fdt_property_u32(fdt, "phandle", PH_TEST(nharts)));
    TRY(prop_reg(fdt, VIRT_TEST_BASE, TEST_SIZE));
    TRY(PROP_STRS(fdt, "compatible", "sifive,test1\0sifive,test0\0syscon"));
    return fdt_end_node(fdt);
}

/* Slots from the highest down, as QEMU's tree lists them. */
static int virtio_nodes(void *fdt, const FdtConfig *c)
{
    for (int n = VIRT_VIRTIO_SLOTS - 1; n >= 0; n--) {
        uint64_t base = VIRT_VIRTIO_BASE + (uint64_t)n * VIRTIO_SIZE;
        if (!(c->virtio_slots & (1u << n)))
            continue;
        TRY(begin_node_at(fdt, "virtio_mmio", base));
        TRY(prop_plic_irq(fdt, c->nharts, VIRT_VIRTIO_IRQ + (uint32_t)n));
        TRY(prop_reg(fdt, base, VIRTIO_SIZE));
        TRY(fdt_property_string(fdt, "compatible", "virtio,mmio"));
        TRY(fdt_end_node(fdt));
    }
    return 0;
}

static int plic_node(void *fdt, unsigned nharts)
{
    TRY(begin_node_at(fdt, "plic", VIRT_PLIC_BASE));
    TRY(fdt_property_u32(fdt, "phandle", PH_PLIC(nharts)));
    TRY(fdt_property_u32(fdt, "riscv,ndev", VIRT_PLIC_NDEV));
    TRY(prop_reg(fdt, VIRT_PLIC_BASE, VIRT_PLIC_SIZE));
    TRY(prop_per_hart_irqs(fdt, nharts, IRQ_M_EXT, IRQ_S_EXT));
    TRY(fdt_property(fdt, "interrupt-controller", NULL, 0));
    TRY(PROP_STRS(fdt, "compatible", "sifive,plic-1.0.0\0riscv,plic0"));
    TRY(fdt_property_u32(fdt, "#address-cells", 0));
    TRY(fdt_property_u32(fdt, "#interrupt-cells", 1));
    return fdt_end_node(fdt);
}

static int clint_node(void *fdt, unsigned nharts)
{
    TRY(begin_node_at(fdt, "clint", VIRT_ACLINT_BASE));
    TRY(prop_per_hart_irqs(fdt, nharts, IRQ_M_SOFT, IRQ_M_TIMER));
    TRY(prop_reg(fdt, VIRT_ACLINT_BASE, VIRT_ACLINT_SIZE));
    TRY(PROP_STRS(fdt, "compatible", "sifive,clint0\0riscv,clint0"));
    return fdt_end_node(fdt);
}

static int soc_node(void *fdt, const FdtConfig *c)
{
    TRY(fdt_begin_node(fdt, "soc"));
    TRY(prop_cells2(fdt));
    TRY(fdt_property_string(fdt, "compatible", "simple-bus"));
    TRY(fdt_property(fdt, "ranges", NULL, 0));
    TRY(rtc_node(fdt, c->nharts));
    TRY(serial_node(fdt, c->nharts));
    TRY(test_node(fdt, c->nharts));
    TRY(virtio_nodes(fdt, c));
    TRY(plic_node(fdt, c->nharts));
    TRY(clint_node(fdt, c->nharts));
    return fdt_end_node(fdt);
}

/* -- Root-level odds and ends -------------------------------------------- */

/* syscon-poweroff / syscon-reboot: write value to the test device. */
static int syscon_node(void *fdt, unsigned nharts, const char *name, uint32_t value)
{
    char compat[32];
    snprintf(compat, sizeof compat, "syscon-%s", name);
    TRY(fdt_begin_node(fdt, name));
    TRY(fdt_property_u32(fdt, "value", value));
    TRY(fdt_property_u32(fdt, "offset", 0));
    TRY(fdt_property_u32(fdt, "regmap", PH_TEST(nharts)));
    TRY(fdt_property_string(fdt, "compatible", compat));
    return fdt_end_node(fdt);
}

static int aliases_node(void *fdt, const char *serial)
{
    TRY(fdt_begin_node(fdt, "aliases"));
    TRY(fdt_property_string(fdt, "serial0", serial));
    return fdt_end_node(fdt);
}

static int chosen_node(void *fdt, const FdtConfig *c, const char *serial)
{
    TRY(fdt_begin_node(fdt, "chosen"));
    if (c->bootargs && *c->bootargs)
        TRY(fdt_property_string(fdt, "bootargs", c->bootargs));
    TRY(fdt_property_string(fdt, "stdout-path", serial));
    if (c->initrd_end > c->initrd_start) {
        TRY(fdt_property_u64(fdt, "linux,initrd-start", c->initrd_start));
        TRY(fdt_property_u64(fdt, "linux,initrd-end", c->initrd_end));
    }
    if (c->rng_seed && c->rng_seed_len)
        TRY(fdt_property(fdt, "rng-seed", c->rng_seed, (int)c->rng_seed_len));
    return fdt_end_node(fdt);
}

/* -- The tree ------------------------------------------------------------- */

static int build_into(void *fdt, int size, const FdtConfig *c)
{
    char serial[64];
    snprintf(serial, sizeof serial, "/soc/serial@%llx", (unsigned long long)VIRT_UART0_BASE);
    TRY(fdt_create(fdt, size));
    TRY(fdt_finish_reservemap(fdt));
    TRY(fdt_begin_node(fdt, ""));
    TRY(prop_cells2(fdt));
    TRY(fdt_property_string(fdt, "compatible", "riscv-virtio"));
    TRY(fdt_property_string(fdt, "model", "riscv-virtio,qemu"));
    TRY(cpus_node(fdt, c));
    TRY(memory_node(fdt, c));
    if (c->fw_size)
        TRY(reserved_node(fdt, c));
    TRY(soc_node(fdt, c));
    TRY(syscon_node(fdt, c->nharts, "poweroff", 0x5555));
    TRY(syscon_node(fdt, c->nharts, "reboot", 0x7777));
    TRY(aliases_node(fdt, serial));
    TRY(chosen_node(fdt, c, serial));
    TRY(fdt_end_node(fdt));
    return fdt_finish(fdt);
}

/* The configuration errors fdt_build refuses, or NULL. */
static const char *config_error(const FdtConfig *c)
{
    if (c->nharts < 1 || c->nharts > MACHINE_MAX_HARTS)
        return "hart count out of range";
    if (!c->ram_size || c->ram_base + c->ram_size < c->ram_base)
        return "bad RAM range";
    char isa[1024];
    if (isa_string(isa_of(c), isa, sizeof isa) < 0)
        return "bad ISA table (\"i\" first, letters before multi-letter names)";
    if (!mmu_type(c->satp_max))
        return "satp_max must be 39, 48 or 57";
    if (c->virtio_slots >> VIRT_VIRTIO_SLOTS)
        return "virtio slot out of range";
    if (c->initrd_start > c->initrd_end)
        return "initrd ends before it starts";
    if (c->rng_seed_len > 4096)
        return "rng-seed too long";
    return NULL;
}

void *fdt_build(const FdtConfig *cfg, size_t *size)
{
    const char *why = config_error(cfg);
    if (why) {
        fprintf(stderr, "xlat-system: device tree: %s\n", why);
        return NULL;
    }
    for (int bufsize = 16 << 10; bufsize <= (4 << 20); bufsize *= 2) {
        void *fdt = calloc(1, (size_t)bufsize);
        if (!fdt)
            break;
        int err = build_into(fdt, bufsize, cfg);
        if (err == 0) {
            *size = fdt_totalsize(fdt);
            void *shrunk = realloc(fdt, *size);
            return shrunk ? shrunk : fdt;
        }
        free(fdt);
        if (err != -FDT_ERR_NOSPACE) {
            fprintf(stderr, "xlat-system: device tree: %s\n", fdt_strerror(err));
            return NULL;
        }
    }
    fprintf(stderr, "xlat-system: device tree: out of memory\n");
    return NULL;
}

int fdt_dump(const char *path, const void *fdt)
{
    const char *p = fdt;
    size_t left = fdt_totalsize(fdt);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    while (left) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            close(fd);
            return -e;
        }
        p += n;
        left -= (size_t)n;
    }
    return close(fd) < 0 ? -errno : 0;
}
