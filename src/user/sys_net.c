/*
 * Sockets.
 *
 * Socket addresses (sockaddr_in/in6/un/nl...), option values, SOCK_* type
 * flags and control messages (cmsghdr, SCM_RIGHTS descriptor arrays,
 * SCM_CREDENTIALS, timestamps) have the same layout on riscv64 and x86-64,
 * so their guest buffers are handed to the host kernel in place after a
 * window check. What holds guest pointers is rebuilt: struct msghdr (name,
 * iovec array, control buffer), struct mmsghdr arrays, and the filter
 * program of SO_ATTACH_FILTER.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "user/mm.h"
#include "user/options.h"
#include "user/signal.h"
#include "user/sys_impl.h"
#include "user/target.h"

/* -- Helpers ------------------------------------------------------------- */

/* Host pointer for an optional guest buffer of len bytes, or NULL. */
#define GUEST_BUF(ga) ((ga) ? g2h(ga) : NULL)

/*
 * A (buffer, socklen_t *len) pair the kernel fills (accept, getsockname,
 * recvfrom, getsockopt): check up front that both are mapped writable, as
 * qemu does, so that e.g. accept fails with EFAULT instead of consuming a
 * connection and then failing to report it.
 */
static int check_addrlen(uint64_t buf, uint64_t lenp)
{
    uint32_t len;
    if (!lenp)
        return buf ? -EFAULT : 0;
    if (copy_from_guest(&len, lenp, sizeof len) ||
        !guest_access_ok(lenp, sizeof len, PROT_WRITE))
        return -EFAULT;
    if ((int32_t)len < 0)
        return -EINVAL;
    if (buf && !guest_access_ok(buf, len, PROT_WRITE))
        return -EFAULT;
    return 0;
}

/* -- Creating and connecting ------------------------------------------------ */

int64_t sys_socket(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(socket((int)a[0], (int)a[1], (int)a[2]));
}

int64_t sys_socketpair(CPUState *cpu, const uint64_t *a)
{
    int sv[2];
    (void)cpu;
    if (!guest_access_ok(a[3], sizeof sv, PROT_WRITE))
        return -EFAULT;
    int64_t r = host_ret(socketpair((int)a[0], (int)a[1], (int)a[2], sv));
    if (r == 0 && copy_to_guest(a[3], sv, sizeof sv)) {
        close(sv[0]);
        close(sv[1]);
        return -EFAULT;
    }
    return r;
}

/*
 * An AF_UNIX address the guest names a socket file with, under --root:
 * resolved in the guest's view (binding creates the name in its directory,
 * connecting and sending follow links) and rewritten as a /proc/self/fd
 * path the host reaches the same file by. *addr and *len are updated to
 * point at `out`; gp holds the descriptors until the call is made
 * (path_put). 0 if nothing needed rewriting (gp->raw NULL), or -errno.
 */
static int unix_addr_in(const void **addr, socklen_t *len, bool binding,
                        struct sockaddr_un *out, GuestPath *gp)
{
    gp->raw = NULL;
    gp->pin = -1;
    const struct sockaddr_un *un = *addr;
    size_t off = offsetof(struct sockaddr_un, sun_path);
    if (!path_rooted() || !un || *len <= off || un->sun_family != AF_UNIX || !un->sun_path[0])
        return 0;                          /* not a pathname, or abstract */
    char name[sizeof un->sun_path + 1];
    size_t n = *len - off < sizeof un->sun_path ? *len - off : sizeof un->sun_path;
    memcpy(name, un->sun_path, n);
    name[n] = '\0';
    int err = path_lookup_at(AT_FDCWD, name, binding ? PATH_PARENT : PATH_FOLLOW, gp);
    if (err < 0)
        return err;
    memset(out, 0, sizeof *out);
    out->sun_family = AF_UNIX;
    int w = snprintf(out->sun_path, sizeof out->sun_path, "%s", path_host_abs(gp));
    if (w < 0 || (size_t)w >= sizeof out->sun_path) {
        path_put(gp);
        return -ENAMETOOLONG;
    }
    *addr = out;
    *len = (socklen_t)(off + (size_t)w + 1);
    return 0;
}

/* bind and connect: (fd, addr, addrlen). */
static int64_t addr_in(int nr, const uint64_t *a)
{
    if ((int)a[2] < 0)
        return -EINVAL;
    CHECK_WINDOW(a[1], (uint32_t)a[2]);
    const void *addr = GUEST_BUF(a[1]);
    socklen_t len = (socklen_t)a[2];
    struct sockaddr_un un;
    GuestPath gp;
    int err = unix_addr_in(&addr, &len, nr == SYS_bind, &un, &gp);
    if (err < 0)
        return err;
    int64_t r = safe_syscall(nr, (long)(int)a[0], addr, (long)len);
    if (gp.raw)
        path_put(&gp);
    return r;
}

