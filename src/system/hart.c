/*
 * The harts' loops (see hart.h), each run by whichever host thread the
 * scheduler (sched.c) gives it, running guest code through the JIT (or
 * the interpreter, -interp) and turning its exits into the machine's
 * behaviour. Translated code takes traps, ecalls and xrets itself through
 * priv.h's entries and stays in the JIT; what comes here:
 *
 *   ecall     (from the interpreter) from S-mode with xlat's SBI: the call
 *             is served (sbi.c: sbi_entry, also translated code's
 *             priv_hooks.sbi_call) and the hart goes on after the ecall;
 *             otherwise an exception (environment call from U/S/M)
 *   ebreak, illegal instruction, memory faults: exceptions, with tval
 *   wfi       unless an interrupt is pending in mie, the hart gives its
 *             thread back until one is (hart_may_resume)
 *   request   an interrupt line changed, a CSR write, a kick: look again
 *
 * Remote fences (SBI RFENCE, hart_remote_fence) are records in the target
 * that it applies at its loop's top before it runs guest code again; the
 * sender waits only for targets that are on a thread now (seed 003), and
 * answers fences sent to itself while it waits.
 *
 * Before running guest code the hart updates its timer line (MTIP from
 * the ACLINT's mtimecmp; STIP from stimecmp is priv.c's) and takes the
 * highest-priority enabled interrupt. A timer thread wakes harts whose
 * compare value has been reached, so a hart spinning in guest code or
 * sleeping in wfi sees its timer interrupt within the host's timer slack.
 *
 * With -gdb (gdbstub.c) every hart has a thread of its own; the loop parks
 * at its top while gdb holds the hart (a blocked hart resumes for it),
 * runs guest code through gdbstub_hart_run (breakpoints, watchpoints,
 * steps), and takes no interrupt while single-stepping.
 */
#define _GNU_SOURCE
#include "system/hart.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"
#include "exec/settings.h"
#include "riscv/interp.h"
#include "system/gdbstub.h"
#include "system/machine.h"
#include "system/sbi.h"
#include "system/sys_mem.h"
#include "system/tlb.h"

/* -- Wake-ups ---------------------------------------------------------------------- */

static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t timer_cond;
static bool timer_started;

static void cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
}

void hart_kick(Hart *h)
{
    __atomic_store_n(&h->cpu.exit_request, 1, __ATOMIC_SEQ_CST);
    exec_kick(&h->cpu);                 /* after the flag: see exec_kick */
    sched_wake(h);                      /* blocked: queued if it has something to do */
}

void hart_set_mip(Hart *h, uint64_t mask, bool on)
{
    uint64_t old = on ? __atomic_fetch_or(&h->cpu.priv.mip, mask, __ATOMIC_SEQ_CST)
                      : __atomic_fetch_and(&h->cpu.priv.mip, ~mask, __ATOMIC_SEQ_CST);
    if (on && !(old & mask))
        hart_kick(h);
}

/* The mtime at which h next needs to look at its timers. */
static uint64_t timer_deadline(Hart *h)
{
    const RiscvPriv *p = &h->cpu.priv;
    uint64_t d = __atomic_load_n(&h->mtimecmp, __ATOMIC_ACQUIRE);
    if (p->menvcfg & (1ULL << 63)) {                        /* Sstc */
        uint64_t s = __atomic_load_n(&p->stimecmp, __ATOMIC_ACQUIRE);
        d = s < d ? s : d;
    }
    return d;
}

void hart_timer_changed(Hart *h)
{
    pthread_mutex_lock(&timer_lock);
    pthread_cond_broadcast(&timer_cond);
    pthread_mutex_unlock(&timer_lock);
    hart_kick(h);
}

static void priv_timer_changed(CPUState *cpu) { hart_timer_changed(hart_of(cpu)); }

/*
 * Sleeps until the earliest deadline no hart has been woken for, and kicks
 * that hart. A hart's deadline counts as served once kicked for it, until
 * it changes or mtime is set back before it (hart_timer_changed wakes this
 * thread to look again).
 */
static void *timer_thread(void *arg)
{
    (void)arg;
    uint64_t served[MACHINE_MAX_HARTS];
    memset(served, 0xff, sizeof served);
    pthread_mutex_lock(&timer_lock);
    while (!machine.exit_requested) {
        uint64_t now = machine_mtime(), next = UINT64_MAX;
        for (unsigned i = 0; i < machine.nharts; i++) {
            uint64_t d = timer_deadline(machine.harts[i]);
            if (d == served[i]) {
                if (d <= now)
                    continue;
                served[i] = UINT64_MAX;             /* mtime set back: due again */
            }
            if (d <= now) {
                served[i] = d;
                hart_kick(machine.harts[i]);
            } else if (d < next) {
                next = d;
            }
        }
        if (next == UINT64_MAX) {
            pthread_cond_wait(&timer_cond, &timer_lock);
        } else {
            struct timespec ts;
            machine_mtime_deadline(next, &ts);
            pthread_cond_timedwait(&timer_cond, &timer_lock, &ts);
        }
    }
    pthread_mutex_unlock(&timer_lock);
    return NULL;
}

