/*
 * The TB cache: every live translation, found by its key (a hash table that
 * grows with the number of TBs) and by the physical pages its code comes
 * from (page lists, for invalidation); translating a new block; and
 * dropping translations when their code may have changed.
 *
 * Invalidation drops a TB from the hash table, its pages' lists and every
 * jump cache, and unlinks the jumps into it (chain.c). Its code stays until
 * the next flush, so a thread still inside it finishes safely.
 *
 * Stores to code. A translation tells the mode which pages it read
 * (guest_mem.ops->code_watch, with tb_lock held, before it reads them: a
 * store by another thread in between then waits for tb_lock and drops the
 * new TB); the mode reports a write to such a page with exec_code_written
 * (user mode: the host page is read-only and the store faults). Its other
 * entry points are for the mode's own changes: exec_invalidate_range (the
 * mapping changed), exec_invalidate_code (the bytes may have changed
 * without a store the mode saw) and exec_unwatch_all (a host system call
 * must write to watched pages).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "exec/internal.h"
#include "exec/pcache.h"
#include "exec/perfmap.h"
#include "riscv/insn.h"
#include "riscv/translate.h"
#include "x86/backend.h"
#include "x86/disas.h"

#define HASH_BITS_MIN 10           /* the TB hash table starts this small... */
#define HASH_BITS_MAX 19           /* ...and grows to this (MAX_TBS buckets) */

XMutex tb_lock = XMUTEX_INITIALIZER;
TB *tbs;
size_t ntbs;
/* 1 << tb_hash_bits buckets in use of a table mapped for HASH_BITS_MAX:
 * zero pages, so a short-lived process touches only the few it uses. */
TB **tb_hash;
unsigned tb_hash_bits = HASH_BITS_MIN;
uint64_t *tb_filter;                    /* 8 << tb_hash_bits bits in use, as tb_hash */
#define FILTER_BYTES(bits) ((size_t)1 << (bits))     /* eight bits per bucket */

typedef struct PageDesc {
    uint64_t page;
    uint32_t first;                     /* TBRef << 1 | index list of TBs on this page */
    struct PageDesc *next;
} PageDesc;

/*
 * The pages that have TBs, hashed by page number: 1 << page_hash_bits
 * buckets in use of a table sized for PAGE_HASH_BITS_MAX, grown as pages
 * come (at most one page a bucket on average). A process start has a few
 * dozen code pages, a booted kernel and its programs tens of thousands.
 * Descriptors are never freed (a page keeps its own when its TBs go).
 */
#define PAGE_HASH_BITS_MIN 9
#define PAGE_HASH_BITS_MAX 20
static PageDesc *page_hash[1u << PAGE_HASH_BITS_MAX] LARGE_BSS PAGE_ALIGNED;
static unsigned page_hash_bits = PAGE_HASH_BITS_MIN;
static size_t npages;
static PageDesc *desc_chunk;            /* descriptors are carved from chunks of DESC_CHUNK */
static size_t desc_left;
#define DESC_CHUNK 170                  /* 4 KiB */

static inline size_t page_buckets(void) { return (size_t)1 << page_hash_bits; }

static Frontier tb_area;               /* the TB pool, populated ahead */

void tb_cache_init(void)
{
    tbs = map_noreserve(MAX_TBS * sizeof(TB));
    tb_area = (Frontier){ .base = (uint8_t *)tbs, .size = MAX_TBS * sizeof(TB) };   /* used counts the new TB */
    /* The filter first: its populated start and the hash table's then
     * share a page table page (512 KiB apart); each costs microseconds to
     * make and to tear down. */
    tb_filter = map_noreserve(FILTER_BYTES(HASH_BITS_MAX));
    prefault(tb_filter, FILTER_BYTES(HASH_BITS_MIN));
    tb_hash = map_noreserve(sizeof *tb_hash << HASH_BITS_MAX);
    prefault(tb_hash, sizeof *tb_hash << HASH_BITS_MIN);
    prefault(page_hash, sizeof *page_hash << PAGE_HASH_BITS_MIN);
}

/* -- Hash table and page lists (tb_lock held) ------------------------------------------- */

static inline size_t hash_page(uint64_t p) { return (size_t)((p * 0x9e3779b97f4a7c15ULL) >> (64 - page_hash_bits)); }

