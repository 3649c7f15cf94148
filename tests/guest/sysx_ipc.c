/*
 * SysV IPC. Shared memory: attach anywhere and at a chosen address, two
 * attaches of one segment, a forked child sharing it, SHM_RND/SHM_REMAP,
 * read-only attaches, /proc/self/maps lines, partial munmap then shmdt,
 * SIGSEGV after shmdt, IPC_STAT/IPC_RMID. Semaphores: SETALL/GETALL,
 * GETVAL/GETPID/GETNCNT, semop with IPC_NOWAIT and SEM_UNDO, semtimedop
 * timeouts, a child blocked in semop, EINTR with and without SA_RESTART,
 * semid_ds fields (converted: x86-64 pads them differently). Messages:
 * types (0, n, -n, MSG_EXCEPT), E2BIG and MSG_NOERROR, ENOMSG, a blocked
 * receiver. Only deterministic values are printed (no ids, pids, times).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* An address the guest has not mapped (volatile: hidden from the compiler). */
static void *volatile bad_ptr = (void *)8;

#define PG 4096UL
#define FIXED_ADDR 0x2000000000UL   /* well inside Sv39 user space */

static void checkp(const char *what, void *p)
{
    if (p == (void *)-1)
        printf("%s: -1 errno=%d\n", what, errno);
    else
        printf("%s: ok\n", what);
}

/* -- Faults ------------------------------------------------------------------ */

static sigjmp_buf jb;

static void on_segv(int sig)
{
    siglongjmp(jb, sig);
}

/* Touch p (read, or write): "ok" or the signal. */
static void probe(const char *what, volatile char *p, int write)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_segv;
    sigaction(SIGSEGV, &sa, &old);
    int sig = sigsetjmp(jb, 1);
    if (sig == 0) {
        if (write)
            *p = 'w';
        else
            (void)*p;
        printf("%s: ok\n", what);
    } else {
        printf("%s: signal %d\n", what, sig);
    }
    sigaction(SIGSEGV, &old, NULL);
}

/* The /proc/self/maps line for [start, end): permissions and name only. */
static void maps_line(const char *what, void *start, unsigned long len)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && fgets(line, sizeof line, f)) {
        unsigned long s, e, ino;
        char perms[8], dev[16];
        unsigned long long off;
        int n = 0;
        if (sscanf(line, "%lx-%lx %7s %llx %15s %lu %n", &s, &e, perms, &off, dev, &ino, &n) < 6)
            continue;
        if (s != (unsigned long)start)
            continue;
        line[strcspn(line, "\n")] = 0;
        printf("%s: maps %s len %lu off %llu name '%s'\n", what, perms, (e - s) / PG, off, line + n);
        found = 1;
    }
    if (!found)
        printf("%s: maps none\n", what);
    (void)len;
    if (f)
        fclose(f);
}

/* -- Shared memory --------------------------------------------------------------- */

static void shm_stat(const char *what, int id)
{
    struct shmid_ds ds;
    memset(&ds, 0x55, sizeof ds);
    if (shmctl(id, IPC_STAT, &ds) < 0) {
        printf("%s: IPC_STAT errno=%d\n", what, errno);
        return;
    }
    printf("%s: segsz %zu nattch %lu mode %#o key %d cpid-is-me %d lpid-is-me %d "
           "atime %d dtime %d ctime %d\n", what, ds.shm_segsz, (unsigned long)ds.shm_nattch,
           ds.shm_perm.mode & 07777, ds.shm_perm.__key, ds.shm_cpid == getpid(),
           ds.shm_lpid == getpid(), ds.shm_atime != 0, ds.shm_dtime != 0, ds.shm_ctime != 0);
}

