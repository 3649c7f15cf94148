/*
 * tests/pcache.sh's program: maps `pad` pages first, so that libt.so (the
 * first argument, dlopen'ed after it) lands somewhere else each time, then
 * runs the library's code and prints what it computed.
 *   main LIB PAD
 * Built a second time with -DWORK=3 as another program (another build id)
 * for which the library's loop is not hot.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#ifndef WORK
#define WORK 20000
#endif

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    long pad = atol(argv[2]);
    if (pad > 0 && mmap(NULL, (size_t)pad * 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED)
        return 3;
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 4;
    }
    long (*work)(long) = (long (*)(long))dlsym(h, "lib_work");
    long (*value)(void) = (long (*)(void))dlsym(h, "lib_value");
    if (!work || !value)
        return 5;
    printf("value %ld work %ld\n", value(), work(WORK));
    return 0;
}
