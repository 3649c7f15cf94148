/*
 * Unit test of system mode's boot pieces: the device tree (src/system/fdt.c)
 * is read back with libfdt and must carry the nodes, properties and
 * interrupt wiring of QEMU's virt board; the loader (src/system/loader.c)
 * must place ELF, Linux Image and raw kernels, the initrd and the DTB where
 * QEMU does, refuse every broken input with a message and without touching
 * RAM, and survive a small fuzzer of truncated and corrupted images.
 *
 * Links fdt.o, loader.o and -lfdt; needs no machine (RAM is a buffer).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <libfdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "system/fdt.h"
#include "system/loader.h"
#include "system/machine.h"
#include "check.h"

#define CHECK_ERR(call, word) do { err[0] = 0; CHECK((call) < 0); \
    if (!strstr(err, word)) { printf("FAIL %s:%d: error \"%s\" lacks \"%s\"\n", \
                                     __FILE__, __LINE__, err, word); failures++; } } while (0)

#define MiB (1ULL << 20)
#define RAM_SIZE (64 * MiB)

static char err[512];
static char tmpdir[] = "/tmp/test_system_boot.XXXXXX";

/* -- Device tree read-back helpers ---------------------------------------- */

static int node(const void *fdt, const char *path)
{
    int off = fdt_path_offset(fdt, path);
    if (off < 0)
        printf("FAIL: no node %s\n", path), failures++;
    return off;
}

static const char *str_prop(const void *fdt, const char *path, const char *name)
{
    int off = fdt_path_offset(fdt, path);
    return off < 0 ? NULL : fdt_getprop(fdt, off, name, NULL);
}

static uint32_t u32_prop(const void *fdt, const char *path, const char *name)
{
    int len, off = fdt_path_offset(fdt, path);
    const fdt32_t *p = off < 0 ? NULL : fdt_getprop(fdt, off, name, &len);
    return p && len == 4 ? fdt32_to_cpu(*p) : 0xdeadbeef;
}

static uint64_t u64_prop(const void *fdt, const char *path, const char *name)
{
    int len, off = fdt_path_offset(fdt, path);
    const void *p = off < 0 ? NULL : fdt_getprop(fdt, off, name, &len);
    return p && len == 8 ? fdt64_ld(p) : 0xdeadbeef;    /* 4-byte aligned in the blob */
}

static bool has_prop(const void *fdt, const char *path, const char *name)
{
    int off = fdt_path_offset(fdt, path);
    return off >= 0 && fdt_getprop(fdt, off, name, NULL) != NULL;
}

/* reg = <base size> (2 + 2 cells) of path. */
static void check_reg(const void *fdt, const char *path, uint64_t base, uint64_t size)
{
    int len, off = fdt_path_offset(fdt, path);
    const fdt32_t *r = off < 0 ? NULL : fdt_getprop(fdt, off, "reg", &len);
    CHECK(r && len == 16);
    if (!r || len != 16)
        return;
    CHECK_EQ(((uint64_t)fdt32_to_cpu(r[0]) << 32) | fdt32_to_cpu(r[1]), base);
    CHECK_EQ(((uint64_t)fdt32_to_cpu(r[2]) << 32) | fdt32_to_cpu(r[3]), size);
}

/* The node a phandle names, as a path. */
static const char *phandle_path(const void *fdt, uint32_t ph)
{
    static char buf[256];
    int off = fdt_node_offset_by_phandle(fdt, ph);
    if (off < 0 || fdt_get_path(fdt, off, buf, sizeof buf) < 0)
        return "";
    return buf;
}

/* interrupts-extended of path is, per hart h, <intc(h) a intc(h) b>. */
static void check_per_hart_irqs(const void *fdt, const char *path, unsigned nharts,
                                uint32_t a, uint32_t b)
{
    int len, off = fdt_path_offset(fdt, path);
    const fdt32_t *c = off < 0 ? NULL : fdt_getprop(fdt, off, "interrupts-extended", &len);
    CHECK(c && len == (int)(16 * nharts));
    for (unsigned h = 0; c && h < nharts && len == (int)(16 * nharts); h++) {
        char want[64];
        snprintf(want, sizeof want, "/cpus/cpu@%u/interrupt-controller", h);
        CHECK(!strcmp(phandle_path(fdt, fdt32_to_cpu(c[4 * h])), want));
        CHECK(!strcmp(phandle_path(fdt, fdt32_to_cpu(c[4 * h + 2])), want));
        CHECK_EQ(fdt32_to_cpu(c[4 * h + 1]), a);
        CHECK_EQ(fdt32_to_cpu(c[4 * h + 3]), b);
    }
}

