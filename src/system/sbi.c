/*
 * SBI 2.0 for S-mode software, served by xlat (see sbi.h). Linux's calls:
 * BASE (the spec version 2.0 turns DBCN and STA on), TIME set_timer, IPI
 * send_ipi, RFENCE (fence_i, sfence_vma, sfence_vma_asid, with ranges;
 * hart.c's hart_remote_fence: targets apply them before they next run),
 * HSM (secondary harts start only through hart_start; stop, status and
 * suspend, retentive or not), SRST (shutdown, reboot), DBCN (the console,
 * for earlycon=sbi) and STA (steal time, for kernels built with
 * CONFIG_PARAVIRT). An extension or function that is not implemented
 * returns SBI_ERR_NOT_SUPPORTED, logged under -d unimp.
 */
#include "system/sbi.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "exec/settings.h"
#include "system/hart.h"
#include "system/machine.h"
#include "system/tlb.h"

bool sbi_builtin = true;

enum {
    SBI_SUCCESS = 0, SBI_ERR_FAILED = -1, SBI_ERR_NOT_SUPPORTED = -2,
    SBI_ERR_INVALID_PARAM = -3, SBI_ERR_DENIED = -4, SBI_ERR_INVALID_ADDRESS = -5,
    SBI_ERR_ALREADY_AVAILABLE = -6,
};

enum {
    EXT_BASE = 0x10, EXT_TIME = 0x54494d45, EXT_IPI = 0x735049, EXT_RFENCE = 0x52464e43,
    EXT_HSM = 0x48534d, EXT_SRST = 0x53525354, EXT_DBCN = 0x4442434e, EXT_STA = 0x535441,
};

#define SBI_SPEC_VERSION ((2u << 24) | 0)
#define SBI_IMPL_ID      0x786c6174u        /* "xlat" */
#define SBI_IMPL_VERSION 1

typedef struct { long error; unsigned long value; } SbiRet;

static SbiRet ok(unsigned long v) { return (SbiRet){ SBI_SUCCESS, v }; }
static SbiRet err(long e) { return (SbiRet){ e, 0 }; }

static bool extension_exists(unsigned long eid)
{
    switch (eid) {
    case EXT_BASE: case EXT_TIME: case EXT_IPI: case EXT_RFENCE: case EXT_HSM:
    case EXT_SRST: case EXT_DBCN: case EXT_STA:
        return true;
    default:
        return false;
    }
}

static SbiRet base(unsigned long fid, const uint64_t *a)
{
    switch (fid) {
    case 0: return ok(SBI_SPEC_VERSION);
    case 1: return ok(SBI_IMPL_ID);
    case 2: return ok(SBI_IMPL_VERSION);
    case 3: return ok(extension_exists(a[0]));
    case 4: case 5: case 6: return ok(0);   /* mvendorid, marchid, mimpid */
    default: return err(SBI_ERR_NOT_SUPPORTED);
    }
}

/* Call fn for each hart of the SBI hart mask (mask, base); base -1: all. */
static long for_each_hart(unsigned long mask, unsigned long base, void (*fn)(Hart *, void *),
                          void *arg)
{
    for (unsigned i = 0; i < machine.nharts; i++) {
        bool in = base == (unsigned long)-1 ||
                  (i >= base && i - base < 64 && ((mask >> (i - base)) & 1));
        if (in)
            fn(machine.harts[i], arg);
    }
    if (base != (unsigned long)-1 && (base >= machine.nharts ||
                                      (base + 64 > machine.nharts && (mask >> (machine.nharts - base)))))
        return SBI_ERR_INVALID_PARAM;
    return SBI_SUCCESS;
}

static void send_ipi(Hart *h, void *arg) { (void)arg; hart_set_mip(h, MIP_SSIP, true); }

static void add_to_mask(Hart *h, void *mask) { *(uint32_t *)mask |= 1u << h->id; }

