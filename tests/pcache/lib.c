/*
 * A library for tests/pcache.sh: code that a kept translation must move
 * right (globals and a function-pointer table reached pc-relative, a
 * switch through a jump table, calls through the PLT), and whose answer
 * changes with -DVALUE=N, so that a library replaced on disk shows
 * whether its new code ran.
 */
#ifndef VALUE
#define VALUE 1
#endif

static long counter;
static const char *names[] = { "zero", "one", "two", "three", "four", "five", "six", "seven" };

static long twice(long x) { return 2 * x; }
static long thrice(long x) { return 3 * x; }
static long (*const table[])(long) = { twice, thrice };

__attribute__((noinline)) static long pick(long i)
{
    switch (i & 7) {                    /* a jump table */
    case 0: return 11;
    case 1: return 13 + i;
    case 2: return 17 * i;
    case 3: return 19 ^ i;
    case 4: return 23 - i;
    case 5: return 29 + (i >> 1);
    case 6: return 31 | i;
    default: return 37;
    }
}

long lib_work(long n)
{
    long s = 0;
    for (long i = 0; i < n; i++) {
        counter += VALUE;
        s += table[i & 1](i) + pick(i) + names[i & 7][0];
    }
    return s + counter;
}

long lib_value(void) { return VALUE; }
