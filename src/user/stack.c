/*
 * The initial guest stack (user mode), laid out as Linux's
 * setup_arg_pages() + create_elf_tables() do for a riscv64 process:
 *
 *   top (GUEST_TASK_SIZE)   8 bytes of zero
 *                           execfn string (AT_EXECFN)
 *                           envp strings, then below them argv strings
 *                           (argv[0] lowest, each set ascending)
 *   aligned down to 16      16 random bytes (AT_RANDOM)
 *                           auxv pairs ... AT_NULL
 *                           envp[] NULL
 *                           argv[] NULL
 *   sp (16-aligned)         argc
 *
 * sp is chosen so the argc..auxv block starts 16-aligned and ends at or
 * below the random bytes (Linux's STACK_ROUND). No address randomization.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "riscv/isa.h"
#include "user/loader.h"
#include "user/mm.h"
#include "user/options.h"

uint64_t stack_auxv_addr, stack_auxv_len;


#ifndef AT_L1I_CACHESIZE
#define AT_L1I_CACHESIZE     40
#define AT_L1I_CACHEGEOMETRY 41
#define AT_L1D_CACHESIZE     42
#define AT_L1D_CACHEGEOMETRY 43
#define AT_L2_CACHESIZE      44
#define AT_L2_CACHEGEOMETRY  45
#endif

#define MAX_AUXV 32

static void fill_random(uint8_t buf[16])
{
    if (getrandom(buf, 16, 0) == 16)
        return;
    uint64_t t = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    for (int i = 0; i < 16; i++) {   /* fallback: weak but never fails */
        t = t * 6364136223846793005ULL + 1442695040888963407ULL;
        buf[i] = (uint8_t)(t >> 56);
    }
}

/* Linux's auxv for riscv64 in create_elf_tables() order (no vDSO). */
static int build_auxv(uint64_t *av, const GuestImage *img, uint64_t rand_addr,
                      uint64_t execfn_addr)
{
    int n = 0;
#define AUX(k, v) (av[n++] = (k), av[n++] = (uint64_t)(v))
    /* ARCH_DLINFO: AT_SYSINFO_EHDR is left out (no vDSO); cache geometry is
     * 0 = unknown, as Linux reports without cache info in the device tree.
     * AT_MINSIGSTKSZ is left out: libc then uses its built-in minimum. */
    AUX(AT_L1I_CACHESIZE, 0);
    AUX(AT_L1I_CACHEGEOMETRY, 0);
    AUX(AT_L1D_CACHESIZE, 0);
    AUX(AT_L1D_CACHEGEOMETRY, 0);
    AUX(AT_L2_CACHESIZE, 0);
    AUX(AT_L2_CACHEGEOMETRY, 0);
    AUX(AT_HWCAP, isa_hwcap());     /* -cpu: one bit per letter (I M A F D C) */
    AUX(AT_PAGESZ, GUEST_PAGE_SIZE);
    AUX(AT_CLKTCK, 100);
    AUX(AT_PHDR, img->phdr);
    AUX(AT_PHENT, img->phent);
    AUX(AT_PHNUM, img->phnum);
    AUX(AT_BASE, img->interp_base);
    AUX(AT_FLAGS, 0);
    AUX(AT_ENTRY, img->prog_entry);
    /* The ids the kernel gave xlat at its exec: what it would give the
     * program run natively, and no system call each. */
    AUX(AT_UID, getauxval(AT_UID));
    AUX(AT_EUID, getauxval(AT_EUID));
    AUX(AT_GID, getauxval(AT_GID));
    AUX(AT_EGID, getauxval(AT_EGID));
    AUX(AT_SECURE, getauxval(AT_SECURE));   /* binfmt_misc C: a setuid program */
    AUX(AT_RANDOM, rand_addr);
    /* riscv64 defines no ELF_HWCAP2 and no AT_PLATFORM. */
    AUX(AT_EXECFN, execfn_addr);
    AUX(AT_NULL, 0);
#undef AUX
    return n;
}

