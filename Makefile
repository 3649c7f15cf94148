# xlat: one plain Makefile. `make` builds build/xlat; `make check` runs every
# test; `make demo` runs Debian riscv64 programs (gcc, python3, bash, busybox)
# side by side with qemu-riscv64. Objects go out of tree under build/.
# `make SAN=1` builds with ASan+UBSan (`make check-san` runs the suite on it;
# `make check` does too when CI=true). `make fuzz` runs the fuzzers longer.

CC      ?= cc
BUILD   ?= build
SAN     ?= 0

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu17 -Wall -Wextra -Werror -MMD -MP -Isrc
LDFLAGS ?=
LDLIBS  += -lm -lpthread -ldl   # libcapstone: dlopen'd for -d out_asm (src/x86/disas.c)

ifeq ($(SAN),1)
BUILD   := build-san
CFLAGS  += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif

# Every .c under src/ is part of xlat; src/main.c is the only one left out of
# the library that unit tests link against.
SRCS     := $(shell find src -name '*.c' | sort)
OBJS     := $(SRCS:%.c=$(BUILD)/%.o)
LIB_OBJS := $(filter-out $(BUILD)/src/main.o,$(OBJS))

# Host unit tests: tests/unit/test_*.c, each its own binary.
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:%.c=$(BUILD)/%)

all: $(BUILD)/xlat

$(BUILD)/xlat: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

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
check: deps
	@$(MAKE) --no-print-directory all unit
	@tests/run.sh $(BUILD)
	@if [ "$(CI)" = true ] && [ "$(SAN)" != 1 ]; then $(MAKE) --no-print-directory check-san; fi

# The suite on the sanitizer build (build-san). The fuzzers are ASan builds
# already, so tests/fuzz.sh skips itself there.
check-san: deps
	@$(MAKE) --no-print-directory SAN=1 BUILD=build-san all unit
	@XLAT_SAN_SUITE=1 tests/run.sh build-san

# libFuzzer targets (tests/fuzz/), FUZZ_SECONDS each (make check runs 15 s).
FUZZ_SECONDS ?= 300
fuzz: deps
	@$(MAKE) --no-print-directory all
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh $(BUILD)

# make bench BENCH_ARGS="--quick" (see bench/README.md)
bench: deps
	@$(MAKE) --no-print-directory all
	@bench/run $(BUILD) $(BENCH_ARGS)

clean:
	rm -rf build build-san

.PHONY: all unit deps check check-san fuzz demo bench clean

-include $(OBJS:.o=.d) $(UNIT_BINS:=.d)
