/*
 * Hazard: one thread closes and duplicates descriptors without pause while
 * another forks, and each child closes a descriptor too. xlat checks every
 * close and dup2 against its own descriptors under a lock; a fork taken
 * while another thread held that lock left the child waiting for it
 * forever. Self-checking (tests/hazard.sh): every child must exit.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define FORKS 1500

static volatile int stop;

static void *closer(void *arg)
{
    (void)arg;
    while (!stop) {
        int fd = dup(1);
        if (fd >= 0) {
            dup2(fd, fd + 1);
            close(fd + 1);
            close(fd);
        }
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, closer, NULL);
    int bad = 0;
    for (int i = 0; i < FORKS; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            close(dup(1));
            _exit(3);
        }
        int st;
        bad += pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 3;
    }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (bad)
        printf("%d of %d forks went wrong\n", bad, FORKS);
    else
        printf("ALL OK\n");
    return bad != 0;
}