/* -- Interrupts and traps ------------------------------------------------------------ */

static void update_timer_line(Hart *h)
{
    bool mtip = machine_mtime() >= __atomic_load_n(&h->mtimecmp, __ATOMIC_ACQUIRE);
    if (mtip)
        __atomic_fetch_or(&h->cpu.priv.mip, MIP_MTIP, __ATOMIC_SEQ_CST);
    else
        __atomic_fetch_and(&h->cpu.priv.mip, ~MIP_MTIP, __ATOMIC_SEQ_CST);
}

static void trap(Hart *h, uint64_t cause, uint64_t tval)
{
    priv_trap(&h->cpu, cause, tval);        /* logs it under -d int */
}

uint64_t hart_fault_cause(const MemFault *f)
{
    static const uint8_t page[] = { [MEM_LOAD] = CAUSE_LOAD_PAGE_FAULT,
                                    [MEM_STORE] = CAUSE_STORE_PAGE_FAULT,
                                    [MEM_AMO] = CAUSE_STORE_PAGE_FAULT,
                                    [MEM_FETCH] = CAUSE_FETCH_PAGE_FAULT };
    static const uint8_t access[] = { [MEM_LOAD] = CAUSE_LOAD_ACCESS,
                                      [MEM_STORE] = CAUSE_STORE_ACCESS,
                                      [MEM_AMO] = CAUSE_STORE_ACCESS,
                                      [MEM_FETCH] = CAUSE_FETCH_ACCESS };
    switch (f->kind) {
    case MEM_FAULT_BUS:        return access[f->access & 3];
    case MEM_FAULT_MISALIGNED: return f->access == MEM_LOAD ? CAUSE_MISALIGNED_LOAD
                                                            : CAUSE_MISALIGNED_STORE;
    default:                   return page[f->access & 3];
    }
}

uint64_t hart_insn_bits_at(CPUState *cpu)
{
    MemFault f;
    const uint16_t *lo = guest_mem.ops->slow(cpu, cpu->pc, 2, MEM_FETCH, &f);
    if (!lo)
        return 0;
    if ((*lo & 3) != 3)
        return *lo;
    const uint16_t *hi = guest_mem.ops->slow(cpu, cpu->pc + 2, 2, MEM_FETCH, &f);
    return hi ? (uint64_t)*lo | (uint64_t)*hi << 16 : 0;
}

/* An S-mode ecall under xlat's SBI (priv_hooks.sbi_call): served here,
 * then on after the ecall, unless the call stopped the hart or machine. */
static uint64_t sbi_entry(CPUState *cpu)
{
    Hart *h = hart_of(cpu);
    sbi_call(h);
    cpu->pc += 4;
    if (__atomic_load_n(&h->hsm_state, __ATOMIC_ACQUIRE) == HSM_STARTED &&
        !machine.exit_requested && !__atomic_load_n(&h->acks_pending, __ATOMIC_ACQUIRE))
        return 0;
    /* A request, not a state change the dispatcher may go on after. */
    __atomic_store_n(&cpu->exit_request, 1, __ATOMIC_SEQ_CST);
    return EXIT_REQUEST;
}

/*
 * pause in translated code (priv_hooks.pause): Linux's cpu_relax() runs
 * one in every spin-wait loop (a spinlock, a csd or rwsem wait). A hart
 * that spins PAUSE_WINDOW times while other harts wait for a host thread
 * gives its thread up (pause-loop exiting, as KVM's PLE does): what it
 * waits for may be held by one of them, which would otherwise run only
 * when its slice ends.
 */
#define PAUSE_WINDOW 128
static uint64_t hart_pause(CPUState *cpu)
{
    Hart *h = hart_of(cpu);
    if (!sched_others_waiting()) {
        h->pauses = 0;
        return 0;
    }
    if (++h->pauses < PAUSE_WINDOW)
        return 0;
    h->stats.pause_exits++;
    __atomic_store_n(&h->preempt, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&cpu->exit_request, 1, __ATOMIC_SEQ_CST);
    return EXIT_REQUEST;
}

/* The hart loop's ecall (the interpreter's EXIT_ECALL): the loop looks at
 * the hart again whatever it returns. */