static FdtConfig base_config(void)
{
    return (FdtConfig){ .ram_base = VIRT_RAM_BASE, .ram_size = 256 * MiB, .nharts = 2,
                        .virtio_slots = FDT_VIRTIO_ALL };
}

/* -- Device tree tests ---------------------------------------------------- */

static void check_cpus(const void *fdt, unsigned nharts)
{
    const char *isa = "rv64imafdc_zicntr_zicsr_zifencei_zba_zbb_zbs_sstc";
    CHECK_EQ(u32_prop(fdt, "/cpus", "timebase-frequency"), 10000000);
    CHECK_EQ(u32_prop(fdt, "/cpus", "#address-cells"), 1);
    CHECK_EQ(u32_prop(fdt, "/cpus", "#size-cells"), 0);
    for (unsigned h = 0; h < nharts; h++) {
        char cpu[64], intc[96], core[64];
        snprintf(cpu, sizeof cpu, "/cpus/cpu@%u", h);
        snprintf(intc, sizeof intc, "%s/interrupt-controller", cpu);
        snprintf(core, sizeof core, "/cpus/cpu-map/cluster0/core%u", h);
        int off = node(fdt, cpu);
        CHECK_EQ(u32_prop(fdt, cpu, "reg"), h);
        CHECK(!strcmp(str_prop(fdt, cpu, "device_type"), "cpu"));
        CHECK(!strcmp(str_prop(fdt, cpu, "compatible"), "riscv"));
        CHECK(!strcmp(str_prop(fdt, cpu, "status"), "okay"));
        CHECK(!strcmp(str_prop(fdt, cpu, "riscv,isa"), isa));
        CHECK(!strcmp(str_prop(fdt, cpu, "riscv,isa-base"), "rv64i"));
        CHECK(!strcmp(str_prop(fdt, cpu, "mmu-type"), "riscv,sv57"));
        for (const char *const *e = fdt_default_isa; off >= 0 && *e; e++)
            CHECK(fdt_stringlist_search(fdt, off, "riscv,isa-extensions", *e) >= 0);
        CHECK_EQ(fdt_stringlist_count(fdt, off, "riscv,isa-extensions"), 13);
        CHECK(!strcmp(str_prop(fdt, intc, "compatible"), "riscv,cpu-intc"));
        CHECK(has_prop(fdt, intc, "interrupt-controller"));
        CHECK_EQ(u32_prop(fdt, intc, "#interrupt-cells"), 1);
        CHECK(!strcmp(phandle_path(fdt, u32_prop(fdt, core, "cpu")), cpu));
    }
    CHECK(fdt_path_offset(fdt, "/cpus/cpu@2") < 0 || nharts > 2);
}

static void check_soc(const void *fdt, unsigned nharts)
{
    uint32_t plic = u32_prop(fdt, "/soc/plic@c000000", "phandle");
    CHECK(!strcmp(phandle_path(fdt, plic), "/soc/plic@c000000"));
    CHECK(fdt_node_check_compatible(fdt, node(fdt, "/soc"), "simple-bus") == 0);
    CHECK_EQ(u32_prop(fdt, "/soc/plic@c000000", "riscv,ndev"), 95);
    CHECK(fdt_node_check_compatible(fdt, node(fdt, "/soc/plic@c000000"), "riscv,plic0") == 0);
    check_per_hart_irqs(fdt, "/soc/plic@c000000", nharts, 11, 9);
    check_per_hart_irqs(fdt, "/soc/clint@2000000", nharts, 3, 7);
    CHECK(fdt_node_check_compatible(fdt, node(fdt, "/soc/clint@2000000"), "riscv,clint0") == 0);
    check_reg(fdt, "/soc/clint@2000000", 0x2000000, 0x10000);

    const char *uart = "/soc/serial@10000000";
    CHECK(!strcmp(str_prop(fdt, uart, "compatible"), "ns16550a"));
    CHECK_EQ(u32_prop(fdt, uart, "clock-frequency"), 3686400);
    CHECK_EQ(u32_prop(fdt, uart, "interrupts"), 10);
    CHECK_EQ(u32_prop(fdt, uart, "interrupt-parent"), plic);
    check_reg(fdt, uart, 0x10000000, 0x100);
    CHECK(!strcmp(str_prop(fdt, "/soc/rtc@101000", "compatible"), "google,goldfish-rtc"));
    CHECK_EQ(u32_prop(fdt, "/soc/rtc@101000", "interrupts"), 11);

    int test = node(fdt, "/soc/test@100000");
    CHECK(fdt_node_check_compatible(fdt, test, "sifive,test0") == 0);
    CHECK(fdt_node_check_compatible(fdt, test, "syscon") == 0);
    uint32_t test_ph = u32_prop(fdt, "/soc/test@100000", "phandle");
    CHECK_EQ(u32_prop(fdt, "/poweroff", "regmap"), test_ph);
    CHECK_EQ(u32_prop(fdt, "/poweroff", "value"), 0x5555);
    CHECK(!strcmp(str_prop(fdt, "/poweroff", "compatible"), "syscon-poweroff"));
    CHECK_EQ(u32_prop(fdt, "/reboot", "regmap"), test_ph);
    CHECK_EQ(u32_prop(fdt, "/reboot", "value"), 0x7777);
    CHECK(!strcmp(str_prop(fdt, "/reboot", "compatible"), "syscon-reboot"));
}

