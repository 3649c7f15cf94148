/* tests/pcache.sh: run argv[1] with the rest as its arguments (an execve
 * that xlat follows by starting itself again). */
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    execv(argv[1], argv + 1);
    return 127;
}
