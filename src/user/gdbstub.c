/*
 * gdb remote serial protocol stub for -g PORT (QEMU_GDB).
 *
 * main() calls gdb_init() before the first guest instruction: it listens on
 * the port, accepts one gdb connection and stops at the entry point. While
 * gdb is attached, cpu_loop() runs guest code through gdb_run():
 *
 *  - continuing with no breakpoint or watchpoint set runs at full speed
 *    (the JIT, or the interpreter with --interp);
 *  - stepping, or continuing with any breakpoint or watchpoint set, runs one
 *    instruction at a time with the interpreter (interp_step, the golden
 *    model), checking the pc against the breakpoints before each one and
 *    the access of each load/store/AMO against the watchpoints. Breakpoints
 *    are never written into guest memory, so translated code needs no
 *    invalidation and the guest cannot see them. The cost is speed while a
 *    breakpoint exists; the choice keeps the JIT untouched and exact.
 *  - a synchronous guest signal (SIGSEGV, SIGILL, SIGTRAP...) stops in gdb
 *    first; it is delivered only if gdb resumes with it (C/vCont;C), as in
 *    qemu-user;
 *  - Ctrl-C in gdb (0x03) stops the running program with SIGINT: a watcher
 *    thread reads the socket while the program runs and kicks the CPU.
 *
 * Packets: qSupported, qXfer:features:read (riscv64 target description:
 * org.gnu.gdb.riscv.cpu and .fpu), g/G, p/P, m/M/X (through copy_from_guest
 * and copy_to_guest, so bad addresses answer E14 instead of faulting),
 * Z0/z0 (and Z1), Z2/Z3/Z4 watchpoints, s, c, C, S, vCont, ?, H, T,
 * qfThreadInfo/qsThreadInfo, qC, qAttached, k, D. Threads: the debugged
 * thread is the one that was running when gdb attached (the main thread);
 * other guest threads run freely (no breakpoints) and are not listed: a
 * gap. A forked child runs undebugged.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/exec.h"
#include "riscv/insn.h"
#include "user/fault.h"
#include "user/gdbstub.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/signal.h"

bool gdb_active;

static int gdb_fd = -1;
static pid_t gdb_tid;                   /* the debugged thread */

#define MAX_BP 64
static uint64_t bps[MAX_BP];
static int nbps;

typedef struct { uint64_t addr, len; int type; } Watch;   /* type: 2 write, 3 read, 4 access */
static Watch wps[MAX_BP];
static int nwps;

static bool stepping;                   /* s: stop after one instruction */
static bool skip_bp_once;               /* resume from a breakpoint: execute it first */
static bool stop_next;                  /* an ecall ended a step: stop once it has run */
static char stop_next_extra[64];        /* ... with this stop-reply detail (watch:) */

/* -- Packet I/O ------------------------------------------------------------ */

static int get_byte(void)
{
    unsigned char c;
    ssize_t n;
    do
        n = read(gdb_fd, &c, 1);
    while (n < 0 && errno == EINTR);
    return n == 1 ? c : -1;
}

static void put_raw(const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(gdb_fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        buf += n;
        len -= (size_t)n;
    }
}

static void put_packet(const char *data)
{
    size_t len = strlen(data);
    char *buf = malloc(len + 5);
    unsigned sum = 0;
    for (size_t i = 0; i < len; i++)
        sum += (unsigned char)data[i];
    buf[0] = '$';
    memcpy(buf + 1, data, len);
    snprintf(buf + 1 + len, 4, "#%02x", sum & 0xff);
    for (int tries = 0; tries < 3; tries++) {
        put_raw(buf, len + 4);
        int c = get_byte();
        if (c != '-')
            break;                          /* '+' (or no ack mode / EOF) */
    }
    free(buf);
}

/* Read one packet into buf (NUL-terminated, binary escapes undone); returns
 * its length, -1 on EOF. A 0x03 (Ctrl-C) outside a packet is returned as
 * the one-byte packet "\x03". */
