/*
 * The dispatcher: exec_run runs a vCPU's guest code through translated
 * blocks until the mode's loop is needed, with the contract of interp_run.
 *
 * Lookup: cpu->pc -> the vCPU's jump cache (direct mapped by pc, also
 * probed by translated code for indirect jumps) -> the TB cache by key
 * (tb_cache.c) -> translate, or interpret the block's first runs (--tune
 * first-interp). A direct exit is chained (chain.c) the first time it is
 * taken. A guest access that faults in translated code comes back here
 * through guest_fault's longjmp with the vCPU's state exact (host_fault.c).
 * The --tune switches (exec/settings.h) turn each mechanism off for
 * measurement (bench/ablation).
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdio.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "exec/pcache.h"
#include "riscv/interp.h"
#include "x86/backend.h"

_Static_assert(offsetof(CPUState, jit_kick) == offsetof(CPUState, exit_request) + 4 &&
               offsetof(CPUState, exit_request) % 8 == 0,
               "translated code polls exit_request and jit_kick with one 8-byte load");

unsigned dflags_cached;

unsigned dflags_compute(void)
{
    unsigned f = 0;
    if (!(log_mask & (LOG_NOCHAIN | LOG_EXEC)))
        f |= DF_CHAIN;
    if (log_mask & LOG_EXEC)
        f |= DF_TRACE;
    if (tune.xpage && !guest_mem.softmmu)     /* see guest_mem.h */
        f |= DF_XPAGE;
    if (log_mask & LOG_STATS)
        f |= DF_TIME;
    return f;
}

bool tb_key_of(const CPUState *cpu, uint64_t pc, TBKey *key)
{
    key->pc = key->phys = pc;
    key->next_page = TB_NO_PAGE;
    key->flags = cpu->tb_flags;
    if (!guest_mem.ops->code_phys)
        return true;
    if (!guest_mem.ops->code_phys(cpu, pc, &key->phys))
        return false;
    if (pc % TARGET_PAGE_SIZE == TARGET_PAGE_SIZE - 2 &&
        insn_length(*(const uint16_t *)guest_mem_code(key->phys)) == 4) {
        uint64_t next;
        if (!guest_mem.ops->code_phys(cpu, pc + 2, &next))
            return false;               /* the interpreter faults on the second half */
        key->next_page = next >> TARGET_PAGE_BITS;
    }
    return true;
}

/*
 * First runs in the interpreter (--tune first-interp): most blocks a process
 * start runs, run once or a few times (the dynamic loader's relocation and
 * libc's start: 60% of /usr/bin/true's 1,700 blocks run once, 80% at most
 * four times), and translating a block costs about as much as interpreting
 * it a few dozen times. So a block's first INTERP_RUNS runs are interpreted
 * and it is translated when it runs again (/usr/bin/true: 1 run -26%, then
 * 3 runs another -11%; more gained nothing).
 *
 * The runs are counted in a direct-mapped table by pc. A pc whose slot
 * another pc holds is translated at once, and a pc gives its slot back when
 * it is translated: a collision never makes a block run interpreted more
 * often (resetting the count instead made cc1, with its tens of thousands
 * of blocks, 55% slower). Not while -d logs translations or traces blocks
 * (every block run must show there).
 */
#define SEEN_BITS 13
#define INTERP_RUNS 3
/* An entry: SEEN_USED | the pc's bits above the index (29 of them) << 2 |
 * its runs so far; 0: free. Two pcs alike in bits 1..42 share a count: a
 * block then runs interpreted less often, nothing else. (32 KiB, populated
 * at every start: a pc of 8 bytes and a count of 1 made 72.) */
#define SEEN_USED 0x80000000u
static uint32_t seen[1u << SEEN_BITS] LARGE_BSS PAGE_ALIGNED;

void dispatch_init(void)
{
    prefault(seen, sizeof seen);            /* a process start touches every page */
}

bool interp_run_of(uint64_t pc, unsigned df)
{
    if (!tune.first_interp || pc == 0 || (df & DF_TRACE) ||
        (log_mask & (LOG_IN_ASM | LOG_OUT_ASM)))
        return false;
    size_t i = (pc >> 1) & ((1u << SEEN_BITS) - 1);
    uint32_t tag = SEEN_USED | (uint32_t)((pc >> (1 + SEEN_BITS)) & 0x1fffffff) << 2;
    if (seen[i] == 0)
        seen[i] = tag;
    if ((seen[i] & ~3u) != tag)
        return false;
    if ((seen[i] & 3) < INTERP_RUNS) {
        seen[i]++;
        warm_record(pc);    /* every run: the parent may have run it before the fork */
        return true;
    }
    seen[i] = 0;
    return false;
}

