/*
 * The gdb remote protocol core (exec/gdb_rsp.c) over a socketpair: packet
 * framing (checksums, acks and naks, escapes, Ctrl-C, EOF), hex, and the
 * packet loop against a fake two-thread target with the RISC-V registers
 * (riscv/gdb_target.c): registers, memory, thread selection and listing,
 * breakpoints and watchpoints, vCont actions, D.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exec/gdb_rsp.h"
#include "riscv/gdb_target.h"
#include "check.h"

static int sv[2];                       /* sv[0]: the stub's end; sv[1]: gdb's */

static void gdb_writes(const char *s) { CHECK(write(sv[1], s, strlen(s)) == (ssize_t)strlen(s)); }

/* Everything the stub has sent so far (gdb's end is non-blocking). */
static const char *stub_sent(void)
{
    static char buf[1 << 14];
    ssize_t n = read(sv[1], buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

/* "$data#cs" with its checksum. */
static const char *framed(const char *data)
{
    static char buf[512];
    unsigned sum = 0;
    for (const char *p = data; *p; p++)
        sum += (unsigned char)*p;
    snprintf(buf, sizeof buf, "$%s#%02x", data, sum & 0xff);
    return buf;
}

static void test_framing(void)
{
    char buf[64];
    gdb_writes(framed("m80000000,4"));
    CHECK_EQ(gdb_get_packet(sv[0], buf, sizeof buf), 11);
    CHECK(!strcmp(buf, "m80000000,4"));
    CHECK(!strcmp(stub_sent(), "+"));

    gdb_writes("junk$abc#00");              /* a bad checksum: nak, then the resend */
    gdb_writes(framed("abc"));
    CHECK_EQ(gdb_get_packet(sv[0], buf, sizeof buf), 3);
    CHECK(!strcmp(buf, "abc"));
    CHECK(!strcmp(stub_sent(), "-+"));

    /* "}]" is an escaped '}' (0x7d ^ 0x20 = 0x5d); the checksum covers the raw bytes. */
    gdb_writes("$X}]#32");
    CHECK_EQ(gdb_get_packet(sv[0], buf, sizeof buf), 2);
    CHECK(buf[0] == 'X' && buf[1] == '}');
    stub_sent();

    gdb_writes("\x03");
    CHECK_EQ(gdb_get_packet(sv[0], buf, sizeof buf), 1);
    CHECK(buf[0] == 3);

    gdb_writes("+");                        /* the ack put_packet waits for */
    gdb_put_packet(sv[0], "OK");
    CHECK(!strcmp(stub_sent(), "$OK#9a"));
    gdb_writes("-+");                       /* a nak: sent again */
    gdb_put_packet(sv[0], "E14");
    CHECK(!strcmp(stub_sent(), "$E14#aa$E14#aa"));
}

static void test_hex_and_points(void)
{
    char hex[32];
    uint8_t bytes[4] = { 0x00, 0x7f, 0xa5, 0xff }, back[4];
    gdb_hex_encode(hex, bytes, 4);
    CHECK(!strcmp(hex, "007fa5ff"));
    CHECK_EQ(gdb_hex_decode(back, "007FA5ffzz", 8), 4);
    CHECK(!memcmp(back, bytes, 4));
    CHECK_EQ(gdb_hex_decode(back, "0", 4), 0);

    GdbPoints p = { .nbp = 1, .bp = { { 0x1000, GDB_BP_HW } }, .nwp = 1,
                    .wp = { { 0x2000, 8, GDB_WP_WRITE } } };
    CHECK_EQ(gdb_break_at(&p, 0x1000), GDB_BP_HW);
    CHECK_EQ(gdb_break_at(&p, 0x1002), -1);
    CHECK(gdb_break_in(&p, 0x1000, 0x1001) && !gdb_break_in(&p, 0x1001, 0x2000));
    uint64_t hit = 0;
    CHECK(gdb_watch_hit(&p, 0x1ffc, 8, false, true, &hit) && hit == 0x2000);
    CHECK(!gdb_watch_hit(&p, 0x2000, 8, true, false, &hit));   /* a read: not a write watch */
    CHECK(!gdb_watch_hit(&p, 0x2008, 1, false, true, &hit));
    char why[32];
    gdb_watch_reason(&p.wp[0], 0x2004, why, sizeof why);
    CHECK(!strcmp(why, "watch:2004;"));
}

/* -- A fake target: threads 1 and 2, 16 bytes of memory at 0x1000 ------------------- */

static CPUState cpus[2];
static uint8_t ram[16];
static bool killed;

static int thread_count(void *o) { (void)o; return 2; }
static int64_t thread_id(void *o, int i) { (void)o; return i + 1; }
static CPUState *thread_cpu(void *o, int64_t t) { (void)o; return t == 1 || t == 2 ? &cpus[t - 1] : NULL; }

static size_t mem_read(void *o, CPUState *c, uint64_t a, void *buf, size_t len)
{
    (void)o;
    (void)c;
    size_t n = 0;
    for (; n < len && a + n - 0x1000 < sizeof ram; n++)
        ((uint8_t *)buf)[n] = ram[a + n - 0x1000];
    return n;
}

static bool mem_write(void *o, CPUState *c, uint64_t a, const void *buf, size_t len)
{
    (void)o;
    (void)c;
    if (a < 0x1000 || a + len > 0x1000 + sizeof ram)
        return false;
    memcpy(ram + (a - 0x1000), buf, len);
    return true;
}

static void kill_target(void *o) { (void)o; killed = true; }

static const GdbTarget target = {
    .xml = "<target/>", .g_regs = RISCV_GDB_G_REGS, .pc_regno = RISCV_GDB_PC,
    .expedite = riscv_gdb_expedite, .attached = true,
    .reg_read = riscv_gdb_reg_read, .reg_write = riscv_gdb_reg_write,
    .thread_count = thread_count, .thread_id = thread_id, .thread_cpu = thread_cpu,
    .mem_read = mem_read, .mem_write = mem_write, .kill = kill_target,
};

/* gdb sends each packet (acking each reply); the stub's replies, in order,
 * must be the expected ones (NULL: none, the packet resumed). */
static GdbResume exchange(GdbSession *s, const char *const *pkts, const char *const *want)
{
    char in[4096] = "", expect[8192] = "";
    for (int i = 0; pkts[i]; i++) {
        strcat(in, framed(pkts[i]));
        strcat(expect, "+");
        if (want[i]) {
            strcat(in, "+");
            strcat(expect, framed(want[i]));
        }
    }
    gdb_writes(in);
    GdbStop stop = { .thread = 1, .signal = 5, .detail = "swbreak:;" };
    GdbResume r = gdb_serve(s, &stop, false);
    const char *got = stub_sent();
    if (strcmp(got, expect)) {
        printf("FAIL %s:%d: the stub sent\n  %s\nexpected\n  %s\n", __FILE__, __LINE__, got, expect);
        failures++;
    }
    return r;
}

static void test_serve(void)
{
    GdbSession s;
    gdb_session_init(&s, sv[0], &target, NULL);
    cpus[0].x[2] = 0x10;
    cpus[0].pc = 0x1000;
    cpus[1].pc = 0x2000;
    memcpy(ram, "\x11\x22\x33\x44", 4);
    const char *pkts[] = {
        "?", "qfThreadInfo", "qsThreadInfo", "qAttached", "Hg2", "p20", "P5=2a00000000000000",
        "Hg1", "p5", "Hg3", "m1000,4", "M1004,2:abcd", "m1004,2", "m2000,1", "Z0,1000,4",
        "Z2,1008,8", "z0,1000,4", "Z9,0,0", "T2", "T7", "vMustReplyEmpty", "vCont?",
        "qXfer:features:read:target.xml:0,4", "qXfer:features:read:target.xml:4,10",
        "vCont;s:2;c", NULL,
    };
    const char *want[] = {
        "T05thread:1;20:0010000000000000;02:1000000000000000;swbreak:;", "m1,2", "l", "1",
        "OK", "0020000000000000", "OK", "OK", "0000000000000000", "E22", "11223344", "OK",
        "abcd", "E14", "OK", "OK", "OK", "", "OK", "E01", "", "vCont;c;C;s;S",
        "m<tar", "lget/>", NULL,
    };
    GdbResume r = exchange(&s, pkts, want);
    CHECK_EQ(cpus[1].x[5], 0x2a);          /* P wrote thread 2's t0 */
    CHECK_EQ(s.points.nbp, 0);
    CHECK_EQ(s.points.nwp, 1);
    CHECK_EQ(r.kind, GDB_RESUME);
    int sig;
    CHECK_EQ(gdb_resume_action(&r, 2, &sig), GDB_ACT_STEP);
    CHECK_EQ(gdb_resume_action(&r, 1, &sig), GDB_ACT_CONT);

    const char *pkts2[] = { "C0b;3000", NULL };     /* continue with a signal, at a pc */
    const char *want2[] = { NULL };
    r = exchange(&s, pkts2, want2);
    CHECK_EQ(gdb_resume_action(&r, 2, &sig), GDB_ACT_CONT);
    CHECK_EQ(sig, 0xb);
    CHECK_EQ(cpus[0].pc, 0x3000);

    const char *pkts3[] = { "k", "D", NULL };
    const char *want3[] = { "", "OK" };
    r = exchange(&s, pkts3, want3);
    CHECK(killed);
    CHECK_EQ(r.kind, GDB_DETACH);
    CHECK_EQ(s.points.nwp, 0);              /* D forgets the points */

    shutdown(sv[1], SHUT_WR);               /* gdb goes away */
    GdbStop stop = { .thread = 1, .signal = 5 };
    r = gdb_serve(&s, &stop, false);
    CHECK_EQ(r.kind, GDB_CLOSED);
}

int main(void)
{
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0)
        return perror("socketpair"), 1;
    fcntl(sv[1], F_SETFL, O_NONBLOCK);
    test_framing();
    test_hex_and_points();
    test_serve();
    if (failures == 0)
        printf("test_gdb_rsp: ok\n");
    return failures != 0;
}
