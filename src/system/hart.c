/*
 * The harts' loops (see hart.h): one host thread per hart (issue 20 puts N
 * harts on M threads), each running guest code through the JIT (or the
 * interpreter, -interp) and turning its exits into the machine's
 * behaviour. Translated code takes traps, ecalls and xrets itself through
 * priv.h's entries and stays in the JIT; what comes here:
 *
 *   ecall     (from the interpreter) from S-mode with xlat's SBI: the call
 *             is served (sbi.c: sbi_entry, also translated code's
 *             priv_hooks.sbi_call) and the hart goes on after the ecall;
 *             otherwise an exception (environment call from U/S/M)
 *   ebreak, illegal instruction, memory faults: exceptions, with tval
 *   wfi       the hart sleeps until an interrupt is pending in mie
 *   request   an interrupt line changed, a CSR write, a kick: look again
 *
 * Before running guest code the hart updates its timer line (MTIP from
 * the ACLINT's mtimecmp; STIP from stimecmp is priv.c's) and takes the
 * highest-priority enabled interrupt. A timer thread wakes harts whose
 * compare value has been reached, so a hart spinning in guest code or
 * sleeping in wfi sees its timer interrupt within the host's timer slack.
 *
 * With -gdb (gdbstub.c) the loop parks at its top while gdb holds the hart
 * (wfi and the HSM wait end early for it), runs guest code through
 * gdbstub_hart_run (breakpoints, watchpoints, steps), and takes no
 * interrupt while single-stepping.
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
    pthread_mutex_lock(&h->lock);
    pthread_cond_broadcast(&h->wake);
    pthread_mutex_unlock(&h->lock);
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
    if (__atomic_load_n(&h->hsm_state, __ATOMIC_ACQUIRE) == HSM_STARTED && !machine.exit_requested)
        return 0;
    /* A request, not a state change the dispatcher may go on after. */
    __atomic_store_n(&cpu->exit_request, 1, __ATOMIC_SEQ_CST);
    return EXIT_REQUEST;
}

/* The hart loop's ecall (the interpreter's EXIT_ECALL): the loop looks at
 * the hart again whatever it returns. */
static void ecall(Hart *h)
{
    priv_entry_ecall(&h->cpu);
}

/* gdb wants h at its loop's top (it leaves its waits for it). */
static bool gdb_holds(const Hart *h)
{
    return gdbstub_enabled && gdbstub_hart_held(h);
}

/* wfi: sleep until an interrupt is pending in mie (enabled or not
 * globally), the machine stops, or another hart needs a flush. */
static void wait_for_interrupt(Hart *h)
{
    CPUState *cpu = &h->cpu;
    pthread_mutex_lock(&h->lock);
    for (;;) {
        update_timer_line(h);
        priv_stimer_update(cpu);
        uint64_t cause, mip = __atomic_load_n(&cpu->priv.mip, __ATOMIC_ACQUIRE);
        if (mip & MIP_SEIP_SW)
            mip |= MIP_SEIP;
        if (priv_interrupt(cpu, &cause) || (mip & cpu->priv.mie) ||
            machine.exit_requested || __atomic_load_n(&h->remote_flush, __ATOMIC_ACQUIRE) ||
            gdb_holds(h))
            break;
        /* STIP from stimecmp is not stored in mip (priv_stimer_update). */
        if (cpu->priv.stimer_due && (cpu->priv.mie & MIP_STIP))
            break;
        struct timespec ts;
        machine_mtime_deadline(timer_deadline(h), &ts);
        pthread_cond_timedwait(&h->wake, &h->lock, &ts);
    }
    pthread_mutex_unlock(&h->lock);
}

/* -- The loop ------------------------------------------------------------------------ */