/* fence.i, translated or interpreted: drop every translation (from run_loop,
 * inside the cache), unless the mode reports every store to code (then the
 * block that ran it has ended, and that is all fence.i needs). */
static void flush_for_fence_i(void)
{
    if (guest_mem.softmmu)
        return;
    cache_exit();
    cache_flush(__atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE));
    cache_enter();
}

/*
 * Interpret the straight-line code at cpu->pc: until an instruction moves
 * the pc elsewhere or needs the loop (a system call, a fault), at most
 * TB_MAX_INSNS instructions. A fence.i in there flushes the translations,
 * as a translated one would.
 */
static enum exit_reason interp_block(CPUState *cpu)
{
    _Static_assert(INTERP_STRAIGHT_MAX == TB_MAX_INSNS, "a block's interpreted runs end where it would");
    uint32_t fences = cpu->fence_i_count;
    uint64_t instret = cpu->instret;
    dstats.first_runs++;
    enum exit_reason er = interp_straight(cpu);
    dstats.first_insns += cpu->instret - instret;
    if (cpu->fence_i_count != fences)
        flush_for_fence_i();
    return er;
}

/*
 * The TB for pc: from the hash table (if the jump cache has pc too, there
 * is nothing else to do), or a new translation.
 */
static int find_tb(CPUState *cpu, uint64_t pc, TB **out, unsigned df)
{
    TBKey key;
    if (!tb_key_of(cpu, pc, &key))
        return TR_NOEXEC;
    dstats.lookups++;
    xmutex_lock(&tb_lock);
    TB *tb = tb_lookup(&key);
    /* The jump cache only after a hit: most lookups of a start miss, and
     * its entry would be one more cache miss. */
    if (tb && cpu->jc[jc_index(cpu, pc)].pc == pc) {
        xmutex_unlock(&tb_lock);
        dstats.jc_hits++;
        *out = tb;
        return TR_OK;
    }
    /* A block an earlier process translated: no first runs for it, unless
     * it was hot in other programs only (pcache_file.h's prog_bits). */
    int hint = !tb && pcache_on ? pcache_hint(pc) : PCACHE_NONE;
    bool counted = hint == PCACHE_OTHERS;
    if (counted && interp_run_of(pc, df)) {
        xmutex_unlock(&tb_lock);
        return TR_INTERP;
    }
    if (hint != PCACHE_NONE) {
        xmutex_unlock(&tb_lock);
        uint64_t t0 = time_start(df);
        int r = tb_from_pcache(&key, &tb, df, &counted);
        time_add(df, &dstats.t_install, t0);
        if (r == TR_OK)
            jc_publish(cpu, tb, df, false);
        if (r == TR_OK || r == TR_INTERP) {
            *out = tb;
            return r;
        }
        xmutex_lock(&tb_lock);
        tb = tb_lookup(&key);
    }
    bool first = !tb && !counted && interp_run_of(pc, df);
    xmutex_unlock(&tb_lock);
    if (first)
        return TR_INTERP;
    bool translated = !tb;
    if (!tb) {
        uint64_t t0 = time_start(df);
        int r = tb_translate(cpu, &key, &tb);
        time_add(df, &dstats.t_translate, t0);
        if (r != TR_OK)
            return r;
    }
    jc_publish(cpu, tb, df, !translated);   /* a child's lookup: its parent fills its cache too */
    *out = tb;
    return TR_OK;
}

/*
 * An EXIT_REQUEST that only says the guest changed its own privileged state
 * (a CSR write such as sstatus.SUM, satp, sfence.vma: priv.h's PRIV_STOP)
 * needs the mode's loop only if an interrupt may be taken now; otherwise
 * dispatch goes on at cpu->pc, where the new state picks its blocks. A
 * request from elsewhere (cpu->exit_request) always leaves.
 */
static bool state_change_only(CPUState *cpu, int code)
{
    uint64_t cause;
    return code == EXIT_REQUEST && cpu->priv.on &&
           !__atomic_load_n(&cpu->exit_request, __ATOMIC_SEQ_CST) && !priv_interrupt(cpu, &cause);
}

/* A kernel's trap entry and exit each write sstatus: going on through the
 * jump cache instead of leaving spares the dispatcher two trips a system
 * call (the new flags' jump cache is current already: priv.c). */
uint64_t jit_helper_interp(CPUState *cpu, uint64_t pc)
{
    cpu->pc = pc;
    enum exit_reason r = interp_step(cpu);
    return state_change_only(cpu, r) ? EXIT_REDISPATCH : r;
}