int64_t sys_bind(CPUState *cpu, const uint64_t *a)    { (void)cpu; return addr_in(SYS_bind, a); }
int64_t sys_connect(CPUState *cpu, const uint64_t *a) { (void)cpu; return addr_in(SYS_connect, a); }

int64_t sys_listen(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(listen((int)a[0], (int)a[1]));
}

int64_t sys_accept4(CPUState *cpu, const uint64_t *a)
{
    int e;
    (void)cpu;
    if ((e = check_addrlen(a[1], a[2])))
        return e;
    return safe_syscall(SYS_accept4, (long)(int)a[0], GUEST_BUF(a[1]), GUEST_BUF(a[2]), (long)(int)a[3]);
}

int64_t sys_accept(CPUState *cpu, const uint64_t *a)
{
    uint64_t args[4] = { a[0], a[1], a[2], 0 };
    return sys_accept4(cpu, args);
}

/* getsockname and getpeername: (fd, addr, addrlen *). */
static int64_t addr_out(int nr, const uint64_t *a)
{
    int e;
    if (!a[2])
        return -EFAULT;
    if ((e = check_addrlen(a[1], a[2])))
        return e;
    return host_ret(syscall(nr, (int)a[0], GUEST_BUF(a[1]), g2h(a[2])));
}

int64_t sys_getsockname(CPUState *cpu, const uint64_t *a) { (void)cpu; return addr_out(SYS_getsockname, a); }
int64_t sys_getpeername(CPUState *cpu, const uint64_t *a) { (void)cpu; return addr_out(SYS_getpeername, a); }

int64_t sys_shutdown(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    return host_ret(shutdown((int)a[0], (int)a[1]));
}

/* -- Options ---------------------------------------------------------------- */

/* SO_ATTACH_FILTER / SO_ATTACH_REUSEPORT_CBPF: the program is a guest pointer. */
static int64_t set_filter(const uint64_t *a)
{
    struct target_sock_fprog tp;
    struct sock_fprog hp;
    if (a[4] < sizeof tp)
        return -EINVAL;
    if (copy_from_guest(&tp, a[3], sizeof tp))
        return -EFAULT;
    CHECK_WINDOW(tp.filter, (uint64_t)tp.len * sizeof(struct sock_filter));
    hp.len = tp.len;
    hp.filter = g2h(tp.filter);
    return host_ret(setsockopt((int)a[0], (int)a[1], (int)a[2], &hp, sizeof hp));
}

int64_t sys_setsockopt(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    if ((int)a[1] == SOL_SOCKET &&
        ((int)a[2] == SO_ATTACH_FILTER || (int)a[2] == SO_ATTACH_REUSEPORT_CBPF))
        return set_filter(a);
    if ((int)a[4] < 0)
        return -EINVAL;
    CHECK_WINDOW(a[3], (uint32_t)a[4]);
    return host_ret(setsockopt((int)a[0], (int)a[1], (int)a[2], GUEST_BUF(a[3]), (socklen_t)a[4]));
}

int64_t sys_getsockopt(CPUState *cpu, const uint64_t *a)
{
    int e;
    (void)cpu;
    if (!a[4])
        return -EFAULT;
    if ((e = check_addrlen(a[3], a[4])))
        return e;
    return host_ret(syscall(SYS_getsockopt, (int)a[0], (int)a[1], (int)a[2], GUEST_BUF(a[3]),
                            g2h(a[4])));
}

/* -- Data -------------------------------------------------------------------- */

int64_t sys_sendto(CPUState *cpu, const uint64_t *a)
{
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    if ((int)a[5] < 0)
        return -EINVAL;
    CHECK_WINDOW(a[4], (uint32_t)a[5]);
    const void *addr = GUEST_BUF(a[4]);
    socklen_t len = (socklen_t)a[5];
    struct sockaddr_un un;
    GuestPath gp;
    int err = unix_addr_in(&addr, &len, false, &un, &gp);
    if (err < 0)
        return err;
    int64_t r = safe_syscall(SYS_sendto, (long)(int)a[0], g2h(a[1]), a[2], (long)(int)a[3],
                             addr, (long)len);
    if (gp.raw)
        path_put(&gp);
    return r;
}

int64_t sys_recvfrom(CPUState *cpu, const uint64_t *a)
{
    int e;
    (void)cpu;
    CHECK_WINDOW(a[1], a[2]);
    if ((e = check_addrlen(a[4], a[5])))
        return e;
    return safe_syscall(SYS_recvfrom, (long)(int)a[0], g2h(a[1]), a[2], (long)(int)a[3],
                        GUEST_BUF(a[4]), GUEST_BUF(a[5]));
}

/*
 * A guest msghdr as a host one: name and control buffers are used in place
 * (same layouts), the iovec array is rebuilt (*iov, to free).
 */
