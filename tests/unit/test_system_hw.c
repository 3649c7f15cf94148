/*
 * System mode's devices (src/system/hw) through the machine's bus, as a
 * hart reaches them: machine_find_mmio(pa)->ops->read/write.
 *   - PLIC: priorities and thresholds (WARL), enables, claim order
 *     (priority, then lowest id), claim/complete of level-triggered
 *     sources, MEIP/SEIP per context, unimplemented registers;
 *   - ACLINT: msip -> MSIP, both halves of mtimecmp and the hart's
 *     notification, mtime advancing at MTIME_HZ, mtime writes (both
 *     halves, MTIP compared again, the timers re-armed, the deadlines);
 *   - ns16550a UART: output to a pipe, LSR/IIR/MSR bits, DLAB, interrupts
 *     (THRE, received data, timeout, modem status), the 16-byte FIFO and
 *     overrun in loopback, host input through a pipe with flow control,
 *     the ctrl-a escapes, raw mode of a terminal and its restoration
 *     (on exit and on SIGTERM, in forked children on a pty);
 *   - goldfish RTC: time near the host's, setting it, alarms;
 *   - sifive_test: poweroff, reboot and failure codes.
 *
 * The harts are a static array. The three hart functions the devices and
 * machine.c call are defined here as weak fakes (mip bits in
 * cpu.priv.mip, calls counted), so this test links with machine.c and
 * the hw/ devices alone; linked with the real hart.c, its definitions win and the
 * checks that count the fakes' calls are skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "riscv/priv.h"
#include "system/hart.h"
#include "system/hw/aclint.h"
#include "system/hw/plic.h"
#include "system/hw/rtc.h"
#include "system/hw/test_dev.h"
#include "system/hw/uart.h"
#include "system/machine.h"
#include "check.h"

/* -- Fake harts ----------------------------------------------------------- */

#define NHARTS 2

static Hart harts[NHARTS];
static unsigned timer_changes[NHARTS];
static unsigned kicks;

__attribute__((weak)) void hart_set_mip(Hart *h, uint64_t mask, bool on)
{
    if (on)
        __atomic_fetch_or(&h->cpu.priv.mip, mask, __ATOMIC_SEQ_CST);
    else
        __atomic_fetch_and(&h->cpu.priv.mip, ~mask, __ATOMIC_SEQ_CST);
}

__attribute__((weak)) void hart_timer_changed(Hart *h)
{
    __atomic_fetch_add(&timer_changes[h->id], 1, __ATOMIC_SEQ_CST);
}

__attribute__((weak)) void hart_kick(Hart *h)
{
    (void)h;
    __atomic_fetch_add(&kicks, 1, __ATOMIC_SEQ_CST);
}

/* Null unless the real hart.c is linked: then the fakes above are not. */
extern Hart *hart_create(unsigned id) __attribute__((weak));

static bool fake_harts(void)
{
    return hart_create == NULL;
}

static uint64_t mip(unsigned hart)
{
    return __atomic_load_n(&harts[hart].cpu.priv.mip, __ATOMIC_SEQ_CST);
}

static void machine_setup(void)
{
    machine.nharts = NHARTS;
    for (unsigned i = 0; i < NHARTS; i++) {
        harts[i].id = i;
        harts[i].mtimecmp = UINT64_MAX;
        pthread_mutex_init(&harts[i].lock, NULL);
        machine.harts[i] = &harts[i];
    }
}

static void exit_reset(void)
{
    pthread_mutex_lock(&machine.lock);
    machine.exit_requested = false;
    machine.exit_status = 0;
    machine.reboot = false;
    pthread_mutex_unlock(&machine.lock);
}

static bool exit_requested(void)
{
    pthread_mutex_lock(&machine.lock);
    bool r = machine.exit_requested;
    pthread_mutex_unlock(&machine.lock);
    return r;
}

/* -- The bus -------------------------------------------------------------- */

static uint64_t rd(uint64_t pa, unsigned size)
{
    const MmioRegion *r = machine_find_mmio(pa);
    if (!r) {
        printf("FAIL: no device at %#llx\n", (unsigned long long)pa);
        failures++;
        return 0;
    }
    return r->ops->read(r->opaque, pa - r->base, size);
}

static void wr(uint64_t pa, unsigned size, uint64_t val)
{
    const MmioRegion *r = machine_find_mmio(pa);
    if (!r) {
        printf("FAIL: no device at %#llx\n", (unsigned long long)pa);
        failures++;
        return;
    }
    r->ops->write(r->opaque, pa - r->base, size, val);
}

static uint64_t rd32(uint64_t pa) { return rd(pa, 4); }
static void wr32(uint64_t pa, uint64_t val) { wr(pa, 4, val); }

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static uint64_t now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* -- PLIC ----------------------------------------------------------------- */

