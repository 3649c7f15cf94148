/*
 * RISC-V for the gdb stub (see gdb_target.h). The target description
 * follows gdb's features/riscv/ files (org.gnu.gdb.riscv.cpu, .fpu, .csr,
 * .virtual), with explicit regnums so that gdb's numbering and the
 * stub's agree.
 */
#include "riscv/gdb_target.h"
#include "exec/exec.h"

#include <stdio.h>
#include <string.h>

#include "riscv/insn.h"
#include "riscv/priv.h"

const int riscv_gdb_expedite[] = { RISCV_GDB_PC, 2, -1 };

enum { REG_FFLAGS = RISCV_GDB_CSR0 + CSR_FFLAGS, REG_FRM = RISCV_GDB_CSR0 + CSR_FRM,
       REG_FCSR = RISCV_GDB_CSR0 + CSR_FCSR };

/* The privileged CSRs the machine's description lists. */
static const struct { unsigned num; const char *name; } machine_csrs[] = {
    { 0x100, "sstatus" },  { 0x104, "sie" },      { 0x105, "stvec" },   { 0x106, "scounteren" },
    { 0x10a, "senvcfg" },  { 0x140, "sscratch" }, { 0x141, "sepc" },    { 0x142, "scause" },
    { 0x143, "stval" },    { 0x144, "sip" },      { 0x14d, "stimecmp" }, { 0x180, "satp" },
    { 0x300, "mstatus" },  { 0x301, "misa" },     { 0x302, "medeleg" }, { 0x303, "mideleg" },
    { 0x304, "mie" },      { 0x305, "mtvec" },    { 0x306, "mcounteren" }, { 0x30a, "menvcfg" },
    { 0x340, "mscratch" }, { 0x341, "mepc" },     { 0x342, "mcause" },  { 0x343, "mtval" },
    { 0x344, "mip" },      { 0xf14, "mhartid" },  { 0xc00, "cycle" },   { 0xc01, "time" },
    { 0xc02, "instret" },
};

/* -- Target description ------------------------------------------------------ */

typedef struct XmlBuf { char *p; size_t n, cap; } XmlBuf;

#define XML(b, ...) ((b)->n += (size_t)snprintf((b)->p + (b)->n, (b)->cap - (b)->n, __VA_ARGS__))

static void xml_cpu_fpu(XmlBuf *b)
{
    XML(b, "<feature name=\"org.gnu.gdb.riscv.cpu\">\n");
    for (int i = 0; i < 32; i++)
        XML(b, "<reg name=\"%s\" bitsize=\"64\" type=\"%s\" regnum=\"%d\"/>\n",
            i == 8 ? "fp" : riscv_xreg_name[i],
            i == 1 ? "code_ptr" : (i == 2 || i == 8) ? "data_ptr" : "int", i);
    XML(b, "<reg name=\"pc\" bitsize=\"64\" type=\"code_ptr\" regnum=\"32\"/>\n</feature>\n"
           "<feature name=\"org.gnu.gdb.riscv.fpu\">\n"
           "<union id=\"riscv_double\"><field name=\"float\" type=\"ieee_single\"/>"
           "<field name=\"double\" type=\"ieee_double\"/></union>\n");
    for (int i = 0; i < 32; i++)
        XML(b, "<reg name=\"f%d\" bitsize=\"64\" type=\"riscv_double\" regnum=\"%d\"/>\n", i,
            RISCV_GDB_F0 + i);
    XML(b, "<reg name=\"fflags\" bitsize=\"32\" type=\"int\" regnum=\"%d\" group=\"float\"/>\n"
           "<reg name=\"frm\" bitsize=\"32\" type=\"int\" regnum=\"%d\" group=\"float\"/>\n"
           "<reg name=\"fcsr\" bitsize=\"32\" type=\"int\" regnum=\"%d\" group=\"float\"/>\n"
           "</feature>\n", REG_FFLAGS, REG_FRM, REG_FCSR);
}

static void xml_privileged(XmlBuf *b)
{
    XML(b, "<feature name=\"org.gnu.gdb.riscv.csr\">\n");
    for (size_t i = 0; i < sizeof machine_csrs / sizeof machine_csrs[0]; i++)
        XML(b, "<reg name=\"%s\" bitsize=\"64\" type=\"int\" regnum=\"%u\" group=\"system\"/>\n",
            machine_csrs[i].name, RISCV_GDB_CSR0 + machine_csrs[i].num);
    XML(b, "</feature>\n<feature name=\"org.gnu.gdb.riscv.virtual\">\n"
           "<reg name=\"priv\" bitsize=\"64\" type=\"int\" regnum=\"%d\" group=\"system\"/>\n"
           "</feature>\n", RISCV_GDB_PRIV);
}

