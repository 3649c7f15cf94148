/*
 * What the tools do when the guest process ends (exit_group, exit of the
 * last thread, or death by a signal): a vfork child sends its parent its
 * last writes, -d stats prints the counters, -perfmap/-jitdump flush, and
 * an attached gdb gets its W (exit status) or X (signal) reply.
 */
#include "exec/exec.h"
#include "exec/perfmap.h"
#include "user/gdbstub.h"
#include "user/options.h"
#include "user/vfork.h"

void xlat_at_exit(int status, int sig)
{
    vfork_child_release();             /* first: the parent waits for it */
    if ((log_mask & LOG_STATS) && !opt.interp_only)
        exec_print_stats();
    else if (log_mask & LOG_STATS)
        fprintf(log_file, "xlat stats: interpreter only (--interp): no JIT counters\n");
    if (perfmap_enabled)
        perfmap_close();
    gdb_exit(status, sig);
    if (!opt.interp_only)
        exec_process_exit();
}