static void ecall(Hart *h)
{
    priv_entry_ecall(&h->cpu);
}

/* gdb wants h at its loop's top (a blocked h resumes for it). */
static bool gdb_holds(const Hart *h)
{
    return gdbstub_enabled && gdbstub_hart_held(h);
}

/* wfi is over: an interrupt is pending in mie (enabled or not globally).
 * h is on no thread or its own. */
static bool wfi_done(Hart *h)
{
    CPUState *cpu = &h->cpu;
    update_timer_line(h);
    priv_stimer_update(cpu);
    uint64_t cause, mip = __atomic_load_n(&cpu->priv.mip, __ATOMIC_ACQUIRE);
    if (mip & MIP_SEIP_SW)
        mip |= MIP_SEIP;
    /* STIP from stimecmp is not stored in mip (priv_stimer_update). */
    return priv_interrupt(cpu, &cause) || (mip & cpu->priv.mie) ||
           (cpu->priv.stimer_due && (cpu->priv.mie & MIP_STIP));
}

/* Why a hart gave its thread back (Hart.blocked_on). */
enum { BLOCKED_WFI, BLOCKED_STOPPED, BLOCKED_SUSPENDED };

bool hart_may_resume(Hart *h)
{
    if (machine.exit_requested || gdb_holds(h))
        return true;
    if (!tune.pv_rfence && __atomic_load_n(&h->fence_pending, __ATOMIC_SEQ_CST))
        return true;                    /* its sender waits for it to run */
    switch (h->blocked_on) {
    case BLOCKED_STOPPED:
        return __atomic_load_n(&h->hsm_state, __ATOMIC_SEQ_CST) == HSM_START_PENDING;
    default:                            /* wfi, hart_suspend */
        return wfi_done(h);
    }
}

/* h gives its thread back until hart_may_resume says otherwise. */
static enum hart_leave block(Hart *h, int why)
{
    h->blocked_on = why;
    return LEAVE_BLOCK;
}

/* -- Remote fences ------------------------------------------------------------------ */

/* With h->lock: add f to h's pending fences (all of them, of every ASID,
 * once they pile up or f is a whole space's). */
static void fence_add(Hart *h, const HartFence *f)
{
    HartFences *p = &h->fences;
    if (p->n <= HART_FENCES && f->size == 0)
        p->n = HART_FENCES + 1;
    else if (p->n < HART_FENCES)
        p->f[p->n++] = *f;
    else
        p->n = HART_FENCES + 1;
}

/* A fence on h's own TLBs: its pages one by one while they are few (Linux
 * flushes all beyond 64 pages too), else all of them. */
#define FENCE_MAX_PAGES 64
static void fence_apply(Hart *h, const HartFence *f)
{
    CPUState *cpu = &h->cpu;
    uint64_t first = f->start & ~0xfffULL;
    uint64_t pages = f->size ? ((f->start + f->size - 1) >> 12) - (first >> 12) + 1 : 0;
    if (!pages || pages > FENCE_MAX_PAGES || f->start + f->size < f->start) {
        tlb_sfence(cpu, false, 0, f->by_asid, f->asid);
        return;
    }
    for (uint64_t i = 0; i < pages; i++)
        tlb_sfence(cpu, true, first + (i << 12), f->by_asid, f->asid);
}

/* h (on its own thread) applies what other harts sent it and tells those
 * who wait that it has. */
static void apply_remote_fences(Hart *h)
{
    if (!__atomic_load_n(&h->fence_pending, __ATOMIC_SEQ_CST))
        return;
    pthread_mutex_lock(&h->lock);
    HartFences p = h->fences;
    h->fences.n = 0;
    h->fences.waiters = 0;
    __atomic_store_n(&h->fence_pending, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&h->lock);
    if (p.n > HART_FENCES) {
        h->stats.applied++;
        h->stats.flushed_all++;
        fence_apply(h, &(HartFence){ .size = 0 });     /* everything, every ASID */
    } else {
        h->stats.applied += p.n;
        for (unsigned i = 0; i < p.n; i++)
            fence_apply(h, &p.f[i]);
    }
    for (unsigned w = 0; p.waiters; w++, p.waiters >>= 1) {
        if (!(p.waiters & 1))
            continue;
        Hart *waiter = machine.harts[w];
        uint32_t bit = 1u << h->id;
        __atomic_and_fetch(&waiter->acks_pending, ~bit, __ATOMIC_SEQ_CST);
    }
}

