# SPDX-License-Identifier: MIT
#
#   make            build gtrace (run ./configure first)
#   make check      build and run the test suite (T=PATTERN: only the
#                   tests whose name contains PATTERN, e.g. T=e2e/hot;
#                   T=golden: the golden tests, each reading command's
#                   output compared byte for byte with tests/golden/expected/)
#   make golden-update  rewrite tests/golden/expected/ from the committed
#                   recordings (T=PATTERN: the cases whose name contains it),
#                   for a change that alters a view's output on purpose:
#                   commit the diff with it (tests/golden/README)
#   make demo       record the bundled workload and print its report
#   make install    install under $(PREFIX) (DESTDIR for staging)
#   make ASAN=1     build and test with AddressSanitizer and UBSan (in build-asan/)
#   make UBSAN=1    build with clang's UBSan, float-cast-overflow included,
#                   which gcc's does not check (in build-ubsan/); .ci/run runs
#                   the unit, fuzz and hostile tests so
#   make fuzz       run a fuzz harness with libFuzzer (clang, in build-fuzz/) for
#                   FUZZ_SECONDS (600) from its corpus: FUZZ_TARGET=offline
#                   (default), ranks, reader, tables, ingest, kregions,
#                   jitmap, python or rust-demangle; new inputs in build-fuzz/corpus-*
#   make V=1        show the commands

ifeq ($(wildcard config.mk),)
$(error config.mk is missing: run ./configure first)
endif
include config.mk
# libm: report --gpu's standard deviations.
LIBS += -lm

ifeq ($(ASAN),1)
BUILD ?= build-asan
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(UBSAN),1)
BUILD ?= build-ubsan
CC = clang
SAN_FLAGS = -fsanitize=undefined,float-cast-overflow -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer
else ifeq ($(FUZZ),1)
BUILD ?= build-fuzz
CC = clang
SAN_FLAGS = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	    -fno-omit-frame-pointer
else
BUILD ?= build
SAN_FLAGS =
endif

ifneq ($(V),1)
Q = @
say = @printf '  %-7s %s\n' $(1) $(2);
endif

WARNINGS = -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	   -Wno-unused-parameter -Werror
CFLAGS ?= -O2 -g
ALL_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARNINGS) $(CFLAGS) $(CONFIG_CFLAGS) $(SAN_FLAGS) \
	     -Isrc -Iinclude -I. -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(CONFIG_LDFLAGS) $(SAN_FLAGS)

# Everything but main and the commands goes into one archive that the
# commands and the unit tests link against. contract/ is what the products
# that write a recording and those that read it share (the CUDA agent and
# libgtrace-target take its headers and what of its code they need, too).
# analysis/ is three folders: the passes, the views and the encoders.
SUBSYSTEMS = util contract format model analysis/passes analysis/views analysis/encoders \
	     record unwind symbols