static SbiRet rfence(Hart *self, unsigned long fid, const uint64_t *a)
{
    if (fid > 2)
        return err(SBI_ERR_NOT_SUPPORTED);     /* the hfence calls: no H extension */
    uint32_t targets = 0;
    long e = for_each_hart(a[0], a[1], add_to_mask, &targets);
    if (e)
        return err(e);
    /* The whole address space: start and size 0, or size 2^64 - 1. */
    bool whole = (a[2] == 0 && a[3] == 0) || a[3] == UINT64_MAX;
    HartFence f = { .start = whole ? 0 : a[2], .size = whole ? 0 : a[3], .asid = a[4],
                    .by_asid = fid == 2 };
    hart_remote_fence(self, targets, fid == 0 ? NULL : &f);
    return ok(0);
}

/* hart_suspend(type, resume_addr, opaque): the default retentive suspend
 * returns success once an interrupt is pending in sie (the hart waits as
 * in wfi, off its thread); the default non-retentive one then resumes at
 * resume_addr as hart_start starts a hart. No platform-specific types. */
static SbiRet hsm_suspend(Hart *h, const uint64_t *a)
{
    uint32_t type = (uint32_t)a[0];
    if (type != HSM_SUSPEND_RETENTIVE && type != HSM_SUSPEND_NON_RETENTIVE)
        return err(SBI_ERR_INVALID_PARAM);
    if (type == HSM_SUSPEND_NON_RETENTIVE && !machine_ram_ptr(a[1], 4))
        return err(SBI_ERR_INVALID_ADDRESS);
    pthread_mutex_lock(&h->lock);
    h->suspend_type = type;
    h->start_addr = a[1];
    h->start_opaque = a[2];
    __atomic_store_n(&h->hsm_state, HSM_SUSPENDED, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&h->lock);
    return ok(0);
}

static SbiRet hsm(Hart *self, unsigned long fid, const uint64_t *a)
{
    (void)self;
    if (fid == 0 || fid == 2) {                     /* hart_start, hart_get_status */
        if (a[0] >= machine.nharts)
            return err(SBI_ERR_INVALID_PARAM);
        Hart *h = machine.harts[a[0]];
        if (fid == 2)
            return ok((unsigned long)__atomic_load_n(&h->hsm_state, __ATOMIC_ACQUIRE));
        if (!machine_ram_ptr(a[1], 4))              /* S-mode code can only run from RAM */
            return err(SBI_ERR_INVALID_ADDRESS);
        pthread_mutex_lock(&h->lock);
        long e = h->hsm_state == HSM_STOPPED ? SBI_SUCCESS : SBI_ERR_ALREADY_AVAILABLE;
        if (e == SBI_SUCCESS) {
            h->start_addr = a[1];
            h->start_opaque = a[2];
            __atomic_store_n(&h->hsm_state, HSM_START_PENDING, __ATOMIC_SEQ_CST);
        }
        pthread_mutex_unlock(&h->lock);
        if (e == SBI_SUCCESS)
            hart_kick(h);                           /* queued: it starts */
        return e ? err(e) : ok(0);
    }
    if (fid == 1) {                                 /* hart_stop */
        __atomic_store_n(&self->hsm_state, HSM_STOPPED, __ATOMIC_SEQ_CST);
        return ok(0);
    }
    if (fid == 3)
        return hsm_suspend(self, a);
    return err(SBI_ERR_NOT_SUPPORTED);
}

static SbiRet srst(unsigned long fid, const uint64_t *a)
{
    if (fid != 0 || a[0] > 2 || a[1] > 1)
        return err(SBI_ERR_INVALID_PARAM);
    /* type 0: shutdown (reason 1, a system failure: status 1); 1, 2: reboot. */
    machine_request_exit(a[0] == 0 && a[1] == 0 ? 0 : 1, a[0] != 0);
    return ok(0);
}

static SbiRet dbcn(Hart *h, unsigned long fid, const uint64_t *a)
{
    (void)h;
    if (fid == 2) {                                 /* console_write_byte */
        char c = (char)a[0];
        return write(STDOUT_FILENO, &c, 1) == 1 ? ok(0) : err(SBI_ERR_FAILED);
    }
    if (fid == 0) {                                 /* console_write(len, lo, hi) */
        uint64_t pa = a[1] | (a[2] << 32);
        void *p = machine_ram_ptr(pa, a[0]);
        if (!p)
            return err(SBI_ERR_INVALID_PARAM);
        ssize_t n = write(STDOUT_FILENO, p, a[0]);
        return n < 0 ? err(SBI_ERR_FAILED) : ok((unsigned long)n);
    }
    if (fid == 1)                                   /* console_read: the UART has the input */
        return ok(0);
    return err(SBI_ERR_NOT_SUPPORTED);
}