static void test_shm(void)
{
    size_t size = 3 * PG + 100;
    int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
    printf("shmget ok %d\n", id >= 0);
    shm_stat("fresh", id);

    /* Anywhere, then at a chosen address: two views of one segment. */
    char *p = shmat(id, NULL, 0);
    checkp("shmat any", p);
    printf("aligned %d\n", ((unsigned long)p & (PG - 1)) == 0);
    strcpy(p, "hello segment");
    p[3 * PG + 99] = 'z';
    probe("last page beyond segsz", p + 3 * PG + 200, 0);
    shm_stat("attached", id);
    maps_line("any", p, 4 * PG);

    char *q = shmat(id, (void *)FIXED_ADDR, 0);
    checkp("shmat fixed", q);
    printf("at requested %d, sees '%s' %c\n", q == (char *)FIXED_ADDR, q, q[3 * PG + 99]);
    shm_stat("two attaches", id);

    /* Address rules: alignment, SHM_RND, overlap, SHM_REMAP. */
    checkp("unaligned", shmat(id, (void *)(FIXED_ADDR + 0x100000 + 5), 0));
    checkp("overlap", shmat(id, (void *)(FIXED_ADDR + PG), 0));
    char *r = shmat(id, (void *)(FIXED_ADDR + 0x100000 + 5), SHM_RND);
    checkp("SHM_RND", r);
    printf("rounded %d\n", r == (char *)(FIXED_ADDR + 0x100000));
    char *m = mmap((void *)(FIXED_ADDR + 0x200000), PG, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    m[0] = 'm';
    checkp("over mmap", shmat(id, m, 0));
    char *rm = shmat(id, m, SHM_REMAP);
    checkp("SHM_REMAP", rm);
    printf("remapped sees '%s'\n", rm);
    check("shmdt remapped", shmdt(rm));
    probe("after shmdt of remap", rm, 0);
    check("shmdt rounded", shmdt(r));

    /* A forked child shares the segment (and inherits the attaches). */
    pid_t c = fork();
    if (c == 0) {
        printf("child sees '%s'\n", q);
        fflush(stdout);
        strcpy(q + 100, "from child");
        shmdt(q);
        _exit(0);
    }
    int st;
    waitpid(c, &st, 0);
    printf("parent sees '%s' status %d\n", p + 100, st);

    /* Read-only attach. */
    char *ro = shmat(id, NULL, SHM_RDONLY);
    checkp("shmat rdonly", ro);
    printf("ro sees '%s'\n", ro);
    probe("write ro", ro, 1);
    maps_line("ro", ro, 4 * PG);
    check("mprotect ro to rw", mprotect(ro, PG, PROT_READ | PROT_WRITE));
    check("shmdt ro", shmdt(ro));

    /* Detach: the range is gone; shmdt of something else fails. */
    check("shmdt fixed", shmdt(q));
    probe("read after shmdt", q, 0);
    check("shmdt again", shmdt(q));
    check("shmdt unaligned", shmdt(p + 1));
    check("shmdt middle", shmdt(p + PG));
    check("shmdt not shm", shmdt(m + PG));
    shm_stat("one attach", id);

    /* Partial munmap: the attach count stays; shmdt drops the rest. */
    char *f = shmat(id, NULL, 0);
    shm_stat("before munmap", id);
    check("munmap first page", munmap(f, PG));
    shm_stat("after munmap", id);
    probe("munmapped page", f, 0);
    probe("rest", f + PG, 0);
    maps_line("fragment", f + PG, 3 * PG);
    check("shmdt fragment", shmdt(f));
    probe("rest after shmdt", f + PG, 0);
    shm_stat("after shmdt", id);

    /* Errors. */
    check("IPC_STAT bad", shmctl(id, IPC_STAT, bad_ptr));
    check("IPC_SET bad", shmctl(id, IPC_SET, bad_ptr));
    check("bad cmd", shmctl(id, 0x7777, NULL));
    check("shmat bad id", (long)shmat(-1, NULL, 0));
    check("shmget too big", shmget(IPC_PRIVATE, (size_t)1 << 62, IPC_CREAT | 0600));
    int other = shmget(IPC_PRIVATE, 10, 0600);   /* IPC_PRIVATE creates without IPC_CREAT */
    printf("shmget private ok %d\n", other >= 0);
    shmctl(other, IPC_RMID, NULL);
    struct shminfo si;
    printf("IPC_INFO ok %d\n", shmctl(0, IPC_INFO, (struct shmid_ds *)&si) >= 0 && si.shmmni > 0);

    /* IPC_SET, then IPC_RMID while attached: the segment lives on. */
    struct shmid_ds ds;
    shmctl(id, IPC_STAT, &ds);
    ds.shm_perm.mode = 0640;
    check("IPC_SET", shmctl(id, IPC_SET, &ds));
    check("IPC_RMID", shmctl(id, IPC_RMID, NULL));
    shm_stat("removed", id);
    printf("still there '%s'\n", p);
    check("shmdt last", shmdt(p));
    shm_stat("gone", id);
}

/* -- Semaphores ---------------------------------------------------------------------- */

union semun {
    int val;
    struct semid_ds *buf;
    unsigned short *array;
    struct seminfo *__buf;
};

static void sem_show(const char *what, int id)
{
    unsigned short v[3] = { 9, 9, 9 };
    long r = semctl(id, 0, GETALL, (union semun){ .array = v });
    if (r < 0)
        printf("%s: GETALL errno=%d\n", what, errno);
    else
        printf("%s: %u %u %u\n", what, v[0], v[1], v[2]);
}

static void on_alarm(int sig) { (void)sig; }

static void alarm_in(int ms, int restart)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 0 }, { 0, ms * 1000 } };
    setitimer(ITIMER_REAL, &it, NULL);
}