/* Must self wait for target to apply a fence it sent? */
static bool must_wait_for(const Hart *target)
{
    if (__atomic_load_n(&target->hsm_state, __ATOMIC_SEQ_CST) != HSM_STARTED ||
        (gdbstub_enabled && gdbstub_hart_parked(target)) || machine.exit_requested)
        return false;                   /* it applies them when it starts or is let go */
    return !tune.pv_rfence || sched_running(target);
}

/* The targets self still waits for: those that left their thread count as
 * done with the paravirtual fence (they apply it before they run again). */
static uint32_t acks_outstanding(Hart *self)
{
    uint32_t left = __atomic_load_n(&self->acks_pending, __ATOMIC_SEQ_CST);
    for (unsigned t = 0; t < machine.nharts; t++)
        if ((left >> t & 1) && !must_wait_for(machine.harts[t]))
            left = __atomic_and_fetch(&self->acks_pending, ~(1u << t), __ATOMIC_SEQ_CST);
    return left;
}

/*
 * Spin until every target self waits for has applied its fences (or need
 * not be waited for any more), answering fences sent to self meanwhile:
 * two harts fencing each other at once must not wait for each other. A
 * target waited for on a thread acknowledges at its next exit (it was
 * kicked); one without a thread (only with -tune no-pv-rfence) has to be
 * given one first, so the spin goes on until self's slice is over, as a
 * firmware's spin on its IPIs' acknowledgements would. False if self must
 * leave its thread first (and spin again when it is back).
 */
static bool wait_for_acks(Hart *self)
{
    uint64_t t0 = 0;                    /* -d stats: since the first look found some */
    bool done = true;
    while (acks_outstanding(self)) {
        if (!t0)
            t0 = monotonic_ns();
        if (__atomic_load_n(&self->preempt, __ATOMIC_ACQUIRE)) {
            done = false;
            break;
        }
        apply_remote_fences(self);
        sched_yield();
    }
    if (t0)
        self->stats.wait_ns += monotonic_ns() - t0;
    return done;
}

void hart_remote_fence(Hart *self, uint32_t targets, const HartFence *f)
{
    if ((targets >> self->id & 1) && f)
        fence_apply(self, f);
    targets &= ~(1u << self->id);
    if (!f)
        return;
    self->stats.rfences++;
    for (unsigned t = 0; t < machine.nharts; t++) {
        if (!(targets >> t & 1))
            continue;
        Hart *h = machine.harts[t];
        pthread_mutex_lock(&h->lock);
        fence_add(h, f);
        bool wait = must_wait_for(h);
        self->stats.waited_for += wait;
        self->stats.recorded += !wait;
        if (wait) {
            h->fences.waiters |= 1u << self->id;
            __atomic_or_fetch(&self->acks_pending, 1u << t, __ATOMIC_SEQ_CST);
        }
        __atomic_store_n(&h->fence_pending, 1, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&h->lock);
        if (wait)
            hart_kick(h);
    }
    wait_for_acks(self);
}

/* -- The loop ------------------------------------------------------------------------ */

/* A hart that is not started starts (hart_start made it pending) or
 * resumes from hart_suspend (an interrupt is pending); false if it stays
 * stopped or suspended. A start, or the end of a non-retentive suspend,
 * enters S-mode at start_addr (satp 0, SIE 0, a0 = hartid, a1 = opaque). */
static bool start_if_pending(Hart *h)
{
    pthread_mutex_lock(&h->lock);
    bool go = h->hsm_state == HSM_START_PENDING ||
              (h->hsm_state == HSM_SUSPENDED && wfi_done(h));
    if (go && (h->hsm_state == HSM_START_PENDING ||
               h->suspend_type == HSM_SUSPEND_NON_RETENTIVE)) {
        CPUState *cpu = &h->cpu;
        priv_reset(cpu, h->id, PRV_S);
        if (h->hsm_state == HSM_START_PENDING)
            h->sta_shmem = STA_OFF;         /* a start resets the hart's SBI state */
        cpu->pc = h->start_addr;
        cpu->x[10] = h->id;
        cpu->x[11] = h->start_opaque;
    }
    if (go)
        __atomic_store_n(&h->hsm_state, HSM_STARTED, __ATOMIC_SEQ_CST);
    pthread_mutex_unlock(&h->lock);
    return go;
}

bool hart_use_jit;

/* Logged runs are bounded stretches, so the loop's interrupt and timer
 * checks keep their pace. -d in_asm under the JIT logs each block as it
 * is translated instead. */
enum exit_reason hart_run_code(CPUState *cpu)
{
    if ((log_mask & LOG_EXEC) || ((log_mask & LOG_IN_ASM) && !hart_use_jit))
        return interp_run_logged(cpu, 4096);
    return hart_use_jit ? exec_run(cpu) : interp_run(cpu);
}