#define PLIC_PRIO(irq)       (VIRT_PLIC_BASE + 4 * (irq))
#define PLIC_PENDING(w)      (VIRT_PLIC_BASE + 0x1000 + 4 * (w))
#define PLIC_ENABLE(ctx, w)  (VIRT_PLIC_BASE + 0x2000 + 0x80 * (ctx) + 4 * (w))
#define PLIC_THRESHOLD(ctx)  (VIRT_PLIC_BASE + 0x200000 + 0x1000 * (ctx))
#define PLIC_CLAIM(ctx)      (PLIC_THRESHOLD(ctx) + 4)

/* Contexts of the two harts. */
enum { CTX_M0, CTX_S0, CTX_M1, CTX_S1, CTX_NONE };

static bool line_pending(unsigned irq)
{
    return rd32(PLIC_PENDING(irq / 32)) >> (irq % 32) & 1;
}

static void plic_registers(void)
{
    wr32(PLIC_PRIO(5), 0xff);
    CHECK_EQ(rd32(PLIC_PRIO(5)), 7);                 /* 3 bits, WARL */
    wr32(PLIC_PRIO(5), 0);
    wr32(PLIC_PRIO(0), 3);
    CHECK_EQ(rd32(PLIC_PRIO(0)), 0);                 /* source 0 does not exist */
    wr32(PLIC_PRIO(96), 3);
    CHECK_EQ(rd32(PLIC_PRIO(96)), 0);                /* nor does 96 */
    wr32(PLIC_PRIO(95), 1);
    CHECK_EQ(rd32(PLIC_PRIO(95)), 1);
    wr32(PLIC_PRIO(95), 0);
    CHECK_EQ(rd(PLIC_PRIO(95), 8), 0);               /* 4-byte registers only */

    wr32(PLIC_ENABLE(CTX_S0, 0), 0xffffffff);
    CHECK_EQ(rd32(PLIC_ENABLE(CTX_S0, 0)), 0xfffffffe);
    wr32(PLIC_ENABLE(CTX_S0, 2), 0xffffffff);
    CHECK_EQ(rd32(PLIC_ENABLE(CTX_S0, 2)), 0xffffffff);   /* sources 64..95 */
    wr32(PLIC_ENABLE(CTX_S0, 3), 0xffffffff);
    CHECK_EQ(rd32(PLIC_ENABLE(CTX_S0, 3)), 0);
    wr32(PLIC_ENABLE(CTX_S0, 0), 0);
    wr32(PLIC_ENABLE(CTX_S0, 2), 0);

    wr32(PLIC_THRESHOLD(CTX_S1), 0x1f);
    CHECK_EQ(rd32(PLIC_THRESHOLD(CTX_S1)), 7);
    wr32(PLIC_THRESHOLD(CTX_S1), 0);

    wr32(PLIC_ENABLE(CTX_NONE, 0), 0xff);            /* context 4: no hart 2 */
    CHECK_EQ(rd32(PLIC_ENABLE(CTX_NONE, 0)), 0);
    wr32(PLIC_THRESHOLD(CTX_NONE), 3);
    CHECK_EQ(rd32(PLIC_THRESHOLD(CTX_NONE)), 0);
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_NONE)), 0);
    CHECK_EQ(rd32(PLIC_THRESHOLD(CTX_S0) + 8), 0);   /* reserved */
    wr32(PLIC_PENDING(0), 0xff);                     /* read-only */
    CHECK_EQ(rd32(PLIC_PENDING(0)), 0);
}

static void plic_claim_order(void)
{
    wr32(PLIC_PRIO(3), 2);
    wr32(PLIC_PRIO(5), 2);
    wr32(PLIC_PRIO(7), 5);
    wr32(PLIC_ENABLE(CTX_S0, 0), 1u << 3 | 1u << 5 | 1u << 7);
    wr32(PLIC_THRESHOLD(CTX_S0), 1);

    machine_set_irq(3, true);
    machine_set_irq(5, true);
    CHECK(mip(0) & MIP_SEIP);
    CHECK(!(mip(0) & MIP_MEIP));
    CHECK(!(mip(1) & (MIP_SEIP | MIP_MEIP)));
    CHECK_EQ(rd32(PLIC_PENDING(0)), 1u << 3 | 1u << 5);

    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 3);           /* equal priority: lowest id */
    CHECK_EQ(rd32(PLIC_PENDING(0)), 1u << 5);        /* claimed: not pending */
    CHECK(mip(0) & MIP_SEIP);
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 5);
    CHECK(!(mip(0) & MIP_SEIP));
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 0);

    machine_set_irq(7, true);
    CHECK(mip(0) & MIP_SEIP);
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 7);

    /* Complete with the lines still high: pending again. */
    wr32(PLIC_CLAIM(CTX_S0), 3);
    wr32(PLIC_CLAIM(CTX_S0), 5);
    CHECK_EQ(rd32(PLIC_PENDING(0)), 1u << 3 | 1u << 5);
    CHECK(mip(0) & MIP_SEIP);
    wr32(PLIC_PRIO(5), 4);                           /* priority beats id */
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 5);
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 3);
    CHECK(!(mip(0) & MIP_SEIP));

    /* Thresholds: only priorities above count. */
    wr32(PLIC_CLAIM(CTX_S0), 3);
    wr32(PLIC_CLAIM(CTX_S0), 5);
    wr32(PLIC_CLAIM(CTX_S0), 7);
    wr32(PLIC_THRESHOLD(CTX_S0), 5);                 /* 7 has 5: not above */
    CHECK(!(mip(0) & MIP_SEIP));
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 0);
    wr32(PLIC_THRESHOLD(CTX_S0), 4);
    CHECK(mip(0) & MIP_SEIP);
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_S0)), 7);
    CHECK(!(mip(0) & MIP_SEIP));                     /* 5 has 4: not above */

    /* A line that drops while claimed is not pending after complete. */
    machine_set_irq(7, false);
    wr32(PLIC_CLAIM(CTX_S0), 7);
    CHECK(!line_pending(7));
    wr32(PLIC_THRESHOLD(CTX_S0), 0);
    CHECK(mip(0) & MIP_SEIP);                        /* 3 and 5 */
    wr32(PLIC_ENABLE(CTX_S0, 0), 0);                 /* disabled: no output */
    CHECK(!(mip(0) & MIP_SEIP));
    CHECK(line_pending(3) && line_pending(5));
    machine_set_irq(3, false);
    machine_set_irq(5, false);
    CHECK_EQ(rd32(PLIC_PENDING(0)), 0);
    wr32(PLIC_PRIO(3), 0);
    wr32(PLIC_PRIO(5), 0);
    wr32(PLIC_PRIO(7), 0);
}

