/*
 * -perfmap and -jitdump outputs (see perfmap.h). Called by the translator
 * under its lock for each new block; both files are append-only. The
 * jitdump file is also mapped PROT_EXEC once, which is how `perf record`
 * finds it (the MMAP event names the file), as the jitdump spec requires.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/perfmap.h"

int perfmap_enabled;

static FILE *map_file, *dump_file;
static uint64_t code_index;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void perfmap_open(void);
static void perfmap_close_locked(void);

enum { JITDUMP_MAGIC = 0x4A695444, JITDUMP_VERSION = 1, JIT_CODE_LOAD = 0 };

struct jitdump_header {
    uint32_t magic, version, total_size, elf_mach, pad1, pid;
    uint64_t timestamp, flags;
};

struct jitdump_code_load {
    uint32_t id, total_size;
    uint64_t timestamp;
    uint32_t pid, tid;
    uint64_t vma, code_addr, code_size, code_index;
    /* then the NUL-terminated name and the code bytes */
};

static void open_jitdump(void)
{
    char path[64];
    snprintf(path, sizeof path, "jit-%d.dump", (int)getpid());
    dump_file = fopen(path, "w+e");
    if (!dump_file) {
        fprintf(stderr, "xlat: -jitdump: cannot create %s\n", path);
        return;
    }
    struct jitdump_header h = {
        .magic = JITDUMP_MAGIC, .version = JITDUMP_VERSION, .total_size = sizeof h,
        .elf_mach = EM_X86_64, .pid = (uint32_t)getpid(), .timestamp = monotonic_ns(),
    };
    fwrite(&h, sizeof h, 1, dump_file);
    fflush(dump_file);
    /* The marker perf looks for: an executable mapping of the file. */
    long pg = sysconf(_SC_PAGESIZE);
    if (mmap(NULL, (size_t)pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(dump_file), 0) ==
        MAP_FAILED)
        perror("xlat: -jitdump: mmap");
}

/* fork: nothing buffered twice; the child writes files named by its pid. */
static void atfork_prepare(void) { pthread_mutex_lock(&lock); perfmap_close_locked(); }
static void atfork_parent(void) { pthread_mutex_unlock(&lock); }
static void atfork_child(void)
{
    pthread_mutex_unlock(&lock);
    if (map_file)
        fclose(map_file);
    if (dump_file)
        fclose(dump_file);
    map_file = dump_file = NULL;
    code_index = 0;
    perfmap_open();
}

static bool want_map, want_dump;
static PerfmapNamer name_of;

void perfmap_init(bool perf_map, bool jitdump, PerfmapNamer namer)
{
    want_map = perf_map;
    want_dump = jitdump;
    name_of = namer;
    perfmap_open();
    if (perfmap_enabled)
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static void perfmap_open(void)
{
    if (want_map) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
        map_file = fopen(path, "we");
        if (!map_file)
            fprintf(stderr, "xlat: -perfmap: cannot create %s\n", path);
    }
    if (want_dump)
        open_jitdump();
    perfmap_enabled = map_file || dump_file;
}

void perfmap_add(uint64_t guest_pc, const void *code, uint32_t size)
{
    char name[256];
    name_of(guest_pc, name, sizeof name);
    pthread_mutex_lock(&lock);
    if (map_file)
        fprintf(map_file, "%llx %x %s\n", (unsigned long long)(uintptr_t)code, size, name);
    if (dump_file) {
        size_t nlen = strlen(name) + 1;
        struct jitdump_code_load r = {
            .id = JIT_CODE_LOAD, .total_size = (uint32_t)(sizeof r + nlen + size),
            .timestamp = monotonic_ns(), .pid = (uint32_t)getpid(), .tid = (uint32_t)gettid(),
            .vma = (uintptr_t)code, .code_addr = (uintptr_t)code, .code_size = size,
            .code_index = code_index++,
        };
        fwrite(&r, sizeof r, 1, dump_file);
        fwrite(name, nlen, 1, dump_file);
        fwrite(code, size, 1, dump_file);
    }
    pthread_mutex_unlock(&lock);
}

static void perfmap_close_locked(void)
{
    if (map_file)
        fflush(map_file);
    if (dump_file)
        fflush(dump_file);
}

void perfmap_close(void)
{
    pthread_mutex_lock(&lock);
    perfmap_close_locked();
    pthread_mutex_unlock(&lock);
}