static void hash_insert(TB *tb)
{
    uint64_t hash = tb_hash_of(tb->pc, tb->flags);
    size_t h = tb_bucket(hash), f = tb_filter_bit(hash);
    tb->hash_next = tb_hash[h];
    tb_hash[h] = tb;
    tb_filter[f / 64] |= 1ULL << (f % 64);
}

/* Before inserting TB number ntbs: keep chains under one TB long on
 * average. Most lookups of a warm start miss (a block about to be
 * installed or run for the first time) and each TB of the chain they walk
 * is a cache miss: with two-long chains, those were half of the
 * dispatcher's time in a warm python3 start. */
static void hash_fit(void)
{
    if (ntbs < (1u << tb_hash_bits) / 2 || tb_hash_bits == HASH_BITS_MAX)
        return;
    memset(tb_hash, 0, sizeof *tb_hash << tb_hash_bits);
    memset(tb_filter, 0, FILTER_BYTES(tb_hash_bits));
    tb_hash_bits = tb_hash_bits + 2 < HASH_BITS_MAX ? tb_hash_bits + 2 : HASH_BITS_MAX;
    prefault(tb_hash, sizeof *tb_hash << tb_hash_bits);
    prefault(tb_filter, FILTER_BYTES(tb_hash_bits));
    for (size_t i = 0; i < ntbs; i++)
        if (tbs[i].valid)
            hash_insert(&tbs[i]);
}

static void hash_remove(TB *tb)
{
    for (TB **pp = &tb_hash[tb_hash_key(tb->pc, tb->flags)]; *pp; pp = &(*pp)->hash_next)
        if (*pp == tb) {
            *pp = tb->hash_next;
            return;
        }
}

static void page_insert(PageDesc *pd)
{
    PageDesc **head = &page_hash[hash_page(pd->page)];
    pd->next = *head;
    *head = pd;
}

/* Four times the buckets, every descriptor rehashed. */
static void page_hash_grow(void)
{
    PageDesc *all = NULL;
    for (size_t b = 0; b < page_buckets(); b++)
        while (page_hash[b]) {
            PageDesc *pd = page_hash[b];
            page_hash[b] = pd->next;
            pd->next = all;
            all = pd;
        }
    page_hash_bits = page_hash_bits + 2 < PAGE_HASH_BITS_MAX ? page_hash_bits + 2 : PAGE_HASH_BITS_MAX;
    prefault(page_hash, sizeof *page_hash << page_hash_bits);
    while (all) {
        PageDesc *pd = all;
        all = pd->next;
        page_insert(pd);
    }
}

static PageDesc *page_desc_new(uint64_t page)
{
    if (!desc_left) {
        desc_chunk = calloc(DESC_CHUNK, sizeof *desc_chunk);
        if (!desc_chunk) {
            perror("xlat: code page table");
            exit(1);
        }
        desc_left = DESC_CHUNK;
    }
    desc_left--;
    PageDesc *pd = desc_chunk++;
    pd->page = page;
    if (++npages > page_buckets() && page_hash_bits < PAGE_HASH_BITS_MAX)
        page_hash_grow();
    page_insert(pd);
    return pd;
}

static PageDesc *page_find(uint64_t page, bool alloc)
{
    for (PageDesc *pd = page_hash[hash_page(page)]; pd; pd = pd->next)
        if (pd->page == page)
            return pd;
    return alloc ? page_desc_new(page) : NULL;
}

static void page_remove_tb(uint64_t page, TB *tb)
{
    PageDesc *pd = page_find(page, false);
    if (!pd)
        return;
    for (uint32_t *pp = &pd->first; *pp;) {
        TB *t = tb_of_ref(*pp >> 1);
        int i = (int)(*pp & 1);
        if (t == tb) {
            *pp = t->page_next[i];
            return;
        }
        pp = &t->page_next[i];
    }
}

void tb_cache_reset(void)
{
    memset(tb_hash, 0, sizeof *tb_hash << tb_hash_bits);
    memset(tb_filter, 0, FILTER_BYTES(tb_hash_bits));
    for (size_t b = 0; b < page_buckets(); b++)
        for (PageDesc *pd = page_hash[b]; pd; pd = pd->next)
            pd->first = 0;
    __atomic_store_n(&ntbs, 0, __ATOMIC_RELEASE);
}

/* -- Invalidation ------------------------------------------------------------------------ */