const char *riscv_gdb_target_xml(bool machine)
{
    static char bufs[2][16384] LARGE_BSS;
    char *p = bufs[machine];
    if (p[0])
        return p;
    XmlBuf b = { p, 0, sizeof bufs[0] };
    XML(&b, "<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
            "<target version=\"1.0\">\n<architecture>riscv:rv64</architecture>\n");
    if (!machine)
        XML(&b, "<osabi>GNU/Linux</osabi>\n");
    xml_cpu_fpu(&b);
    if (machine)
        xml_privileged(&b);
    XML(&b, "</target>\n");
    return p;
}

/* -- Registers ------------------------------------------------------------------ */

static int put64(uint8_t *buf, uint64_t v)
{
    memcpy(buf, &v, 8);                     /* little-endian host, as the target */
    return 8;
}

int riscv_gdb_reg_read(CPUState *cpu, int n, uint8_t *buf)
{
    uint64_t v;
    if (n >= 0 && n < 32)
        return put64(buf, cpu->x[n]);
    if (n == RISCV_GDB_PC)
        return put64(buf, cpu->pc);
    if (n >= RISCV_GDB_F0 && n < RISCV_GDB_F0 + 32)
        return put64(buf, cpu->f[n - RISCV_GDB_F0]);
    if (n == REG_FFLAGS || n == REG_FRM || n == REG_FCSR) {
        uint32_t v32 = n == REG_FFLAGS ? cpu->fflags : n == REG_FRM ? cpu->frm
                                                                    : (cpu->frm << 5 | cpu->fflags);
        memcpy(buf, &v32, 4);
        return 4;
    }
    if (!cpu->priv.on)
        return 0;
    if (n == RISCV_GDB_PRIV)
        return put64(buf, cpu->priv.mode);
    if (n >= RISCV_GDB_CSR0 && n < RISCV_GDB_CSR0 + 4096 &&
        priv_debug_csr(cpu, (unsigned)(n - RISCV_GDB_CSR0), false, &v))
        return put64(buf, v);
    return 0;
}

bool riscv_gdb_reg_write(CPUState *cpu, int n, const uint8_t *buf, size_t len)
{
    uint64_t v = 0;
    memcpy(&v, buf, len < 8 ? len : 8);
    if (n == 0)
        return true;                        /* x0 stays zero */
    if (n > 0 && n < 32)
        cpu->x[n] = v;
    else if (n == RISCV_GDB_PC)
        cpu->pc = v;
    else if (n >= RISCV_GDB_F0 && n < RISCV_GDB_F0 + 32)
        cpu->f[n - RISCV_GDB_F0] = v;
    else if (n == REG_FFLAGS)
        cpu->fflags = v & 0x1f;
    else if (n == REG_FRM)
        cpu->frm = v & 7;
    else if (n == REG_FCSR) {
        cpu->fflags = v & 0x1f;
        cpu->frm = (v >> 5) & 7;
    } else if (!cpu->priv.on)
        return false;
    else if (n == RISCV_GDB_PRIV)
        return priv_debug_set_mode(cpu, (int)v);
    else if (n >= RISCV_GDB_CSR0 && n < RISCV_GDB_CSR0 + 4096)
        return priv_debug_csr(cpu, (unsigned)(n - RISCV_GDB_CSR0), true, &v);
    else
        return false;
    return true;
}

/* -- Watchpoints: what an instruction accesses ------------------------------------ */

bool riscv_gdb_insn_access(CPUState *cpu,
                           size_t (*read)(void *opaque, CPUState *cpu, uint64_t addr, void *buf,
                                          size_t len),
                           void *opaque, RiscvGdbAccess *out)
{
    uint32_t bits = 0;
    Insn in;
    if (read(opaque, cpu, cpu->pc, &bits, 2) != 2)
        return false;
    if (insn_length((uint16_t)bits) == 4 && read(opaque, cpu, cpu->pc, &bits, 4) != 4)
        return false;
    if (!insn_decode(bits, &in))
        return false;
    enum insn_format fmt = insn_table[in.op].fmt;
    switch (fmt) {
    case FMT_L:
        if (in.op == OP_jalr)
            return false;
        /* fall through */
    case FMT_FL:
    case FMT_LR:  out->reads = true;  out->writes = false; break;
    case FMT_S:
    case FMT_FS:  out->reads = false; out->writes = true;  break;
    case FMT_AMO: out->reads = true;  out->writes = true;  break;
    default:
        return false;
    }
    out->addr = cpu->x[in.rs1] + (fmt == FMT_AMO || fmt == FMT_LR ? 0 : (uint64_t)in.imm);
    out->size = 1ULL << ((insn_raw(&in) >> 12) & 3);
    return true;
}
