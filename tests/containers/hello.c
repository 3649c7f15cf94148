/* tests/containers.sh: the C program compiled and run inside riscv64
 * containers (podman run, and the RUN steps of Containerfile). Its output
 * is deterministic and shows how it was started: argv as the program got
 * it (binfmt_misc's P flag keeps argv[0]), whether a descriptor 3 leaked
 * from the loader (O flag), the machine uname(2) reports, then a little
 * integer and floating-point work. */
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

static uint32_t crc32(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & -(c & 1));
    }
    return ~c;
}

int main(int argc, char **argv)
{
    struct utsname u;
    if (uname(&u) != 0)
        return 2;
    printf("argc=%d", argc);
    for (int i = 0; i < argc; i++)
        printf(" argv[%d]=%s", i, argv[i]);
    printf("\nmachine=%s fd3=%s\n", u.machine, fcntl(3, F_GETFD) < 0 ? "closed" : "open");

    enum { N = 2000000 };
    unsigned char *sieve = calloc(N, 1);
    if (!sieve)
        return 2;
    long primes = 0, last = 0;
    for (long i = 2; i < N; i++) {
        if (sieve[i])
            continue;
        primes++, last = i;
        for (long j = i * i; j < N; j += i)
            sieve[j] = 1;
    }
    printf("primes below %d: %ld, largest %ld, crc32 %08x\n", N, primes, last, crc32(sieve, N));
    free(sieve);

    double s = 0;
    for (int i = 1; i <= 1000000; i++)
        s += sin(i) / i + sqrt((double)i) * 1e-9;
    printf("sum %.12f\n", s);
    return 0;
}