static void test_sem(void)
{
    int id = semget(IPC_PRIVATE, 3, IPC_CREAT | 0600);
    printf("semget ok %d\n", id >= 0);
    struct semid_ds ds;
    memset(&ds, 0x55, sizeof ds);
    check("IPC_STAT", semctl(id, 0, IPC_STAT, (union semun){ .buf = &ds }));
    printf("nsems %lu mode %#o key %d otime %d ctime %d\n", (unsigned long)ds.sem_nsems,
           ds.sem_perm.mode & 07777, ds.sem_perm.__key, ds.sem_otime != 0, ds.sem_ctime != 0);

    unsigned short init[3] = { 1, 2, 3 };
    check("SETALL", semctl(id, 0, SETALL, (union semun){ .array = init }));
    sem_show("after SETALL", id);
    check("GETVAL 1", semctl(id, 1, GETVAL));
    check("SETVAL 0", semctl(id, 0, SETVAL, (union semun){ .val = 5 }));
    check("GETVAL 0", semctl(id, 0, GETVAL));
    check("GETVAL range", semctl(id, 3, GETVAL));
    check("SETVAL too big", semctl(id, 0, SETVAL, (union semun){ .val = 40000 }));

    struct sembuf ops[2] = { { 2, -3, 0 }, { 0, 1, 0 } };
    check("semop", semop(id, ops, 2));
    sem_show("after semop", id);
    printf("GETPID is me %d\n", semctl(id, 2, GETPID) == getpid());
    memset(&ds, 0, sizeof ds);
    semctl(id, 0, IPC_STAT, (union semun){ .buf = &ds });
    printf("nsems %lu otime %d\n", (unsigned long)ds.sem_nsems, ds.sem_otime != 0);

    struct sembuf take = { 2, -1, IPC_NOWAIT };
    check("semop nowait", semop(id, &take, 1));
    struct timespec ts = { 0, 30 * 1000 * 1000 };
    take.sem_flg = 0;
    check("semtimedop timeout", semtimedop(id, &take, 1, &ts));
    ts.tv_nsec = 2000000000;
    check("semtimedop bad ts", semtimedop(id, &take, 1, &ts));
    check("semtimedop bad ts ptr", semtimedop(id, &take, 1, bad_ptr));
    check("semop zero ops", semop(id, ops, 0));
    check("semop bad ptr", semop(id, bad_ptr, 1));
    struct sembuf wait0 = { 1, 0, IPC_NOWAIT };
    check("wait-for-zero nowait", semop(id, &wait0, 1));

    /* A signal ends a blocked semop with EINTR, SA_RESTART or not. */
    alarm_in(30, 0);
    check("semop EINTR", semop(id, &(struct sembuf){ 2, -1, 0 }, 1));
    alarm_in(30, 1);
    check("semop EINTR restart", semop(id, &(struct sembuf){ 2, -1, 0 }, 1));

    /* A child blocks until the parent adds; SEM_UNDO in another child. */
    pid_t c = fork();
    if (c == 0) {
        struct sembuf w = { 1, -10, 0 };
        _exit(semop(id, &w, 1) == 0 ? 3 : 4);
    }
    int n = 0;
    for (int i = 0; i < 2000 && (n = semctl(id, 1, GETNCNT)) != 1; i++)
        usleep(1000);
    printf("GETNCNT %d GETZCNT %d\n", n, semctl(id, 1, GETZCNT));
    check("semop release", semop(id, &(struct sembuf){ 1, 10, 0 }, 1));
    int st;
    waitpid(c, &st, 0);
    printf("child exit %d\n", WEXITSTATUS(st));
    printf("GETPID is child %d\n", semctl(id, 1, GETPID) == c);
    sem_show("after child", id);

    c = fork();
    if (c == 0) {
        struct sembuf u = { 0, 4, SEM_UNDO };
        semop(id, &u, 1);
        _exit(semctl(id, 0, GETVAL));
    }
    waitpid(c, &st, 0);
    printf("child saw %d\n", WEXITSTATUS(st));
    sem_show("after undo", id);

    /* Errors and removal. */
    check("IPC_STAT bad", semctl(id, 0, IPC_STAT, (union semun){ .buf = bad_ptr }));
    check("GETALL bad", semctl(id, 0, GETALL, (union semun){ .array = bad_ptr }));
    check("SETALL bad", semctl(id, 0, SETALL, (union semun){ .array = bad_ptr }));
    check("bad cmd", semctl(id, 0, 0x7777, 0));
    struct seminfo si;
    printf("IPC_INFO ok %d semmsl>0 %d\n",
           semctl(id, 0, IPC_INFO, (union semun){ .__buf = &si }) >= 0, si.semmsl > 0);
    semctl(id, 0, IPC_STAT, (union semun){ .buf = &ds });
    ds.sem_perm.mode = 0640;
    check("IPC_SET", semctl(id, 0, IPC_SET, (union semun){ .buf = &ds }));
    memset(&ds, 0, sizeof ds);
    semctl(id, 0, IPC_STAT, (union semun){ .buf = &ds });
    printf("mode %#o nsems %lu\n", ds.sem_perm.mode & 07777, (unsigned long)ds.sem_nsems);
    check("IPC_RMID", semctl(id, 0, IPC_RMID));
    check("semop removed", semop(id, ops, 1) < 0 ? -1 : 0);
}