static void plic_contexts(void)
{
    wr32(PLIC_PRIO(40), 1);
    wr32(PLIC_ENABLE(CTX_M0, 1), 1u << 8);
    wr32(PLIC_ENABLE(CTX_M1, 1), 1u << 8);
    machine_set_irq(40, true);
    CHECK(mip(0) & MIP_MEIP);
    CHECK(mip(1) & MIP_MEIP);
    CHECK(!(mip(0) & MIP_SEIP) && !(mip(1) & MIP_SEIP));

    CHECK_EQ(rd32(PLIC_CLAIM(CTX_M1)), 40);          /* claimed for everyone */
    CHECK(!(mip(0) & MIP_MEIP) && !(mip(1) & MIP_MEIP));
    CHECK_EQ(rd32(PLIC_CLAIM(CTX_M0)), 0);
    wr32(PLIC_CLAIM(CTX_S1), 40);                    /* not enabled there: ignored */
    CHECK(!line_pending(40));
    wr32(PLIC_CLAIM(CTX_M1), 40);
    CHECK(line_pending(40));
    CHECK(mip(0) & MIP_MEIP);
    CHECK(mip(1) & MIP_MEIP);

    wr32(PLIC_PRIO(40), 0);                          /* priority 0: never */
    CHECK(!(mip(0) & MIP_MEIP) && !(mip(1) & MIP_MEIP));
    wr32(PLIC_PRIO(40), 1);
    machine_set_irq(40, false);
    CHECK(!(mip(0) & MIP_MEIP) && !(mip(1) & MIP_MEIP));
    machine_set_irq(0, true);                        /* no such sources: ignored */
    machine_set_irq(96, true);
    CHECK_EQ(rd32(PLIC_PENDING(0)) | rd32(PLIC_PENDING(1)) | rd32(PLIC_PENDING(2)), 0);
    wr32(PLIC_ENABLE(CTX_M0, 1), 0);
    wr32(PLIC_ENABLE(CTX_M1, 1), 0);
    wr32(PLIC_PRIO(40), 0);
}

/* Route source irq to hart 0's S context, so its line shows in SEIP too. */
static void plic_route(unsigned irq)
{
    wr32(PLIC_PRIO(irq), 1);
    uint64_t en = rd32(PLIC_ENABLE(CTX_S0, irq / 32));
    wr32(PLIC_ENABLE(CTX_S0, irq / 32), en | 1u << (irq % 32));
}

/* -- ACLINT --------------------------------------------------------------- */

#define MSIP(h)      (VIRT_ACLINT_BASE + 4 * (h))
#define MTIMECMP(h)  (VIRT_ACLINT_BASE + 0x4000 + 8 * (h))
#define MTIME        (VIRT_ACLINT_BASE + 0xbff8)

static void aclint_msip(void)
{
    wr32(MSIP(1), 1);
    CHECK(mip(1) & MIP_MSIP);
    CHECK(!(mip(0) & MIP_MSIP));
    CHECK_EQ(rd32(MSIP(1)), 1);
    CHECK_EQ(rd32(MSIP(0)), 0);
    wr32(MSIP(1), 0xfffffffe);                       /* bit 0 only */
    CHECK(!(mip(1) & MIP_MSIP));
    CHECK_EQ(rd32(MSIP(1)), 0);
    wr32(MSIP(0), 1);
    CHECK(mip(0) & MIP_MSIP);
    wr32(MSIP(0), 0);
    CHECK(!(mip(0) & MIP_MSIP));
    wr32(MSIP(2), 1);                                /* no hart 2 */
    CHECK_EQ(rd32(MSIP(2)), 0);
}

