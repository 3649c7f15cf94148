/*
 * Chaining: a direct exit (goto_tb slot) is patched, the first time it is
 * taken, to jump straight into its target TB, unless -d nochain or -d exec;
 * across guest pages too (--tune xpage): invalidation unlinks every jump
 * into a dropped TB, whatever page it comes from. Each TB keeps the list of
 * slots that jump into it (jmp_in, TBRef << 3 | slot tags), so unlinking
 * is a walk of that list, each jump put back to its exit stub with one
 * atomic 4-byte store of the rel32. All with tb_lock held.
 *
 * Hints: a start image (pcache_image.c) names, for its blocks' exits, the
 * blocks an earlier process chained them to. The dispatcher then chains
 * such an exit the first time it is taken without looking its target up
 * (three cache misses in a warm start's large tables). Not chained at
 * install: a block's first run must still come through the dispatcher,
 * which marks it used (what the next image holds). A hint is kept in
 * jmp_next[n] while slot n is unchained and checked against the exit's
 * pc when used.
 */
#include "exec/internal.h"
#include "x86/emit.h"

static void patch_jump(TB *src, int n, const uint8_t *target_rw)
{
    code_make_private();
    emit_store_rel32(tb_entry_rw(src) + src->jmp_field[n], target_rw);
}

/* The page of src's exit (its last page) is dst's only page, physical and
 * virtual (system mode: an alias of the page elsewhere may be remapped). */
static bool same_page(const TB *src, const TB *dst)
{
    uint64_t last = src->page[1] != TB_NO_PAGE ? src->page[1] : src->page[0];
    uint64_t last_virtual = (src->pc + src->guest_size - 1) / TARGET_PAGE_SIZE;
    return dst->page[1] == TB_NO_PAGE && dst->page[0] == last &&
           dst->pc / TARGET_PAGE_SIZE == last_virtual;
}

void tb_link(TB *src, int n, TB *dst, unsigned df)
{
    if (!src->valid || !dst->valid || src->jmp_dest[n] || !src->jmp_field[n])
        return;
    if (!(df & DF_XPAGE) && !same_page(src, dst))
        return;
    src->jmp_dest[n] = tb_ref(dst);
    src->jmp_next[n] = dst->jmp_in;
    dst->jmp_in = tb_ref(src) << 3 | (uint32_t)n;
    patch_jump(src, n, tb_entry_rw(dst));
    stats.chained++;
    warm_record_edge(src->pc, n, dst->pc);
}

void tb_hint(TB *src, int n, TB *dst)
{
    if (src->jmp_field[n] && !src->jmp_dest[n])
        src->jmp_next[n] = tb_ref(dst);
}

TB *tb_chain_target(const TB *src, int n)
{
    return tb_of_ref(src->jmp_dest[n] ? src->jmp_dest[n] : src->jmp_next[n]);
}

TB *tb_link_hinted(uintptr_t link, uint64_t pc, uint32_t flags, unsigned df)
{
    TB *src = (TB *)(link & ~(uintptr_t)TB_SLOT_MASK);
    int n = (int)(link & TB_SLOT_MASK);
    /* Most exits have no hint (a cold start's, a block not from an image):
     * no lock for them. Read unlocked, a hint can only be missed, and is
     * checked again under the lock. */
    if (!__atomic_load_n(&src->jmp_next[n], __ATOMIC_RELAXED))
        return NULL;
    xmutex_lock(&tb_lock);
    TB *dst = src->jmp_dest[n] ? NULL : tb_of_ref(src->jmp_next[n]);
    if (dst && dst->valid && dst->pc == pc && dst->phys == pc && dst->next_page == TB_NO_PAGE &&
        dst->flags == flags && src->flags == flags) {
        tb_link(src, n, dst, df);
        stats.hint_chained += src->jmp_dest[n] != 0;
    } else {
        dst = NULL;
    }
    xmutex_unlock(&tb_lock);
    return dst;
}

void tb_unlink_all(TB *tb)
{
    /* Jumps into tb go back to their exit stubs. */
    for (uint32_t in = tb->jmp_in; in;) {
        TB *src = tb_of_ref(in >> 3);
        int n = (int)(in & TB_SLOT_MASK);
        in = src->jmp_next[n];
        patch_jump(src, n, tb_entry_rw(src) + src->jmp_stub[n]);
        src->jmp_dest[n] = 0;
        src->jmp_next[n] = 0;
        stats.unchained++;
    }
    tb->jmp_in = 0;
    /* And tb leaves the incoming lists of its destinations. */
    for (int n = 0; n < TB_MAX_SLOTS; n++) {
        TB *dst = tb_of_ref(tb->jmp_dest[n]);
        if (!dst)
            continue;
        uint32_t me = tb_ref(tb) << 3 | (uint32_t)n;
        for (uint32_t *pp = &dst->jmp_in; *pp;) {
            TB *t = tb_of_ref(*pp >> 3);
            if (*pp == me) {
                *pp = tb->jmp_next[n];
                break;
            }
            pp = &t->jmp_next[*pp & TB_SLOT_MASK];
        }
        tb->jmp_dest[n] = 0;
    }
}
