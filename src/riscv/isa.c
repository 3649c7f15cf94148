/*
 * -cpu ISA strings: parse them into the extension mask that insn_decode()
 * enforces, and print the mask back for the auxv, hwprobe and cpuinfo.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "riscv/isa.h"

uint32_t isa_mask = ISA_ALL;

/* Extensions named by more than one letter, in canonical order. */
static const struct { const char *name; uint32_t bit; } multi[] = {
    { "zicsr", ISA_BIT(EXT_ZICSR) }, { "zifencei", ISA_BIT(EXT_ZIFENCEI) },
    { "zba", ISA_BIT(EXT_ZBA) }, { "zbb", ISA_BIT(EXT_ZBB) }, { "zbs", ISA_BIT(EXT_ZBS) },
};

static const uint32_t always = ISA_BIT(EXT_I) | ISA_BIT(EXT_ZICSR) | ISA_BIT(EXT_ZIFENCEI);

static bool letter_bit(char c, uint32_t *bit)
{
    switch (c) {
    case 'i': *bit = ISA_BIT(EXT_I); return true;
    case 'm': *bit = ISA_BIT(EXT_M); return true;
    case 'a': *bit = ISA_BIT(EXT_A); return true;
    case 'f': *bit = ISA_BIT(EXT_F); return true;
    case 'd': *bit = ISA_BIT(EXT_D) | ISA_BIT(EXT_F); return true;   /* D implies F */
    case 'c': *bit = ISA_C; return true;
    case 'g': *bit = ISA_BIT(EXT_M) | ISA_BIT(EXT_A) | ISA_BIT(EXT_F) | ISA_BIT(EXT_D);
              return true;
    default: return false;
    }
}

static bool multi_bit(const char *name, size_t len, uint32_t *bit)
{
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++)
        if (strlen(multi[i].name) == len && !strncasecmp(name, multi[i].name, len)) {
            *bit = multi[i].bit;
            return true;
        }
    return false;
}

bool isa_parse(const char *s, uint32_t *mask, char *err, size_t errlen)
{
    if (!strcasecmp(s, "max") || !strcasecmp(s, "any")) {
        *mask = ISA_ALL;
        return true;
    }
    if (strncasecmp(s, "rv64", 4)) {
        snprintf(err, errlen, "'%s' is not an rv64 ISA string (e.g. rv64gc, max)", s);
        return false;
    }
    uint32_t m = always, bit;
    const char *p = s + 4;
    for (; *p && *p != '_'; p++) {
        if (!letter_bit((char)tolower((unsigned char)*p), &bit)) {
            snprintf(err, errlen, "extension '%c' is not supported", *p);
            return false;
        }
        m |= bit;
    }
    while (*p == '_') {
        const char *name = ++p;
        while (*p && *p != '_')
            p++;
        if (!multi_bit(name, (size_t)(p - name), &bit)) {
            snprintf(err, errlen, "extension '%.*s' is not supported", (int)(p - name), name);
            return false;
        }
        m |= bit;
    }
    *mask = m;
    return true;
}

void isa_string(char *buf, size_t len)
{
    static const char letters[] = "imafdc";
    size_t n = (size_t)snprintf(buf, len, "rv64");
    uint32_t bit = 0;
    for (const char *c = letters; *c && n + 1 < len; c++) {
        letter_bit(*c, &bit);
        if (*c == 'd')
            bit = ISA_BIT(EXT_D);
        if ((isa_mask & bit) == bit) {
            buf[n++] = *c;
            buf[n] = '\0';
        }
    }
    for (size_t i = 0; i < sizeof multi / sizeof multi[0] && n < len; i++)
        if (isa_mask & multi[i].bit)
            n += (size_t)snprintf(buf + n, len - n, "_%s", multi[i].name);
}

uint64_t isa_hwcap(void)
{
    static const char letters[] = "imafdc";
    uint64_t hw = 0;
    uint32_t bit = 0;
    for (const char *c = letters; *c; c++) {
        letter_bit(*c, &bit);
        if (*c == 'd')
            bit = ISA_BIT(EXT_D);
        if ((isa_mask & bit) == bit)
            hw |= 1ULL << (*c - 'a');
    }
    return hw;
}
