/*
 * xlat-system: a RISC-V virt machine (qemu-system-riscv64 -M virt).
 *
 * The command line is QEMU's for what the two share, so a user changes
 * one word; an option xlat-system does not support is refused by name.
 * Boot: RAM at 0x8000_0000; with -bios default (xlat's own SBI, sbi.c)
 * the kernel starts in S-mode with a0 = hartid and a1 = the device tree;
 * with -bios none the -kernel image runs in M-mode from reset; with
 * -bios FILE the firmware runs in M-mode at 0x8000_0000 and finds the
 * kernel through fw_dynamic's handover record in a2, as under QEMU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "exec/settings.h"
#include "system/fdt.h"
#include "system/hart.h"
#include "system/hw/aclint.h"
#include "system/hw/plic.h"
#include "system/hw/rtc.h"
#include "system/hw/test_dev.h"
#include "system/hw/uart.h"
#include "system/loader.h"
#include "system/machine.h"
#include "system/sbi.h"
#include "system/sys_mem.h"

typedef struct Options {
    uint64_t ram_size;
    unsigned smp;
    const char *kernel, *initrd, *append, *dtb, *dumpdtb, *log_path;
    const char *bios;                  /* "default", "none" or a file */
    bool no_reboot, nographic;
} Options;

static _Noreturn void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "xlat-system: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* "128M", "1G", "512" (MiB, as QEMU) -> bytes; 0 if malformed. */
static uint64_t parse_mem(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': case '\0': v <<= 20; if (*end) end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: return 0;
    }
    return *end ? 0 : v;
}

static const struct { const char *name; unsigned mask; const char *help; } log_items[] = {
    { "int",          LOG_INT,          "log traps and interrupts" },
    { "mmu",          LOG_MMU,          "log page faults" },
    { "guest_errors", LOG_GUEST_ERRORS, "log accesses to nothing and bad device use" },
    { "unimp",        LOG_UNIMP,        "log unimplemented CSRs, SBI calls, device registers" },
};

static void parse_log(const char *list)
{
    char *copy = strdup(list), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        size_t i, n = sizeof log_items / sizeof log_items[0];
        if (!strcmp(item, "help")) {
            for (i = 0; i < n; i++)
                printf("%-13s %s\n", log_items[i].name, log_items[i].help);
            exit(0);
        }
        for (i = 0; i < n && strcmp(item, log_items[i].name); i++)
            ;
        if (i == n)
            die("-d: unknown or unsupported log item '%s' (try -d help)", item);
        log_mask |= log_items[i].mask;
    }
    free(copy);
}

/* -machine virt[,dumpdtb=FILE]: the one board there is. */
static void parse_machine(Options *o, const char *arg)
{
    char *copy = strdup(arg), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (!strcmp(item, "virt") || !strncmp(item, "type=virt", 9))
            continue;
        if (!strncmp(item, "dumpdtb=", 8))
            o->dumpdtb = strdup(item + 8);
        else if (!strcmp(item, "help") || !strcmp(item, "?"))
            (printf("virt                 RISC-V VirtIO board (default)\n"), exit(0));
        else
            die("-machine: unsupported machine or property '%s' (only virt, dumpdtb=FILE)",
                item);
    }
    free(copy);
}

static void usage(void)
{
    printf("usage: xlat-system [options]\n"
           "  -M virt[,dumpdtb=FILE]  the machine (QEMU's virt board)\n"
           "  -m SIZE                 RAM (default 128M)\n"
           "  -smp N                  harts (default 1, at most %d)\n"
           "  -kernel FILE            ELF, Linux Image or raw binary\n"
           "  -initrd FILE            initial ramdisk\n"
           "  -append STRING          kernel command line\n"
           "  -dtb FILE               use this device tree instead of generating one\n"
           "  -bios default|none|FILE SBI in xlat (default), no firmware, or M-mode firmware\n"
           "  -nographic              serial console on stdio (ctrl-a x quits, ctrl-a h helps)\n"
           "  -serial mon:stdio|stdio the console (the only one)\n"
           "  -no-reboot              exit instead of rebooting (status 1)\n"
           "  -d ITEMS, -D FILE       log items (-d help), log file\n",
           MACHINE_MAX_HARTS);
    exit(0);
}

