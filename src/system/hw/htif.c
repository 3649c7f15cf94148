/*
 * HTIF tohost (see htif.h). tohost is an ordinary word of RAM that guest
 * code stores to directly, so a thread watches it (every millisecond):
 * the first nonzero value is the program's last word. An odd value is an
 * exit, (code << 1) | 1; an even one would be a pointer to an HTIF syscall
 * block (printing, in riscv-tests' benchmarks): not supported, so it ends
 * the run with status 1 and a message under -d unimp.
 */
#define _GNU_SOURCE
#include "system/hw/htif.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "exec/settings.h"
#include "system/machine.h"

static volatile uint64_t *tohost_word;

static void *watch(void *arg)
{
    (void)arg;
    const struct timespec tick = { 0, 1000000 };
    while (!__atomic_load_n(&machine.exit_requested, __ATOMIC_ACQUIRE)) {
        uint64_t v = __atomic_load_n(tohost_word, __ATOMIC_ACQUIRE);
        if (v & 1) {
            machine_request_exit((int)((v >> 1) & 0x7fffffff), false);
            break;
        }
        if (v) {
            xlat_log(LOG_UNIMP, "xlat-system: HTIF syscall block at %#llx not supported\n",
                     (unsigned long long)v);
            machine_request_exit(1, false);
            break;
        }
        nanosleep(&tick, NULL);
    }
    return NULL;
}

void htif_init(uint64_t tohost)
{
    tohost_word = machine_ram_ptr(tohost, 8);
    if (!tohost_word) {
        fprintf(stderr, "xlat-system: the ELF's tohost (%#llx) is not in RAM: no HTIF exit\n",
                (unsigned long long)tohost);
        return;
    }
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, watch, NULL) != 0)
        perror("xlat-system: htif");
    pthread_attr_destroy(&a);
}
