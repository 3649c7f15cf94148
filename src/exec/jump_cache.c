/*
 * Per-vCPU exec state: the jump cache (virtual pc -> host code, direct
 * mapped, probed by translated code for indirect jumps and by the
 * dispatcher), exit requests, and the registry of vCPUs that invalidation
 * and flushes reach. A vCPU's state is made by exec_cpu_init and freed by
 * exec_cpu_exit, on any thread, so one host thread may run several vCPUs in
 * turn (exec_run only notes which one it runs).
 *
 * Exit requests (a signal, another thread, a flush) set cpu->exit_request
 * or jit_kick. Translated code polls them only on exits that can close a
 * cycle (x86/backend.c); exec_kick also points the vCPU's probe table
 * (cpu->jc_probe) at jc_poison, so the next indirect exit misses into the
 * dispatcher, which restores the table and then looks at the request.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "riscv/interp.h"

#define JC_BITS_START 10           /* a jump cache starts this small (see jc_fit) */

_Static_assert(sizeof(JCEntry) == 16, "a jump-cache entry's offset is its index << 4");

CPUState **vcpus;
size_t nvcpus;
static size_t vcpus_cap;
__thread CPUState *this_cpu;

/*
 * The table exec_kick points a vCPU's probe at: as large as a jump cache,
 * every tag empty, never written after init (shared by all vCPUs).
 */
static JCEntry *jc_poison;

static inline void jc_set_entries(CPUState *cpu, size_t n) { cpu->jc_offset_mask = (n - 1) * sizeof(JCEntry); }

/*
 * An empty jump cache is all zeros but entry 0, whose tag is 1: tag 0
 * could only match guest pc 0, which indexes entry 0. So a new table is
 * fresh zero pages that fault in as they are filled (a thread start or an
 * execve does not write 1 MiB up front), and clearing is a memset.
 */
void jc_clear(JCEntry *jc, size_t n)
{
    memset(jc, 0, n * sizeof *jc);
    jc[0].pc = 1;
}

static size_t jc_bytes(void) { return ((size_t)1 << tune.jc_bits) * sizeof(JCEntry); }

/*
 * A vCPU has a jump cache per tb_flags value (system mode: one for U-mode
 * code, one for the kernel's, ...) and address space (system mode's TLB
 * slots: exec_space_changed), up to JC_SETS, so that a change of privilege
 * or of address space, which translated code's probe cannot see (it
 * compares only the pc), switches caches instead of emptying one: a set
 * never maps a pc to a block of another address space. A new set of a
 * space in a group is shared by the group's spaces until it is given a
 * block of a page that is not global (the kernel's sets never are): then
 * it is its space's alone. Each set keeps the
 * set of virtual pages whose blocks it may hold (added by every fill,
 * emptied with the set), so that a mapping change of a page a set has no
 * blocks of (data pages: most; and the kernel's sets, for a user page)
 * costs one lookup: Linux fences one page after every page fault. A set
 * emptied while not in use is only marked stale, and emptied when it is
 * used again; a set remembers where its first JC_LOG fills went, so
 * emptying one that few blocks went into (a short process's) clears
 * those entries instead of the whole table.
 */
#define JC_SETS 24                      /* 8 spaces of 2 or 3 flag values each */

/* Page numbers + 1 (0: a free slot), open addressed, at most half full. */
typedef struct JcPages {
    uint64_t *slot;                     /* NULL until the first fill */
    unsigned bits;                      /* 1 << bits slots */
    unsigned count;
} JcPages;

#define JC_PAGES_BITS_MIN 6
#define JC_LOG 4096

typedef struct JcSet {
    JCEntry *table;                     /* NULL until first used */
    uint32_t flags;
    unsigned space;                     /* whose it is, unless shared */
    unsigned group;
    bool shared;                        /* global code only: the group's */
    bool stale;                         /* empty it before use */
    JcPages pages;
    uint32_t *log;                      /* the indexes filled since it was emptied, */
    unsigned logged;                    /* how many; JC_LOG + 1: too many to list */
    uint64_t last_used;
} JcSet;

