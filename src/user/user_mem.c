/*
 * User mode's side of the guest memory interface (exec/guest_mem.h): the
 * window of user/mm.h is the whole guest address space, so an access
 * outside it is a fault with nothing mapped; code may be fetched where the
 * guest mapped PROT_EXEC; translation holds the mapping table's read lock;
 * code pages are watched by write protection (code_watch.c).
 */
#include "user/user_mem.h"

#include <sys/mman.h>

#include "exec/guest_mem.h"
#include "user/code_watch.h"
#include "user/mm.h"

static void *user_slow(struct CPUState *cpu, uint64_t addr, unsigned size,
                       enum mem_access access, MemFault *fault)
{
    (void)cpu;
    (void)size;
    /* Straddling the window's end, the access starts inside it: as a host
     * fault there would, leave the mapping check to fault_signal_of. */
    uint8_t kind = addr < GUEST_SPACE_SIZE ? MEM_FAULT_PROT : MEM_FAULT_UNMAPPED;
    *fault = (MemFault){ .kind = kind, .access = (uint8_t)access, .addr = addr };
    return NULL;
}

static bool user_load(struct CPUState *cpu, uint64_t addr, unsigned size, uint64_t *val,
                      MemFault *fault)
{
    (void)val;
    return user_slow(cpu, addr, size, MEM_LOAD, fault) != NULL;
}

static bool user_store(struct CPUState *cpu, uint64_t addr, unsigned size, uint64_t val,
                       MemFault *fault)
{
    (void)val;
    return user_slow(cpu, addr, size, MEM_STORE, fault) != NULL;
}

static bool user_code_ok(const struct CPUState *cpu, uint64_t addr, uint64_t len)
{
    (void)cpu;
    return guest_access_ok(addr, len, PROT_EXEC);
}

static int user_read(void *dst, uint64_t addr, size_t len)
{
    return copy_from_guest(dst, addr, len);
}

static const GuestMemOps user_ops = {
    .load = user_load,
    .store = user_store,
    .slow = user_slow,
    .code_ok = user_code_ok,
    .code_phys = NULL,                  /* phys = pc */
    .code_origin = mm_code_origin,
    .read = user_read,
    .code_lock = mm_read_lock,
    .code_unlock = mm_read_unlock,
    .code_watch = code_watch_page,
    .code_unwatch = code_unwatch_page,
    .fork_prepare = mm_fork_prepare,
    .fork_parent = mm_fork_parent,
    .fork_child = mm_fork_child,
};

void user_mem_init(void)
{
    guest_mem = (GuestMem){ .base = guest_base, .limit = GUEST_SPACE_SIZE, .ops = &user_ops };
    code_watch_init();
}