static int get_packet(char *buf, size_t cap)
{
    int c;
    for (;;) {
        do
            c = get_byte();
        while (c >= 0 && c != '$' && c != 3);
        if (c < 0)
            return -1;
        if (c == 3) {
            strcpy(buf, "\x03");
            return 1;
        }
        size_t n = 0;
        unsigned sum = 0;
        while ((c = get_byte()) >= 0 && c != '#') {
            sum += (unsigned)c;
            if (c == '}') {
                c = get_byte();
                sum += (unsigned)c;
                c ^= 0x20;
            }
            if (n + 1 < cap)
                buf[n++] = (char)c;
        }
        char hex[3] = { 0 };
        hex[0] = (char)get_byte();
        hex[1] = (char)get_byte();
        buf[n] = '\0';
        if (strtoul(hex, NULL, 16) == (sum & 0xff)) {
            put_raw("+", 1);
            return (int)n;
        }
        put_raw("-", 1);
    }
}

/* -- Hex helpers ----------------------------------------------------------- */

static void hex_bytes(char *out, const void *src, size_t len)
{
    const unsigned char *p = src;
    for (size_t i = 0; i < len; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
    out[2 * len] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static size_t unhex_bytes(void *dst, const char *s, size_t max)
{
    unsigned char *p = dst;
    size_t n = 0;
    while (n < max && hexval(s[0]) >= 0 && hexval(s[1]) >= 0) {
        p[n++] = (unsigned char)(hexval(s[0]) << 4 | hexval(s[1]));
        s += 2;
    }
    return n;
}

/* -- Target description ------------------------------------------------------ */

static const char *const xreg_names[32] = {
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0", "a1", "a2", "a3",
    "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11",
    "t3", "t4", "t5", "t6",
};

/* Register numbers as gdb's riscv port uses them: x0-31, pc, f0-31, then
 * CSRs at 65 + number (fflags 66, frm 67, fcsr 68). */
enum { REG_PC = 32, REG_F0 = 33, REG_FFLAGS = 66, REG_FRM = 67, REG_FCSR = 68 };

static char target_xml[8192];

static void build_target_xml(void)
{
    size_t n = 0, cap = sizeof target_xml;
    n += (size_t)snprintf(target_xml + n, cap - n,
        "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
        "<target version=\"1.0\">\n<architecture>riscv:rv64</architecture>\n"
        "<osabi>GNU/Linux</osabi>\n<feature name=\"org.gnu.gdb.riscv.cpu\">\n");
    for (int i = 0; i < 32; i++)
        n += (size_t)snprintf(target_xml + n, cap - n,
            "<reg name=\"%s\" bitsize=\"64\" type=\"%s\" regnum=\"%d\"/>\n", xreg_names[i],
            i == 1 ? "code_ptr" : (i == 2 || i == 8) ? "data_ptr" : "int", i);
    n += (size_t)snprintf(target_xml + n, cap - n,
        "<reg name=\"pc\" bitsize=\"64\" type=\"code_ptr\" regnum=\"32\"/>\n</feature>\n"
        "<feature name=\"org.gnu.gdb.riscv.fpu\">\n"
        "<union id=\"riscv_double\"><field name=\"float\" type=\"ieee_single\"/>"
        "<field name=\"double\" type=\"ieee_double\"/></union>\n");
    for (int i = 0; i < 32; i++)
        n += (size_t)snprintf(target_xml + n, cap - n,
            "<reg name=\"f%d\" bitsize=\"64\" type=\"riscv_double\" regnum=\"%d\"/>\n",
            i, REG_F0 + i);
    snprintf(target_xml + n, cap - n,
        "<reg name=\"fflags\" bitsize=\"32\" type=\"int\" regnum=\"66\" group=\"float\"/>\n"
        "<reg name=\"frm\" bitsize=\"32\" type=\"int\" regnum=\"67\" group=\"float\"/>\n"
        "<reg name=\"fcsr\" bitsize=\"32\" type=\"int\" regnum=\"68\" group=\"float\"/>\n"
        "</feature>\n</target>\n");
}

/* qXfer:features:read:target.xml:OFF,LEN */
static void reply_xfer(const char *args, char *out, size_t cap)
{
    const char *colon = strchr(args, ':');
    if (strncmp(args, "target.xml:", 11) || !colon) {
        strcpy(out, "E00");
        return;
    }
    unsigned long off = strtoul(colon + 1, NULL, 16);
    const char *comma = strchr(colon, ',');
    unsigned long len = comma ? strtoul(comma + 1, NULL, 16) : 0;
    size_t total = strlen(target_xml);
    if (off >= total) {
        strcpy(out, "l");
        return;
    }
    size_t n = total - off < len ? total - off : len;
    if (n > cap - 2)
        n = cap - 2;
    out[0] = off + n < total ? 'm' : 'l';
    memcpy(out + 1, target_xml + off, n);        /* the XML has no $ # } * */
    out[1 + n] = '\0';
}

/* -- Registers ---------------------------------------------------------------- */

/* Value and size (bytes) of register n; false if it does not exist. */
static bool reg_get(const CPUState *cpu, int n, uint64_t *v, int *size)
{
    *size = 8;
    if (n >= 0 && n < 32)
        *v = cpu->x[n];
    else if (n == REG_PC)
        *v = cpu->pc;
    else if (n >= REG_F0 && n < REG_F0 + 32)
        *v = cpu->f[n - REG_F0];
    else if (n == REG_FFLAGS || n == REG_FRM || n == REG_FCSR) {
        *size = 4;
        *v = n == REG_FFLAGS ? cpu->fflags : n == REG_FRM ? cpu->frm
                                                          : (cpu->frm << 5 | cpu->fflags);
    } else
        return false;
    return true;
}

static bool reg_set(CPUState *cpu, int n, uint64_t v)
{
    if (n > 0 && n < 32)
        cpu->x[n] = v;
    else if (n == 0)
        ;                                   /* x0 stays zero */
    else if (n == REG_PC)
        cpu->pc = v;
    else if (n >= REG_F0 && n < REG_F0 + 32)
        cpu->f[n - REG_F0] = v;
    else if (n == REG_FFLAGS)
        cpu->fflags = v & 0x1f;
    else if (n == REG_FRM)
        cpu->frm = v & 7;
    else if (n == REG_FCSR) {
        cpu->fflags = v & 0x1f;
        cpu->frm = (v >> 5) & 7;
    } else
        return false;
    return true;
}

static void reply_all_regs(const CPUState *cpu, char *out)
{
    for (int i = 0; i <= REG_PC; i++) {
        uint64_t v;
        int size;
        reg_get(cpu, i, &v, &size);
        hex_bytes(out + 16 * i, &v, 8);
    }
}

static void reply_reg(const CPUState *cpu, const char *args, char *out)
{
    uint64_t v;
    int size;
    if (!reg_get(cpu, (int)strtol(args, NULL, 16), &v, &size))
        strcpy(out, "E45");
    else
        hex_bytes(out, &v, (size_t)size);
}

static void write_reg(CPUState *cpu, const char *args, char *out)
{
    char *eq;
    int n = (int)strtol(args, &eq, 16);
    uint64_t v = 0;
    if (*eq != '=' || !unhex_bytes(&v, eq + 1, 8) || !reg_set(cpu, n, v))
        strcpy(out, "E45");
    else
        strcpy(out, "OK");
}

static void write_all_regs(CPUState *cpu, const char *args, char *out)
{
    for (int i = 0; i <= REG_PC && strlen(args) >= 16 * (size_t)(i + 1); i++) {
        uint64_t v = 0;
        unhex_bytes(&v, args + 16 * i, 8);
        reg_set(cpu, i, v);
    }
    strcpy(out, "OK");
}

/* -- Memory ------------------------------------------------------------------- */

static void read_mem(const char *args, char *out, size_t cap)
{
    char *comma;
    uint64_t addr = strtoull(args, &comma, 16);
    size_t len = *comma == ',' ? strtoull(comma + 1, NULL, 16) : 0;
    if (len > (cap - 1) / 2)
        len = (cap - 1) / 2;
    unsigned char *buf = malloc(len + 1);
    size_t got = 0;
    /* Byte by byte past the first failure, so a read that runs into an
     * unmapped page returns what it could (gdb accepts a short reply). */
    if (copy_from_guest(buf, addr, len) == 0)
        got = len;
    else
        while (got < len && copy_from_guest(buf + got, addr + got, 1) == 0)
            got++;
    if (got == 0 && len)
        strcpy(out, "E14");
    else
        hex_bytes(out, buf, got);
    free(buf);
}

/* M addr,len:hex  or  X addr,len:binary (len bytes of raw data after ':'). */
static void write_mem(const char *args, int pktlen, bool binary, char *out)
{
    char *comma, *colon;
    uint64_t addr = strtoull(args, &comma, 16);
    size_t len = strtoull(comma + 1, &colon, 16);
    if (*comma != ',' || *colon != ':') {
        strcpy(out, "E01");
        return;
    }
    unsigned char *buf = malloc(len + 1);
    const char *data = colon + 1;
    size_t avail = (size_t)pktlen - (size_t)(data - (args - 1));
    size_t n = binary ? (len < avail ? len : avail) : unhex_bytes(buf, data, len);
    if (binary)
        memcpy(buf, data, n);
    if (n != len || (len && copy_to_guest(addr, buf, len) < 0))
        strcpy(out, "E14");
    else
        strcpy(out, "OK");
    if (len && !opt.interp_only && n == len)
        exec_invalidate_code(addr, len);    /* gdb may have patched code */
    free(buf);
}

/* -- Breakpoints and watchpoints ------------------------------------------------ */

static void set_point(const char *args, bool insert, char *out)
{
    int type = args[0] - '0';
    uint64_t addr = strtoull(args + 2, NULL, 16);
    const char *comma = strchr(args + 2, ',');
    uint64_t len = comma ? strtoull(comma + 1, NULL, 16) : 1;
    if (type == 0 || type == 1) {            /* software / hardware breakpoint: the same here */
        for (int i = 0; i < nbps; i++)
            if (bps[i] == addr) {
                if (!insert)
                    bps[i] = bps[--nbps];
                strcpy(out, "OK");
                return;
            }
        if (insert && nbps < MAX_BP) {
            bps[nbps++] = addr;
            strcpy(out, "OK");
        } else
            strcpy(out, insert ? "E22" : "OK");
        return;
    }
    if (type < 2 || type > 4) {
        out[0] = '\0';                       /* unsupported */
        return;
    }
    for (int i = 0; i < nwps; i++)
        if (wps[i].addr == addr && wps[i].len == len && wps[i].type == type) {
            if (!insert)
                wps[i] = wps[--nwps];
            strcpy(out, "OK");
            return;
        }
    if (insert && nwps < MAX_BP) {
        wps[nwps++] = (Watch){ addr, len ? len : 1, type };
        strcpy(out, "OK");
    } else
        strcpy(out, insert ? "E22" : "OK");
}

static bool at_breakpoint(uint64_t pc)
{
    for (int i = 0; i < nbps; i++)
        if (bps[i] == pc)
            return true;
    return false;
}

/*
 * The watchpoint the instruction at cpu->pc is about to trigger, or NULL;
 * *hit is the accessed address. Decoded from the instruction, so reads
 * (Z3) are caught as well as writes, and a write of an unchanged value
 * still stops, as with hardware watchpoints.
 */
static const Watch *watch_hit(const CPUState *cpu, uint64_t *hit)
{
    uint32_t bits = 0;
    Insn in;
    if (copy_from_guest(&bits, cpu->pc, 2) < 0)
        return NULL;
    if (insn_length((uint16_t)bits) == 4 && copy_from_guest(&bits, cpu->pc, 4) < 0)
        return NULL;
    if (!insn_decode(bits, &in))
        return NULL;
    enum insn_format fmt = insn_table[in.op].fmt;
    bool reads, writes;
    switch (fmt) {
    case FMT_L:  reads = in.op != OP_jalr; writes = false; break;
    case FMT_FL: reads = true;  writes = false; break;
    case FMT_LR: reads = true;  writes = false; break;
    case FMT_S:
    case FMT_FS: reads = false; writes = true;  break;
    case FMT_AMO: reads = true; writes = true;  break;
    default: return NULL;
    }
    if (!reads && !writes)
        return NULL;
    uint64_t addr = cpu->x[in.rs1] + (fmt == FMT_AMO || fmt == FMT_LR ? 0 : (uint64_t)in.imm);
    uint64_t size = 1ULL << ((in.raw >> 12) & 3);
    for (int i = 0; i < nwps; i++) {
        const Watch *w = &wps[i];
        bool kind = w->type == 4 || (w->type == 2 && writes) || (w->type == 3 && reads);
        if (kind && addr < w->addr + w->len && w->addr < addr + size) {
            *hit = addr > w->addr ? addr : w->addr;
            return w;
        }
    }
    return NULL;
}

/* -- Stop replies and the command loop ------------------------------------------ */

enum { RESUME_NONE, RESUME_CONT, RESUME_STEP };

static int pending_resume = RESUME_CONT;
static int pending_deliver;             /* signal gdb asked to deliver on resume */
void gdb_exit(int status, int signal);

static void stop_reply(const CPUState *cpu, int sig, const char *extra, char *out)
{
    uint64_t pc = cpu->pc, sp = cpu->x[2];
    char pch[17], sph[17];
    hex_bytes(pch, &pc, 8);
    hex_bytes(sph, &sp, 8);
    sprintf(out, "T%02xthread:%x;20:%s;02:%s;%s", sig, (unsigned)gdb_tid, pch, sph,
            extra ? extra : "");
}

/* The signal a continue/step packet asks to deliver ("C0b", "vCont;C0b:..."). */
static int packet_signal(const char *p)
{
    return (int)strtol(p, NULL, 16);
}

/*
 * Talk to gdb until it resumes the program. last_stop is the stop reply to
 * send first (NULL: none, e.g. the reply was already sent). Returns the
 * resume mode; *deliver is the signal gdb asked to deliver (0 none).
 */
static int serve(CPUState *cpu, int stop_sig, const char *stop_extra, int *deliver,
                 bool send_stop)
{
    static char pkt[1 << 16], out[1 << 17];
    char first[256];
    stop_reply(cpu, stop_sig, stop_extra, first);
    if (send_stop)
        put_packet(first);
    *deliver = 0;
    for (;;) {
        int len = get_packet(pkt, sizeof pkt);
        if (len < 0) {                       /* gdb went away: let the program run */
            gdb_active = false;
            return RESUME_CONT;
        }
        out[0] = '\0';
        char *a = pkt + 1;
        switch (pkt[0]) {
        case '?':
            stop_reply(cpu, stop_sig, NULL, out);
            break;
        case 'g': reply_all_regs(cpu, out); break;
        case 'G': write_all_regs(cpu, a, out); break;
        case 'p': reply_reg(cpu, a, out); break;
        case 'P': write_reg(cpu, a, out); break;
        case 'm': read_mem(a, out, sizeof out); break;
        case 'M': write_mem(a, len, false, out); break;
        case 'X': write_mem(a, len, true, out); break;
        case 'Z': set_point(a, true, out); break;
        case 'z': set_point(a, false, out); break;
        case 'H': strcpy(out, "OK"); break;
        case 'T':
            strcpy(out, (pid_t)strtol(a, NULL, 16) == gdb_tid ? "OK" : "E01");
            break;
        case 'c': case 's':
            if (*a)
                cpu->pc = strtoull(a, NULL, 16);
            return pkt[0] == 's' ? RESUME_STEP : RESUME_CONT;
        case 'C': case 'S':
            *deliver = packet_signal(a);
            return pkt[0] == 'S' ? RESUME_STEP : RESUME_CONT;
        case 'k':
            gdb_exit(-1, SIGKILL);
            _exit(137);
        case 'D':
            put_packet("OK");
            close(gdb_fd);
            gdb_active = false;
            nbps = nwps = 0;
            return RESUME_CONT;
        case 'v':
            if (!strncmp(pkt, "vCont?", 6)) {
                strcpy(out, "vCont;c;C;s;S");
            } else if (!strncmp(pkt, "vCont;", 6)) {
                /* The first action applies to our (only) thread. */
                char act = pkt[6];
                if (act == 'C' || act == 'S')
                    *deliver = packet_signal(pkt + 7);
                return act == 's' || act == 'S' ? RESUME_STEP : RESUME_CONT;
            } else if (!strncmp(pkt, "vKill", 5)) {
                put_packet("OK");
                gdb_exit(-1, SIGKILL);
                _exit(137);
            }
            break;                           /* vMustReplyEmpty and others: "" */
        case 'q':
            if (!strncmp(a, "Supported", 9))
                strcpy(out, "PacketSize=10000;qXfer:features:read+;swbreak+;hwbreak+");
            else if (!strncmp(a, "Xfer:features:read:", 19))
                reply_xfer(a + 19, out, sizeof out);
            else if (!strcmp(a, "fThreadInfo"))
                sprintf(out, "m%x", (unsigned)gdb_tid);
            else if (!strcmp(a, "sThreadInfo"))
                strcpy(out, "l");
            else if (!strcmp(a, "C"))
                sprintf(out, "QC%x", (unsigned)gdb_tid);
            else if (!strcmp(a, "Attached"))
                strcpy(out, "0");            /* we started it: kill on quit */
            else if (!strncmp(a, "Offsets", 7))
                strcpy(out, "Text=0;Data=0;Bss=0");
            else if (!strncmp(a, "Symbol", 6))
                strcpy(out, "OK");
            break;
        }
        put_packet(out);
    }
}


/* -- Ctrl-C while the program runs ------------------------------------------------ */

/*
 * While the debugged thread runs (outside serve()), a watcher thread owns
 * the socket: a 0x03 byte from gdb sets interrupt_pending and kicks the CPU
 * out of translated code (exit_request + exec_kick), and gdb_run() then
 * stops with SIGINT. The mutex hands the socket between the two threads.
 */
static pthread_mutex_t sock_lock = PTHREAD_MUTEX_INITIALIZER;
static bool running;                    /* the watcher may read the socket */
static volatile int interrupt_pending;
static CPUState *debugged_cpu;

static void *watcher(void *arg)
{
    (void)arg;
    while (gdb_active) {
        struct pollfd p = { .fd = gdb_fd, .events = POLLIN };
        if (poll(&p, 1, 100) <= 0)
            continue;
        pthread_mutex_lock(&sock_lock);
        unsigned char c;
        if (running && recv(gdb_fd, &c, 1, MSG_DONTWAIT) == 1 && c == 3) {
            interrupt_pending = 1;
            debugged_cpu->exit_request = 1;
            if (!opt.interp_only)
                exec_kick(debugged_cpu);
        }
        pthread_mutex_unlock(&sock_lock);
        if (!running)
            usleep(10000);                  /* serve() reads it */
    }
    return NULL;
}

static void set_running(bool on)
{
    pthread_mutex_lock(&sock_lock);
    running = on;
    pthread_mutex_unlock(&sock_lock);
}

static void stop(CPUState *cpu, int sig, const char *extra)
{
    set_running(false);
    pending_resume = serve(cpu, sig, extra, &pending_deliver, true);
    stepping = pending_resume == RESUME_STEP;
    skip_bp_once = true;
    set_running(gdb_active);
}

/* gdb pressed Ctrl-C: true if the caller should stop now (with SIGINT). */
static bool take_interrupt(CPUState *cpu, enum exit_reason *r)
{
    if (!interrupt_pending)
        return false;
    interrupt_pending = 0;
    if (*r == EXIT_REQUEST || *r == EXIT_NONE) {
        cpu->exit_request = 0;              /* cpu_loop still runs pending signals */
        return true;
    }
    stop_next = true;                       /* after the ecall/fault is handled */
    strcpy(stop_next_extra, "");
    return false;
}

/* A synchronous guest signal: gdb sees it first; deliver it only if asked. */
static enum exit_reason signal_stop(CPUState *cpu, enum exit_reason r)
{
    GuestSignal s = fault_signal_of(cpu, r);
    stop(cpu, s.signo, NULL);
    if (pending_deliver) {
        if (r == EXIT_ILLEGAL || r == EXIT_EBREAK)
            return r;
        /* gdb may deliver another signal than the fault's (same code and address). */
        signal_raise_sync(cpu, pending_deliver, s.code, s.addr);
        pending_deliver = 0;
        return EXIT_NONE;
    }
    return EXIT_NONE;                        /* dropped: re-run the instruction */
}

enum exit_reason gdb_run(CPUState *cpu)
{
    if (gettid() != gdb_tid)                 /* other threads: undebugged */
        return opt.interp_only ? interp_run(cpu) : exec_run(cpu);
    for (;;) {
        if (!gdb_active)
            return opt.interp_only ? interp_run(cpu) : exec_run(cpu);
        if (!stepping && nbps == 0 && nwps == 0) {
            enum exit_reason r = opt.interp_only ? interp_run(cpu) : exec_run(cpu);
            if (take_interrupt(cpu, &r)) {
                stop(cpu, SIGINT, NULL);
                continue;
            }
            if (r == EXIT_FAULT || r == EXIT_ILLEGAL || r == EXIT_EBREAK)
                return gdb_active ? signal_stop(cpu, r) : r;
            return r;
        }
        enum exit_reason none = EXIT_NONE;
        if (take_interrupt(cpu, &none)) {
            stop(cpu, SIGINT, NULL);
            continue;
        }
        if (stop_next) {
            stop_next = false;
            stop(cpu, SIGTRAP, stop_next_extra[0] ? stop_next_extra : NULL);
            continue;
        }
        if (!skip_bp_once && at_breakpoint(cpu->pc)) {
            stop(cpu, SIGTRAP, "swbreak:;");
            continue;
        }
        skip_bp_once = false;
        uint64_t hit = 0;
        const Watch *w = nwps ? watch_hit(cpu, &hit) : NULL;
        int wtype = w ? w->type : 0;
        enum exit_reason r = interp_step(cpu);
        if (r == EXIT_FAULT || r == EXIT_ILLEGAL || r == EXIT_EBREAK)
            return signal_stop(cpu, r);
        if (wtype) {
            char extra[64];
            snprintf(extra, sizeof extra, "%s:%llx;",
                     wtype == 2 ? "watch" : wtype == 3 ? "rwatch" : "awatch",
                     (unsigned long long)hit);
            if (r == EXIT_ECALL) {           /* the syscall first, then stop */
                stop_next = true;
                strcpy(stop_next_extra, extra);
                return r;
            }
            stop(cpu, SIGTRAP, extra);
            continue;
        }
        if (r != EXIT_NONE) {
            /* An ecall (or exit request) for cpu_loop: a step over an ecall
             * stops once the syscall has run, at the next call. */
            if (stepping && r == EXIT_ECALL) {
                stop_next = true;
                stop_next_extra[0] = '\0';
            }
            return r;
        }
        if (stepping) {
            stop(cpu, SIGTRAP, NULL);
            continue;
        }
        if (cpu->exit_request)
            return EXIT_REQUEST;
    }
}

/* -- Setup and exit --------------------------------------------------------------- */

/* A forked child runs undebugged (gdb follows the parent). */
static void gdb_atfork_child(void)
{
    if (gdb_active)
        close(gdb_fd);
    gdb_active = false;
}

void gdb_init(int port, CPUState *cpu)
{
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                              .sin_addr.s_addr = htonl(INADDR_ANY) };
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 1) < 0) {
        fprintf(stderr, "xlat: gdbstub: cannot listen on port %d: %s\n", port, strerror(errno));
        exit(1);
    }
    fprintf(stderr, "xlat: waiting for gdb on port %d\n", port);
    do
        gdb_fd = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    while (gdb_fd < 0 && errno == EINTR);
    close(ls);
    if (gdb_fd < 0) {
        perror("xlat: gdbstub: accept");
        exit(1);
    }
    /* Keep the socket out of the guest's descriptor range. */
    int hi = fcntl(gdb_fd, F_DUPFD_CLOEXEC, 900);
    if (hi >= 0) {
        close(gdb_fd);
        gdb_fd = hi;
    }
    setsockopt(gdb_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    build_target_xml();
    pthread_atfork(NULL, NULL, gdb_atfork_child);
    gdb_tid = gettid();
    gdb_active = true;
    debugged_cpu = cpu;
    /* Stopped at the entry point: gdb asks why with '?'. */
    pending_resume = serve(cpu, SIGTRAP, NULL, &pending_deliver, false);
    stepping = pending_resume == RESUME_STEP;
    skip_bp_once = true;
    pthread_t t;
    sigset_t all, old;
    sigfillset(&all);                       /* guest signals go to guest threads */
    pthread_sigmask(SIG_SETMASK, &all, &old);
    if (gdb_active && pthread_create(&t, NULL, watcher, NULL) == 0)
        pthread_detach(t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    set_running(gdb_active);
}

void gdb_exit(int status, int signal)
{
    if (!gdb_active || gettid() != gdb_tid)
        return;
    char out[16];
    if (signal)
        snprintf(out, sizeof out, "X%02x", signal & 0xff);
    else
        snprintf(out, sizeof out, "W%02x", status & 0xff);
    if (signal != SIGKILL)
        put_packet(out);
    gdb_active = false;
    close(gdb_fd);
}
