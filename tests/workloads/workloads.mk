# Bundled workloads with a known shape, for tests, the demo and benchmarks.
# Built in two flavours where it matters: with frame pointers (NAME) and
# without (NAME-nofp). They are targets, not code under test, so they are
# never built with the sanitizers. No tail calls, so every named function
# stays on the stack.

WORKLOAD_DIR = $(BUILD)/workloads
WORKLOAD_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARNINGS) -O2 -g -fno-optimize-sibling-calls -pthread
WORKLOAD_BOTH = hot threads recurse
WORKLOAD_FP_ONLY = forkexec sleeper crasher demo deny-perf syscalls regress memsteps renamer hotline

WORKLOADS = $(WORKLOAD_BOTH:%=$(WORKLOAD_DIR)/%) $(WORKLOAD_BOTH:%=$(WORKLOAD_DIR)/%-nofp) \
	    $(WORKLOAD_FP_ONLY:%=$(WORKLOAD_DIR)/%) $(WORKLOAD_DIR)/lanes $(WORKLOAD_DIR)/lanes-shared \
	    $(WORKLOAD_DIR)/cleanup $(WORKLOAD_DIR)/hot-stripped $(WORKLOAD_DIR)/realign-nofp

$(WORKLOAD_DIR)/%: tests/workloads/%.c tests/workloads/workload.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $< -o $@

$(WORKLOAD_DIR)/%-nofp: tests/workloads/%.c tests/workloads/workload.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fomit-frame-pointer $< -o $@

# lanes reports target spans: linked with the static library, and again
# with the shared one (found through its rpath). The library takes the
# sanitizers of the build, so the link does too.
$(WORKLOAD_DIR)/lanes: tests/workloads/lanes.c tests/workloads/workload.h $(TARGET_A)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -Iinclude -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		$< $(TARGET_A) -o $@ $(SAN_FLAGS) $(TARGET_LIBS)

$(WORKLOAD_DIR)/lanes-shared: tests/workloads/lanes.c tests/workloads/workload.h $(TARGET_SO)
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -Iinclude -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		$< -o $@ $(SAN_FLAGS) -L$(BUILD) -lgtrace-target -Wl,-rpath,$(abspath $(BUILD)) $(TARGET_LIBS)

# cleanup calls its hot path through libcleanup.so, whose frame has a
# personality routine (-fexceptions and a cleanup); no frame pointers, so
# only the unwind tables lead through it.
$(WORKLOAD_DIR)/libcleanup.so: tests/workloads/cleanup-lib.c tests/workloads/workload.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fomit-frame-pointer -fPIC -fexceptions -shared $< -o $@

$(WORKLOAD_DIR)/cleanup: tests/workloads/cleanup.c tests/workloads/workload.h \
		$(WORKLOAD_DIR)/libcleanup.so
	$(call say,CC,$@)
	$(Q)$(CC) $(WORKLOAD_CFLAGS) -fomit-frame-pointer $< -o $@ \
		-L$(WORKLOAD_DIR) -lcleanup -Wl,-rpath,$(abspath $(WORKLOAD_DIR))

# hot-nofp without any symbol table: only its unwind tables tell where its
# functions begin.
$(WORKLOAD_DIR)/hot-stripped: $(WORKLOAD_DIR)/hot-nofp
	$(call say,STRIP,$@)
	$(Q)strip --strip-all -o $@ $<

# mpi-unbalanced is built where Open MPI's (or another MPI's) compiler
# wrapper is; without one, the tests that run it skip.
MPICC := $(shell command -v mpicc 2>/dev/null)
ifneq ($(MPICC),)
WORKLOADS += $(WORKLOAD_DIR)/mpi-unbalanced

$(WORKLOAD_DIR)/mpi-unbalanced: tests/workloads/mpi-unbalanced.c tests/workloads/workload.h
	$(call say,MPICC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(MPICC) $(WORKLOAD_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $< -o $@
endif

workloads: $(WORKLOADS)

.PHONY: workloads
