/*
 * The execution loop of one guest thread: see cpu_loop.h.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "exec/exec.h"
#include "riscv/cpu.h"
#include "riscv/insn.h"
#include "user/cpu_loop.h"
#include "user/fault.h"
#include "user/gdbstub.h"
#include "user/mm.h"
#include "user/options.h"
#include "user/signal.h"
#include "user/syscall.h"

/*
 * With -d in_asm or exec, run one instruction at a time so each can be
 * logged: exec logs every pc, in_asm each distinct pc once.
 */
static enum exit_reason run_logged(CPUState *cpu)
{
    static uint64_t *seen;
    static size_t seen_cap;          /* open-addressing set of logged pcs */
    for (;;) {
        uint64_t pc = cpu->pc;
        if (log_mask & LOG_EXEC)
            fprintf(log_file, "exec pc 0x%llx\n", (unsigned long long)pc);
        if (log_mask & LOG_IN_ASM) {
            if (!seen) {
                seen_cap = 1 << 16;
                seen = calloc(seen_cap, sizeof *seen);
            }
            size_t h = (pc * 0x9e3779b97f4a7c15ULL) >> 48;
            while (seen[h & (seen_cap - 1)] && seen[h & (seen_cap - 1)] != pc + 1)
                h++;
            if (!seen[h & (seen_cap - 1)]) {
                seen[h & (seen_cap - 1)] = pc + 1;
                insn_print_at(log_file, pc);
            }
        }
        enum exit_reason r = interp_step(cpu);
        if (r != EXIT_NONE)
            return r;
        if (cpu->exit_request)
            return EXIT_REQUEST;           /* a signal arrived */
    }
}

_Noreturn void cpu_loop(CPUState *cpu)
{
    bool logged = opt.interp_only && (log_mask & (LOG_IN_ASM | LOG_EXEC));
    exec_cpu_init(cpu);
    signal_attach(cpu);
    for (;;) {
        enum exit_reason r = gdb_active ? gdb_run(cpu) : logged ? run_logged(cpu)
                           : opt.interp_only ? interp_run(cpu) : exec_run(cpu);
        switch (r) {
        case EXIT_ECALL:
            signal_do_syscall(cpu);        /* runs it, handles restarts, advances pc */
            break;
        case EXIT_ILLEGAL:
            if (log_mask & LOG_UNIMP) {
                fprintf(log_file, "xlat: illegal instruction at pc 0x%llx: ",
                        (unsigned long long)cpu->pc);
                insn_print_at(log_file, cpu->pc);
            }
            /* fall through */
        case EXIT_EBREAK:
        case EXIT_FAULT: {
            GuestSignal s = fault_signal_of(cpu, r);
            signal_raise_sync(cpu, s.signo, s.code, s.addr);
            break;
        }
        case EXIT_REQUEST:
            cpu->exit_request = 0;         /* before looking at what was asked */
            break;
        case EXIT_NONE:
        case EXIT_WFI:                     /* system mode only: no wfi in U-mode */
            break;
        }
        signal_process_pending(cpu);
    }
}