/* -- Message queues ------------------------------------------------------------------------ */

struct msg {
    long mtype;
    char mtext[64];
};

static void send(int id, long type, const char *text)
{
    struct msg m = { type, { 0 } };
    strcpy(m.mtext, text);
    if (msgsnd(id, &m, strlen(text) + 1, 0) < 0)
        printf("msgsnd %ld errno=%d\n", type, errno);
}

static void recv(const char *what, int id, size_t sz, long type, int flags)
{
    struct msg m;
    memset(&m, 0, sizeof m);
    long r = msgrcv(id, &m, sz, type, flags);
    if (r < 0)
        printf("%s: -1 errno=%d\n", what, errno);
    else
        printf("%s: %ld type %ld '%.*s'\n", what, r, m.mtype, (int)r, m.mtext);
}

static void test_msg(void)
{
    int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);
    printf("msgget ok %d\n", id >= 0);
    send(id, 1, "one");
    send(id, 2, "two");
    send(id, 3, "three");
    send(id, 1, "uno");
    struct msqid_ds ds;
    memset(&ds, 0x55, sizeof ds);
    check("IPC_STAT", msgctl(id, IPC_STAT, &ds));
    printf("qnum %lu cbytes %lu qbytes>0 %d lspid-is-me %d lrpid %d mode %#o stime %d rtime %d\n",
           (unsigned long)ds.msg_qnum, (unsigned long)ds.__msg_cbytes, ds.msg_qbytes > 0,
           ds.msg_lspid == getpid(), ds.msg_lrpid, ds.msg_perm.mode & 07777, ds.msg_stime != 0,
           ds.msg_rtime != 0);

    recv("type 2", id, 64, 2, 0);
    recv("type 0", id, 64, 0, 0);
    recv("type -2", id, 64, -2, 0);
    recv("small", id, 2, 3, 0);
    recv("noerror", id, 2, 3, MSG_NOERROR);
    recv("empty", id, 64, 0, IPC_NOWAIT);
    send(id, 5, "five");
    send(id, 6, "six");
    recv("except 5", id, 64, 5, MSG_EXCEPT);
    recv("type 5", id, 64, 5, IPC_NOWAIT);

    struct msg m = { 0, "x" };
    check("mtype 0", msgsnd(id, &m, 2, 0));
    m.mtype = 1;
    char *big = calloc(1, 1 << 20);
    *(long *)big = 1;
    check("too big", msgsnd(id, big, (1 << 20) - sizeof(long), 0));
    free(big);
    check("bad ptr", msgsnd(id, bad_ptr, 2, 0));
    check("negative size", msgrcv(id, &m, (size_t)-1, 0, IPC_NOWAIT));

    /* A blocked receiver and a signal. */
    alarm_in(30, 1);
    recv("EINTR", id, 64, 0, 0);
    pid_t c = fork();
    if (c == 0) {
        usleep(20000);
        send(id, 7, "late");
        _exit(0);
    }
    recv("blocked", id, 64, 0, 0);
    waitpid(c, NULL, 0);
    memset(&ds, 0, sizeof ds);
    msgctl(id, IPC_STAT, &ds);
    /* (qemu 7.2 reports msg_lrpid 0 here, so it is not compared.) */
    printf("lspid-is-child %d qnum %lu rtime %d\n", ds.msg_lspid == c,
           (unsigned long)ds.msg_qnum, ds.msg_rtime != 0);

    ds.msg_qbytes = 100;
    check("IPC_SET", msgctl(id, IPC_SET, &ds));
    memset(&ds, 0, sizeof ds);
    msgctl(id, IPC_STAT, &ds);
    printf("qbytes %lu\n", (unsigned long)ds.msg_qbytes);
    check("IPC_STAT bad", msgctl(id, IPC_STAT, bad_ptr));
    check("bad cmd", msgctl(id, 0x7777, NULL));
    struct msginfo mi;
    printf("IPC_INFO ok %d\n", msgctl(id, IPC_INFO, (struct msqid_ds *)&mi) >= 0 && mi.msgmax > 0);
    check("IPC_RMID", msgctl(id, IPC_RMID, NULL));
    check("send removed", msgsnd(id, &m, 2, 0) < 0 ? -1 : 0);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_shm();
    test_sem();
    test_msg();
    return 0;
}