static void aclint_mtimecmp(void)
{
    unsigned before = timer_changes[0];
    wr(MTIMECMP(0), 8, 0x1122334455667788ULL);
    CHECK_EQ(harts[0].mtimecmp, 0x1122334455667788ULL);
    wr32(MTIMECMP(0) + 4, 0xaabbccdd);
    CHECK_EQ(harts[0].mtimecmp, 0xaabbccdd55667788ULL);
    wr32(MTIMECMP(0), 0x01020304);
    CHECK_EQ(harts[0].mtimecmp, 0xaabbccdd01020304ULL);
    CHECK_EQ(rd32(MTIMECMP(0)), 0x01020304);
    CHECK_EQ(rd32(MTIMECMP(0) + 4), 0xaabbccdd);
    CHECK_EQ(rd(MTIMECMP(0), 8), 0xaabbccdd01020304ULL);
    CHECK_EQ(harts[1].mtimecmp, UINT64_MAX);
    if (fake_harts()) {
        CHECK_EQ(timer_changes[0], before + 3);
        CHECK_EQ(timer_changes[1], 0);
    }
    wr(MTIMECMP(1), 8, 42);
    CHECK_EQ(harts[1].mtimecmp, 42);
    CHECK_EQ(harts[0].mtimecmp, 0xaabbccdd01020304ULL);
    wr(MTIMECMP(0) + 4, 8, 7);                       /* misaligned: ignored */
    CHECK_EQ(harts[0].mtimecmp, 0xaabbccdd01020304ULL);
    wr(MTIMECMP(2), 8, 1);                           /* no hart 2 */
    CHECK_EQ(rd(MTIMECMP(2), 8), 0);
    wr(MTIMECMP(0), 8, UINT64_MAX);
    wr(MTIMECMP(1), 8, UINT64_MAX);
}

static void aclint_mtime(void)
{
    uint64_t t0 = rd(MTIME, 8);
    uint64_t h0 = now_ns(CLOCK_MONOTONIC);
    sleep_ms(20);
    uint64_t t1 = rd(MTIME, 8);
    uint64_t ticks = (now_ns(CLOCK_MONOTONIC) - h0) / (1000000000ULL / MTIME_HZ);
    CHECK(t1 > t0);
    CHECK(t1 - t0 >= MTIME_HZ / 50 - MTIME_HZ / 500);   /* 20 ms at 10 MHz, less 2 ms */
    CHECK(t1 - t0 <= ticks + MTIME_HZ / 500);
    CHECK_EQ(rd32(MTIME + 4), rd(MTIME, 8) >> 32);
    uint64_t full = rd(MTIME, 8);
    CHECK((uint32_t)(rd32(MTIME) - (uint32_t)full) < MTIME_HZ / 10);   /* the low half */

    /* Writable: 8 bytes or a half; it counts on from the value written. */
    uint64_t k = timer_changes[0];
    wr(MTIME, 8, 1ULL << 40);
    uint64_t m = rd(MTIME, 8);
    CHECK(m >= 1ULL << 40 && m - (1ULL << 40) < MTIME_HZ);
    if (fake_harts())
        CHECK(timer_changes[0] > k);                 /* the harts re-arm their timers */
    wr32(MTIME + 4, 7);
    CHECK_EQ(rd(MTIME, 8) >> 32, 7);
    wr32(MTIME, 0);
    CHECK(rd32(MTIME) < MTIME_HZ);
    CHECK_EQ(rd32(MTIME + 4), 7);
    harts[0].mtimecmp = (7ULL << 32) + 10 * MTIME_HZ;
    CHECK(!(mip(0) & MIP_MTIP));
    wr(MTIME, 8, (7ULL << 32) + 11 * MTIME_HZ);      /* past hart 0's mtimecmp */
    CHECK(mip(0) & MIP_MTIP);
    wr(MTIME, 8, t1);                                /* back */
    CHECK(!(mip(0) & MIP_MTIP));
    harts[0].mtimecmp = UINT64_MAX;
    struct timespec ts;
    uint64_t before = now_ns(CLOCK_MONOTONIC);
    machine_mtime_deadline(rd(MTIME, 8) + MTIME_HZ / 100, &ts);   /* 10 ms on */
    uint64_t at = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    CHECK(at >= before + 9000000 && at <= before + 11000000 + 50000000);
    machine_mtime_deadline(0, &ts);                  /* passed: now */
    at = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
    CHECK(at >= before && at <= now_ns(CLOCK_MONOTONIC));
}

/* -- sifive_test ---------------------------------------------------------- */