void tb_invalidate(TB *tb)
{
    if (!tb->valid)
        return;
    tb->valid = false;
    stats.invalidated++;
    hash_remove(tb);
    for (int i = 0; i < 2; i++)
        if (tb->page[i] != TB_NO_PAGE)
            page_remove_tb(tb->page[i], tb);
    jc_forget_tb(tb);
    tb_unlink_all(tb);
}

static void page_invalidate(PageDesc *pd)
{
    while (pd->first)
        tb_invalidate(tb_of_ref(pd->first >> 1));
}

/* One page of invalidate_range. */
static void page_drop(PageDesc *pd, bool mapping_changed)
{
    page_invalidate(pd);
    if (mapping_changed)
        guest_mem.ops->code_unwatch(pd->page, true);
}

/*
 * Both range entry points: drop the TBs of [start, start+len), taking
 * tb_lock. With mapping_changed (exec_invalidate_range: the mode changed
 * the range and set its protection itself), the mode forgets its watch
 * too; otherwise (exec_invalidate_code: the pages are unchanged, only their
 * contents may be) the watch stays: a user-mode page left host read-only
 * and unwatched would turn the guest's next store into a spurious SIGSEGV.
 */
static void invalidate_range(uint64_t start, uint64_t len, bool mapping_changed)
{
    uint64_t first = start >> TARGET_PAGE_BITS;
    uint64_t last = (start + len - 1) >> TARGET_PAGE_BITS;
    if (!code_rw || len == 0)
        return;
    xmutex_lock(&tb_lock);
    if (last - first < page_buckets()) {
        /* A small range (every mmap and mprotect of a program's start):
         * look its pages up rather than walk the whole table. */
        for (uint64_t p = first; p <= last; p++) {
            PageDesc *pd = page_find(p, false);
            if (pd)
                page_drop(pd, mapping_changed);
        }
    } else {
        for (size_t b = 0; b < page_buckets(); b++)
            for (PageDesc *pd = page_hash[b]; pd; pd = pd->next)
                if (pd->page >= first && pd->page <= last)
                    page_drop(pd, mapping_changed);
    }
    xmutex_unlock(&tb_lock);
}

void exec_invalidate_range(uint64_t start, uint64_t len)
{
    pcache_mappings_changed();
    invalidate_range(start, len, true);
}

void exec_invalidate_code(uint64_t start, uint64_t len) { invalidate_range(start, len, false); }

void exec_code_written(uint64_t page)
{
    xmutex_lock(&tb_lock);
    if (guest_mem.ops->code_unwatch(page, false)) {
        PageDesc *pd = page_find(page, false);
        if (pd)
            page_invalidate(pd);
        stats.smc_faults++;
    }
    xmutex_unlock(&tb_lock);
}

bool exec_unwatch_all(void)
{
    bool any = false;
    if (!code_rw)
        return false;
    xmutex_lock(&tb_lock);
    for (size_t b = 0; b < page_buckets(); b++)
        for (PageDesc *pd = page_hash[b]; pd; pd = pd->next)
            if (guest_mem.ops->code_unwatch(pd->page, false)) {
                page_invalidate(pd);
                any = true;
            }
    if (any)
        stats.efault_retries++;
    xmutex_unlock(&tb_lock);
    return any;
}

/* -- Translation ---------------------------------------------------------------------------- */

static void log_cold_code(const TB *tb, size_t from, size_t to)
{
    const uint8_t *p = code_rw + tb->cold_off + from;
    host_disas(log_file, p, to - from, (uint64_t)(uintptr_t)code_rx_of(p));
}

/* The out-of-line code, with its exit stubs' data shown as such. */
static void log_cold(const TB *tb)
{
    size_t at = 0;
    for (int s = 0; s < TB_MAX_SLOTS; s++) {
        size_t stub = tb->host_off + tb->jmp_stub[s] - tb->cold_off;
        if (!tb->jmp_field[s] || stub < at || stub + BE_STUB_BYTES > tb->cold_size)
            continue;
        log_cold_code(tb, at, stub + BE_STUB_DATA);
        fprintf(log_file, "  %p:  (exit stub data: TB %u slot %d, target 0x%llx)\n",
                code_rx_of(code_rw + tb->cold_off + stub + BE_STUB_DATA), tb_number(tb), s,
                (unsigned long long)be_stub_target(tb, s));
        at = stub + BE_STUB_BYTES;
    }
    log_cold_code(tb, at, tb->cold_size);
}