static void check_virtio(const void *fdt, unsigned mask)
{
    for (unsigned n = 0; n < 8; n++) {
        char path[64];
        snprintf(path, sizeof path, "/soc/virtio_mmio@%x", 0x10001000 + 0x1000 * n);
        CHECK_EQ(fdt_path_offset(fdt, path) >= 0, (mask >> n) & 1);
        if (!((mask >> n) & 1))
            continue;
        CHECK(!strcmp(str_prop(fdt, path, "compatible"), "virtio,mmio"));
        CHECK_EQ(u32_prop(fdt, path, "interrupts"), 1 + n);
        check_reg(fdt, path, 0x10001000 + 0x1000 * n, 0x1000);
    }
}

static void test_fdt_full(void)
{
    static const uint8_t seed[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    FdtConfig c = base_config();
    c.bootargs = "console=ttyS0 earlycon";
    c.initrd_start = 0x88200000;
    c.initrd_end = 0x88300000;
    c.rng_seed = seed;
    c.rng_seed_len = sizeof seed;
    size_t size = 0;
    void *fdt = fdt_build(&c, &size);
    CHECK(fdt);
    if (!fdt)
        return;
    CHECK_EQ(fdt_check_header(fdt), 0);
    CHECK_EQ(fdt_totalsize(fdt), size);
    CHECK_EQ(u32_prop(fdt, "/", "#address-cells"), 2);
    CHECK(!strcmp(str_prop(fdt, "/", "compatible"), "riscv-virtio"));
    check_cpus(fdt, 2);
    check_soc(fdt, 2);
    check_virtio(fdt, FDT_VIRTIO_ALL);
    CHECK(!strcmp(str_prop(fdt, "/memory@80000000", "device_type"), "memory"));
    check_reg(fdt, "/memory@80000000", VIRT_RAM_BASE, 256 * MiB);
    CHECK(fdt_path_offset(fdt, "/reserved-memory") < 0);

    CHECK(!strcmp(str_prop(fdt, "/chosen", "bootargs"), "console=ttyS0 earlycon"));
    const char *out = str_prop(fdt, "/chosen", "stdout-path");
    CHECK(out && fdt_path_offset(fdt, out) == fdt_path_offset(fdt, "/soc/serial@10000000"));
    CHECK(!strcmp(str_prop(fdt, "/aliases", "serial0"), "/soc/serial@10000000"));
    CHECK_EQ(u64_prop(fdt, "/chosen", "linux,initrd-start"), 0x88200000);
    CHECK_EQ(u64_prop(fdt, "/chosen", "linux,initrd-end"), 0x88300000);
    int len, ch = node(fdt, "/chosen");
    const void *s = fdt_getprop(fdt, ch, "rng-seed", &len);
    CHECK(s && len == 32 && !memcmp(s, seed, 32));

    /* fdt_dump writes exactly the blob. */
    char path[128];
    snprintf(path, sizeof path, "%s/dump.dtb", tmpdir);
    CHECK_EQ(fdt_dump(path, fdt), 0);
    FILE *f = fopen(path, "rb");
    char *back = malloc(size + 1);
    CHECK(f && fread(back, 1, size + 1, f) == size && !memcmp(back, fdt, size));
    if (f)
        fclose(f);
    free(back);
    CHECK(fdt_dump("/nonexistent-dir/x.dtb", fdt) < 0);
    free(fdt);
}

static void test_fdt_variants(void)
{
    size_t size;
    FdtConfig c = base_config();
    c.nharts = 1;
    c.virtio_slots = 0x81;
    c.satp_max = 48;
    c.fw_base = VIRT_RAM_BASE;
    c.fw_size = 0x40000;
    static const char *const isa[] = { "i", "m", "a", "zicbom", "zicboz", NULL };
    c.isa = isa;
    void *fdt = fdt_build(&c, &size);
    CHECK(fdt && fdt_check_header(fdt) == 0);
    if (fdt) {
        CHECK(!has_prop(fdt, "/chosen", "bootargs"));
        CHECK(!has_prop(fdt, "/chosen", "linux,initrd-start"));
        CHECK(!has_prop(fdt, "/chosen", "rng-seed"));
        CHECK(!strcmp(str_prop(fdt, "/cpus/cpu@0", "mmu-type"), "riscv,sv48"));
        CHECK(!strcmp(str_prop(fdt, "/cpus/cpu@0", "riscv,isa"), "rv64ima_zicbom_zicboz"));
        CHECK_EQ(u32_prop(fdt, "/cpus/cpu@0", "riscv,cbom-block-size"), 64);
        CHECK_EQ(u32_prop(fdt, "/cpus/cpu@0", "riscv,cboz-block-size"), 64);
        CHECK(!has_prop(fdt, "/cpus/cpu@0", "riscv,cbop-block-size"));
        CHECK(fdt_path_offset(fdt, "/cpus/cpu@1") < 0);
        check_virtio(fdt, 0x81);
        check_soc(fdt, 1);
        const char *rm = "/reserved-memory/firmware@80000000";
        check_reg(fdt, rm, VIRT_RAM_BASE, 0x40000);
        CHECK(has_prop(fdt, rm, "no-map"));
        CHECK(has_prop(fdt, "/reserved-memory", "ranges"));
    }
    free(fdt);

    c = base_config();
    c.nharts = MACHINE_MAX_HARTS;
    fdt = fdt_build(&c, &size);
    CHECK(fdt && fdt_check_header(fdt) == 0);
    if (fdt) {
        check_cpus(fdt, MACHINE_MAX_HARTS);
        check_soc(fdt, MACHINE_MAX_HARTS);
    }
    free(fdt);
}

static void test_fdt_refused(void)
{
    size_t size;
    static const char *const bad_order[] = { "i", "zicsr", "m", NULL };
    static const char *const no_i[] = { "m", "a", NULL };
    FdtConfig c[7];
    for (int i = 0; i < 7; i++)
        c[i] = base_config();
    c[0].nharts = 0;
    c[1].nharts = MACHINE_MAX_HARTS + 1;
    c[2].satp_max = 40;
    c[3].isa = bad_order;
    c[4].isa = no_i;
    c[5].virtio_slots = 0x100;
    c[6].initrd_start = 2, c[6].initrd_end = 1;
    fprintf(stderr, "(expected device tree errors follow)\n");
    for (int i = 0; i < 7; i++)
        CHECK(fdt_build(&c[i], &size) == NULL);
}

/* -- Loader: inputs made in memory ---------------------------------------- */

typedef struct Buf {
    uint8_t *p;
    size_t len;
} Buf;

static void put(Buf *b, size_t off, const void *src, size_t n)
{
    if (off + n > b->len) {
        b->p = realloc(b->p, off + n);
        memset(b->p + b->len, 0, off + n - b->len);
        b->len = off + n;
    }
    memcpy(b->p + off, src, n);
}

/*
 * A static riscv64 executable: text (0x100 file bytes) at 0x80000000 and
 * data (0x80 file bytes, 0x1000 memory) at 0x80010000, entry 0x80000000,
 * and a symbol table naming tohost (0x80010040) and fromhost (0x80010048).
 * Offsets: 0 ehdr, 0x40 two phdrs, 0x100 text, 0x200 data, 0x300 symtab,
 * 0x380 strtab, 0x400 section headers (null, .symtab, .strtab).
 */
static Buf make_elf(void)
{
    Buf b = { 0 };
    Elf64_Ehdr eh = { .e_type = ET_EXEC, .e_machine = EM_RISCV, .e_version = EV_CURRENT,
                      .e_entry = 0x80000000, .e_phoff = 0x40, .e_shoff = 0x400,
                      .e_ehsize = sizeof eh, .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = 2,
                      .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = 3 };
    memcpy(eh.e_ident, ELFMAG, SELFMAG);
    eh.e_ident[EI_CLASS] = ELFCLASS64;
    eh.e_ident[EI_DATA] = ELFDATA2LSB;
    eh.e_ident[EI_VERSION] = EV_CURRENT;
    Elf64_Phdr ph[2] = {
        { .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0x100, .p_vaddr = 0x80000000,
          .p_paddr = 0x80000000, .p_filesz = 0x100, .p_memsz = 0x100 },
        { .p_type = PT_LOAD, .p_flags = PF_R | PF_W, .p_offset = 0x200, .p_vaddr = 0x80010000,
          .p_paddr = 0x80010000, .p_filesz = 0x80, .p_memsz = 0x1000 },
    };
    const char strtab[] = "\0tohost\0fromhost\0_start";
    Elf64_Sym sym[4] = {
        { 0 },
        { .st_name = 1, .st_value = 0x80010040, .st_size = 8 },
        { .st_name = 8, .st_value = 0x80010048, .st_size = 8 },
        { .st_name = 17, .st_value = 0x80000000 },
    };
    Elf64_Shdr sh[3] = {
        { 0 },
        { .sh_type = SHT_SYMTAB, .sh_offset = 0x300, .sh_size = sizeof sym, .sh_link = 2,
          .sh_entsize = sizeof(Elf64_Sym) },
        { .sh_type = SHT_STRTAB, .sh_offset = 0x380, .sh_size = sizeof strtab },
    };
    uint8_t text[0x100], data[0x80];
    for (int i = 0; i < 0x100; i++)
        text[i] = (uint8_t)(i ^ 0x5a);
    memset(data, 0x77, sizeof data);
    put(&b, 0, &eh, sizeof eh);
    put(&b, 0x40, ph, sizeof ph);
    put(&b, 0x100, text, sizeof text);
    put(&b, 0x200, data, sizeof data);
    put(&b, 0x300, sym, sizeof sym);
    put(&b, 0x380, strtab, sizeof strtab);
    put(&b, 0x400, sh, sizeof sh);
    return b;
}

/* A Linux Image: the 64-byte header then payload up to len bytes. */
static Buf make_image(size_t len, uint64_t text_offset, uint64_t image_size, int magics)
{
    Buf b = { 0 };
    uint8_t hdr[64] = { 'M', 'Z' };
    uint32_t version = 2;
    memcpy(hdr + 0x08, &text_offset, 8);
    memcpy(hdr + 0x10, &image_size, 8);
    memcpy(hdr + 0x20, &version, 4);
    if (magics & 1)
        memcpy(hdr + 0x30, "RISCV\0\0\0", 8);
    if (magics & 2)
        memcpy(hdr + 0x38, "RSC\x05", 4);
    put(&b, 0, hdr, sizeof hdr);
    for (size_t i = 64; i < len; i++)
        put(&b, i, &(uint8_t){ (uint8_t)(i * 7) }, 1);
    return b;
}

static BootRam ram_new(uint64_t size)
{
    uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                      -1, 0);
    CHECK(p != MAP_FAILED);
    return (BootRam){ p, VIRT_RAM_BASE, size };
}

