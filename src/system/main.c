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

#include "exec/exec.h"
#include "exec/perfmap.h"
#include "exec/settings.h"
#include "system/fdt.h"
#include "system/gdbstub.h"
#include "system/hart.h"
#include "system/hw/aclint.h"
#include "system/hw/htif.h"
#include "system/hw/plic.h"
#include "system/hw/rtc.h"
#include "system/hw/test_dev.h"
#include "system/hw/uart.h"
#include "system/hw/virtio.h"
#include "system/hw/virtio_net.h"
#include "system/loader.h"
#include "system/machine.h"
#include "system/net_slirp.h"
#include "system/sbi.h"
#include "system/sched.h"
#include "system/sys_mem.h"
#include "system/tlb.h"

/* A -drive (with if=none, it waits for the -device naming its id). */
typedef struct Drive {
    char *id, *file;
    bool snapshot, readonly, attached;
} Drive;

/* A virtio-mmio device, in command-line order (QEMU fills slots from the top). */
typedef struct Device {
    enum { DEV_BLK, DEV_RNG, DEV_NET } kind;
    Drive *drive;
    char *netdev;                      /* DEV_NET: the -netdev id */
    bool has_mac;
    uint8_t mac[6];
} Device;

#define MAX_DRIVES VIRT_VIRTIO_SLOTS

typedef struct Options {
    uint64_t ram_size;
    unsigned smp;
    const char *kernel, *initrd, *append, *dtb, *dumpdtb, *log_path;
    const char *bios;                  /* "default", "none" or a file */
    bool no_reboot, nographic, snapshot;
    Drive drives[MAX_DRIVES];
    unsigned ndrives;
    Device devices[VIRT_VIRTIO_SLOTS];
    unsigned ndevices;
    const char *netdevs[NET_MAX_NETDEVS];  /* -netdev option strings */
    unsigned nnetdevs;
    const char *gdb;                   /* -gdb DEVICE (-s: tcp::1234); NULL or "none": no stub */
    bool freeze;                       /* -S: the harts wait for gdb's continue */
    bool interp;                       /* -interp: no translation */
    bool perfmap, jitdump;             /* -perfmap, -jitdump: name translated code for perf */
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

static const LogItem log_items[] = {
    { "in_asm",       LOG_IN_ASM,       "show guest instructions as they are first run" },
    { "exec",         LOG_EXEC,         "show the pc of every instruction run" },
    { "int",          LOG_INT,          "log traps and interrupts" },
    { "mmu",          LOG_MMU,          "log page faults" },
    { "guest_errors", LOG_GUEST_ERRORS, "log accesses to nothing and bad device use" },
    { "unimp",        LOG_UNIMP,        "log unimplemented CSRs, SBI calls, device registers" },
    { "out_asm",      LOG_OUT_ASM,      "show the host code of each translated block" },
    { "nochain",      LOG_NOCHAIN,      "do not chain translated blocks together" },
    { "stats",        LOG_STATS,        "print JIT and TLB counters at exit" },
};

static void parse_log(const char *list)
{
    const char *bad = log_items_parse(log_items, sizeof log_items / sizeof log_items[0], list);
    if (bad)
        die("-d: unknown or unsupported log item '%s' (try -d help)", bad);
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

/* -accel xlat[,threads=M] (M host threads for the harts: sched.h), or
 * QEMU's -accel tcg[,thread=single|multi] (single: one thread). */
static void parse_accel(const char *arg)
{
    char *copy = strdup(arg), *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *end;
        if (!strcmp(item, "xlat") || !strcmp(item, "tcg") || !strcmp(item, "thread=multi"))
            continue;
        if (!strcmp(item, "thread=single")) {
            sched_set_threads(1);
        } else if (!strncmp(item, "threads=", 8)) {
            long n = strtol(item + 8, &end, 10);
            if (*end || end == item + 8 || n < 1 || n > MACHINE_MAX_HARTS)
                die("-accel: threads=%s is not 1..%d", item + 8, MACHINE_MAX_HARTS);
            sched_set_threads((unsigned)n);
        } else if (!strcmp(item, "help") || !strcmp(item, "?")) {
            printf("xlat (the JIT; tcg is taken as its name)\n");
            exit(0);
        } else {
            die("-accel: unsupported accelerator or property '%s' (xlat[,threads=M], "
                "tcg[,thread=single|multi])", item);
        }
    }
    free(copy);
}

/* "on"/"off" (and QEMU's yes/no, true/false) of a property. */
static bool parse_bool(const char *opt, const char *key, const char *v)
{
    if (!strcmp(v, "on") || !strcmp(v, "yes") || !strcmp(v, "true"))
        return true;
    if (!strcmp(v, "off") || !strcmp(v, "no") || !strcmp(v, "false"))
        return false;
    die("%s: %s=%s: expected on or off", opt, key, v);
}

static Device *add_device(Options *o, int kind, Drive *d)
{
    if (o->ndevices == VIRT_VIRTIO_SLOTS)
        die("-device: all %d virtio-mmio slots are taken", VIRT_VIRTIO_SLOTS);
    o->devices[o->ndevices] = (Device){ .kind = kind, .drive = d };
    return &o->devices[o->ndevices++];
}

/* mac=52:54:00:12:34:56 */
static bool parse_mac(const char *s, uint8_t mac[6])
{
    unsigned b[6];
    char end;
    if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
               &end) != 6)
        return false;
    for (unsigned i = 0; i < 6; i++)
        mac[i] = (uint8_t)b[i];
    return !(mac[0] & 1);              /* not a multicast address */
}

