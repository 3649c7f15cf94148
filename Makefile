# xlat: one plain Makefile. `make` builds build/xlat; `make check` runs every
# test; `make demo` runs Debian riscv64 programs (gcc, python3, bash, busybox)
# side by side with qemu-riscv64. Objects go out of tree under build/.
# `make SAN=1` builds with ASan+UBSan (`make check-san` runs the suite on it;
# `make check` does too when CI=true). `make fuzz` runs the fuzzers longer.
# `make static` (= `make STATIC=1`) builds the static-pie build-static/xlat,
# hard-linked as build/xlat-static, the binary binfmt_misc's F flag needs;
# `make install PREFIX=/usr/local DESTDIR=` installs it for binfmt_misc.
#
# User mode's xlat is linked with musl when musl-gcc is there (scripts/deps.sh
# installs it), else with glibc. Every guest execve starts a new xlat, and
# glibc's start probes the CPU's caches with about ninety cpuid instructions,
# each a trap to the hypervisor in a VM: 0.8 ms of a 1 ms process start on
# the benchmark machines, none of it with musl. The sanitizer build, system
# mode and the unit tests stay with glibc.

CC      ?= cc
BUILD   ?= build
SAN     ?= 0
STATIC  ?= 0

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu17 -Wall -Wextra -Werror -MMD -MP -Isrc
LDFLAGS ?=
LDLIBS  += -lm -lpthread

ifeq ($(SAN)$(STATIC),11)
$(error SAN=1 and STATIC=1 do not combine: the sanitizers need the dynamic loader)
endif
ifeq ($(SAN),1)
BUILD   := build-san
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
MUSL_GCC := $(if $(filter 1,$(SAN)),,$(shell command -v musl-gcc 2>/dev/null))

# The static build cannot dlopen libcapstone (src/x86/disas.c): with glibc
# it links Debian's libcapstone.a; with musl it has no host disassembler
# (linked in, capstone's relocations would cost every start 0.6 ms). The
# dynamic one dlopens it on the first -d out_asm.
# (override: a BUILD, CFLAGS or LDFLAGS given on the command line must not
# mix these objects with build/'s or drop the switch.)
ifeq ($(STATIC),1)
override BUILD   := build-static
ifeq ($(MUSL_GCC),)
override CFLAGS  += -fPIE -DXLAT_CAPSTONE_STATIC
override LDFLAGS += -static-pie
LDLIBS  += -l:libcapstone.a
endif
else
LDLIBS  += -ldl
endif

# Per-binary source lists. The execution core (the guest ISA, the JIT core,
# the x86 backend) is linked by every mode; build/xlat is the core plus user
# mode, and build/xlat-system is the same core objects plus src/system.
# tests/layering.sh checks that the core needs nothing of a mode. The unit
# tests link the core and user mode without user mode's main (test_system_*:
# the core and system mode without its main).
CORE_SRCS := $(shell find src/riscv src/exec src/x86 -name '*.c' | sort)
USER_SRCS := $(shell find src/user -name '*.c' | sort)
SYSTEM_SRCS := $(shell find src/system -name '*.c' | sort)
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)
USER_OBJS := $(USER_SRCS:%.c=$(BUILD)/%.o)
SYSTEM_OBJS := $(SYSTEM_SRCS:%.c=$(BUILD)/%.o)
OBJS      := $(CORE_OBJS) $(USER_OBJS) $(SYSTEM_OBJS)
LIB_OBJS  := $(filter-out $(BUILD)/src/user/main.o,$(CORE_OBJS) $(USER_OBJS))
SYSTEM_LIB_OBJS := $(filter-out $(BUILD)/src/system/main.o,$(CORE_OBJS) $(SYSTEM_OBJS))

# Host unit tests: tests/unit/test_*.c, each its own binary.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)

# The static build is user mode's (binfmt_misc's F flag); system mode is dynamic.
ifeq ($(STATIC),1)
all: $(BUILD)/xlat
else
all: $(BUILD)/xlat $(BUILD)/xlat-system
endif