static const char *need(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc)
        die("option %s needs an argument", argv[*i]);
    return argv[++*i];
}

static void parse_args(int argc, char **argv, Options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] == '-')
            a++;                        /* QEMU takes --opt for -opt */
        if (!strcmp(a, "-M") || !strcmp(a, "-machine"))
            parse_machine(o, need(argc, argv, &i));
        else if (!strcmp(a, "-m")) {
            const char *v = need(argc, argv, &i);
            if (!strncmp(v, "size=", 5))
                v += 5;
            if (!(o->ram_size = parse_mem(v)) || o->ram_size < (16ULL << 20))
                die("-m: bad memory size '%s' (at least 16M)", v);
        } else if (!strcmp(a, "-smp")) {
            const char *v = need(argc, argv, &i);
            char *end;
            long n = strtol(!strncmp(v, "cpus=", 5) ? v + 5 : v, &end, 10);
            if (*end || n < 1 || n > MACHINE_MAX_HARTS)
                die("-smp: '%s' is not 1..%d harts", v, MACHINE_MAX_HARTS);
            o->smp = (unsigned)n;
        } else if (!strcmp(a, "-kernel"))
            o->kernel = need(argc, argv, &i);
        else if (!strcmp(a, "-initrd"))
            o->initrd = need(argc, argv, &i);
        else if (!strcmp(a, "-append"))
            o->append = need(argc, argv, &i);
        else if (!strcmp(a, "-dtb"))
            o->dtb = need(argc, argv, &i);
        else if (!strcmp(a, "-bios"))
            o->bios = need(argc, argv, &i);
        else if (!strcmp(a, "-nographic"))
            o->nographic = true;
        else if (!strcmp(a, "-serial")) {
            const char *v = need(argc, argv, &i);
            if (strcmp(v, "mon:stdio") && strcmp(v, "stdio"))
                die("-serial %s: only stdio and mon:stdio are supported", v);
        } else if (!strcmp(a, "-display")) {
            if (strcmp(need(argc, argv, &i), "none"))
                die("-display: only 'none' (there is no display)");
        } else if (!strcmp(a, "-no-reboot"))
            o->no_reboot = true;
        else if (!strcmp(a, "-d"))
            parse_log(need(argc, argv, &i));
        else if (!strcmp(a, "-D"))
            o->log_path = need(argc, argv, &i);
        else if (!strcmp(a, "-h") || !strcmp(a, "-help"))
            usage();
        else
            die("unsupported option '%s' (xlat-system -h lists what is supported)", argv[i]);
    }
}

static void setup_ram(uint64_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        die("cannot allocate %llu MiB of RAM: %s", (unsigned long long)(size >> 20),
            strerror(errno));
    machine.ram = p;
    machine.ram_size = size;
}

static void *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        die("%s: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (size_t r; (r = fread(buf + n, 1, cap - n, f)) > 0;)
        if ((n += r) == cap)
            buf = realloc(buf, cap *= 2);
    fclose(f);
    *len = n;
    return buf;
}

/* fw_dynamic's handover record (OpenSBI's fw_dynamic_info, version 2). */
typedef struct FwDynamicInfo {
    uint64_t magic, version, next_addr, next_mode, options, boot_hart;
} FwDynamicInfo;

/*
 * Reset state. Under xlat's SBI only the boot hart runs, in S-mode, and the
 * others wait for HSM hart_start. With firmware or -bios none every hart
 * starts at the entry in M-mode from reset (a0 = hartid, a1 = the device
 * tree), as on QEMU; firmware finds the kernel in fw_dynamic's record (a2).
 */
static void start_harts(const Options *o, uint64_t entry, uint64_t fdt_addr, uint64_t next)
{
    bool builtin = !strcmp(o->bios, "default");
    uint64_t info_pa = 0;
    if (!builtin && strcmp(o->bios, "none")) {
        info_pa = (fdt_addr - sizeof(FwDynamicInfo)) & ~15ULL;
        FwDynamicInfo info = { 0x4942534fULL, 2, next, PRV_S, 0, 0 };
        memcpy(machine.ram + (info_pa - VIRT_RAM_BASE), &info, sizeof info);
    }
    sbi_builtin = builtin;
    for (unsigned i = 0; i < machine.nharts; i++) {
        if (builtin && i > 0)
            continue;                   /* stopped until hart_start */
        CPUState *cpu = &machine.harts[i]->cpu;
        if (builtin)
            priv_reset(cpu, i, PRV_S);
        machine.harts[i]->hsm_state = HSM_STARTED;
        cpu->x[10] = i;
        cpu->x[11] = fdt_addr;
        cpu->x[12] = info_pa;
        cpu->pc = entry;
    }
}

