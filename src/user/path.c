/*
 * Guest paths to host paths: -L (QEMU_LD_PREFIX) lookups, for every system
 * call that takes a path (see sys_impl.h's GuestPath).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/sys_impl.h"

/*
 * As qemu's path(): the prefixed name is used if it exists, following
 * symbolic links (so a link in DIR that points nowhere in DIR falls back to
 * the host's file).
 */
const char *path_resolve(const char *guest_path, char *buf, size_t len)
{
    if (!opt.ld_prefix || !opt.ld_prefix[0] || guest_path[0] != '/')
        return guest_path;
    if ((size_t)snprintf(buf, len, "%s%s", opt.ld_prefix, guest_path) >= len)
        return guest_path;
    return access(buf, F_OK) == 0 ? buf : guest_path;
}

int path_get(uint64_t ga, GuestPath *p)
{
    int err = 0;
    p->raw = guest_strdup(ga, PATH_MAX, &err);
    if (!p->raw)
        return err ? err : -EFAULT;
    p->host = path_resolve(p->raw, p->buf, sizeof p->buf);
    return 0;
}

void path_put(GuestPath *p)
{
    free(p->raw);
    p->raw = NULL;
}