static void ram_free(BootRam *r)
{
    munmap(r->host, r->size);
}

static uint8_t *at(const BootRam *r, uint64_t pa)
{
    return r->host + (pa - r->base);
}

/* -- Loader tests --------------------------------------------------------- */

static void test_elf_ok(void)
{
    BootRam r = ram_new(RAM_SIZE);
    Buf b = make_elf();
    LoadedImage li;
    memset(r.host, 0xaa, 0x20000);
    CHECK_EQ(load_kernel_mem(&r, b.p, b.len, "elf", &li, err, sizeof err), 0);
    CHECK_EQ(li.kind, IMAGE_ELF);
    CHECK_EQ(li.entry, 0x80000000);
    CHECK_EQ(li.low, 0x80000000);
    CHECK_EQ(li.high, 0x80011000);
    CHECK_EQ(li.tohost, 0x80010040);
    CHECK_EQ(li.fromhost, 0x80010048);
    CHECK(!memcmp(at(&r, 0x80000000), b.p + 0x100, 0x100));
    CHECK(!memcmp(at(&r, 0x80010000), b.p + 0x200, 0x80));
    CHECK_EQ(at(&r, 0x80010080)[0], 0);           /* BSS zeroed */
    CHECK_EQ(at(&r, 0x80010fff)[0], 0);
    CHECK_EQ(at(&r, 0x80011000)[0], 0xaa);        /* nothing past it */

    /* Linked high, loaded low: entry is translated through the segment. */
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b.p;
    Elf64_Phdr *ph = (Elf64_Phdr *)(b.p + 0x40);
    ph[0].p_vaddr = 0xffffffff80000000ULL;
    ph[0].p_paddr = 0x80200000;
    eh->e_entry = 0xffffffff80000010ULL;
    eh->e_shnum = 0;                              /* no symbols */
    CHECK_EQ(load_kernel_mem(&r, b.p, b.len, "elf", &li, err, sizeof err), 0);
    CHECK_EQ(li.entry, 0x80200010);
    CHECK_EQ(li.low, 0x80010000);
    CHECK_EQ(li.tohost, 0);
    free(b.p);
    ram_free(&r);
}

