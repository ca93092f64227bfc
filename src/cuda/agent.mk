# SPDX-License-Identifier: MIT
#
# libgtrace-cuda.so, the CUDA agent that gtrace record injects into the
# command's processes; built only where configure found CUPTI. It dlopens
# CUPTI at run time, never links it, and carries its own copy of the target
# library minus the constructor that connects at load time.
#
# It is never built with the sanitizers, in an ASan build too: preloaded
# into every process of the command (/bin/sh included), an instrumented
# agent would drag the ASan runtime into programs that do not have it.

CUDA_AGENT = $(BUILD)/libgtrace-cuda.so
CUDA_AGENT_SRCS = $(wildcard src/cuda/*.c) $(filter-out src/target/autostart.c,$(TARGET_SRCS)) \
		  src/contract/cuda-counters.c src/contract/pcopts.c src/contract/spans.c
CUDA_AGENT_OBJS = $(CUDA_AGENT_SRCS:%.c=$(BUILD)/agent/%.o)
CUDA_AGENT_CFLAGS = -std=c11 -D_GNU_SOURCE $(WARNINGS) $(CFLAGS) $(CONFIG_CFLAGS) \
		    -Isrc -Iinclude -I. -I$(CUDA_HOME)/include -fPIC -fvisibility=hidden -MMD -MP

ifeq ($(HAVE_CUPTI),1)

all: $(CUDA_AGENT)
tests: $(CUDA_AGENT)

$(BUILD)/agent/%.o: %.c config.h
	$(call say,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CUDA_AGENT_CFLAGS) -c $< -o $@

$(CUDA_AGENT): $(CUDA_AGENT_OBJS) src/cuda/agent.map
	$(call say,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $(CONFIG_LDFLAGS) -shared -Wl,--version-script=src/cuda/agent.map \
		-Wl,-z,nodelete -Wl,-z,defs $(CUDA_AGENT_OBJS) -o $@ -ldl -lpthread

# The agent's pure parts, unit-tested in the normal (maybe sanitized) build.
$(BUILD)/src/cuda/%.o: ALL_CFLAGS += -I$(CUDA_HOME)/include
$(BUILD)/tests/unit/test-cuda-agent.o: ALL_CFLAGS += -I$(CUDA_HOME)/include
$(BUILD)/tests/test-cuda-agent: $(BUILD)/tests/unit/test-cuda-agent.o \
		$(BUILD)/src/cuda/occupancy.o $(BUILD)/src/cuda/names.o $(BUILD)/src/cuda/pcduty.o \
		$(BUILD)/src/contract/spans.o
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@

install: install-cuda-agent
install-cuda-agent: $(CUDA_AGENT)
	install -d $(DESTDIR)$(PREFIX)/lib/gtrace
	install -m 755 $(CUDA_AGENT) $(DESTDIR)$(PREFIX)/lib/gtrace/libgtrace-cuda.so

.PHONY: install-cuda-agent

else

# Without CUPTI the agent's unit test is a script that says it skipped, so
# that tests/run.sh lists the skip (and fails it where the run requires
# cuda) rather than never knowing the test.
UNIT_SRCS := $(filter-out tests/unit/test-cuda-agent.c,$(UNIT_SRCS))
tests: $(BUILD)/tests/test-cuda-agent
$(BUILD)/tests/test-cuda-agent:
	$(call say,GEN,$@)
	$(Q)mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\necho "SKIP(cuda): configure found no CUPTI: %s"\nexit 77\n' \
		'the CUDA agent is not built' >$@
	$(Q)chmod 755 $@

endif
