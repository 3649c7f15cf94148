/*
 * Forked children tell xlat which blocks they translated, and the forking
 * process translates its own code at those addresses before its next fork
 * (--tune fork-warm). Those addresses are only hints; they must never
 * change what runs:
 * - a child replaces the code at an address where the parent has code, and
 *   runs it: the parent and its next child still run the parent's code;
 * - a child replaces code the parent has mapped but never run: the parent
 *   translates its own version in the warm-up, and runs that;
 * - a child runs code at an address the parent never mapped, which the
 *   parent maps later with other code;
 * - the parent rewrites code it translated only because a child ran it;
 * - thirty children in a row run a child-only path (the case the warm-up
 *   is for) and report what they computed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef long (*fn_t)(long);

/* addi a0, a0, imm ; ret */
static void emit_addi_ret(void *at, int imm)
{
    uint32_t *p = at;
    p[0] = ((uint32_t)imm & 0xfff) << 20 | 10 << 15 | 10 << 7 | 0x13;
    p[1] = 0x00008067;
    __builtin___clear_cache((char *)p, (char *)(p + 2));
}

static void *map_code(void *at, int imm)
{
    void *p = mmap(at, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        _exit(99);
    }
    emit_addi_ret(p, imm);
    return p;
}

static int wait_child(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* A child-only path with many blocks: the result depends on every branch. */
static __attribute__((noinline)) unsigned child_work(unsigned seed)
{
    unsigned h = seed * 2654435761u;
    for (int i = 0; i < 64; i++) {
        switch ((h >> (i % 29)) & 7) {
        case 0: h = h * 31 + 7; break;
        case 1: h ^= h >> 13; break;
        case 2: h += (unsigned)i * 0x9e37u; break;
        case 3: h = (h << 5) | (h >> 27); break;
        case 4: h -= seed ^ (unsigned)i; break;
        case 5: h ^= 0xa5a5a5a5u; break;
        case 6: h = h * 0x45d9f3bu; break;
        default: h += h >> 3; break;
        }
    }
    return h;
}

int main(void)
{
    char *shared_addr = map_code(NULL, 100);
    fn_t f = (fn_t)shared_addr;
    printf("parent runs its code: %ld\n", f(0));

    /* The child replaces the parent's code at the same address, and maps
     * code of its own where the parent has nothing. */
    char *dormant = map_code(NULL, 500);
    char *foreign = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(foreign, 4096);
    pid_t pid = fork();
    if (pid == 0) {
        map_code(shared_addr, 200);
        map_code(dormant, 600);
        map_code(foreign, 300);
        long a = f(0), b = ((fn_t)foreign)(0), c = ((fn_t)dormant)(0);
        _exit(a == 200 && b == 300 && c == 600 ? 0 : 1);
    }
    printf("child ran its own code: %s\n", wait_child(pid) == 0 ? "yes" : "no");
    printf("parent still runs its code: %ld\n", f(0));

    pid = fork();           /* the warm-up before this fork saw the child's addresses */
    if (pid == 0)
        _exit(f(0) == 100 ? 0 : 1);
    printf("next child runs the parent's code: %s\n", wait_child(pid) == 0 ? "yes" : "no");
    printf("parent runs code only the child had run: %ld\n", ((fn_t)dormant)(0));

    map_code(foreign, 400);
    printf("parent maps code where the child had some: %ld\n", ((fn_t)foreign)(0));
    emit_addi_ret(shared_addr, 101);
    printf("parent rewrites its code: %ld\n", f(0));

    /* Only children run child_work: its blocks reach the parent as hints. */
    unsigned sum = 0;
    for (unsigned i = 0; i < 30; i++) {
        pid = fork();
        if (pid == 0)
            _exit((int)(child_work(i) & 0x7f));
        int st = wait_child(pid);
        sum = sum * 3 + (unsigned)st;
    }
    printf("thirty children: statuses hash to %u\n", sum);
    return 0;
}