/* Mutate a fresh ELF with f, load it, expect failure mentioning word. */
static void elf_broken(BootRam *r, void (*f)(Buf *), const char *word)
{
    Buf b = make_elf();
    LoadedImage li;
    f(&b);
    memset(r->host, 0xaa, 0x20000);
    CHECK_ERR(load_kernel_mem(r, b.p, b.len, "bad.elf", &li, err, sizeof err), word);
    CHECK(strstr(err, "bad.elf") != NULL);
    CHECK_EQ(r->host[0], 0xaa);                   /* RAM untouched */
    CHECK_EQ(r->host[0x10000], 0xaa);
    free(b.p);
}

static Elf64_Ehdr *EH(Buf *b) { return (Elf64_Ehdr *)b->p; }
static Elf64_Phdr *PH(Buf *b) { return (Elf64_Phdr *)(b->p + 0x40); }
static void mut_class32(Buf *b) { EH(b)->e_ident[EI_CLASS] = ELFCLASS32; }
static void mut_bigendian(Buf *b) { EH(b)->e_ident[EI_DATA] = ELFDATA2MSB; }
static void mut_machine(Buf *b) { EH(b)->e_machine = EM_X86_64; }
static void mut_dyn(Buf *b) { EH(b)->e_type = ET_DYN; }
static void mut_phnum(Buf *b) { EH(b)->e_phnum = 0; }
static void mut_phoff(Buf *b) { EH(b)->e_phoff = b->len - 8; }
static void mut_outside(Buf *b) { PH(b)[1].p_paddr = 0x80000000 + RAM_SIZE - 0x800; }
static void mut_below(Buf *b) { PH(b)[0].p_paddr = 0x1000; }
static void mut_wrap(Buf *b) { PH(b)[1].p_paddr = ~0ULL - 0x100; }
static void mut_filesz(Buf *b) { PH(b)[1].p_filesz = 0x2000; }
static void mut_trunc(Buf *b) { PH(b)[1].p_offset = b->len - 0x10; }
static void mut_noload(Buf *b) { PH(b)[0].p_type = PH(b)[1].p_type = PT_NOTE; }
static void mut_entry(Buf *b) { EH(b)->e_entry = 0x90000000; }
static void mut_short(Buf *b) { b->len = 40; }