/* Copy n strings just below *p, ascending; store their guest addresses. */
static void push_strings(uint64_t *p, int n, char *const strs[], uint64_t *addrs)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        total += strlen(strs[i]) + 1;
    *p -= total;
    uint64_t a = *p;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(strs[i]) + 1;
        memcpy(g2h(a), strs[i], len);
        addrs[i] = a;
        a += len;
    }
}

static void store64(uint64_t ga, uint64_t v)
{
    memcpy(g2h(ga), &v, sizeof(v));   /* host and guest are both little-endian */
}

uint64_t stack_setup(const GuestImage *img, int argc, char *const argv[],
                     char *const envp[], const char *execfn, uint64_t stack_size)
{
    int envc = 0;
    while (envp && envp[envc])
        envc++;
    if (!execfn)
        execfn = img->path ? img->path : "";
    if (stack_size == 0)
        stack_size = 8ULL << 20;
    stack_size = (stack_size + GUEST_PAGE_SIZE - 1) & ~(GUEST_PAGE_SIZE - 1);

    /* Linux refuses (E2BIG) when the strings exceed a quarter of the stack. */
    uint64_t strbytes = strlen(execfn) + 1;
    for (int i = 0; i < argc; i++)
        strbytes += strlen(argv[i]) + 1;
    for (int i = 0; i < envc; i++)
        strbytes += strlen(envp[i]) + 1;
    uint64_t ptrbytes = ((uint64_t)argc + envc + 3) * 8 + MAX_AUXV * 8;
    if (strbytes + ptrbytes + 256 > stack_size / 4 || stack_size > GUEST_TASK_SIZE / 4) {
        fprintf(stderr, "xlat: arguments and environment too large for the stack (E2BIG)\n");
        return 0;
    }

    uint64_t top = GUEST_TASK_SIZE;
    int r = guest_map_fixed(top - stack_size, stack_size, PROT_READ | PROT_WRITE, "[stack]");
    if (r) {
        fprintf(stderr, "xlat: cannot map the stack: %s\n", strerror(-r));
        return 0;
    }

    uint64_t p = top - 8;
    p -= strlen(execfn) + 1;
    uint64_t execfn_addr = p;
    memcpy(g2h(p), execfn, strlen(execfn) + 1);

    uint64_t *ptrs = malloc(((size_t)argc + envc + 1) * sizeof(*ptrs));
    if (!ptrs) {
        fprintf(stderr, "xlat: out of memory\n");
        return 0;
    }
    push_strings(&p, envc, envp, ptrs + argc);
    push_strings(&p, argc, argv, ptrs);

    p &= ~15ULL;
    p -= 16;
    uint64_t rand_addr = p;
    uint8_t rnd[16];
    fill_random(rnd);
    memcpy(g2h(rand_addr), rnd, 16);

    uint64_t av[MAX_AUXV * 2];
    int nav = build_auxv(av, img, rand_addr, execfn_addr);
    uint64_t items = (uint64_t)(argc + 1) + (envc + 1) + 1;
    uint64_t sp = (p - (uint64_t)nav * 8 - items * 8) & ~15ULL;

    uint64_t w = sp;
    store64(w, (uint64_t)argc);
    w += 8;
    for (int i = 0; i < argc; i++, w += 8)
        store64(w, ptrs[i]);
    store64(w, 0);
    w += 8;
    for (int i = 0; i < envc; i++, w += 8)
        store64(w, ptrs[argc + i]);
    store64(w, 0);
    w += 8;
    stack_auxv_addr = w;
    stack_auxv_len = (uint64_t)nav * 8;
    memcpy(g2h(w), av, stack_auxv_len);
    free(ptrs);

    xlat_log(LOG_PAGE, "page: stack %#llx-%#llx sp %#llx\n",
             (unsigned long long)(top - stack_size), (unsigned long long)top,
             (unsigned long long)sp);
    return sp;
}