static void test_finisher(void)
{
    unsigned k = kicks;
    exit_reset();
    wr32(VIRT_TEST_BASE, 0x1234);                    /* not a command */
    wr32(VIRT_TEST_BASE + 4, 0x5555);                /* not the register */
    CHECK(!exit_requested());
    CHECK_EQ(rd32(VIRT_TEST_BASE), 0);

    wr32(VIRT_TEST_BASE, 0x5555);
    CHECK(exit_requested());
    CHECK_EQ(machine.exit_status, 0);
    CHECK(!machine.reboot);
    if (fake_harts())
        CHECK_EQ(kicks, k + NHARTS);                 /* every hart leaves its loop */

    exit_reset();
    wr32(VIRT_TEST_BASE, 0x7777);
    CHECK(exit_requested());
    CHECK(machine.reboot);

    exit_reset();
    wr32(VIRT_TEST_BASE, 3u << 16 | 0x3333);
    CHECK(exit_requested());
    CHECK_EQ(machine.exit_status, 3);
    CHECK(!machine.reboot);
    wr32(VIRT_TEST_BASE, 0x5555);                    /* the first request wins */
    CHECK_EQ(machine.exit_status, 3);
    exit_reset();
}

/* -- goldfish RTC --------------------------------------------------------- */

enum { RTC_TIME_LOW = 0x00, RTC_TIME_HIGH = 0x04, RTC_ALARM_LOW = 0x08, RTC_ALARM_HIGH = 0x0c,
       RTC_IRQ_ENABLED = 0x10, RTC_CLEAR_ALARM = 0x14, RTC_ALARM_STATUS = 0x18,
       RTC_CLEAR_INTERRUPT = 0x1c };

static uint64_t rtc_time(void)
{
    uint64_t lo = rd32(VIRT_RTC_BASE + RTC_TIME_LOW);
    return rd32(VIRT_RTC_BASE + RTC_TIME_HIGH) << 32 | lo;
}

static void rtc_set_alarm(uint64_t at)
{
    wr32(VIRT_RTC_BASE + RTC_ALARM_HIGH, at >> 32);
    wr32(VIRT_RTC_BASE + RTC_ALARM_LOW, (uint32_t)at);
}

static bool wait_line(unsigned irq, bool level, unsigned ms)
{
    for (unsigned i = 0; i < ms && line_pending(irq) != level; i++)
        sleep_ms(1);
    return line_pending(irq) == level;
}

static void rtc_time_checks(void)
{
    uint64_t host = now_ns(CLOCK_REALTIME);
    uint64_t t = rtc_time();
    CHECK(t >= host && t - host < 1000000000ULL);
    uint64_t high = rd32(VIRT_RTC_BASE + RTC_TIME_HIGH);
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_TIME_HIGH), high);  /* the latch */
    CHECK_EQ(high, t >> 32);

    uint64_t target = 1000000000000000000ULL;        /* 2001-09-09 */
    wr32(VIRT_RTC_BASE + RTC_TIME_HIGH, target >> 32);
    wr32(VIRT_RTC_BASE + RTC_TIME_LOW, (uint32_t)target);
    t = rtc_time();
    CHECK(t >= target && t - target < 1000000000ULL);
    host = now_ns(CLOCK_REALTIME);
    wr32(VIRT_RTC_BASE + RTC_TIME_HIGH, host >> 32);
    wr32(VIRT_RTC_BASE + RTC_TIME_LOW, (uint32_t)host);
    t = rtc_time();
    CHECK(t >= host && t - host < 1000000000ULL);
    CHECK_EQ(rd(VIRT_RTC_BASE + RTC_TIME_LOW, 8), 0);  /* 4-byte registers only */
}

static void rtc_alarms(void)
{
    plic_route(VIRT_RTC_IRQ);
    wr32(VIRT_RTC_BASE + RTC_IRQ_ENABLED, 1);
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_IRQ_ENABLED), 1);

    uint64_t start = now_ns(CLOCK_MONOTONIC);
    rtc_set_alarm(rtc_time() + 100000000ULL);        /* in 100 ms */
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_ALARM_STATUS), 1);
    CHECK(!line_pending(VIRT_RTC_IRQ));
    CHECK(wait_line(VIRT_RTC_IRQ, true, 2000));
    CHECK(now_ns(CLOCK_MONOTONIC) - start >= 90000000ULL);
    CHECK(mip(0) & MIP_SEIP);
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_ALARM_STATUS), 0);
    wr32(VIRT_RTC_BASE + RTC_CLEAR_INTERRUPT, 1);
    CHECK(!line_pending(VIRT_RTC_IRQ));

    rtc_set_alarm(rtc_time() - 1000);                /* past: fires at once */
    CHECK(line_pending(VIRT_RTC_IRQ));
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_ALARM_STATUS), 0);
    wr32(VIRT_RTC_BASE + RTC_IRQ_ENABLED, 0);        /* masked */
    CHECK(!line_pending(VIRT_RTC_IRQ));
    wr32(VIRT_RTC_BASE + RTC_IRQ_ENABLED, 1);
    CHECK(line_pending(VIRT_RTC_IRQ));
    wr32(VIRT_RTC_BASE + RTC_CLEAR_INTERRUPT, 1);
    CHECK(!line_pending(VIRT_RTC_IRQ));

    uint64_t at = rtc_time() + 50000000ULL;
    rtc_set_alarm(at);
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_ALARM_LOW), (uint32_t)at);
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_ALARM_HIGH), at >> 32);
    wr32(VIRT_RTC_BASE + RTC_CLEAR_ALARM, 1);
    CHECK_EQ(rd32(VIRT_RTC_BASE + RTC_ALARM_STATUS), 0);
    sleep_ms(150);
    CHECK(!line_pending(VIRT_RTC_IRQ));              /* disarmed: never fires */
    wr32(VIRT_RTC_BASE + RTC_IRQ_ENABLED, 0);
}

