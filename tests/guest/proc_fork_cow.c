/*
 * After fork, parent and child share xlat's code buffer until one of them
 * writes to it (a translation, a chain patch); that one first takes a copy
 * of its own. Here both keep translating after the fork, in lock step, and
 * each checks that its code computes its own values:
 * - parent and child each write new functions at the same addresses (a
 *   page mapped before the fork), alternately, each run enough times to be
 *   translated: sharing the buffer, each one's translations would land
 *   where the other's just went;
 * - a function both ran before the fork, rewritten by the child only;
 * - a grandchild does the same against the child;
 * - a child that exits without writing code, then the parent translates.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef long (*fn_t)(long);

#define NFUNCS 24
#define RUNS 6      /* more than the interpreted first runs: translated */

/* addi a0, a0, imm ; ret */
static void emit_addi_ret(uint32_t *p, int imm)
{
    p[0] = ((uint32_t)imm & 0xfff) << 20 | 10 << 15 | 10 << 7 | 0x13;
    p[1] = 0x00008067;
    __builtin___clear_cache((char *)p, (char *)(p + 2));
}

static uint32_t *page;      /* NFUNCS functions, 64 bytes apart */

static fn_t func(int i) { return (fn_t)(void *)(page + 16 * i); }

/* Write function i to return x + imm, run it RUNS times; 0 if it did. */
static int make_and_run(int i, int imm)
{
    emit_addi_ret(page + 16 * i, imm);
    for (int r = 0; r < RUNS; r++)
        if (func(i)(r) != r + imm)
            return 1;
    return 0;
}

static void step(int rd, int wr)
{
    char c = 0;
    if (wr >= 0 && write(wr, &c, 1) != 1)
        _exit(90);
    if (rd >= 0 && read(rd, &c, 1) != 1)
        _exit(91);
}

/*
 * Two processes (the caller and a child it forks) take turns: the one with
 * the turn writes and runs function i with its own constant base + i, then
 * the other. At the end each runs all of its functions again.
 */
static int lock_step(int base_parent, int base_child, const char *who)
{
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    int me = pid == 0 ? base_child : base_parent;
    int rd = pid == 0 ? to_child[0] : to_parent[0];
    int wr = pid == 0 ? to_parent[1] : to_child[1];
    int bad = 0;
    for (int i = 0; i < NFUNCS; i++) {
        if (pid == 0)
            step(rd, -1);                   /* the parent goes first */
        bad += make_and_run(i, me + i);
        step(pid == 0 ? -1 : rd, wr);
    }
    for (int i = 0; i < NFUNCS; i++)
        for (int r = 0; r < RUNS; r++)
            bad += func(i)(100) != 100 + me + i;
    if (pid == 0)
        _exit(bad ? 1 : 0);
    int st;
    waitpid(pid, &st, 0);
    printf("%s: parent %s, child %s\n", who, bad ? "wrong" : "ok",
           WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "wrong");
    close(to_child[0]); close(to_child[1]); close(to_parent[0]); close(to_parent[1]);
    return bad;
}

int main(void)
{
    page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 99;
    setvbuf(stdout, NULL, _IONBF, 0);

    /* Translated before the fork; the child rewrites it, the parent not. */
    make_and_run(0, 7);
    pid_t pid = fork();
    if (pid == 0) {
        int bad = make_and_run(0, 9);
        _exit(bad || func(0)(1) != 10 ? 1 : 0);
    }
    int st;
    waitpid(pid, &st, 0);
    printf("rewritten in the child: child %s, parent runs %ld\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "wrong", func(0)(1));

    lock_step(100, 300, "lock step");

    /* The child forks a grandchild and does the same against it. */
    pid = fork();
    if (pid == 0)
        _exit(lock_step(500, 700, "grandchild lock step") ? 1 : 0);
    waitpid(pid, &st, 0);
    printf("child with a grandchild: %s\n", WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "wrong");

    /* A child that writes no code; then the parent translates again. */
    pid = fork();
    if (pid == 0)
        _exit(func(3)(1) == 1 + 100 + 3 ? 0 : 1);
    waitpid(pid, &st, 0);
    int bad = 0;
    for (int i = 0; i < NFUNCS; i++)
        bad += make_and_run(i, 900 + i);
    printf("quiet child %s, parent afterwards %s\n",
           WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "ok" : "wrong", bad ? "wrong" : "ok");
    return 0;
}
