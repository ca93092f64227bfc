# SPDX-License-Identifier: MIT
#
# The CUDA test doubles and programs (included only where configure found
# CUPTI): a fake libcupti.so.13, a fake libcuda.so.1 and a fake
# libcudart.so.13 over it, compiled against the real CUDA headers so that
# records have the real layouts; fake-app, a CUDA program bound to the fake
# driver through its rpath, idle-app, one that keeps the GPU idle for known
# causes, and fake-rt-app, one bound to the fake runtime;
# null-agent, a do-nothing CUDA injection for benchmarks; other-client,
# another CUPTI client to preload next to gtrace's agent; and, where nvcc
# exists, real-app, a real CUDA program. Like the workloads they are the
# targets of tests, not code under test: never built with the sanitizers.

CUDA_TEST_DIR = $(BUILD)/tests/cuda
CUDA_FAKE_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARNINGS) -O2 -g -isystem $(CUDA_HOME)/include \
		   -MMD -MP
CUDA_FAKES = $(CUDA_TEST_DIR)/libcupti.so.13 $(CUDA_TEST_DIR)/libcuda.so.1 \
	     $(CUDA_TEST_DIR)/libcudart.so.13 $(CUDA_TEST_DIR)/fake-app \
	     $(CUDA_TEST_DIR)/fake-rt-app $(CUDA_TEST_DIR)/libnull-agent.so \
	     $(CUDA_TEST_DIR)/libother-client.so $(CUDA_TEST_DIR)/idle-app