CORE_SRCS = $(foreach d,$(SUBSYSTEMS),$(wildcard src/$(d)/*.c))
ifeq ($(HAVE_LIBUNWIND),1)
CORE_SRCS := $(filter-out src/unwind/unwind-stub.c,$(CORE_SRCS))
else
CORE_SRCS := $(filter-out src/unwind/unwind-libunwind.c,$(CORE_SRCS))
endif
ifeq ($(HAVE_SQLITE),1)
CORE_SRCS := $(filter-out src/analysis/encoders/sqldb-stub.c,$(CORE_SRCS))
else
CORE_SRCS := $(filter-out src/analysis/encoders/sqldb-libsqlite.c,$(CORE_SRCS))
endif
ifeq ($(HAVE_CAPSTONE),1)
CORE_SRCS := $(filter-out src/analysis/views/disasm-stub.c,$(CORE_SRCS))
else
CORE_SRCS := $(filter-out src/analysis/views/disasm-capstone.c,$(CORE_SRCS))
endif
CMD_SRCS = src/gtrace.c $(wildcard src/cmd/*.c)

# libgtrace-target goes into applications, not into gtrace: its own
# position-independent objects, exporting only the gtrace_* API, with its
# own copy of the kr.* counters' names (kernel regions count them).
TARGET_SRCS = $(wildcard src/target/*.c) src/contract/kr-counters.c
TARGET_OBJS = $(TARGET_SRCS:%.c=$(BUILD)/pic/%.o)
# The same minus the constructor that connects at load time, for agents
# that link the library into themselves (src/target/autostart.c says why).
TARGET_OBJS_NOAUTO = $(filter-out %/autostart.o,$(TARGET_OBJS))
# The archive holds one object made of them all, so that a static link
# that takes any function of the API takes the constructor too.
TARGET_MERGED = $(BUILD)/pic/libgtrace-target.o
TARGET_SONAME = libgtrace-target.so.0
TARGET_A = $(BUILD)/libgtrace-target.a
TARGET_SO = $(BUILD)/libgtrace-target.so
TARGET_LIBS = -lpthread

CORE_OBJS = $(CORE_SRCS:%.c=$(BUILD)/%.o)
CMD_OBJS = $(CMD_SRCS:%.c=$(BUILD)/%.o)
CORE_LIB = $(BUILD)/libgtrace-core.a
GTRACE = $(BUILD)/gtrace

UNIT_SRCS = $(wildcard tests/unit/test-*.c)
UNIT_BINS = $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
FUZZ_SRCS = $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_BINS = $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/tests/%)

all: $(GTRACE) $(TARGET_A) $(TARGET_SO)

$(BUILD)/%.o: %.c config.h
	$(call say,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(CORE_LIB): $(CORE_OBJS)
	$(call say,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(GTRACE): $(CMD_OBJS) $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $(CMD_OBJS) $(CORE_LIB) -o $@ $(LIBS)

$(BUILD)/pic/%.o: %.c config.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(TARGET_MERGED): $(TARGET_OBJS)
	$(call say,LD,$@)
	$(Q)$(LD) -r $^ -o $@

$(TARGET_A): $(TARGET_MERGED)
	$(call say,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

# The file carries the SONAME; libgtrace-target.so is the link-time name.
$(BUILD)/$(TARGET_SONAME): $(TARGET_OBJS)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(TARGET_SONAME) -Wl,-z,nodelete \
		$^ -o $@ $(TARGET_LIBS)

$(TARGET_SO): $(BUILD)/$(TARGET_SONAME)
	$(Q)ln -sf $(TARGET_SONAME) $@

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(CORE_LIB) -o $@ $(LIBS)

# The library's own tests link its internals, not the core.
$(BUILD)/tests/test-target $(BUILD)/tests/test-kregions: $(BUILD)/tests/%: \
		$(BUILD)/tests/unit/%.o $(TARGET_A)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@ $(TARGET_LIBS)

# Fuzz harnesses build as replay programs (tests/fuzz/replay.c supplies main)
# so make check runs the committed corpus without needing libFuzzer.
$(BUILD)/tests/fuzz-%: $(BUILD)/tests/fuzz/fuzz-%.o $(BUILD)/tests/fuzz/replay.o $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@ $(LIBS)

# The whole offline path, of one recording or several, runs the commands themselves.
CMD_FUZZ = offline ranks
$(CMD_FUZZ:%=$(BUILD)/tests/fuzz-%): $(BUILD)/tests/fuzz-%: $(BUILD)/tests/fuzz/fuzz-%.o \
		$(BUILD)/tests/fuzz/replay.o $(filter-out $(BUILD)/src/gtrace.o,$(CMD_OBJS)) \
		$(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@ $(LIBS)

# The kernel-regions decoder is libgtrace-target's.
$(BUILD)/tests/fuzz-kregions: $(BUILD)/tests/fuzz/fuzz-kregions.o $(BUILD)/tests/fuzz/replay.o \
		$(TARGET_A) $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@ $(LIBS) $(TARGET_LIBS)

# libFuzzer's own main, for make fuzz.
$(BUILD)/tests/libfuzzer-%: $(BUILD)/tests/fuzz/fuzz-%.o $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer $^ -o $@ $(LIBS)

$(CMD_FUZZ:%=$(BUILD)/tests/libfuzzer-%): $(BUILD)/tests/libfuzzer-%: \
		$(BUILD)/tests/fuzz/fuzz-%.o $(filter-out $(BUILD)/src/gtrace.o,$(CMD_OBJS)) \
		$(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer $^ -o $@ $(LIBS)

$(BUILD)/tests/libfuzzer-kregions: $(BUILD)/tests/fuzz/fuzz-kregions.o $(TARGET_A)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -fsanitize=fuzzer $^ -o $@ $(TARGET_LIBS)

FUZZ_TARGET ?= offline
FUZZ_SECONDS ?= 600
fuzz:
	$(Q)$(MAKE) --no-print-directory FUZZ=1 build-fuzz/tests/libfuzzer-$(FUZZ_TARGET)
	$(Q)mkdir -p build-fuzz/corpus-$(FUZZ_TARGET)
	build-fuzz/tests/libfuzzer-$(FUZZ_TARGET) -max_total_time=$(FUZZ_SECONDS) \
		-timeout=10 -rss_limit_mb=4096 -artifact_prefix=build-fuzz/ \
		build-fuzz/corpus-$(FUZZ_TARGET) tests/fuzz/corpus/$(FUZZ_TARGET)

include src/cuda/agent.mk
ifeq ($(HAVE_CUPTI),1)
include tests/cuda/cuda.mk
endif
include tests/workloads/workloads.mk
include tests/metrics/metrics.mk
include tests/ranks/ranks.mk
include tests/hostile/hostile.mk
include tests/golden/golden.mk

tests: $(GTRACE) $(UNIT_BINS) $(FUZZ_BINS) $(WORKLOADS) $(METRICS_TOOLS) $(RANKS_TOOLS) \
	$(HOSTILE_TOOLS) $(GOLDEN_TOOLS)

check: tests
	$(Q)BUILD=$(BUILD) GTRACE=$(abspath $(GTRACE)) SAN_FLAGS="$(SAN_FLAGS)" sh tests/run.sh $(T)

golden-update: $(GTRACE)
	$(Q)GTRACE=$(abspath $(GTRACE)) sh tests/golden/run.sh --update $(T)

demo: all $(WORKLOADS)
	$(Q)sh scripts/demo.sh $(BUILD)

install: $(GTRACE) $(TARGET_A) $(TARGET_SO)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3 $(DESTDIR)$(PREFIX)/share/man/man5 \
		$(DESTDIR)$(PREFIX)/include/gtrace $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(GTRACE) $(DESTDIR)$(PREFIX)/bin/gtrace
	install -m 644 man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3
	sh scripts/man-links.sh $(DESTDIR)$(PREFIX)/share/man/man3 man/*.3
	install -m 644 man/*.5 $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 644 include/gtrace/target.h include/gtrace/kernel-regions.cuh \
		$(DESTDIR)$(PREFIX)/include/gtrace
	install -m 644 $(TARGET_A) $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(BUILD)/$(TARGET_SONAME) $(DESTDIR)$(PREFIX)/lib
	ln -sf $(TARGET_SONAME) $(DESTDIR)$(PREFIX)/lib/libgtrace-target.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS@|$(TARGET_LIBS)|' \
		src/target/gtrace-target.pc.in >$(DESTDIR)$(PREFIX)/lib/pkgconfig/gtrace-target.pc

clean:
	rm -rf build build-asan build-ubsan build-fuzz build-nolibunwind build-nosqlite

distclean: clean
	rm -f config.mk config.h

.PHONY: all tests check golden-update demo install clean distclean fuzz
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