static void test_elf_broken(void)
{
    BootRam r = ram_new(RAM_SIZE);
    elf_broken(&r, mut_class32, "not a 64-bit ELF");
    elf_broken(&r, mut_bigendian, "big-endian");
    elf_broken(&r, mut_machine, "not a riscv64 ELF");
    elf_broken(&r, mut_dyn, "ET_EXEC");
    elf_broken(&r, mut_phnum, "program headers");
    elf_broken(&r, mut_phoff, "truncated");
    elf_broken(&r, mut_outside, "outside RAM");
    elf_broken(&r, mut_below, "outside RAM");
    elf_broken(&r, mut_wrap, "outside RAM");
    elf_broken(&r, mut_filesz, "file bytes");
    elf_broken(&r, mut_trunc, "truncated");
    elf_broken(&r, mut_noload, "no loadable");
    elf_broken(&r, mut_entry, "entry point");
    elf_broken(&r, mut_short, "truncated ELF header");
    ram_free(&r);
}

static void test_image(void)
{
    BootRam r = ram_new(RAM_SIZE);
    LoadedImage li;
    for (int magics = 1; magics <= 3; magics++) {
        Buf b = make_image(0x3000, 0x200000, 0x10000, magics);
        memset(at(&r, 0x80200000), 0xaa, 0x20000);
        CHECK_EQ(load_kernel_mem(&r, b.p, b.len, "Image", &li, err, sizeof err), 0);
        CHECK_EQ(li.kind, IMAGE_LINUX);
        CHECK_EQ(li.entry, 0x80200000);
        CHECK_EQ(li.low, 0x80200000);
        CHECK_EQ(li.high, 0x80210000);
        CHECK_EQ(li.text_offset, 0x200000);
        CHECK(!memcmp(at(&r, 0x80200000), b.p, b.len));
        CHECK_EQ(at(&r, 0x80203000)[0], 0);       /* image_size covers BSS */
        CHECK_EQ(at(&r, 0x8020ffff)[0], 0);
        CHECK_EQ(at(&r, 0x80210000)[0], 0xaa);
        free(b.p);
    }
    Buf b = make_image(0x3000, 0x200000, 0, 3);    /* image_size 0: the file's */
    CHECK_EQ(load_kernel_mem(&r, b.p, b.len, "Image", &li, err, sizeof err), 0);
    CHECK_EQ(li.high, 0x80203000);
    free(b.p);

    b = make_image(0x3000, 0x100000, 0x10000, 3);
    CHECK_ERR(load_kernel_mem(&r, b.p, b.len, "Image", &li, err, sizeof err), "2 MiB");
    free(b.p);
    b = make_image(0x3000, 0x200000, RAM_SIZE, 3);
    CHECK_ERR(load_kernel_mem(&r, b.p, b.len, "Image", &li, err, sizeof err), "-m 64 MiB");
    free(b.p);
    b = make_image(0x3000, 0x200000, ~0ULL, 3);
    CHECK_ERR(load_kernel_mem(&r, b.p, b.len, "Image", &li, err, sizeof err), "RAM");
    free(b.p);
    b = make_image(0x3000, 0x200000, 0x10000, 3);
    b.p[0x18] = 1;                                 /* big-endian flag */
    CHECK_ERR(load_kernel_mem(&r, b.p, b.len, "Image", &li, err, sizeof err), "big-endian");
    free(b.p);
    ram_free(&r);
}