static void log_tb(const TB *tb)
{
    if (log_mask & LOG_IN_ASM) {
        fprintf(log_file, "IN: \n");
        for (unsigned i = 0; i < tb->ninsns; i++)
            insn_print_at(log_file, tb->pc + pcmap[tb->pcmap + i][1]);
        fprintf(log_file, "\n");
    }
    if (log_mask & LOG_OUT_ASM) {
        const uint8_t *p = tb_entry_rw(tb);
        fprintf(log_file, "OUT: [guest 0x%llx, %u bytes at %p]\n",
                (unsigned long long)tb->pc, tb->host_size, tb_entry_rx(tb));
        host_disas(log_file, p, tb->host_size, (uint64_t)(uintptr_t)tb_entry_rx(tb));
        fprintf(log_file, "  -- out of line --\n");
        log_cold(tb);
        fprintf(log_file, "\n");
    }
}

/* Is the first instruction at key fully fetchable? With a mode's own
 * translation of pcs (code_phys), one that crosses into the next page
 * needs the key's next_page (tb_key_of found none: the interpreter runs
 * it and faults). */
static bool first_insn_ok(const CPUState *cpu, const TBKey *key)
{
    uint64_t pc = key->pc;
    if (pc & 1 || !guest_mem.ops->code_ok(cpu, pc, 2))
        return false;
    if (insn_length(*(const uint16_t *)guest_mem_code(key->phys)) == 2)
        return true;
    if (guest_mem.ops->code_phys && pc % TARGET_PAGE_SIZE == TARGET_PAGE_SIZE - 2 &&
        key->next_page == TB_NO_PAGE)
        return false;
    return guest_mem.ops->code_ok(cpu, pc + 2, 2);
}

static bool buffer_full(void)
{
    return ntbs == MAX_TBS || pcmap_used + TB_MAX_INSNS > PCMAP_PAIRS ||
           code_used + TRANSLATE_MAX_HOST + 64 > HOT_END ||
           cold_used + TRANSLATE_MAX_HOST + 64 > CODE_SIZE;
}

/* The physical page the code at key ends on, if it crosses a page
 * boundary (its first instruction's second half: the window is
 * contiguous, a mode's own translation gives next_page). */
static uint64_t second_page(const TBKey *key)
{
    return key->next_page != TB_NO_PAGE ? key->next_page : (key->phys >> TARGET_PAGE_BITS) + 1;
}

/* With tb_lock held: put tb (translated) on the lists of its pages. */
static void tb_add_pages(TB *tb, const TBKey *key)
{
    bool crosses = (tb->phys % TARGET_PAGE_SIZE) + tb->guest_size > TARGET_PAGE_SIZE;
    tb->page[0] = tb->phys >> TARGET_PAGE_BITS;
    tb->page[1] = crosses ? second_page(key) : tb->page[0];
    if (tb->page[1] == tb->page[0])
        tb->page[1] = TB_NO_PAGE;
    for (int i = 0; i < 2; i++) {
        if (tb->page[i] == TB_NO_PAGE)
            continue;
        PageDesc *pd = page_find(tb->page[i], true);
        tb->page_next[i] = pd->first;
        pd->first = tb_ref(tb) << 1 | (uint32_t)i;
        guest_mem.ops->code_watch(tb->page[i]);
    }
}

/* With the code lock and tb_lock held: may a new TB for key be made now?
 * TR_OK, or why not. */
static int tb_room(const CPUState *cpu, const TBKey *key)
{
    if (!first_insn_ok(cpu, key))
        return TR_NOEXEC;
    return buffer_full() ? TR_FULL : TR_OK;
}

uint32_t tb_number(const TB *tb) { return (uint32_t)(tb - tbs); }
TB *tb_numbered(uint32_t n) { return &tbs[n]; }

/* The next TB, for key (tb_lock held, tb_room said so). */
TB *tb_new(const TBKey *key)
{
    code_make_private();
    frontier_advance(&tb_area, (ntbs + 1) * sizeof(TB));
    TB *tb = &tbs[ntbs];
    memset(tb, 0, sizeof *tb);
    tb->pc = key->pc;
    tb->phys = key->phys;
    tb->next_page = key->next_page;
    tb->flags = key->flags;
    return tb;
}

