/*
 * Self-modifying code in user mode: the pages that hold translated code,
 * watched for stores by making their host pages read-only.
 *
 * The host page of every guest-writable page that holds translated code is
 * made read-only (the guest's protection in mm.c is untouched). A store
 * there faults; code_watch_fault() (from the SIGSEGV handler, any thread,
 * any host code: JIT, interpreter, copy_to_guest) has the core drop the
 * page's TBs and makes the page writable again, and the store is retried.
 * Host system calls writing into such a page fail with EFAULT instead of
 * faulting: syscall_dispatch() then calls exec_unwatch_all() and retries.
 * These are guest_mem.ops->code_watch/code_unwatch (user_mem.c).
 */
#ifndef XLAT_USER_CODE_WATCH_H
#define XLAT_USER_CODE_WATCH_H

#include <stdbool.h>
#include <stdint.h>

/* Map the page bitmaps (once, by user_mem_init). */
void code_watch_init(void);

/* guest_mem.ops hooks (tb_lock held by the caller). */
void code_watch_page(uint64_t page);
bool code_unwatch_page(uint64_t page, bool remapped);

/*
 * A write to host address addr faulted: if the page is write-protected
 * because it holds translated code, drop its translations, make it
 * writable again and return true (retry the write).
 */
bool code_watch_fault(void *addr);

/*
 * Is the host page of guest page number `page` (address / GUEST_PAGE_SIZE)
 * read-only because it holds translated code? Lock-free, for the fault
 * handler and vfork.c, which must leave such pages to code_watch_fault.
 */
bool code_watch_protected(uint64_t page);

#endif
