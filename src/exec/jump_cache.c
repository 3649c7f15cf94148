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

#define JC_BITS_START 12           /* a jump cache starts this small (see jc_fit) */

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

static JCEntry *jc_alloc(void)
{
    JCEntry *jc = mmap(NULL, jc_bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
    if (jc == MAP_FAILED) {
        perror("xlat: jump cache");
        exit(1);
    }
    jc[0].pc = 1;
    return jc;
}

void jump_cache_init(void)
{
    jc_poison = jc_alloc();
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
    jc_clear(cpu->jc, n);
    jc_set_entries(cpu, n * 4 < full ? n * 4 : full);
}

/* With tb_lock held, on the thread running cpu: tb's jump cache entry. */
static void jc_fill(CPUState *cpu, const TB *tb)
{
    jc_fit(cpu);
    JCEntry *j = &cpu->jc[jc_index(cpu, tb->pc)];
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
    pthread_mutex_lock(&tb_lock);
    if (tb->valid) {
        jc_fill(cpu, tb);
        if (record_lookup)
            warm_record(tb->pc);
    }
    pthread_mutex_unlock(&tb_lock);
}

void jc_flags_changed(CPUState *cpu)
{
    pthread_mutex_lock(&tb_lock);
    jc_clear(cpu->jc, jc_entries(cpu));
    cpu->jc_flags = cpu->tb_flags;
    pthread_mutex_unlock(&tb_lock);
}

/*
 * A page's pcs fill a run of consecutive entries (entry (pc >> 1) mod n),
 * so forgetting one page's blocks empties at most that run, wrapping.
 */
void exec_mapping_changed(CPUState *cpu, bool all, uint64_t vaddr)
{
    if (!cpu->jc)
        return;                         /* the interpreter only */
    pthread_mutex_lock(&tb_lock);
    size_t n = jc_entries(cpu);
    size_t run = TARGET_PAGE_SIZE / 2;
    if (all || run >= n) {
        jc_clear(cpu->jc, n);
    } else {
        uint64_t page = vaddr / TARGET_PAGE_SIZE;
        size_t first = jc_index(cpu, page * TARGET_PAGE_SIZE);
        for (size_t k = 0; k < run; k++) {
            JCEntry *j = &cpu->jc[(first + k) & (n - 1)];
            if (j->pc / TARGET_PAGE_SIZE == page)
                __atomic_store_n(&j->pc, 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&tb_lock);
}

void jc_forget_tb(const TB *tb)
{
    const void *host = tb_entry_rx(tb);
    for (size_t i = 0; i < nvcpus; i++) {
        JCEntry *j = &vcpus[i]->jc[jc_index(vcpus[i], tb->pc)];
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
    cpu->jc = jc_alloc();
    jc_set_entries(cpu, (size_t)1 << (tune.jc_bits < JC_BITS_START ? tune.jc_bits : JC_BITS_START));
    cpu->jc_probe = cpu->jc;
    pthread_mutex_lock(&tb_lock);
    if (nvcpus == vcpus_cap) {
        vcpus_cap = vcpus_cap ? 2 * vcpus_cap : 16;
        vcpus = realloc(vcpus, vcpus_cap * sizeof *vcpus);
    }
    vcpus[nvcpus++] = cpu;
    pthread_mutex_unlock(&tb_lock);
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
    pthread_mutex_lock(&tb_lock);
    for (size_t i = 0; i < nvcpus; i++)
        if (vcpus[i] == cpu)
            vcpus[i] = vcpus[--nvcpus];
    pthread_mutex_unlock(&tb_lock);
    munmap(cpu->jc, jc_bytes());
    cpu->jc = NULL;
    cpu->jc_probe = NULL;
}