static int msghdr_from_guest(const struct target_msghdr *t, struct msghdr *h, struct iovec **iov)
{
    memset(h, 0, sizeof *h);
    *iov = NULL;
    if (!guest_range_in_window(t->msg_name, t->msg_namelen) ||
        !guest_range_in_window(t->msg_control, t->msg_controllen))
        return -EFAULT;
    if (t->msg_iovlen > IOV_MAX)
        return -EMSGSIZE;
    int e = iov_from_guest(t->msg_iov, (int64_t)t->msg_iovlen, iov);
    if (e)
        return e;
    h->msg_name = GUEST_BUF(t->msg_name);
    h->msg_namelen = t->msg_namelen;
    h->msg_iov = *iov;
    h->msg_iovlen = t->msg_iovlen;
    h->msg_control = GUEST_BUF(t->msg_control);
    h->msg_controllen = t->msg_controllen;
    h->msg_flags = t->msg_flags;
    return 0;
}

/* What recvmsg reports back in the guest's msghdr. */
static void msghdr_results(struct target_msghdr *t, const struct msghdr *h)
{
    t->msg_namelen = h->msg_namelen;
    t->msg_controllen = h->msg_controllen;
    t->msg_flags = h->msg_flags;
}

static int64_t do_msg(const uint64_t *a, bool send)
{
    struct target_msghdr tm;
    struct msghdr hm;
    struct iovec *iov;
    if (copy_from_guest(&tm, a[1], sizeof tm))
        return -EFAULT;
    int e = msghdr_from_guest(&tm, &hm, &iov);
    if (e)
        return e;
    struct sockaddr_un un;
    GuestPath gp = { .raw = NULL };
    if (send) {
        const void *name = hm.msg_name;
        socklen_t len = hm.msg_namelen;
        if ((e = unix_addr_in(&name, &len, false, &un, &gp)) < 0) {
            free(iov);
            return e;
        }
        hm.msg_name = (void *)name;
        hm.msg_namelen = len;
    }
    int64_t r = safe_syscall(send ? SYS_sendmsg : SYS_recvmsg, (long)(int)a[0], &hm, (long)(int)a[2]);
    if (gp.raw)
        path_put(&gp);
    free(iov);
    if (r >= 0 && !send) {
        msghdr_results(&tm, &hm);
        if (copy_to_guest(a[1], &tm, sizeof tm))
            return -EFAULT;
    }
    return r;
}

int64_t sys_sendmsg(CPUState *cpu, const uint64_t *a) { (void)cpu; return do_msg(a, true); }
int64_t sys_recvmsg(CPUState *cpu, const uint64_t *a) { (void)cpu; return do_msg(a, false); }

/*
 * sendmmsg/recvmmsg: (fd, msgvec, vlen, flags[, timeout]). The kernel caps
 * vlen at UIO_MAXIOV; messages are converted all at once so the host call
 * keeps its semantics (one timeout, MSG_WAITFORONE).
 */
static int64_t do_mmsg(const uint64_t *a, bool send)
{
    unsigned vlen = (unsigned)a[2];
    struct timespec ts;
    if (vlen > IOV_MAX)
        vlen = IOV_MAX;
    if (vlen == 0)
        return 0;
    if (!send && a[4] && copy_from_guest(&ts, a[4], sizeof ts))
        return -EFAULT;
    struct target_mmsghdr *tv = malloc(vlen * sizeof *tv);
    struct mmsghdr *hv = calloc(vlen, sizeof *hv);
    struct iovec **iovs = calloc(vlen, sizeof *iovs);
    int64_t r = tv && hv && iovs ? 0 : -ENOMEM;
    if (r == 0 && copy_from_guest(tv, a[1], vlen * sizeof *tv))
        r = -EFAULT;
    for (unsigned i = 0; r == 0 && i < vlen; i++)
        r = msghdr_from_guest(&tv[i].msg_hdr, &hv[i].msg_hdr, &iovs[i]);
    if (r == 0) {
        if (send)
            r = safe_syscall(SYS_sendmmsg, (long)(int)a[0], hv, (long)vlen, (long)(int)a[3]);
        else
            r = safe_syscall(SYS_recvmmsg, (long)(int)a[0], hv, (long)vlen, (long)(int)a[3],
                             a[4] ? &ts : NULL);
    }
    for (int64_t i = 0; r > 0 && i < r; i++) {
        tv[i].msg_len = hv[i].msg_len;
        if (!send)
            msghdr_results(&tv[i].msg_hdr, &hv[i].msg_hdr);
        if (copy_to_guest(a[1] + i * sizeof *tv, &tv[i], sizeof *tv))
            r = -EFAULT;
    }
    if (r >= 0 && !send && a[4] && copy_to_guest(a[4], &ts, sizeof ts))
        r = -EFAULT;
    for (unsigned i = 0; iovs && i < vlen; i++)
        free(iovs[i]);
    free(iovs);
    free(hv);
    free(tv);
    return r;
}

int64_t sys_sendmmsg(CPUState *cpu, const uint64_t *a) { (void)cpu; return do_mmsg(a, true); }
int64_t sys_recvmmsg(CPUState *cpu, const uint64_t *a) { (void)cpu; return do_mmsg(a, false); }