/* tb's code is in place: into the tables, and the logs. */
void tb_publish(TB *tb, const TBKey *key)
{
    tb_add_pages(tb, key);
    tb->valid = true;
    code_areas_advance();
    hash_fit();
    hash_insert(tb);
    __atomic_store_n(&ntbs, ntbs + 1, __ATOMIC_RELEASE);
    warm_record(tb->pc);
    if (perfmap_enabled) {
        perfmap_add(tb->pc, tb_entry_rx(tb), tb->host_size);
        perfmap_add(tb->pc, code_rx_of(code_rw + tb->cold_off), tb->cold_size);
    }
    if (log_mask & (LOG_IN_ASM | LOG_OUT_ASM))
        log_tb(tb);
}

int tb_translate(CPUState *cpu, const TBKey *key, TB **out)
{
    uint64_t pc = key->pc;
    guest_mem.ops->code_lock();
    xmutex_lock(&tb_lock);
    TB *tb = tb_lookup(key);
    int r = tb ? TR_OK : tb_room(cpu, key);
    if (tb || r != TR_OK)
        goto done;
    tb = tb_new(key);
    size_t off = code_used;             /* blocks back to back, no padding */
    tb->host_off = (uint32_t)off;
    Emit e = { .start = code_rw + off, .p = code_rw + off, .end = code_rw + HOT_END };
    Emit cold = { .start = code_rw + cold_used, .p = code_rw + cold_used,
                  .end = code_rw + CODE_SIZE };
    uint16_t map[TB_MAX_INSNS][2];
    /* Watch before reading the code, not after (see the top). The first
     * instruction may end on the next page. */
    guest_mem.ops->code_watch(key->phys >> TARGET_PAGE_BITS);
    if (key->phys % TARGET_PAGE_SIZE == TARGET_PAGE_SIZE - 2)
        guest_mem.ops->code_watch(second_page(key));
    bool keep = pcache_capture_begin(pc);
    translate_block(tb, &e, &cold, map);
    _Static_assert(TRANSLATE_MAX_HOST <= UINT16_MAX, "TB.host_size and cold_size are 16 bits");
    if (e.p - e.start > TRANSLATE_MAX_HOST || cold.p - cold.start > TRANSLATE_MAX_HOST) {
        fprintf(stderr, "xlat: internal error: block at 0x%llx took more host code than "
                "TRANSLATE_MAX_HOST\n", (unsigned long long)pc);
        abort();
    }
    tb->host_size = (uint16_t)(e.p - e.start);
    tb->cold_off = (uint32_t)cold_used;
    tb->cold_size = (uint16_t)(cold.p - cold.start);
    uint16_t *dst = tb_pcmap_alloc(tb->ninsns, &tb->pcmap);
    memcpy(dst, map, tb->ninsns * sizeof map[0]);
    code_used = off + tb->host_size;
    cold_used = (cold_used + tb->cold_size + 15) & ~(size_t)15;
    if (keep)
        pcache_capture_end(tb, cold.start, (const uint16_t (*)[2])map);
    stats.translated++;
    tb_publish(tb, key);
done:
    xmutex_unlock(&tb_lock);
    guest_mem.ops->code_unlock();
    *out = tb;
    return r;
}

int tb_from_pcache(const TBKey *key, TB **out, unsigned df, bool *counted)
{
    PcacheHit hit;
    *out = NULL;
    if (!pcache_on)
        return TR_NONE;
    guest_mem.ops->code_lock();
    if (!pcache_lookup(key->pc, &hit)) {
        guest_mem.ops->code_unlock();
        return TR_NONE;
    }
    xmutex_lock(&tb_lock);
    if (pcache_image_due(&hit))
        pcache_image_install(&hit, key);
    TB *tb = tb_lookup(key);
    if (!tb && !*counted && !pcache_hit_ours(&hit)) {
        *counted = true;
        if (interp_run_of(key->pc, df)) {
            xmutex_unlock(&tb_lock);
            guest_mem.ops->code_unlock();
            return TR_INTERP;
        }
    }
    /* The hit's origin is an executable mapping holding the whole block:
     * no need to ask code_ok (tb_room) again. */
    if (!tb && !(key->pc & 1) && !buffer_full()) {
        tb = tb_new(key);
        size_t hot = code_used, cold = cold_used;
        if (pcache_fill(tb, &hit, &hot, &cold)) {
            code_used = hot + tb->host_size;
            cold_used = (cold + tb->cold_size + 15) & ~(size_t)15;
            tb_publish(tb, key);
        } else {
            tb = NULL;
        }
    }
    xmutex_unlock(&tb_lock);
    guest_mem.ops->code_unlock();
    *out = tb;
    return tb ? TR_OK : TR_NONE;
}
