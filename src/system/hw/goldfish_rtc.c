/*
 * The goldfish RTC (Android emulator's goldfish platform, as QEMU's
 * hw/rtc/goldfish_rtc and Linux's rtc-goldfish use it). 32-bit registers:
 *
 *   0x00 TIME_LOW         read: latch the time (ns), return its low half;
 *                         write: set the time's low half
 *   0x04 TIME_HIGH        read: the latched time's high half; write: set
 *                         the time's high half
 *   0x08 ALARM_LOW        the alarm's low half; a write arms the alarm
 *   0x0c ALARM_HIGH       the alarm's high half (write it first)
 *   0x10 IRQ_ENABLED      bit 0: the alarm interrupt reaches the PLIC
 *   0x14 CLEAR_ALARM      write: disarm the alarm
 *   0x18 ALARM_STATUS     read: 1 while an alarm is armed
 *   0x1c CLEAR_INTERRUPT  write: acknowledge a fired alarm
 *
 * The time is the host's CLOCK_REALTIME plus an offset that time writes
 * move (hwclock --systohc). An alarm at or before the current time fires
 * when armed; a later one is timed by a thread that sleeps on a condition
 * variable until the earliest armed alarm (the monotonic clock measures the
 * wait, so a host clock step does not move an armed alarm). A fired alarm
 * disarms itself and keeps irq VIRT_RTC_IRQ high while IRQ_ENABLED is set,
 * until CLEAR_INTERRUPT. Accesses that are not 4 bytes wide read 0 and are
 * ignored (QEMU faults them).
 */
#define _GNU_SOURCE
#include "system/hw/rtc.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "system/machine.h"

#define RTC_SIZE 0x1000u

enum {
    RTC_TIME_LOW = 0x00, RTC_TIME_HIGH = 0x04, RTC_ALARM_LOW = 0x08,
    RTC_ALARM_HIGH = 0x0c, RTC_IRQ_ENABLED = 0x10, RTC_CLEAR_ALARM = 0x14,
    RTC_ALARM_STATUS = 0x18, RTC_CLEAR_INTERRUPT = 0x1c,
};

typedef struct Rtc {
    pthread_mutex_t lock;
    pthread_cond_t changed;     /* the alarm thread re-reads the alarm */
    uint64_t offset_ns;         /* guest time - host CLOCK_REALTIME (mod 2^64) */
    uint64_t latched;           /* the time the last TIME_LOW read saw */
    uint64_t alarm;             /* ALARM_HIGH:ALARM_LOW, guest time */
    bool alarm_armed;
    bool irq_pending;           /* an alarm fired, not yet cleared */
    bool irq_enabled;
} Rtc;

static Rtc rtc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t host_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t rtc_now(const Rtc *r)
{
    return host_ns(CLOCK_REALTIME) + r->offset_ns;
}

static uint64_t set_half(uint64_t v, bool high, uint32_t half)
{
    return high ? (v & 0xffffffffULL) | (uint64_t)half << 32
                : (v & ~0xffffffffULL) | half;
}

/* -- The alarm ------------------------------------------------------------ */

static void rtc_update_irq(const Rtc *r)
{
    machine_set_irq(VIRT_RTC_IRQ, r->irq_pending && r->irq_enabled);
}

static void rtc_fire(Rtc *r)
{
    r->alarm_armed = false;
    r->irq_pending = true;
    rtc_update_irq(r);
}

static void rtc_arm(Rtc *r)
{
    if (r->alarm <= rtc_now(r)) {
        rtc_fire(r);
        return;
    }
    r->alarm_armed = true;
    pthread_cond_signal(&r->changed);
}

/* Sleep until the armed alarm is due (or it changes), then fire it. */
static void *rtc_alarm_thread(void *arg)
{
    Rtc *r = arg;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        if (!r->alarm_armed) {
            pthread_cond_wait(&r->changed, &r->lock);
            continue;
        }
        uint64_t now = rtc_now(r);
        if (r->alarm <= now) {
            rtc_fire(r);
            continue;
        }
        /* An alarm centuries away: wait as long as a timespec can say,
         * not a deadline that wrapped into the past (a spin). */
        uint64_t start = host_ns(CLOCK_MONOTONIC), wait = r->alarm - now;
        uint64_t until = wait > UINT64_MAX - start ? UINT64_MAX : start + wait;
        struct timespec ts = { (time_t)(until / 1000000000ULL), (long)(until % 1000000000ULL) };
        pthread_cond_timedwait(&r->changed, &r->lock, &ts);
    }
    return NULL;
}

/* -- Registers ------------------------------------------------------------ */

static uint64_t rtc_read(void *opaque, uint64_t off, unsigned size)
{
    Rtc *r = opaque;
    uint64_t val = 0;
    if (size != 4)
        return 0;
    pthread_mutex_lock(&r->lock);
    switch (off) {
    case RTC_TIME_LOW:     r->latched = rtc_now(r); val = (uint32_t)r->latched; break;
    case RTC_TIME_HIGH:    val = r->latched >> 32; break;
    case RTC_ALARM_LOW:    val = (uint32_t)r->alarm; break;
    case RTC_ALARM_HIGH:   val = r->alarm >> 32; break;
    case RTC_IRQ_ENABLED:  val = r->irq_enabled; break;
    case RTC_ALARM_STATUS: val = r->alarm_armed; break;
    default:               break;
    }
    pthread_mutex_unlock(&r->lock);
    return val;
}

static void rtc_set_time(Rtc *r, bool high, uint32_t half)
{
    uint64_t now = rtc_now(r);
    r->offset_ns += set_half(now, high, half) - now;
    pthread_cond_signal(&r->changed);      /* an armed alarm may be due now */
}

static void rtc_write(void *opaque, uint64_t off, unsigned size, uint64_t val64)
{
    Rtc *r = opaque;
    uint32_t val = (uint32_t)val64;
    if (size != 4)
        return;
    pthread_mutex_lock(&r->lock);
    switch (off) {
    case RTC_TIME_LOW:        rtc_set_time(r, false, val); break;
    case RTC_TIME_HIGH:       rtc_set_time(r, true, val); break;
    case RTC_ALARM_LOW:       r->alarm = set_half(r->alarm, false, val); rtc_arm(r); break;
    case RTC_ALARM_HIGH:      r->alarm = set_half(r->alarm, true, val); break;
    case RTC_IRQ_ENABLED:     r->irq_enabled = val & 1; rtc_update_irq(r); break;
    case RTC_CLEAR_ALARM:     r->alarm_armed = false; pthread_cond_signal(&r->changed); break;
    case RTC_CLEAR_INTERRUPT: r->irq_pending = false; rtc_update_irq(r); break;
    default:                  break;
    }
    pthread_mutex_unlock(&r->lock);
}

static const MmioOps rtc_ops = { rtc_read, rtc_write };

void rtc_init(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&rtc.changed, &attr);
    pthread_condattr_destroy(&attr);

    /* Process-directed signals are for the harts and main, not for us. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t thread;
    int err = pthread_create(&thread, NULL, rtc_alarm_thread, &rtc);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        fprintf(stderr, "xlat-system: rtc: cannot start its alarm thread: %s\n", strerror(err));
        exit(1);
    }
    pthread_detach(thread);
    machine_add_mmio(VIRT_RTC_BASE, RTC_SIZE, &rtc_ops, &rtc, "goldfish_rtc");
}