/*
 * STA (SBI 2.0 chapter 16): each hart may name a 64-byte record in RAM,
 * { u32 sequence, u32 flags, u64 steal (ns), u8 preempted, pad }, which
 * xlat updates each time the hart resumes: sequence odd, steal (its time
 * in the run queue: runnable, not running; sched.h), preempted 0,
 * sequence even.
 */
typedef struct StaRecord {
    uint32_t sequence, flags;
    uint64_t steal;
    uint8_t preempted, pad[47];
} StaRecord;
_Static_assert(sizeof(StaRecord) == 64, "the spec's record is 64 bytes");

static StaRecord *sta_record(Hart *h)
{
    return h->sta_shmem == STA_OFF ? NULL : machine_ram_ptr(h->sta_shmem, sizeof(StaRecord));
}

void sbi_sta_resume(Hart *h)
{
    StaRecord *r = sta_record(h);
    if (!r)
        return;
    uint32_t odd = (__atomic_load_n(&r->sequence, __ATOMIC_RELAXED) + 1) | 1;
    __atomic_store_n(&r->sequence, odd, __ATOMIC_RELEASE);
    __atomic_store_n(&r->steal, h->steal_ns, __ATOMIC_RELEASE);
    __atomic_store_n(&r->preempted, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&r->sequence, odd + 1, __ATOMIC_RELEASE);
}

void sbi_sta_preempted(Hart *h)
{
    StaRecord *r = sta_record(h);
    if (r)
        __atomic_store_n(&r->preempted, 1, __ATOMIC_RELEASE);
}

static SbiRet sta(Hart *h, unsigned long fid, const uint64_t *a)
{
    if (fid != 0)
        return err(SBI_ERR_NOT_SUPPORTED);
    if (a[0] == UINT64_MAX && a[1] == UINT64_MAX) {     /* set_shmem(-1, -1): off */
        if (a[2])
            return err(SBI_ERR_INVALID_PARAM);
        h->sta_shmem = STA_OFF;
        return ok(0);
    }
    if (a[2] || (a[0] & 63))
        return err(SBI_ERR_INVALID_PARAM);
    StaRecord *r = a[1] ? NULL : machine_ram_ptr(a[0], sizeof *r);
    if (!r)
        return err(SBI_ERR_INVALID_ADDRESS);
    memset(r, 0, sizeof *r);
    tlb_dma_written(a[0], sizeof *r);       /* as a device's write: code there is stale */
    h->sta_shmem = a[0];
    return ok(0);
}

void sbi_call(Hart *h)
{
    CPUState *cpu = &h->cpu;
    unsigned long eid = cpu->x[17], fid = cpu->x[16];
    const uint64_t *a = &cpu->x[10];
    SbiRet r;
    switch (eid) {
    case EXT_BASE:   r = base(fid, a); break;
    case EXT_TIME:
        if (fid != 0) {
            r = err(SBI_ERR_NOT_SUPPORTED);
            break;
        }
        cpu->priv.stimecmp = a[0];                  /* Sstc is on under xlat's SBI */
        priv_stimer_update(cpu);
        hart_timer_changed(h);
        r = ok(0);
        break;
    case EXT_IPI: {
        long e = for_each_hart(a[0], a[1], send_ipi, NULL);
        r = e ? err(e) : ok(0);
        break;
    }
    case EXT_RFENCE: r = rfence(h, fid, a); break;
    case EXT_HSM:    r = hsm(h, fid, a); break;
    case EXT_SRST:   r = srst(fid, a); break;
    case EXT_DBCN:   r = dbcn(h, fid, a); break;
    case EXT_STA:    r = sta(h, fid, a); break;
    default:         r = err(SBI_ERR_NOT_SUPPORTED); break;
    }
    if (r.error == SBI_ERR_NOT_SUPPORTED)
        xlat_log(LOG_UNIMP, "xlat-system: SBI call %#lx/%lu not supported\n", eid, fid);
    cpu->x[10] = (uint64_t)r.error;
    cpu->x[11] = r.value;
}
