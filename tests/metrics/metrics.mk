# SPDX-License-Identifier: MIT
#
# The metrics' test tools. The NVML test double (tests/metrics/fake-nvml.c):
# a fake libnvidia-ml.so.1 for the GPU metrics of gtrace record, which loads
# it through GTRACE_NVML; and the same exporting the clock event reasons
# under their name before r535, in old-names/. NVML's API is declared by
# gtrace (src/record/nvml-abi.h), so it builds without CUDA or a driver. A target of
# tests, not code under test: never built with the sanitizers (it is
# loaded into gtrace, which may be). And metrics-dump, the series of a
# recording as the model reads them: built like the unit tests, from the
# core.

METRICS_TEST_DIR = $(BUILD)/tests/metrics
NVML_FAKE_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARNINGS) -O2 -g -fPIC -fvisibility=hidden -MMD -MP -Isrc
NVML_FAKES = $(METRICS_TEST_DIR)/libnvidia-ml.so.1 $(METRICS_TEST_DIR)/old-names/libnvidia-ml.so.1
METRICS_TOOLS = $(NVML_FAKES) $(METRICS_TEST_DIR)/metrics-dump

$(METRICS_TEST_DIR)/libnvidia-ml.so.1: tests/metrics/fake-nvml.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NVML_FAKE_CFLAGS) -shared -Wl,-soname,libnvidia-ml.so.1 $< -o $@ -lpthread

$(METRICS_TEST_DIR)/old-names/libnvidia-ml.so.1: tests/metrics/fake-nvml.c
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(NVML_FAKE_CFLAGS) -DFAKE_NVML_OLD_NAMES -shared -Wl,-soname,libnvidia-ml.so.1 \
		$< -o $@ -lpthread

$(METRICS_TEST_DIR)/metrics-dump: $(BUILD)/tests/metrics/metrics-dump.o $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(CORE_LIB) -o $@ $(LIBS)

# gtrace's declarations of NVML held against NVIDIA's nvml.h at build time
# (tests/metrics/nvml-abi-check.c: compiled, never run), where the CUDA
# toolkit or the system has one; NVML_H=PATH names another. Without one the
# check is skipped, and says so.
NVML_H ?= $(firstword $(wildcard $(CUDA_HOME)/include/nvml.h \
	$(CUDA_HOME)/targets/x86_64-linux/include/nvml.h /usr/include/nvml.h))
ifneq ($(NVML_H),)
METRICS_TOOLS += $(METRICS_TEST_DIR)/nvml-abi.stamp
$(METRICS_TEST_DIR)/nvml-abi.stamp: tests/metrics/nvml-abi-check.c src/record/nvml-abi.h $(NVML_H)
	$(call say,CHECK,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -std=c11 $(WARNINGS) -Werror -Wno-deprecated-declarations -Isrc \
		-I$(dir $(NVML_H)) -fsyntax-only $<
	$(Q)touch $@
else
METRICS_TOOLS += nvml-abi-skipped
nvml-abi-skipped:
	$(call say,SKIP,"tests/metrics/nvml-abi-check.c: no nvml.h (NVML_H=PATH names one)")
.PHONY: nvml-abi-skipped
endif

nvml-fakes: $(NVML_FAKES)

.PHONY: nvml-fakes