/* -drive file=F[,format=raw][,if=none|virtio][,id=X][,snapshot=on][,readonly=on] */
static void parse_drive(Options *o, const char *arg)
{
    if (o->ndrives == MAX_DRIVES)
        die("-drive: at most %d drives", MAX_DRIVES);
    Drive *d = &o->drives[o->ndrives++];
    const char *iface = "virtio";
    char *copy = strdup(arg), *save = NULL;
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *v = strchr(kv, '=');
        if (!v)
            die("-drive: '%s' is not KEY=VALUE", kv);
        *v++ = '\0';
        if (!strcmp(kv, "file"))
            d->file = strdup(v);
        else if (!strcmp(kv, "id"))
            d->id = strdup(v);
        else if (!strcmp(kv, "if"))
            iface = !strcmp(v, "none") ? "none" : !strcmp(v, "virtio") ? "virtio" : NULL;
        else if (!strcmp(kv, "format")) {
            if (strcmp(v, "raw"))
                die("-drive: format=%s is not supported (raw images only)", v);
        } else if (!strcmp(kv, "snapshot"))
            d->snapshot = parse_bool("-drive", kv, v);
        else if (!strcmp(kv, "readonly"))
            d->readonly = parse_bool("-drive", kv, v);
        else if (!strcmp(kv, "media")) {
            if (strcmp(v, "disk"))
                die("-drive: media=%s is not supported", v);
        } else
            die("-drive: unsupported property '%s'", kv);
    }
    free(copy);
    if (!d->file)
        die("-drive %s: no file=", arg);
    if (!iface)
        die("-drive %s: only if=none and if=virtio are supported", arg);
    if (!strcmp(iface, "virtio")) {
        d->attached = true;
        add_device(o, DEV_BLK, d);
    }
}

/* -device virtio-blk-device,drive=X | virtio-rng-device
 * | virtio-net-device,netdev=N[,mac=MAC] */
