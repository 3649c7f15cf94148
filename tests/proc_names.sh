#!/bin/sh
# How the guest program and its mappings are named, as Linux names them:
# comm is the basename of the path it was started by (a symlink's own
# name, cut to 15 bytes), /proc/self/exe the file itself (the link
# resolved), and /proc/self/maps shows the program's file mappings by the
# file's name and the bss pages past its last file page without one.
# xlat finds these names only when the guest asks (a readlink per mapped
# file at every start cost microseconds each), so the program asks after
# a chdir and after its file was renamed, or deleted, when a name taken at
# start would be stale: Linux names the file as it is when asked, and
# /proc/self/exe still opens, and executes, the file.
# Usage: tests/proc_names.sh BUILD. Exit status 0 = pass.
set -u
BUILD=${1:-build}
XLAT=$BUILD/xlat
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cat > "$TMP/t.c" <<'C'
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char big[1 << 20];       /* bss well past the file's last page */

static void map_name(const char *label, uintptr_t addr)
{
    static char buf[65536];
    int fd = open("/proc/self/maps", O_RDONLY);
    long n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    buf[n > 0 ? n : 0] = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
            const char *slash = strrchr(line, '/');
            printf("%s: %s\n", label, slash ? slash + 1 : "(no name)");
            return;
        }
    }
    printf("%s: not mapped\n", label);
}

int main(int argc, char **argv)
{
    char comm[32] = "", exe[4096];
    if (argc == 2 && !strcmp(argv[1], "again")) {
        printf("exec'd again\n");
        return 0;
    }
    if (argc > 1 && (rename(argv[1], argv[2]) != 0 || chdir("/") != 0))
        return 2;
    if (argc > 3 && unlink(argv[2]) != 0)
        return 3;
    int fd = open("/proc/self/comm", O_RDONLY);
    long n = fd >= 0 ? read(fd, comm, sizeof comm - 1) : -1;
    printf("comm: %.*s", (int)(n > 0 ? n : 0), comm);
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    printf("exe: %s\n", strrchr(exe, '/') ? strrchr(exe, '/') + 1 : "?");
    big[1 << 19] = 1;
    map_name("code", (uintptr_t)&main);
    map_name("bss", (uintptr_t)&big[1 << 19]);
    char head[4] = "";
    fd = open("/proc/self/exe", O_RDONLY);
    printf("exe opens: %s\n", fd >= 0 && read(fd, head, 4) == 4 && !memcmp(head, "\177ELF", 4)
                               ? "ELF" : "no");
    if (argc > 3) {
        fflush(stdout);
        execl("/proc/self/exe", "names", "again", (char *)NULL);
        printf("exec of /proc/self/exe failed\n");
    }
    return 0;
}
C
riscv64-linux-gnu-gcc -O2 -static -o "$TMP/names" "$TMP/t.c" || exit 1
ln -s names "$TMP/a-very-long-link-name"

fail=0
check() {   # what, got, want
    if [ "$2" = "$3" ]; then
        echo "ok: $1"
    else
        printf 'FAIL: %s\n--- got\n%s\n--- want\n%s\n' "$1" "$2" "$3"
        fail=1
    fi
}

got=$("$XLAT" "$TMP/a-very-long-link-name" 2>&1)
check "started through a link" "$got" "comm: a-very-long-lin
exe: names
code: names
bss: (no name)
exe opens: ELF"

# Renamed before anything asked: the names are the file's new one.
got=$("$XLAT" "$TMP/names" "$TMP/names" "$TMP/renamed" 2>&1)
check "renamed before asked" "$got" "comm: names
exe: renamed
code: renamed
bss: (no name)
exe opens: ELF"

# Deleted: " (deleted)" after the name, as Linux says it, and still opens.
cp "$TMP/renamed" "$TMP/names"
got=$("$XLAT" "$TMP/names" "$TMP/names" "$TMP/gone" delete 2>&1)
check "deleted before asked" "$got" "comm: names
exe: gone (deleted)
code: gone (deleted)
bss: (no name)
exe opens: ELF
exec'd again"

exit $fail