void hart_remote_flush(Hart *h)
{
    __atomic_store_n(&h->remote_flush, 1, __ATOMIC_SEQ_CST);
    hart_kick(h);
    /* The target clears it at its loop's next look (or is not running
     * guest code: stopped harts flush when they start, harts gdb holds
     * when it lets them go). */
    while (__atomic_load_n(&h->remote_flush, __ATOMIC_SEQ_CST) &&
           __atomic_load_n(&h->hsm_state, __ATOMIC_SEQ_CST) == HSM_STARTED &&
           !machine.exit_requested && !(gdbstub_enabled && gdbstub_hart_parked(h)))
        sched_yield();
}

static void apply_remote_flush(Hart *h)
{
    if (__atomic_load_n(&h->remote_flush, __ATOMIC_ACQUIRE)) {
        tlb_flush(&h->cpu, true, 0);
        __atomic_store_n(&h->remote_flush, 0, __ATOMIC_RELEASE);
    }
}

/* A stopped hart waits for HSM hart_start; false if the machine stops or
 * gdb holds the hart (the loop looks again). */
static bool wait_until_started(Hart *h)
{
    pthread_mutex_lock(&h->lock);
    while (h->hsm_state != HSM_START_PENDING && !machine.exit_requested && !gdb_holds(h))
        pthread_cond_wait(&h->wake, &h->lock);
    bool go = h->hsm_state == HSM_START_PENDING && !machine.exit_requested && !gdb_holds(h);
    if (go) {
        CPUState *cpu = &h->cpu;
        priv_reset(cpu, h->id, PRV_S);
        cpu->pc = h->start_addr;
        cpu->x[10] = h->id;
        cpu->x[11] = h->start_opaque;
        __atomic_store_n(&h->hsm_state, HSM_STARTED, __ATOMIC_SEQ_CST);
    }
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

void hart_run(Hart *h)
{
    CPUState *cpu = &h->cpu;
    sys_mem_bind_thread(cpu);
    for (;;) {
        if (machine.exit_requested)
            return;
        if (gdbstub_enabled && gdbstub_hart_park(h))
            continue;                       /* gdb held it: look again */
        if (__atomic_load_n(&h->hsm_state, __ATOMIC_ACQUIRE) != HSM_STARTED) {
            apply_remote_flush(h);
            if (!wait_until_started(h))
                continue;                   /* the machine ends, or gdb holds it */
        }
        __atomic_store_n(&cpu->exit_request, 0, __ATOMIC_SEQ_CST);
        apply_remote_flush(h);
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
        case EXIT_WFI:     wait_for_interrupt(h); break;
        case EXIT_REQUEST:
        case EXIT_NONE:    break;
        }
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
    cond_init_monotonic(&h->wake);
    h->mtimecmp = UINT64_MAX;
    h->hsm_state = HSM_STOPPED;
    exec_cpu_init(&h->cpu);
    tlb_init(&h->cpu);
    priv_reset(&h->cpu, id, PRV_M);
    priv_hooks.timer_changed = priv_timer_changed;
    return h;
}

static void *hart_thread(void *arg)
{
    hart_run(arg);
    machine_request_exit(machine.exit_status, machine.reboot);  /* the others stop too */
    return NULL;
}

void harts_run_all(void)
{
    pthread_t timer;
    priv_hooks.sbi_call = sbi_builtin ? sbi_entry : NULL;   /* -bios decided it */
    cond_init_monotonic(&timer_cond);
    if (!timer_started && pthread_create(&timer, NULL, timer_thread, NULL) == 0)
        timer_started = true;
    for (unsigned i = 1; i < machine.nharts; i++)
        if (pthread_create(&machine.harts[i]->thread, NULL, hart_thread, machine.harts[i]) != 0) {
            perror("xlat-system: hart thread");
            exit(1);
        }
    hart_run(machine.harts[0]);
    machine_request_exit(machine.exit_status, machine.reboot);
    pthread_mutex_lock(&timer_lock);
    pthread_cond_broadcast(&timer_cond);
    pthread_mutex_unlock(&timer_lock);
    for (unsigned i = 1; i < machine.nharts; i++)
        pthread_join(machine.harts[i]->thread, NULL);
    if (timer_started)
        pthread_join(timer, NULL);
}