static void parse_device(Options *o, const char *arg)
{
    char *copy = strdup(arg), *save = NULL;
    char *name = strtok_r(copy, ",", &save);
    if (!name || !strcmp(name, "help"))
        (printf("virtio-blk-device, virtio-rng-device, virtio-net-device\n"), exit(0));
    bool blk = !strcmp(name, "virtio-blk-device"), rng = !strcmp(name, "virtio-rng-device");
    bool net = !strcmp(name, "virtio-net-device");
    if (!blk && !rng && !net)
        die("-device %s: unsupported device (virtio-blk-device, virtio-rng-device and "
            "virtio-net-device are)", name);
    Drive *drive = NULL;
    Device nd = { .kind = DEV_NET };
    for (char *kv = strtok_r(NULL, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        if (net && !strncmp(kv, "netdev=", 7)) {
            nd.netdev = strdup(kv + 7);
            continue;
        }
        if (net && !strncmp(kv, "mac=", 4)) {
            if (!(nd.has_mac = parse_mac(kv + 4, nd.mac)))
                die("-device %s: mac=%s is not a unicast MAC address", name, kv + 4);
            continue;
        }
        if (blk && !strncmp(kv, "drive=", 6)) {
            for (unsigned i = 0; i < o->ndrives && !drive; i++)
                if (o->drives[i].id && !strcmp(o->drives[i].id, kv + 6))
                    drive = &o->drives[i];
            if (!drive)
                die("-device %s: no -drive with id=%s (give -drive first)", arg, kv + 6);
            if (drive->attached)
                die("-device %s: drive %s is already in use", arg, kv + 6);
            drive->attached = true;
        } else {
            die("-device %s: unsupported property '%s'", name, kv);
        }
    }
    if (blk && !drive)
        die("-device %s: drive= is required", arg);
    if (net && !nd.netdev)
        die("-device %s: netdev= is required (user-mode networking: -netdev user,id=N)", arg);
    Device *d = add_device(o, blk ? DEV_BLK : net ? DEV_NET : DEV_RNG, drive);
    if (net)
        *d = nd;
    free(copy);
}

/* The virtio-mmio devices, in command-line order from the top slot down
 * (QEMU's order: the first -device is vda). */
static void add_virtio_devices(const Options *o)
{
    char err[256];
    for (unsigned i = 0; i < o->ndrives; i++)
        if (!o->drives[i].attached)
            die("-drive %s: not attached to any device (-device virtio-blk-device,drive=ID)",
                o->drives[i].file);
    for (unsigned i = 0; i < o->nnetdevs; i++)
        if (net_user_create(o->netdevs[i], err, sizeof err) < 0)
            die("%s", err);
    for (unsigned i = 0; i < o->ndevices; i++) {
        const Device *dev = &o->devices[i];
        int slot = virtio_mmio_free_slot();
        if (slot < 0)
            die("-device: all %d virtio-mmio slots are taken", VIRT_VIRTIO_SLOTS);
        if (dev->kind == DEV_BLK) {
            const Drive *d = dev->drive;
            if (virtio_blk_add((unsigned)slot, d->file, d->snapshot || o->snapshot, d->readonly,
                               err, sizeof err) < 0)
                die("-drive file=%s: %s", d->file, err);
        } else if (dev->kind == DEV_NET) {
            int nd = net_user_find(dev->netdev);
            if (nd < 0)
                die("-device virtio-net-device,netdev=%s: no -netdev with id=%s", dev->netdev,
                    dev->netdev);
            if (virtio_net_add((unsigned)slot, nd, dev->has_mac ? dev->mac : NULL, err,
                               sizeof err) < 0)
                die("-device virtio-net-device,netdev=%s: %s", dev->netdev, err);
        } else if (virtio_rng_add((unsigned)slot, err, sizeof err) < 0) {
            die("-device virtio-rng-device: %s", err);
        }
    }
    for (int nd = 0; net_user_id(nd); nd++)
        if (!net_user_attached(nd))
            fprintf(stderr, "xlat-system: warning: netdev %s has no peer\n", net_user_id(nd));
    virtio_mmio_init_empty_slots();
}

static void usage(void)
{
    printf("usage: xlat-system [options]\n"
           "  -M virt[,dumpdtb=FILE]  the machine (QEMU's virt board)\n"
           "  -m SIZE                 RAM (default 128M)\n"
           "  -smp N                  harts (default 1, at most %d)\n"
           "  -accel xlat,threads=M   run the harts on M host threads (default: one per\n"
           "                          hart, at most the host's CPUs; tcg,thread=single: 1)\n"
           "  -kernel FILE            ELF, Linux Image or raw binary\n"
           "  -initrd FILE            initial ramdisk\n"
           "  -append STRING          kernel command line\n"
           "  -dtb FILE               use this device tree instead of generating one\n"
           "  -bios default|none|FILE SBI in xlat (default), no firmware, or M-mode firmware\n"
           "  -nographic              serial console on stdio (ctrl-a x quits, ctrl-a h helps)\n"
           "  -serial mon:stdio|stdio the console (the only one)\n"
           "  -drive file=F[,format=raw][,if=none|virtio][,id=X][,snapshot=on][,readonly=on]\n"
           "  -device virtio-blk-device,drive=X | virtio-rng-device\n"
           "  -netdev user,id=N[,hostfwd=[tcp|udp]:[HOSTADDR]:HOSTPORT-[GUESTADDR]:PORT]...\n"
           "                          user-mode network (slirp: 10.0.2.0/24, host 10.0.2.2)\n"
           "  -device virtio-net-device,netdev=N[,mac=MAC]\n"
           "  -snapshot               writes to every disk stay in memory\n"
           "  -no-reboot              exit instead of rebooting (status 1)\n"
           "  -gdb tcp::PORT|tcp:HOST:PORT  wait for gdb connections (harts are threads)\n"
           "  -s                      -gdb tcp::1234\n"
           "  -S                      do not start the harts until gdb continues\n"
           "  -d ITEMS, -D FILE       log items (-d help), log file\n"
           "  -interp                 run guest code in the interpreter, not the JIT\n"
           "  -perfmap                write /tmp/perf-PID.map naming translated code by guest pc\n"
           "  -jitdump                write ./jit-PID.dump for perf inject --jit\n"
           "  -tune ITEM[,...]        JIT mechanisms, all on by default: no-cflags, no-nostore,\n"
           "                          no-inline-jc, no-cycle-poll, no-poison, no-disp,\n"
           "                          no-superblock, no-ras, no-first-interp, no-remap,\n"
           "                          no-narrow (as xlat's), jc-bits=N (10..18), and the\n"
           "                          softmmu TLB's: tlb-bits=N (2^N entries, 6..22, fixed),\n"
           "                          no-tlb-resize (2^8, fixed), no-tlb-group (a probe for\n"
           "                          every access), no-asid-tlb (one set of TLBs, flushed\n"
           "                          at every satp write, instead of one per recent address\n"
           "                          space), no-tlb-fill (a probe's miss runs the access in\n"
           "                          the interpreter instead of refilling the entry and\n"
           "                          probing again), no-huge-ram (guest RAM without\n"
           "                          MADV_HUGEPAGE); no-entry-specialize (one generic trap, ecall\n"
           "                          and xret entry for every privilege); no-pv-rfence\n"
           "                          (a remote fence waits for every target hart to run,\n"
           "                          not only for those on a host thread now); pause-exit\n"
           "                          (off by default: a hart spinning on pause gives its\n"
           "                          thread to waiting harts)\n",
           MACHINE_MAX_HARTS);
    exit(0);
}

/* perf's name for a block: its virtual pc (a kernel's or a process's). */
static void name_guest_pc(uint64_t pc, char *buf, size_t size)
{
    snprintf(buf, size, "guest_%llx", (unsigned long long)pc);
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
        } else if (!strcmp(a, "-accel"))
            parse_accel(need(argc, argv, &i));
        else if (!strcmp(a, "-kernel"))
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
        else if (!strcmp(a, "-drive"))
            parse_drive(o, need(argc, argv, &i));
        else if (!strcmp(a, "-device"))
            parse_device(o, need(argc, argv, &i));
        else if (!strcmp(a, "-netdev")) {
            if (o->nnetdevs == NET_MAX_NETDEVS)
                die("-netdev: at most %d", NET_MAX_NETDEVS);
            o->netdevs[o->nnetdevs++] = need(argc, argv, &i);
        }
        else if (!strcmp(a, "-snapshot"))
            o->snapshot = true;
        else if (!strcmp(a, "-gdb"))
            o->gdb = need(argc, argv, &i);
        else if (!strncmp(a, "-gdb=", 5) || !strncmp(a, "-gdb ", 5))
            o->gdb = a + 5;             /* one word: "-gdb tcp::1234" quoted, or -gdb= */
        else if (!strcmp(a, "-s"))
            o->gdb = "tcp::1234";
        else if (!strcmp(a, "-S"))
            o->freeze = true;
        else if (!strcmp(a, "-d"))
            parse_log(need(argc, argv, &i));
        else if (!strcmp(a, "-D"))
            o->log_path = need(argc, argv, &i);
        else if (!strcmp(a, "-interp"))
            o->interp = true;
        else if (!strcmp(a, "-perfmap"))
            o->perfmap = true;
        else if (!strcmp(a, "-jitdump"))
            o->jitdump = true;
        else if (!strcmp(a, "-tune")) {
            const char *bad = tune_parse(need(argc, argv, &i), true);
            if (bad)
                die("%s", bad);
        } else if (!strcmp(a, "-h") || !strcmp(a, "-help"))
            usage();
        else
            die("unsupported option '%s' (xlat-system -h lists what is supported)", argv[i]);
    }
}

