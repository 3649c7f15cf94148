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

_Noreturn void cpu_loop(CPUState *cpu)
{
    bool logged = opt.interp_only && (log_mask & (LOG_IN_ASM | LOG_EXEC));
    exec_cpu_init(cpu);
    signal_attach(cpu);
    for (;;) {
        enum exit_reason r = gdb_active ? gdb_run(cpu) : logged ? interp_run_logged(cpu, ~0u)
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
