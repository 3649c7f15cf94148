/*
 * A pseudo-terminal pair through /dev/ptmx (posix_openpt, grantpt,
 * unlockpt, ptsname), a line written on one side and read on the other.
 * tests/root_view.sh runs it under -L and --root with a DIR/dev/ptmx that is
 * not a device: /dev must be the host's either way. Then the working
 * directory as the guest sees it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

int main(void)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
        perror("posix_openpt");
        return 1;
    }
    const char *name = ptsname(m);
    int s = name ? open(name, O_RDWR | O_NOCTTY) : -1;
    if (s < 0 || strncmp(name, "/dev/pts/", 9)) {
        perror("open slave");
        return 1;
    }
    struct termios t;
    tcgetattr(s, &t);
    cfmakeraw(&t);
    tcsetattr(s, TCSANOW, &t);
    if (write(m, "ping\n", 5) != 5)
        return 1;
    char buf[16] = { 0 };
    ssize_t n = read(s, buf, sizeof buf - 1);
    printf("pty %s: %zd bytes, %s", isatty(s) ? "ok" : "not a tty", n, buf);
    char cwd[4096];
    printf("cwd %s\n", getcwd(cwd, sizeof cwd) ? cwd : "(none)");
    return 0;
}