/* -- UART ----------------------------------------------------------------- */

enum { RBR = 0, THR = 0, DLL = 0, IER = 1, DLM = 1, IIR = 2, FCR = 2, LCR = 3, MCR = 4,
       LSR = 5, MSR = 6, SCR = 7 };

static int uart_in = -1, uart_out = -1;      /* our ends of the UART's pipes */

static uint64_t urd(unsigned reg) { return rd(VIRT_UART0_BASE + reg, 1); }
static void uwr(unsigned reg, uint8_t v) { wr(VIRT_UART0_BASE + reg, 1, v); }

static void host_type(const char *s, size_t n)
{
    CHECK_EQ(write(uart_in, s, n), n);
}

/* What the UART wrote to the host since the last call (waiting up to ms
 * for at least want bytes). */
static size_t host_output(char *buf, size_t cap, size_t want, unsigned ms)
{
    size_t have = 0;
    for (;;) {
        struct pollfd pfd = { .fd = uart_out, .events = POLLIN };
        if (have >= want || poll(&pfd, 1, have >= want ? 0 : (int)ms) <= 0)
            break;
        ssize_t n = read(uart_out, buf + have, cap - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    buf[have] = 0;
    return have;
}

static bool wait_rx(unsigned ms)
{
    for (unsigned i = 0; i < ms && !(urd(LSR) & 0x01); i++)
        sleep_ms(1);
    return urd(LSR) & 0x01;
}

static void uart_reset_state(void)
{
    char buf[256];
    CHECK_EQ(urd(LSR), 0x60);                        /* THRE | TEMT */
    CHECK_EQ(urd(IIR), 0x01);                        /* no interrupt */
    CHECK_EQ(urd(MSR), 0xb0);                        /* DCD | DSR | CTS */
    CHECK_EQ(urd(IER), 0);
    uwr(THR, 'A');
    CHECK_EQ(host_output(buf, sizeof buf, 1, 1000), 1);
    CHECK_EQ(buf[0], 'A');
    uwr(SCR, 0x5a);
    CHECK_EQ(urd(SCR), 0x5a);
}

static void uart_thre_irq(void)
{
    char buf[256];
    plic_route(VIRT_UART0_IRQ);
    uwr(IER, 0x02);                                  /* ETBEI */
    CHECK_EQ(urd(IER), 0x02);
    CHECK(line_pending(VIRT_UART0_IRQ));
    CHECK(mip(0) & MIP_SEIP);
    CHECK_EQ(urd(IIR), 0x02);                        /* THR empty; read: acknowledged */
    CHECK_EQ(urd(IIR), 0x01);
    CHECK(!line_pending(VIRT_UART0_IRQ));
    CHECK(!(mip(0) & MIP_SEIP));
    uwr(THR, 'B');                                   /* sent at once: empty again */
    CHECK(line_pending(VIRT_UART0_IRQ));
    CHECK_EQ(urd(IIR), 0x02);
    uwr(IER, 0);
    uwr(IER, 0x02);                                  /* re-enabling re-asserts */
    CHECK_EQ(urd(IIR), 0x02);
    uwr(IER, 0);
    CHECK(!line_pending(VIRT_UART0_IRQ));
    CHECK_EQ(host_output(buf, sizeof buf, 1, 1000), 1);
    CHECK_EQ(buf[0], 'B');
}

static void uart_dlab(void)
{
    char buf[256];
    uwr(IER, 0x05);
    uwr(LCR, 0x83);                                  /* DLAB, 8 bits */
    uwr(DLL, 0x12);
    uwr(DLM, 0x34);
    CHECK_EQ(urd(DLL), 0x12);
    CHECK_EQ(urd(DLM), 0x34);
    CHECK_EQ(host_output(buf, sizeof buf, 0, 50), 0);   /* DLL is not THR */
    uwr(LCR, 0x03);
    CHECK_EQ(urd(LCR), 0x03);
    CHECK_EQ(urd(IER), 0x05);                        /* DLM is not IER */
    uwr(THR, 'C');
    CHECK_EQ(host_output(buf, sizeof buf, 1, 1000), 1);
    CHECK_EQ(buf[0], 'C');
    uwr(LCR, 0x83);
    CHECK_EQ(urd(DLL), 0x12);
    uwr(LCR, 0x03);
    uwr(IER, 0);
}

static void uart_input(void)
{
    uwr(IER, 0x01);                                  /* ERBFI */
    host_type("z", 1);
    CHECK(wait_rx(2000));
    CHECK_EQ(urd(IIR), 0x04);                        /* data available, no FIFO */
    CHECK(line_pending(VIRT_UART0_IRQ));
    CHECK_EQ(urd(RBR), 'z');
    CHECK_EQ(urd(LSR), 0x60);
    CHECK(!line_pending(VIRT_UART0_IRQ));

    /* Without the FIFO one byte waits in the holding register, the rest
     * in the host: nothing is lost. */
    host_type("xyz", 3);
    char got[4] = { 0 };
    for (int i = 0; i < 3; i++) {
        CHECK(wait_rx(2000));
        got[i] = (char)urd(RBR);
    }
    CHECK(!strcmp(got, "xyz"));
    CHECK_EQ(urd(LSR), 0x60);                        /* no overrun */
}

static void uart_fifo(void)
{
    uwr(FCR, 0xc7);                                  /* FIFO on, cleared, trigger 14 */
    CHECK_EQ(urd(IIR), 0xc1);
    host_type("hello", 5);
    CHECK(wait_rx(2000));
    sleep_ms(20);
    CHECK_EQ(urd(IIR), 0xcc);                        /* below the trigger: timeout */
    char got[6] = { 0 };
    for (int i = 0; i < 5; i++)
        got[i] = (char)urd(RBR);
    CHECK(!strcmp(got, "hello"));
    CHECK_EQ(urd(IIR), 0xc1);

    /* 40 bytes through a 16-byte FIFO: in order, none lost. */
    char msg[41], in[41] = { 0 };
    for (int i = 0; i < 40; i++)
        msg[i] = (char)('0' + i);
    msg[40] = 0;
    host_type(msg, 40);
    CHECK(wait_rx(2000));
    sleep_ms(20);
    CHECK_EQ(urd(IIR), 0xc4);                        /* 16 >= 14: data available */
    for (int i = 0; i < 40 && wait_rx(2000); i++)
        in[i] = (char)urd(RBR);
    CHECK(!strcmp(in, msg));
    CHECK_EQ(urd(LSR), 0x60);
    uwr(IER, 0);
}

static void uart_loopback(void)
{
    char buf[256];
    uwr(MCR, 0x1f);                                  /* loop, DTR, RTS, OUT1, OUT2 */
    CHECK_EQ(urd(MSR), 0xf0);                        /* RI rose: no delta */
    uwr(MCR, 0x10);
    CHECK_EQ(urd(MSR), 0x0f);                        /* all fell */
    CHECK_EQ(urd(MSR), 0x00);                        /* read: deltas cleared */
    uwr(IER, 0x08);
    uwr(MCR, 0x12);                                  /* RTS -> CTS */
    CHECK_EQ(urd(IIR), 0xc0);                        /* modem status */
    CHECK_EQ(urd(MSR), 0x11);
    CHECK_EQ(urd(IIR), 0xc1);

    for (int i = 0; i < 17; i++)
        uwr(THR, (uint8_t)('a' + i));
    CHECK_EQ(host_output(buf, sizeof buf, 0, 50), 0);   /* looped, not sent */
    CHECK_EQ(urd(LSR), 0x63);                        /* DR, OE: 17 into 16 */
    CHECK_EQ(urd(LSR), 0x61);
    int ok = 1;
    for (int i = 0; i < 16; i++)
        ok &= urd(RBR) == (uint64_t)('a' + i);
    CHECK(ok);
    CHECK_EQ(urd(LSR), 0x60);

    uwr(FCR, 0);                                     /* one holding byte */
    CHECK_EQ(urd(IIR) & 0xc0, 0);
    uwr(THR, 'p');
    uwr(THR, 'q');
    CHECK_EQ(urd(LSR), 0x63);                        /* overrun: overwritten */
    CHECK_EQ(urd(RBR), 'q');
    CHECK_EQ(urd(LSR), 0x60);

    uwr(IER, 0);
    uwr(MCR, 0x0b);                                  /* DTR, RTS, OUT2: Linux's */
    CHECK_EQ(urd(MSR) & 0xf0, 0xb0);
    CHECK_EQ(urd(IIR), 0x01);
}

/* What qemu-system-riscv64 -nographic prints for ctrl-a h (before the
 * terminal's \n -> \r\n). */
static const char qemu_help[] =
    "\n\r"
    "C-a h    print this help\n\r"
    "C-a x    exit emulator\n\r"
    "C-a s    save disk data back to file (if -snapshot)\n\r"
    "C-a t    toggle console timestamps\n\r"
    "C-a b    send break (magic sysrq)\n\r"
    "C-a c    switch between console and monitor\n\r"
    "C-a C-a  sends C-a\n\r";

static void uart_escapes(void)
{
    char buf[1024];
    uwr(IER, 0x05);                                  /* data, line status */
    host_type("\x01\x01", 2);                        /* ctrl-a ctrl-a: one ctrl-a */
    CHECK(wait_rx(2000));
    CHECK_EQ(urd(RBR), 0x01);
    sleep_ms(20);
    CHECK(!(urd(LSR) & 0x01));

    host_type("\x01h", 2);
    host_output(buf, sizeof buf, strlen(qemu_help), 2000);
    CHECK(!strcmp(buf, qemu_help));
    host_type("\x01?", 2);
    host_output(buf, sizeof buf, strlen(qemu_help), 2000);
    CHECK(!strcmp(buf, qemu_help));
    host_type("\x01" "c", 2);
    host_output(buf, sizeof buf, 10, 2000);
    CHECK(strstr(buf, "no monitor") != NULL);

    host_type("\x01" "b", 2);                        /* break */
    uint64_t iir = 0x01;
    for (int i = 0; i < 2000 && (iir = urd(IIR)) == 0x01; i++)
        sleep_ms(1);                                 /* (reading LSR would clear BI) */
    CHECK_EQ(iir, 0x06);                             /* line status */
    CHECK_EQ(urd(LSR), 0x71);                        /* BI, DR */
    CHECK_EQ(urd(RBR), 0);

    host_type("\x01q\x01s", 4);                      /* dropped; no -snapshot */
    sleep_ms(50);
    CHECK(!(urd(LSR) & 0x01));
    CHECK_EQ(host_output(buf, sizeof buf, 0, 10), 0);

    host_type("\x01t", 2);                           /* timestamps on */
    sleep_ms(50);
    uwr(THR, 'a'); uwr(THR, '\n'); uwr(THR, 'b');
    host_output(buf, sizeof buf, 18, 2000);
    CHECK(!strncmp(buf, "a\n[00:00:00.", 12) && !strcmp(buf + 15, "] b"));
    host_type("\x01t", 2);                           /* off */
    sleep_ms(50);
    uwr(THR, '\n'); uwr(THR, 'c');
    host_output(buf, sizeof buf, 2, 2000);
    CHECK(!strcmp(buf, "\nc"));
    uwr(IER, 0);

    CHECK(!exit_requested());
    host_type("\x01x", 2);                           /* quit */
    for (int i = 0; i < 2000 && !exit_requested(); i++)
        sleep_ms(1);
    CHECK(exit_requested());
    CHECK_EQ(machine.exit_status, 0);
    CHECK(!machine.reboot);
    host_output(buf, sizeof buf, 10, 2000);
    CHECK(strstr(buf, "Terminated") != NULL);
    exit_reset();
}

/* -- The host terminal (forked children on a pty) -------------------------- */

/* A child that puts the pty's slave in raw mode; exit status 0 if the
 * modes are right. It ends by exit() (atexit restores) or by SIGTERM. */
static void tty_child(int slave, bool mux, bool by_signal)
{
    int devnull = open("/dev/null", O_WRONLY);
    uart_init(slave, devnull, mux);
    struct termios t;
    int bad = tcgetattr(slave, &t) != 0 || (t.c_lflag & (ICANON | ECHO)) ||
              (t.c_iflag & ICRNL) || !(t.c_oflag & OPOST) || !(t.c_lflag & ISIG) != mux;
    if (by_signal && !bad)
        kill(getpid(), SIGTERM);
    exit(bad);
}

static void test_tty(void)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) || unlockpt(master)) {
        printf("test_system_hw: no pty, raw mode not checked\n");
        return;
    }
    int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    struct termios before, after;
    CHECK(slave >= 0 && tcgetattr(slave, &before) == 0);
    CHECK(before.c_lflag & ICANON);

    for (int round = 0; round < 3; round++) {
        bool mux = round != 1, by_signal = round == 2;
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0)
            tty_child(slave, mux, by_signal);
        int status = 0;
        CHECK_EQ(waitpid(pid, &status, 0), pid);
        if (by_signal)
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
        else
            CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK(tcgetattr(slave, &after) == 0);
        CHECK(after.c_lflag == before.c_lflag && after.c_iflag == before.c_iflag);
    }
    close(slave);
    close(master);
}

static void test_uart(void)
{
    int in[2], out[2];
    if (pipe(in) || pipe(out)) {
        printf("FAIL: pipe\n");
        failures++;
        return;
    }
    uart_in = in[1];
    uart_out = out[0];
    uart_init(in[0], out[1], true);
    uart_reset_state();
    uart_thre_irq();
    uart_dlab();
    uart_input();
    uart_fifo();
    uart_loopback();
    uart_escapes();
}

int main(void)
{
    test_tty();                  /* first: its children start no-one's threads */
    machine_setup();
    plic_init();
    aclint_init();
    rtc_init();
    sifive_test_init();

    plic_registers();
    plic_claim_order();
    plic_contexts();
    aclint_msip();
    aclint_mtimecmp();
    aclint_mtime();
    test_finisher();
    rtc_time_checks();
    rtc_alarms();
    test_uart();

    printf("test_system_hw: %s\n", failures ? "FAILED" : "ok");
    return failures != 0;
}
