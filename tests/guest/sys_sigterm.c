/*
 * Signals sent to ourselves: an ignored one does nothing, a default one
 * that is ignored by default (SIGCHLD) does nothing, SIGTERM kills (143).
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    signal(SIGUSR1, SIG_IGN);
    printf("raise ignored: %d\n", raise(SIGUSR1));
    printf("raise SIGCHLD: %d\n", raise(SIGCHLD));
    printf("kill ignored: %d\n", kill(getpid(), SIGUSR1));
    fflush(stdout);
    raise(SIGTERM);
    printf("not reached\n");
    return 0;
}
