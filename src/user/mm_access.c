/*
 * Guest memory as xlat's own C code sees it (user mode): access checks and
 * the checked copies.
 *
 * Every guest pointer that xlat's own C code reads or writes goes through
 * copy_from_guest/copy_to_guest/guest_strdup. They check the range against
 * mm.c's mapping table (through mm_internal.h) with the table read-locked
 * and fail with -EFAULT, instead of faulting, where the guest has not
 * mapped it with that access. The lock is held across the copy as well, so
 * no guest munmap or mprotect can change the range mid-copy.
 */
#define _GNU_SOURCE
#include "user/mm.h"
#include "user/mm_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* -- Checks ---------------------------------------------------------------- */

/* Readable means PROT_READ or PROT_WRITE (riscv maps write-only as RW). */
static bool prot_allows(int have, int need)
{
    if ((need & PROT_WRITE) && !(have & PROT_WRITE))
        return false;
    if ((need & PROT_READ) && !(have & (PROT_READ | PROT_WRITE)))
        return false;
    if ((need & PROT_EXEC) && !(have & PROT_EXEC))
        return false;
    return true;
}

static bool access_ok_locked(uint64_t ga, uint64_t len, int prot)
{
    if (!guest_range_in_window(ga, len))
        return false;
    if (len == 0)
        return true;
    uint64_t a = ga, end = ga + len;
    for (size_t i = vma_lookup(ga); a < end; i++) {
        if (i >= nvma || vmas[i].start > a || !prot_allows(vmas[i].prot, prot))
            return false;
        a = vmas[i].end;
    }
    return true;
}

bool guest_access_ok(uint64_t ga, uint64_t len, int prot)
{
    xrw_rdlock(&mm_lock);
    bool ok = access_ok_locked(ga, len, prot);
    xrw_unlock(&mm_lock);
    return ok;
}

int guest_prot_at(uint64_t ga)
{
    xrw_rdlock(&mm_lock);
    size_t i = vma_lookup(ga);
    int prot = i < nvma && vmas[i].start <= ga ? vmas[i].prot : -1;
    xrw_unlock(&mm_lock);
    return prot;
}

/* -- Copies ---------------------------------------------------------------- */

int copy_from_guest(void *dst, uint64_t src, size_t len)
{
    xrw_rdlock(&mm_lock);
    bool ok = access_ok_locked(src, len, PROT_READ);
    if (ok && len)
        memcpy(dst, g2h(src), len);
    xrw_unlock(&mm_lock);
    return ok ? 0 : -EFAULT;
}

int copy_to_guest(uint64_t dst, const void *src, size_t len)
{
    xrw_rdlock(&mm_lock);
    bool ok = access_ok_locked(dst, len, PROT_WRITE);
    if (ok && len)
        memcpy(g2h(dst), src, len);
    xrw_unlock(&mm_lock);
    return ok ? 0 : -EFAULT;
}

char *guest_strdup(uint64_t ga, size_t max, int *err)
{
    xrw_rdlock(&mm_lock);
    char *res = NULL;
    int e = -EFAULT;
    uint64_t a = ga;
    size_t n = 0;
    /* Scan page by page, checking each page before touching it. */
    while (n < max) {
        uint64_t chunk = GUEST_PAGE_SIZE - (a & PAGE_MASK_);
        if (chunk > max - n)
            chunk = max - n;
        if (!access_ok_locked(a, chunk, PROT_READ))
            goto out;
        const char *z = memchr(g2h(a), 0, chunk);
        if (z) {
            n += (size_t)(z - (const char *)g2h(a)) + 1;
            res = malloc(n);
            if (!res) {
                e = -ENOMEM;
                goto out;
            }
            memcpy(res, g2h(ga), n);
            e = 0;
            goto out;
        }
        n += chunk;
        a += chunk;
    }
    e = -ENAMETOOLONG;
out:
    xrw_unlock(&mm_lock);
    if (err)
        *err = e;
    return res;
}