enum hart_leave hart_run_slice(Hart *h)
{
    CPUState *cpu = &h->cpu;
    sys_mem_bind_thread(cpu);
    sbi_sta_resume(h);
    h->stats.slices++;
    for (;;) {
        if (machine.exit_requested)
            return LEAVE_EXIT;
        if (gdbstub_enabled && gdbstub_hart_park(h))
            continue;                       /* gdb held it: look again */
        if (sched_take_preempt(h)) {
            h->stats.preempted++;
            return LEAVE_PREEMPT;
        }
        __atomic_store_n(&cpu->exit_request, 0, __ATOMIC_SEQ_CST);
        apply_remote_fences(h);
        if (__atomic_load_n(&h->acks_pending, __ATOMIC_SEQ_CST) && !wait_for_acks(h))
            continue;                       /* its slice is over first */
        int hsm = __atomic_load_n(&h->hsm_state, __ATOMIC_ACQUIRE);
        if (hsm != HSM_STARTED && !start_if_pending(h))
            return block(h, hsm == HSM_SUSPENDED ? BLOCKED_SUSPENDED : BLOCKED_STOPPED);
        update_timer_line(h);
        priv_stimer_update(cpu);
        uint64_t cause;
        bool stepping = gdbstub_enabled && gdbstub_hart_stepping(h);
        if (!stepping && priv_interrupt(cpu, &cause))
            trap(h, cause, 0);
        switch (gdbstub_enabled ? gdbstub_hart_run(h) : hart_run_code(cpu)) {
        case EXIT_ECALL:   ecall(h); break;
        case EXIT_EBREAK:  trap(h, CAUSE_BREAKPOINT, cpu->pc); break;
        case EXIT_ILLEGAL: trap(h, CAUSE_ILLEGAL_INSN, hart_insn_bits_at(cpu)); break;
        case EXIT_FAULT:   trap(h, hart_fault_cause(&cpu->fault), cpu->fault.addr); break;
        case EXIT_WFI:
            if (!wfi_done(h) && !gdb_holds(h) && !cpu->exit_request)
                return block(h, BLOCKED_WFI);
            break;
        case EXIT_REQUEST:
        case EXIT_NONE:    break;
        }
    }
}

void hart_print_stats(void)
{
    for (unsigned i = 0; i < machine.nharts; i++) {
        const Hart *h = machine.harts[i];
        fprintf(log_file ? log_file : stderr,
                "sched: hart %u: %llu slices (%llu preempted, %llu left at a pause), "
                "steal %.1f ms; rfence: %llu sent to %llu targets waited for and %llu "
                "recorded, %.1f ms waiting; %llu fences applied (%llu flushes of all)\n", i,
                (unsigned long long)h->stats.slices, (unsigned long long)h->stats.preempted,
                (unsigned long long)h->stats.pause_exits, h->steal_ns / 1e6,
                (unsigned long long)h->stats.rfences, (unsigned long long)h->stats.waited_for,
                (unsigned long long)h->stats.recorded, h->stats.wait_ns / 1e6,
                (unsigned long long)h->stats.applied, (unsigned long long)h->stats.flushed_all);
    }
}

Hart *hart_create(unsigned id)
{
    Hart *h = calloc(1, sizeof *h);
    if (!h) {
        perror("xlat-system: hart");
        exit(1);
    }
    h->id = id;
    pthread_mutex_init(&h->lock, NULL);
    h->mtimecmp = UINT64_MAX;
    h->hsm_state = HSM_STOPPED;
    h->sta_shmem = STA_OFF;
    exec_cpu_init(&h->cpu);
    tlb_init(&h->cpu);
    priv_reset(&h->cpu, id, PRV_M);
    priv_hooks.timer_changed = priv_timer_changed;
    return h;
}

void harts_run_all(void)
{
    pthread_t timer;
    priv_hooks.sbi_call = sbi_builtin ? sbi_entry : NULL;   /* -bios decided it */
    if (gdbstub_enabled)
        sched_set_threads(machine.nharts);  /* a held hart keeps its thread */
    if (sched_threads() < machine.nharts)
        priv_hooks.pause = hart_pause;      /* harts may wait for a thread */
    cond_init_monotonic(&timer_cond);
    if (!timer_started && pthread_create(&timer, NULL, timer_thread, NULL) == 0)
        timer_started = true;
    sched_run();
    pthread_mutex_lock(&timer_lock);
    pthread_cond_broadcast(&timer_cond);
    pthread_mutex_unlock(&timer_lock);
    if (timer_started)
        pthread_join(timer, NULL);
}