static void test_raw(void)
{
    BootRam r = ram_new(RAM_SIZE);
    LoadedImage li;
    uint8_t raw[1000];
    for (int i = 0; i < 1000; i++)
        raw[i] = (uint8_t)(i * 13 + 1);
    raw[0] = 0x7f;                                 /* not quite an ELF */
    CHECK_EQ(load_kernel_mem(&r, raw, sizeof raw, "raw", &li, err, sizeof err), 0);
    CHECK_EQ(li.kind, IMAGE_RAW);
    CHECK_EQ(li.entry, VIRT_RAM_BASE);
    CHECK_EQ(li.high, VIRT_RAM_BASE + 1000);
    CHECK(!memcmp(r.host, raw, sizeof raw));
    CHECK_ERR(load_kernel_mem(&r, raw, 0, "raw", &li, err, sizeof err), "empty");
    BootRam tiny = { r.host, VIRT_RAM_BASE, 999 };
    CHECK_ERR(load_kernel_mem(&tiny, raw, sizeof raw, "raw", &li, err, sizeof err), "RAM");
    ram_free(&r);
}

/* -- Files: kernel, initrd, DTB ------------------------------------------- */

static const char *write_tmp(const char *name, const void *data, size_t len)
{
    static char path[8][256];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len);
    if (f)
        fclose(f);
    return p;
}

static void test_files(void)
{
    BootRam r = ram_new(RAM_SIZE);
    LoadedImage li;
    Buf b = make_image(0x5000, 0x200000, 0x20000, 3);
    const char *kpath = write_tmp("Image", b.p, b.len);
    CHECK_EQ(load_kernel(&r, kpath, &li, err, sizeof err), 0);
    CHECK(!memcmp(at(&r, 0x80200000), b.p, b.len));
    LoadedImage bad;
    CHECK_ERR(load_kernel(&r, "/nonexistent/Image", &bad, err, sizeof err), "No such file");
    CHECK_ERR(load_kernel(&r, tmpdir, &bad, err, sizeof err), "directory");
    CHECK_ERR(load_kernel(&r, write_tmp("empty", "", 0), &bad, err, sizeof err), "empty");

    /* initrd: kernel low + min(RAM / 2, 512 MiB) = 0x80200000 + 32 MiB. */
    uint8_t rd[100000];
    for (size_t i = 0; i < sizeof rd; i++)
        rd[i] = (uint8_t)(i * 31);
    const char *rpath = write_tmp("initrd", rd, sizeof rd);
    uint64_t s = 0, e = 0;
    CHECK_EQ(load_initrd(&r, rpath, &li, &s, &e, err, sizeof err), 0);
    CHECK_EQ(s, 0x80200000 + 32 * MiB);
    CHECK_EQ(e, s + sizeof rd);
    CHECK(s == 0x80200000 + 32 * MiB && !memcmp(at(&r, s), rd, sizeof rd));
    CHECK_ERR(load_initrd(&r, "/nonexistent/rd", &li, &s, &e, err, sizeof err), "No such file");
    CHECK_ERR(load_initrd(&r, write_tmp("empty", "", 0), &li, &s, &e, err, sizeof err), "empty");
    BootRam small = { r.host, VIRT_RAM_BASE, 4 * MiB };   /* initrd at 4 MiB: the end */
    CHECK_ERR(load_initrd(&small, rpath, &li, &s, &e, err, sizeof err), "raise -m");

    /* DTB: 2 MiB-aligned below the end of RAM, above the initrd. */
    Buf dtb = make_image(5000, 0, 0, 0);
    uint64_t fa = 0;
    CHECK_EQ(load_fdt(&r, dtb.p, dtb.len, e, &fa, err, sizeof err), 0);
    CHECK_EQ(fa, VIRT_RAM_BASE + RAM_SIZE - 2 * MiB);
    CHECK(!memcmp(at(&r, fa), dtb.p, dtb.len));
    CHECK_ERR(load_fdt(&r, dtb.p, dtb.len, VIRT_RAM_BASE + RAM_SIZE - MiB, &fa, err, sizeof err),
              "no room");
    CHECK_ERR(load_fdt(&small, dtb.p, 64 * MiB, 0, &fa, err, sizeof err), "do not fit");
    free(dtb.p);
    free(b.p);
    ram_free(&r);
}