ifeq ($(MUSL_GCC),)
$(BUILD)/xlat: $(CORE_OBJS) $(USER_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
else
# User mode with musl: the same sources compiled again under $(BUILD)/musl.
# musl-gcc sees only musl's headers: the kernel's (linux/, asm/) and
# capstone's are linked into $(MUSL_INC). Debian's libcapstone is built for
# glibc; src/x86/glibc_compat.c gives it the three glibc entry points it
# calls, which the dynamic xlat exports for it.
MUSL_DIR  := $(BUILD)/musl
MUSL_INC  := $(MUSL_DIR)/include
MUSL_LIB  := $(shell sed -n 's|.*-specs "\(.*/\)musl-gcc.specs".*|\1|p' $(MUSL_GCC))
MUSL_OBJS := $(CORE_SRCS:%.c=$(MUSL_DIR)/%.o) $(USER_SRCS:%.c=$(MUSL_DIR)/%.o)
MULTIARCH := $(shell $(CC) -print-multiarch)
MUSL_CFLAGS := $(filter-out -fsanitize% -fno-sanitize%,$(CFLAGS)) -fPIE -DXLAT_MUSL -isystem $(MUSL_INC) \
               -DXLAT_CAPSTONE_DIR='"/usr/lib/$(MULTIARCH)"'
CAPSTONE_SYMS := __ctype_tolower_loc __sprintf_chk __strcpy_chk

$(MUSL_INC)/.done:
	@mkdir -p $(MUSL_INC)
	ln -sfn /usr/include/linux $(MUSL_INC)/linux
	ln -sfn /usr/include/asm-generic $(MUSL_INC)/asm-generic
	ln -sfn /usr/include/$(MULTIARCH)/asm $(MUSL_INC)/asm
	ln -sfn /usr/include/capstone $(MUSL_INC)/capstone
	@touch $@

$(MUSL_DIR)/%.o: %.c $(MUSL_INC)/.done
	@mkdir -p $(dir $@)
	$(MUSL_GCC) $(MUSL_CFLAGS) -c -o $@ $<

# static-pie: musl-gcc's specs know only static and dynamic links.
STATIC_PIE_LINK = $(CC) -static-pie -nostdlib -Wl,--build-id -o $@ $(MUSL_LIB)rcrt1.o $(MUSL_LIB)crti.o \
	    $$($(CC) -print-file-name=crtbeginS.o) $^ -L$(MUSL_LIB) -lc \
	    $$($(CC) -print-libgcc-file-name) $$($(CC) -print-file-name=crtendS.o) $(MUSL_LIB)crtn.o

ifeq ($(STATIC),1)
MUSL_CFLAGS += -DXLAT_CAPSTONE_NONE
$(BUILD)/xlat: $(MUSL_OBJS)
	$(STATIC_PIE_LINK)
else
# build/xlat is static-pie too: the dynamic loader's work was 0.15 ms of
# every start (a warm /usr/bin/true: 1.45 ms of CPU static, 1.62 dynamic).
# Without a loader it cannot dlopen libcapstone, so -d out_asm makes it run
# build/xlat-dynamic instead, the same objects linked dynamically
# (src/user/main.c: disas_elsewhere).
MUSL_NONE_DISAS := $(MUSL_DIR)/src/x86/disas-none.o
$(MUSL_NONE_DISAS): src/x86/disas.c $(MUSL_INC)/.done
	@mkdir -p $(dir $@)
	$(MUSL_GCC) $(MUSL_CFLAGS) -DXLAT_CAPSTONE_NONE -c -o $@ $<
$(BUILD)/xlat: $(filter-out $(MUSL_DIR)/src/x86/disas.o,$(MUSL_OBJS)) $(MUSL_NONE_DISAS)
	$(STATIC_PIE_LINK)
$(BUILD)/xlat-dynamic: $(MUSL_OBJS)
	$(MUSL_GCC) -Wl,--build-id -o $@ $^ $(foreach s,$(CAPSTONE_SYMS),-Wl,--export-dynamic-symbol=$(s)) -lm
all: $(BUILD)/xlat-dynamic
endif
endif

$(BUILD)/xlat-system: $(CORE_OBJS) $(SYSTEM_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ -lfdt -lslirp $(LDLIBS)

# build-static/xlat is the binary (tests/run.sh build-static runs the suite
# on it); build/xlat-static is the same file under the name people look for.
ifeq ($(STATIC),1)
all: build/xlat-static
build/xlat-static: $(BUILD)/xlat
	@mkdir -p build
	ln -f $< $@ 2>/dev/null || cp -f $< $@
endif

static:
	@$(MAKE) --no-print-directory STATIC=1 all

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/unit/test_system_%: tests/unit/test_system_%.c $(SYSTEM_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(SYSTEM_LIB_OBJS) -lfdt -lslirp $(LDLIBS)

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

unit: $(UNIT_BINS)

deps:
	@scripts/deps.sh

# deps installs the compilers, so it must finish before anything builds,
# even under make -j: the build runs in a sub-make after it.
# Under CI (CI=true) check also runs the whole suite again on the ASan+UBSan
# build (check-san), so CI's one command covers both.
# tests/binfmt.sh registers build/xlat-static (F needs a static binary), so
# check builds it too.
check: deps
	@$(MAKE) --no-print-directory all unit
	@$(MAKE) --no-print-directory SAN=0 static
	@tests/run.sh $(BUILD)
	@if [ "$(CI)" = true ] && [ "$(SAN)" != 1 ]; then $(MAKE) --no-print-directory check-san; fi

# The suite on the sanitizer build (build-san). The fuzzers are ASan builds
# already, so tests/fuzz.sh skips itself there.
check-san: deps
	@$(MAKE) --no-print-directory SAN=1 BUILD=build-san all unit
	@$(MAKE) --no-print-directory SAN=0 static
	@XLAT_SAN_SUITE=1 tests/run.sh build-san

# podman/chroot runs of Debian riscv64 containers through binfmt_misc; too
# long for check.
check-containers: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory SAN=0 static
	@tests/containers.sh $(BUILD)

# Guest 2 of xlat-system: Debian with systemd on a virtio-blk root, to a
# login on the serial console (tests/full/system_full.sh); the first run builds
# the disk image (scripts/system-disk.sh), too long for check.
check-system-full: deps
	@$(MAKE) --no-print-directory all
	@tests/full/system_full.sh $(BUILD)

# libFuzzer targets (tests/fuzz/), FUZZ_SECONDS each (make check runs 15 s).
FUZZ_SECONDS ?= 300
fuzz: deps
	@$(MAKE) --no-print-directory all
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

# make bench BENCH_ARGS="--quick" BENCH_BUILD_ARGS="--runs 1" (see bench/README.md):
# the program suite (bench/run), then the xz-utils build (bench/build, which
# runs the static build through binfmt_misc as root). make bench-build: only
# the latter.
bench: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory SAN=0 static
	@bench/run $(BUILD) $(BENCH_ARGS)
	@bench/build $(BUILD) $(BENCH_BUILD_ARGS)

bench-build: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory SAN=0 static
	@bench/build $(BUILD) $(BENCH_BUILD_ARGS)

# make bench-system BENCH_ARGS="--runs 3" (see bench/README.md)
bench-system: deps
	@$(MAKE) --no-print-directory all
	@bench/system $(BUILD) $(BENCH_ARGS)

# Installs the static binary under qemu-user-static's naming, the register
# script, and a binfmt.d entry (systemd-binfmt registers it at boot) whose
# interpreter is the installed binary: the register script writes it, so the
# magic, mask and flag checks live in one place.
PREFIX    ?= /usr/local
DESTDIR   ?=
BINDIR    ?= $(PREFIX)/bin
SBINDIR   ?= $(PREFIX)/sbin
BINFMTDIR ?= $(PREFIX)/lib/binfmt.d
BINFMT_FLAGS ?= POF

install: static
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINFMTDIR)
	install -m 755 build/xlat-static $(DESTDIR)$(BINDIR)/xlat-riscv64-static
	install -m 755 scripts/xlat-binfmt $(DESTDIR)$(SBINDIR)/xlat-binfmt
	scripts/xlat-binfmt --print --name xlat-riscv64 --flags $(BINFMT_FLAGS) \
	    --xlat $(BINDIR)/xlat-riscv64-static > $(DESTDIR)$(BINFMTDIR)/xlat-riscv64.conf
	chmod 644 $(DESTDIR)$(BINFMTDIR)/xlat-riscv64.conf

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/xlat-riscv64-static $(DESTDIR)$(SBINDIR)/xlat-binfmt \
	    $(DESTDIR)$(BINFMTDIR)/xlat-riscv64.conf

clean:
	rm -rf build build-san build-static

.PHONY: all static unit deps check check-san check-containers check-system-full fuzz demo bench bench-build bench-system install uninstall clean

-include $(OBJS:.o=.d) $(UNIT_BINS:=.d) $(MUSL_OBJS:.o=.d) $(MUSL_NONE_DISAS:.o=.d)