uint64_t jit_helper_csr(CPUState *cpu, uint64_t pc, uint64_t info)
{
    Insn in = { .op = (uint16_t)(info & 0xffff), .len = 4, .rd = (uint8_t)(info >> 16 & 31),
                .rs1 = (uint8_t)(info >> 24 & 31), .imm = (int64_t)(info >> 32 & 0xfff) };
    enum exit_reason r = interp_csr(cpu, pc, &in);
    return state_change_only(cpu, r) ? EXIT_REDISPATCH : r;
}

uint64_t jit_helper_fill(CPUState *cpu, uint64_t va, uint64_t info)
{
    return guest_mem.ops->probe_fill(cpu, va, info & 0xff, (enum mem_access)(info >> 8 & 0xff),
                                     (unsigned)(info >> 16));
}

/* Not inlined into exec_run: its locals would then live across sigsetjmp. */
static __attribute__((noinline)) enum exit_reason run_loop(CPUState *cpu)
{
    uintptr_t link = 0;
    for (;;) {
        unsigned df = dflags();
        if (exit_requested(cpu))
            return EXIT_REQUEST;
        if (__builtin_expect(cpu->jc_flags != cpu->tb_flags, 0)) {
            jc_flags_changed(cpu);
            link = 0;
        }
        if (__atomic_load_n(&flush_pending, __ATOMIC_SEQ_CST)) {
            cache_exit();
            cache_enter();
            link = 0;
        }
        uint64_t gen = __atomic_load_n(&flush_gen, __ATOMIC_ACQUIRE);
        TB *tb = NULL;
        int r = TR_OK;
        if (link && (df & DF_CHAIN) && (tb = tb_link_hinted(link, cpu->pc, cpu->tb_flags, df)))
            link = 0;                   /* chained as an earlier process had it */
        else
            r = find_tb(cpu, cpu->pc, &tb, df);
        if (r == TR_FULL) {
            cache_exit();
            cache_flush(gen);
            cache_enter();
            link = 0;
            continue;
        }
        if (r == TR_INTERP || r == TR_NOEXEC) {
            /* A first run; or code that cannot be fetched, where the
             * interpreter raises the exact fault. */
            uint64_t t0 = time_start(df);
            enum exit_reason er = r == TR_INTERP ? interp_block(cpu) : interp_step(cpu);
            time_add(df, &dstats.t_first, t0);
            if (er != EXIT_NONE && !state_change_only(cpu, er))
                return er;
            link = 0;
            continue;
        }
        if (link && (df & DF_CHAIN)) {
            /* Never from a block of other flags: the state changed inside
             * it (an FP instruction made FS Dirty; priv.h), and a block
             * translated for the new state may not run in the old. */
            TB *src = (TB *)(link & ~(uintptr_t)TB_SLOT_MASK);
            xmutex_lock(&tb_lock);
            if (src->flags == tb->flags)
                tb_link(src, (int)(link & TB_SLOT_MASK), tb, df);
            xmutex_unlock(&tb_lock);
        }
        if (!tb->used)      /* (written once: a TB's line is read by every thread) */
            tb->used = true;    /* a block reaches its first run through here, bar fork warm-up's */
        if (df & DF_TRACE)
            fprintf(log_file, "Trace: [%p] %016llx\n", tb_entry_rx(tb),
                    (unsigned long long)tb->pc);
        uint64_t t0 = time_start(df);
        int code = jit_rt.enter(cpu, tb_entry_rx(tb));
        time_add(df, &dstats.t_code, t0);
        link = 0;
        switch (code) {
        case EXIT_CHAIN:
            dstats.direct_exits++;
            link = be_stub_exited(cpu);
            break;
        case EXIT_LOOKUP:
            dstats.indirect_exits++;
            break;
        case EXIT_POLL:
            dstats.poll_exits++;
            if (cpu->exit_request)
                return EXIT_REQUEST;
            cpu->jit_kick = 0;
            break;
        case EXIT_FENCEI:
            flush_for_fence_i();
            break;
        case EXIT_REDISPATCH:       /* from a slow path's interp_exit */
            break;
        default:
            if (state_change_only(cpu, code))
                break;
            return (enum exit_reason)code;
        }
    }
}

enum exit_reason exec_run(CPUState *cpu)
{
    this_cpu = cpu;
    stats_guest_started();
    sigjmp_buf jb;
    sigjmp_buf *const outer = guest_fault.jmp;
    cache_enter();
    if (sigsetjmp(jb, 0)) {
        /* A guest access in translated code faulted: exec_fault_restore
         * already put the registers and pc in *cpu. */
        guest_fault.jmp = outer;
        cache_exit();
        cpu->fault = guest_fault.fault;
        return EXIT_FAULT;
    }
    guest_fault.jmp = &jb;
    enum exit_reason r = run_loop(cpu);
    guest_fault.jmp = outer;
    cache_exit();
    return r;
}