int main(int argc, char **argv)
{
    Options o = { .ram_size = 128ULL << 20, .smp = 1, .bios = "default" };
    parse_args(argc, argv, &o);
    if (o.log_path && !(log_file = fopen(o.log_path, "w")))
        die("-D %s: %s", o.log_path, strerror(errno));
    if (!o.kernel && strcmp(o.bios, "none") == 0)
        die("-bios none needs -kernel");
    if (!o.kernel && !strcmp(o.bios, "default"))
        die("no -kernel given (xlat-system runs a kernel or bare-metal program)");

    machine_mtime();                    /* the clock starts now (before any thread) */
    setup_ram(o.ram_size);
    BootRam ram = { machine.ram, VIRT_RAM_BASE, o.ram_size };
    sys_mem_init();
    machine.nharts = o.smp;
    for (unsigned i = 0; i < o.smp; i++)
        machine.harts[i] = hart_create(i);
    machine.plic = plic_init();
    aclint_init();
    uart_init(STDIN_FILENO, STDOUT_FILENO, true);
    rtc_init();
    sifive_test_init();

    char err[256];
    bool firmware = strcmp(o.bios, "default") && strcmp(o.bios, "none");
    LoadedImage fw = { 0 }, kernel = { 0 };
    if (firmware && load_kernel(&ram, o.bios, &fw, err, sizeof err) < 0)
        die("-bios: %s", err);
    if (o.kernel && load_kernel(&ram, o.kernel, &kernel, err, sizeof err) < 0)
        die("-kernel: %s", err);
    if (firmware && kernel.low < fw.high && fw.low < kernel.high)
        die("-kernel %s overlaps the firmware at %#llx", o.kernel, (unsigned long long)fw.low);

    uint64_t initrd_start = 0, initrd_end = 0;
    if (o.initrd && load_initrd(&ram, o.initrd, &kernel, &initrd_start, &initrd_end, err,
                                sizeof err) < 0)
        die("-initrd: %s", err);

    size_t fdt_size;
    void *fdt;
    if (o.dtb) {
        fdt = read_file(o.dtb, &fdt_size);
    } else {
        /* Firmware (OpenSBI) reserves its own memory in the tree it passes
         * on, as under QEMU, whose tree has no reservation either. */
        uint8_t seed[32];
        bool seeded = getrandom(seed, sizeof seed, 0) == (ssize_t)sizeof seed;
        FdtConfig cfg = {
            .ram_base = VIRT_RAM_BASE, .ram_size = o.ram_size, .nharts = o.smp,
            .bootargs = o.append, .initrd_start = initrd_start, .initrd_end = initrd_end,
            .virtio_slots = FDT_VIRTIO_ALL,
            .rng_seed = seeded ? seed : NULL, .rng_seed_len = sizeof seed,
        };
        if (!(fdt = fdt_build(&cfg, &fdt_size)))
            die("cannot build the device tree");
    }
    if (o.dumpdtb) {
        if (fdt_dump(o.dumpdtb, fdt) < 0)
            die("dumpdtb=%s: %s", o.dumpdtb, strerror(errno));
        return 0;
    }
    uint64_t fdt_addr;
    if (load_fdt(&ram, fdt, fdt_size, kernel.high > initrd_end ? kernel.high : initrd_end,
                 &fdt_addr, err, sizeof err) < 0)
        die("device tree: %s", err);

    start_harts(&o, firmware ? fw.entry : kernel.entry, fdt_addr, kernel.entry);
    harts_run_all();
    uart_restore_tty();
    if (machine.reboot && !o.no_reboot) {
        execv("/proc/self/exe", argv);
        die("reboot: %s", strerror(errno));
    }
    return machine.reboot ? 1 : machine.exit_status;
}