# A second copy of the fake CUPTI, same SONAME: a framework's own libcupti,
# loaded before the agent's (tests preload it).
CUDA_FAKES += $(CUDA_TEST_DIR)/second/libcupti.so.13 $(CUDA_TEST_DIR)/kr-app
# The toolkit's real CUPTI, to which the fake forwards cuptiGetCubinCrc and
# cuptiGetSassToSourceCorrelation (they need no GPU); FAKE_CUPTI_REAL
# overrides it at run time.
CUPTI_REAL = $(firstword $(wildcard $(CUDA_HOME)/lib64/libcupti.so.13 \
	$(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so.13))
NVCC = $(CUDA_HOME)/bin/nvcc
# Real GPUs of compute capability 8.0 and 9.0, and PTX for newer ones.
NVCC_ARCHS = -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	     -gencode arch=compute_90,code=compute_90

# The PC sampling kernels as cubins with line information, one per real
# architecture (the fake driver loads them), and as a real program.
PC_CUBIN_ARCHS = sm_80 sm_90
PC_CUBINS = $(PC_CUBIN_ARCHS:%=$(CUDA_TEST_DIR)/pc-app.%.cubin)

ifneq ($(wildcard $(NVCC)),)
CUDA_FAKES += $(CUDA_TEST_DIR)/real-app $(CUDA_TEST_DIR)/pc-app $(PC_CUBINS)
CUDA_FAKES += $(CUDA_TEST_DIR)/pc-app.nolines.sm_90.cubin
endif

tests: $(CUDA_FAKES)

$(CUDA_TEST_DIR)/libcupti.so.13 $(CUDA_TEST_DIR)/second/libcupti.so.13: tests/cuda/fake-cupti.c \
		tests/cuda/libcupti.map
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fPIC -shared -Wl,-soname,libcupti.so.13 \
		-DFAKE_CUPTI_REAL_PATH='"$(CUPTI_REAL)"' \
		-Wl,--version-script=tests/cuda/libcupti.map $< -o $@ -ldl -lpthread

$(CUDA_TEST_DIR)/libcuda.so.1: tests/cuda/fake-cuda.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fPIC -shared -Wl,-soname,libcuda.so.1 $< -o $@ \
		-ldl -lpthread

$(CUDA_TEST_DIR)/libcudart.so.13: tests/cuda/fake-cudart.c $(CUDA_TEST_DIR)/libcuda.so.1
	$(call say,CC,$@)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fPIC -shared -Wl,-soname,libcudart.so.13 $< -o $@ \
		$(CUDA_TEST_DIR)/libcuda.so.1 -Wl,-rpath,$(abspath $(CUDA_TEST_DIR)) -lpthread

# A program reporting its kernels' regions (tests/e2e/cuda-kregions.sh):
# the fake driver, and libgtrace-target beside the agent's own copy. The
# library is the build's, sanitized in an ASan build: so is the program.
$(CUDA_TEST_DIR)/kr-app: tests/cuda/kr-app.c tests/unit/kr-encode.h $(CUDA_TEST_DIR)/libcuda.so.1 \
		$(TARGET_A)
	$(call say,CC,$@)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -Iinclude -Itests/unit $< -o $@ $(CUDA_TEST_DIR)/libcuda.so.1 \
		$(TARGET_A) -Wl,-rpath,$(abspath $(CUDA_TEST_DIR)) $(SAN_FLAGS) $(TARGET_LIBS)

# The do-nothing CUPTI client bench/cuda-launch.sh compares the agent with.
$(CUDA_TEST_DIR)/libnull-agent.so: tests/cuda/null-agent.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fPIC -shared $< -o $@ -ldl

# Another CUPTI client in the recorded program (tests/e2e/cuda-clients.sh).
$(CUDA_TEST_DIR)/libother-client.so: tests/cuda/other-client.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fPIC -shared $< -o $@ -ldl

# Frame pointers and no tail calls: tests look for its functions' frames.
$(CUDA_TEST_DIR)/fake-app: tests/cuda/fake-app.c tests/cuda/app.h $(CUDA_TEST_DIR)/libcuda.so.1
	$(call say,CC,$@)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls $< -o $@ $(CUDA_TEST_DIR)/libcuda.so.1 \
		-Wl,-rpath,$(abspath $(CUDA_TEST_DIR)) -ldl -lpthread

# The GPU kept idle for known causes (tests/e2e/cuda-analyze.sh).
$(CUDA_TEST_DIR)/idle-app: tests/cuda/idle-app.c tests/cuda/app.h $(CUDA_TEST_DIR)/libcuda.so.1
	$(call say,CC,$@)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls $< -o $@ $(CUDA_TEST_DIR)/libcuda.so.1 \
		-Wl,-rpath,$(abspath $(CUDA_TEST_DIR))

# Its kernels' handles are empty functions: identical code, distinct addresses
# (gcc merges them without -fno-ipa-icf, which clang neither does nor knows).
NO_IPA_ICF = $(if $(findstring clang,$(CC)),,-fno-ipa-icf)
$(CUDA_TEST_DIR)/fake-rt-app: tests/cuda/fake-rt-app.c tests/cuda/app.h $(CUDA_TEST_DIR)/libcudart.so.13
	$(call say,CC,$@)
	$(Q)$(CC) $(CUDA_FAKE_CFLAGS) -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-fno-optimize-sibling-calls $(NO_IPA_ICF) $< -o $@ $(CUDA_TEST_DIR)/libcudart.so.13 \
		$(CUDA_TEST_DIR)/libcuda.so.1 -Wl,-rpath,$(abspath $(CUDA_TEST_DIR))

$(CUDA_TEST_DIR)/real-app: tests/cuda/real-app.cu
	$(call say,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -O2 -g -Xcompiler -fno-omit-frame-pointer $(NVCC_ARCHS) -I$(CUDA_HOME)/include \
		$< -o $@

$(CUDA_TEST_DIR)/pc-app: tests/cuda/pc-app.cu
	$(call say,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -O2 -g -lineinfo -Xcompiler -fno-omit-frame-pointer $(NVCC_ARCHS) $< -o $@

$(CUDA_TEST_DIR)/pc-app.%.cubin: tests/cuda/pc-app.cu
	$(call say,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -cubin -lineinfo -O2 -arch=$* $< -o $@

# The same without line information (tests/unit/test-cubin.c).
$(CUDA_TEST_DIR)/pc-app.nolines.sm_90.cubin: tests/cuda/pc-app.cu
	$(call say,NVCC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(NVCC) -cubin -O2 -arch=sm_90 $< -o $@

# gtrace/kernel-regions.cuh compiled, not run: objects for each
# architecture (their host half would link cudart and libgtrace-target)
# and PTX, which reads %globaltimer with the markers and never with
# GTRACE_KR_DISABLE. The stamp stands for all the checks passing.
KR_NVCC = $(NVCC) -Iinclude -Werror all-warnings -Xcompiler -Wall,-Wextra,-Werror
KR_DIR = $(CUDA_TEST_DIR)/kr-compile

$(CUDA_TEST_DIR)/kr-compile.stamp: tests/cuda/kr-compile.cu include/gtrace/kernel-regions.cuh \
		include/gtrace/target.h
	$(call say,NVCC,$@)
	$(Q)mkdir -p $(KR_DIR)
	$(Q)$(KR_NVCC) $(NVCC_ARCHS) -c $< -o $(KR_DIR)/on.o
	$(Q)$(KR_NVCC) $(NVCC_ARCHS) -DGTRACE_KR_DISABLE -c $< -o $(KR_DIR)/off.o
	$(Q)$(KR_NVCC) -arch=compute_80 -ptx $< -o $(KR_DIR)/on.ptx
	$(Q)$(KR_NVCC) -arch=compute_80 -DGTRACE_KR_DISABLE -ptx $< -o $(KR_DIR)/off.ptx
	$(Q)grep -q 'mov\.u64 .*%globaltimer;' $(KR_DIR)/on.ptx || \
		{ echo "$<: no 64-bit %globaltimer read in its PTX" >&2; exit 1; }
	$(Q)! grep -q globaltimer $(KR_DIR)/off.ptx || \
		{ echo "$<: GTRACE_KR_DISABLE leaves a %globaltimer read" >&2; exit 1; }
	$(Q)touch $@

ifneq ($(wildcard $(NVCC)),)
tests: $(CUDA_TEST_DIR)/kr-compile.stamp
endif

cuda-fakes: $(CUDA_FAKES)

.PHONY: cuda-fakes