/* Placement rules alone, against what QEMU 10 was seen to do. */
static void test_placement(void)
{
    BootRam r128 = { NULL, VIRT_RAM_BASE, 128 * MiB };
    BootRam r1g = { NULL, VIRT_RAM_BASE, 1024 * MiB };
    BootRam r4g = { NULL, VIRT_RAM_BASE, 4096 * MiB };
    LoadedImage k = { .low = 0x80200000, .high = 0x80200000 + 40 * MiB };
    CHECK_EQ(fdt_place(&r128, 0x1800), 0x87e00000);      /* qemu -m 128M */
    CHECK_EQ(fdt_place(&r1g, 0x1800), 0xbfe00000);       /* -m 1G */
    CHECK_EQ(fdt_place(&r4g, 0x1800), 0x17fe00000);      /* -m 4G (QEMU 7.2: 0xbfe00000) */
    CHECK_EQ(fdt_place(&r128, 0), 0);
    CHECK_EQ(fdt_place(&r128, 129 * MiB), 0);
    k.high = 0x80210000;
    CHECK_EQ(initrd_place(&r128, &k), 0x84200000);       /* qemu -m 128M */
    CHECK_EQ(initrd_place(&r1g, &k), 0xa0200000);        /* -m 1G: 512 MiB cap */
    CHECK_EQ(initrd_place(&r4g, &k), 0xa0200000);
    BootRam r64 = { NULL, VIRT_RAM_BASE, 64 * MiB };
    k.high = 0x80200000 + 40 * MiB + 1;                  /* big kernel, small RAM */
    CHECK_EQ(initrd_place(&r64, &k), 0x80200000 + 42 * MiB);
}

/* -- Fuzzing: truncated and corrupted images --------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Either it loads inside RAM, or it fails with a message. */
static void fuzz_one(const BootRam *r, const uint8_t *p, size_t len)
{
    LoadedImage li;
    err[0] = 0;
    if (load_kernel_mem(r, p, len, "fuzz", &li, err, sizeof err) < 0) {
        CHECK(err[0] != 0);
        return;
    }
    CHECK(li.low >= r->base && li.high <= r->base + r->size && li.low < li.high);
    CHECK(li.entry >= r->base && li.entry < r->base + r->size);
}

static void fuzz_seed(const BootRam *r, Buf seed, int rounds)
{
    for (size_t n = 0; n <= seed.len; n++)        /* every truncation */
        fuzz_one(r, seed.p, n);
    uint8_t *m = malloc(seed.len);
    for (int i = 0; i < rounds; i++) {
        memcpy(m, seed.p, seed.len);
        int flips = 1 + (int)(rnd() % 8);
        for (int k = 0; k < flips; k++) {
            size_t span = rnd() % 2 ? 0x80 : seed.len;   /* headers, often */
            size_t off = rnd() % span;
            if (rnd() % 4 == 0)
                memset(m + off, 0xff, off + 8 <= seed.len ? 8 : 1);
            else
                m[off] ^= (uint8_t)(1u << (rnd() % 8));
        }
        fuzz_one(r, m, rnd() % 8 ? seed.len : rnd() % seed.len + 1);
    }
    free(m);
}

static void test_fuzz(void)
{
    BootRam r = ram_new(RAM_SIZE);
    Buf elf = make_elf(), img = make_image(0x400, 0x200000, 0x8000, 3);
    fuzz_seed(&r, elf, 20000);
    fuzz_seed(&r, img, 5000);
    free(elf.p);
    free(img.p);
    ram_free(&r);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_fdt_full();
    test_fdt_variants();
    test_fdt_refused();
    test_elf_ok();
    test_elf_broken();
    test_image();
    test_raw();
    test_files();
    test_placement();
    test_fuzz();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        printf("test_system_boot: could not remove %s\n", tmpdir);
    if (failures)
        printf("test_system_boot: %d failures\n", failures);
    else
        printf("test_system_boot: all passed\n");
    return failures != 0;
}