struct JcSets {
    JcSet set[JC_SETS];
    JcSet *cur, *prev;
    uint64_t clock;
    unsigned space, group;              /* the vCPU's address space now */
};

static size_t pages_home(uint64_t page, unsigned bits)
{
    return (size_t)((page * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
}

static bool pages_has(const JcPages *p, uint64_t page)
{
    if (!p->slot)
        return false;
    size_t mask = ((size_t)1 << p->bits) - 1;
    for (size_t i = pages_home(page, p->bits);; i = (i + 1) & mask) {
        if (p->slot[i] == page + 1)
            return true;
        if (p->slot[i] == 0)
            return false;
    }
}

/* Add page, known absent, with room for it. */
static void pages_insert(JcPages *p, uint64_t page)
{
    size_t mask = ((size_t)1 << p->bits) - 1, i = pages_home(page, p->bits);
    while (p->slot[i])
        i = (i + 1) & mask;
    p->slot[i] = page + 1;
    p->count++;
}

static void pages_grow(JcPages *p)
{
    uint64_t *old = p->slot;
    size_t had = old ? (size_t)1 << p->bits : 0;
    p->bits = old ? p->bits + 1 : JC_PAGES_BITS_MIN;
    p->slot = calloc((size_t)1 << p->bits, sizeof *p->slot);
    if (!p->slot) {
        perror("xlat: jump cache");
        exit(1);
    }
    p->count = 0;
    for (size_t i = 0; i < had; i++)
        if (old[i])
            pages_insert(p, old[i] - 1);
    free(old);
}

static void pages_add(JcPages *p, uint64_t page)
{
    if (pages_has(p, page))
        return;
    if (!p->slot || (p->count + 1) * 2 > 1u << p->bits)
        pages_grow(p);
    pages_insert(p, page);
}

static void pages_clear(JcPages *p)
{
    if (p->count)
        memset(p->slot, 0, sizeof *p->slot << p->bits);
    p->count = 0;
}

static void set_empty(const CPUState *cpu, JcSet *s)
{
    if (s->logged > JC_LOG) {
        jc_clear(s->table, jc_entries(cpu));
    } else {
        for (unsigned k = 0; k < s->logged; k++)
            s->table[s->log[k]] = (JCEntry){ 0, NULL };
        s->table[0].pc = 1;
    }
    s->logged = 0;
    pages_clear(&s->pages);
    s->stale = false;
}

/* Empty every set of cpu (the current one now, the others when used). */
static void jc_empty_all(CPUState *cpu)
{
    for (unsigned i = 0; i < JC_SETS; i++)
        cpu->jc_sets->set[i].stale = true;
    set_empty(cpu, cpu->jc_sets->cur);
}

/* Zeroed memory jc as an empty table (entry 0's tag is 1: no pc 0 matches it). */
static JCEntry *jc_emptied(JCEntry *jc)
{
    jc[0].pc = 1;
    return jc;
}

static JCEntry *jc_alloc(void)
{
    JCEntry *jc = mmap(NULL, jc_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    if (jc == MAP_FAILED) {
        perror("xlat: jump cache");
        exit(1);
    }
    return jc_emptied(jc);
}

/* Give s its (empty) table and fill log. */
static void set_alloc(JcSet *s)
{
    s->table = jc_alloc();
    size_t start = sizeof(JCEntry) << JC_BITS_START;
    prefault(s->table, start < jc_bytes() ? start : jc_bytes());   /* the part a new set uses */
    s->log = malloc(JC_LOG * sizeof *s->log);
    if (!s->log) {
        perror("xlat: jump cache");
        exit(1);
    }
    s->logged = 0;
}

/* Can t serve cpu->tb_flags in the space now: its own, or its group's? */
static bool set_serves(const struct JcSets *ss, const JcSet *t, uint32_t flags, bool shared)
{
    if (!t->table || t->flags != flags || t->shared != shared)
        return false;
    return shared ? t->group == ss->group : t->space == ss->space;
}

/*
 * The set for cpu->tb_flags in the space now: the one current before this
 * one (a trap and its return go back and forth between two), else the
 * space's own, its group's shared one, or a new one (tb_lock held).
 */
static JcSet *jc_find(CPUState *cpu)
{
    struct JcSets *ss = cpu->jc_sets;
    bool grouped = ss->group != EXEC_NO_GROUP;
    JcSet *s = NULL, *shared = NULL, *victim = &ss->set[0];
    if (ss->prev && (set_serves(ss, ss->prev, cpu->tb_flags, false) ||
                     (grouped && set_serves(ss, ss->prev, cpu->tb_flags, true))))
        return ss->prev;
    for (unsigned i = 0; i < JC_SETS && !s; i++) {
        JcSet *t = &ss->set[i];
        if (set_serves(ss, t, cpu->tb_flags, false))
            s = t;
        else if (grouped && set_serves(ss, t, cpu->tb_flags, true))
            shared = t;
        else if (!t->table || (victim->table && t->last_used < victim->last_used))
            victim = t;
    }
    if (s || shared)
        return s ? s : shared;
    if (!victim->table)
        set_alloc(victim);
    victim->flags = cpu->tb_flags;
    victim->space = ss->space;
    victim->group = ss->group;
    victim->shared = grouped;
    victim->stale = true;
    return victim;
}

/* Make the set of cpu->tb_flags and the space current (tb_lock held). */
static void jc_select(CPUState *cpu)
{
    struct JcSets *ss = cpu->jc_sets;
    JcSet *s = jc_find(cpu);
    if (s->stale)
        set_empty(cpu, s);
    s->last_used = ++ss->clock;
    if (s != ss->cur)
        ss->prev = ss->cur;
    ss->cur = s;
    cpu->jc = s->table;
    cpu->jc_flags = s->flags;
    /* The probe follows, unless an exit request poisons it meanwhile. */
    __atomic_store_n(&cpu->jc_probe, s->table, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&cpu->exit_request, __ATOMIC_SEQ_CST))
        exec_kick(cpu);
}

/* The poison table is only read (a probe of a kicked vCPU): its pages stay
 * the zero page, not populated like a set's (a page fault each in every
 * process for nothing). Never unmapped, it comes from the tables'
 * reservation (map_noreserve), one mmap fewer at a start. */
void jump_cache_init(void)
{
    jc_poison = jc_emptied(map_noreserve(jc_bytes()));
}

void exec_kick(CPUState *cpu)
{
    if (cpu->jc && tune.poison)
        __atomic_store_n(&cpu->jc_probe, jc_poison, __ATOMIC_SEQ_CST);
}

/*
 * A jump cache is mapped at its full size (--tune jc-bits) but starts with
 * 2^JC_BITS_START entries in use, and grows fourfold (emptied: entries
 * must sit at their pc's index for invalidation to find them) while more
 * TBs exist than half its entries: a process that runs a few thousand
 * blocks, like most of those a shell script starts, then faults in 16
 * pages of it, not 256. Translated code reads the mask from CPUState.
 * With tb_lock held, on the thread running cpu.
 */
static void jc_fit(CPUState *cpu)
{
    size_t full = (size_t)1 << tune.jc_bits;
    size_t n = jc_entries(cpu);
    if (n == full || ntbs <= n / 2)
        return;
    jc_empty_all(cpu);
    jc_set_entries(cpu, n * 4 < full ? n * 4 : full);
}

/* Is tb's code in global pages only (its set may then stay shared)? */
static bool tb_code_global(const CPUState *cpu, const TB *tb)
{
    bool (*global)(const CPUState *, uint64_t) = guest_mem.ops->code_global;
    return global && global(cpu, tb->pc) &&
           (tb->next_page == TB_NO_PAGE || global(cpu, tb->pc + 2));
}

/* With tb_lock held, on the thread running cpu: tb's jump cache entry. */
static void jc_fill(CPUState *cpu, const TB *tb)
{
    jc_fit(cpu);
    size_t i = jc_index(cpu, tb->pc);
    JCEntry *j = &cpu->jc[i];
    JcSet *s = cpu->jc_sets->cur;
    if (s->logged < JC_LOG)
        s->log[s->logged++] = (uint32_t)i;
    else
        s->logged = JC_LOG + 1;
    if (s->shared && !tb_code_global(cpu, tb)) {
        s->shared = false;              /* this space's alone from now on */
        s->space = cpu->jc_sets->space;
    }
    pages_add(&s->pages, tb->pc / TARGET_PAGE_SIZE);
    if (tb->next_page != TB_NO_PAGE)    /* it maps the next page too (set_forget_page) */
        pages_add(&s->pages, tb->pc / TARGET_PAGE_SIZE + 1);
    j->host = tb_entry_rx(tb);
    __atomic_store_n(&j->pc, tb->pc, __ATOMIC_RELEASE);
}

/*
 * tb (just looked up or translated) into cpu's jump cache, unless another
 * thread invalidated it meanwhile or -d exec traces every dispatch; a
 * lookup also goes to the fork warm-up (warm_record). Takes tb_lock.
 */
void jc_publish(CPUState *cpu, const TB *tb, unsigned df, bool record_lookup)
{
    if (df & DF_TRACE)
        return;
    xmutex_lock(&tb_lock);
    if (tb->valid) {
        jc_fill(cpu, tb);
        if (record_lookup)
            warm_record(tb->pc);
    }
    xmutex_unlock(&tb_lock);
}

void jc_flags_changed(CPUState *cpu)
{
    xmutex_lock(&tb_lock);
    jc_select(cpu);
    xmutex_unlock(&tb_lock);
}

void exec_flags_changed(CPUState *cpu)
{
    if (cpu->jc_sets && cpu->jc_flags != cpu->tb_flags)
        jc_flags_changed(cpu);
}

void jc_flush_vcpu(CPUState *cpu)
{
    jc_empty_all(cpu);
}

/* Forget set s's blocks of the page of vaddr: a page's pcs fill a run of
 * consecutive entries (entry (pc >> 1) mod n), wrapping; and the block at
 * the previous page's last halfword, whose instruction may end on this
 * page (tb.h's TBKey). */
static void set_forget_page(const CPUState *cpu, JcSet *s, uint64_t vaddr)
{
    uint64_t page = vaddr / TARGET_PAGE_SIZE;
    if (!s->table || s->stale || !pages_has(&s->pages, page))
        return;                         /* no block of that page in it */
    size_t n = jc_entries(cpu);
    size_t first = jc_index(cpu, page * TARGET_PAGE_SIZE);
    size_t run = TARGET_PAGE_SIZE / 2 < n ? TARGET_PAGE_SIZE / 2 : n;
    for (size_t k = 0; k < run; k++) {
        JCEntry *j = &s->table[(first + k) & (n - 1)];
        if (j->pc / TARGET_PAGE_SIZE == page)
            __atomic_store_n(&j->pc, 1, __ATOMIC_RELEASE);
    }
    uint64_t crossing = page * TARGET_PAGE_SIZE - 2;
    JCEntry *j = &s->table[jc_index(cpu, crossing) & (n - 1)];
    if (j->pc == crossing)
        __atomic_store_n(&j->pc, 1, __ATOMIC_RELEASE);
}

void exec_mapping_changed(CPUState *cpu, bool all, uint64_t vaddr)
{
    if (!cpu->jc)
        return;                         /* the interpreter only */
    xmutex_lock(&tb_lock);
    if (all)
        jc_empty_all(cpu);
    else
        for (unsigned i = 0; i < JC_SETS; i++)
            set_forget_page(cpu, &cpu->jc_sets->set[i], vaddr);
    xmutex_unlock(&tb_lock);
}

/* Forget set s's blocks of the pages of [lo, hi]: those it has blocks of. */
static void set_forget_range(const CPUState *cpu, JcSet *s, uint64_t lo, uint64_t hi)
{
    if (!s->table || s->stale || !s->pages.slot)
        return;
    for (size_t k = 0; k < (size_t)1 << s->pages.bits; k++) {
        uint64_t page = s->pages.slot[k] - 1;
        if (s->pages.slot[k] && page >= lo / TARGET_PAGE_SIZE && page <= hi / TARGET_PAGE_SIZE)
            set_forget_page(cpu, s, page * TARGET_PAGE_SIZE);
    }
}

void exec_mapping_range_changed(CPUState *cpu, uint64_t lo, uint64_t hi)
{
    if (!cpu->jc)
        return;
    xmutex_lock(&tb_lock);
    for (unsigned i = 0; i < JC_SETS; i++)
        set_forget_range(cpu, &cpu->jc_sets->set[i], lo, hi);
    xmutex_unlock(&tb_lock);
}

void exec_space_changed(CPUState *cpu, unsigned space, unsigned group)
{
    if (!cpu->jc)
        return;
    xmutex_lock(&tb_lock);
    cpu->jc_sets->space = space;
    cpu->jc_sets->group = group;
    jc_select(cpu);
    xmutex_unlock(&tb_lock);
}

void exec_space_mapping_changed(CPUState *cpu, unsigned space, bool all, uint64_t vaddr)
{
    if (!cpu->jc)
        return;
    xmutex_lock(&tb_lock);
    struct JcSets *ss = cpu->jc_sets;
    for (unsigned i = 0; i < JC_SETS; i++) {
        JcSet *s = &ss->set[i];
        if (!s->table || s->shared || s->space != space)
            continue;
        if (!all)
            set_forget_page(cpu, s, vaddr);
        else if (s == ss->cur)
            set_empty(cpu, s);
        else
            s->stale = true;
    }
    xmutex_unlock(&tb_lock);
}

void jc_forget_tb(const TB *tb)
{
    const void *host = tb_entry_rx(tb);
    for (size_t i = 0; i < nvcpus; i++)
        for (unsigned k = 0; k < JC_SETS; k++) {
            JcSet *s = &vcpus[i]->jc_sets->set[k];
            if (!s->table)
                continue;
            JCEntry *j = &s->table[jc_index(vcpus[i], tb->pc)];
            if (j->host == host)
                __atomic_store_n(&j->pc, 1, __ATOMIC_RELEASE);
        }
}

/* -- vCPUs ------------------------------------------------------------------------------- */

void exec_cpu_init(CPUState *cpu)
{
    interp_cpu_init(cpu);
    cpu->guest_limit = guest_mem.limit;
    cpu->jit_kick = 0;
    cpu->jit_link = 0;
    cpu->jc = cpu->jc_probe = NULL;
    if (!code_rw)
        return;                         /* the interpreter only */
    cpu->jc_sets = calloc(1, sizeof *cpu->jc_sets);
    if (!cpu->jc_sets) {
        perror("xlat: jump cache");
        exit(1);
    }
    JcSet *s = cpu->jc_sets->cur = &cpu->jc_sets->set[0];
    set_alloc(s);
    cpu->jc = s->table;
    s->flags = cpu->jc_flags = cpu->tb_flags;
    cpu->jc_sets->group = EXEC_NO_GROUP;
    jc_set_entries(cpu, (size_t)1 << (tune.jc_bits < JC_BITS_START ? tune.jc_bits : JC_BITS_START));
    cpu->jc_probe = cpu->jc;
    xmutex_lock(&tb_lock);
    if (nvcpus == vcpus_cap) {
        vcpus_cap = vcpus_cap ? 2 * vcpus_cap : 16;
        vcpus = realloc(vcpus, vcpus_cap * sizeof *vcpus);
    }
    vcpus[nvcpus++] = cpu;
    xmutex_unlock(&tb_lock);
}

void exec_cpu_exit(CPUState *cpu)
{
    interp_cpu_exit(cpu);
    if (this_cpu == cpu) {
        dstats_flush();
        this_cpu = NULL;
    }
    if (!cpu->jc)
        return;
    xmutex_lock(&tb_lock);
    for (size_t i = 0; i < nvcpus; i++)
        if (vcpus[i] == cpu)
            vcpus[i] = vcpus[--nvcpus];
    xmutex_unlock(&tb_lock);
    for (unsigned k = 0; k < JC_SETS; k++) {
        if (cpu->jc_sets->set[k].table)
            munmap(cpu->jc_sets->set[k].table, jc_bytes());
        free(cpu->jc_sets->set[k].pages.slot);
        free(cpu->jc_sets->set[k].log);
    }
    free(cpu->jc_sets);
    cpu->jc_sets = NULL;
    cpu->jc = NULL;
    cpu->jc_probe = NULL;
}