/* -gdb/-s/-S: listen now, so that a bad device or a port in use ends
 * xlat-system before the machine exists. */
static void setup_gdb(const Options *o)
{
    bool on = o->gdb && strcmp(o->gdb, "none");
    if (o->freeze && !on)
        die("-S: the harts would wait forever: give -gdb tcp::PORT or -s (there is no monitor)");
    if (!on)
        return;
    char host[256], err[300];
    int port;
    if (!gdbstub_parse_device(o->gdb, host, sizeof host, &port, err, sizeof err))
        die("-gdb: %s", err);
    if (!gdbstub_listen(host, port, err, sizeof err))
        die("-gdb %s: %s", o->gdb, err);
}

/*
 * Guest RAM, 2 MiB aligned and (unless -tune no-huge-ram) in the host's
 * transparent huge pages where it gives them (enabled=madvise, Debian's
 * default: QEMU asks for them too): the guest kernel maps its RAM with 2
 * MiB pages and THP backs user memory with them, so one host TLB entry
 * then covers what a guest superpage does.
 */
#define HUGE_PAGE (2ULL << 20)
static void setup_ram(uint64_t size)
{
    void *p = mmap(NULL, size + HUGE_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        die("cannot allocate %llu MiB of RAM: %s", (unsigned long long)(size >> 20),
            strerror(errno));
    uint8_t *ram = (uint8_t *)(((uintptr_t)p + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
    if (tune.huge_ram)
        madvise(ram, size, MADV_HUGEPAGE);      /* a hint: without THP, 4 KiB pages */
    machine.ram = ram;
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
    /* Static: what the options point to stays reachable until exit. */
    static Options o;
    o = (Options){ .ram_size = 128ULL << 20, .smp = 1, .bios = "default" };
    parse_args(argc, argv, &o);
    log_file = stderr;
    if (o.log_path && !(log_file = fopen(o.log_path, "w")))
        die("-D %s: %s", o.log_path, strerror(errno));
    if (!o.kernel && strcmp(o.bios, "none") == 0)
        die("-bios none needs -kernel");
    if (!o.kernel && !strcmp(o.bios, "default"))
        die("no -kernel given (xlat-system runs a kernel or bare-metal program)");
    setup_gdb(&o);

    machine_mtime();                    /* the clock starts now (before any thread) */
    setup_ram(o.ram_size);
    BootRam ram = { machine.ram, VIRT_RAM_BASE, o.ram_size };
    sys_mem_init();
    hart_use_jit = !o.interp;
    if (hart_use_jit) {
        tune.fork_warm = false;         /* user mode's */
        perfmap_init(o.perfmap, o.jitdump, name_guest_pc);
        exec_init();
    }
    machine.nharts = o.smp;
    for (unsigned i = 0; i < o.smp; i++)
        machine.harts[i] = hart_create(i);
    machine.plic = plic_init();
    aclint_init();
    uart_init(STDIN_FILENO, STDOUT_FILENO, true);
    rtc_init();
    sifive_test_init();
    add_virtio_devices(&o);

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
    free(fdt);

    if (kernel.tohost)
        htif_init(kernel.tohost);
    start_harts(&o, firmware ? fw.entry : kernel.entry, fdt_addr, kernel.entry);
    if (gdbstub_enabled)
        gdbstub_start(o.freeze);
    harts_run_all();
    gdbstub_report_exit();
    if (log_mask & LOG_STATS) {
        if (hart_use_jit)
            exec_print_stats();
        tlb_print_stats();
        hart_print_stats();
    }
    uart_restore_tty();
    if (machine.reboot && !o.no_reboot) {
        execv("/proc/self/exe", argv);
        die("reboot: %s", strerror(errno));
    }
    return machine.reboot ? 1 : machine.exit_status;
}
