# SPDX-License-Identifier: MIT
#
# The robustness suite's tools: each tests/hostile/NAME.c is a program of
# its own, built like the unit tests from the core, that makes one kind of
# hostile input (a recording written with the project's own writer, a
# span-channel client, a fake interpreter...) for the e2e/hostile-* tests,
# which run gtrace on it under memory and time ceilings (lib.sh: bounded).

HOSTILE_TEST_DIR = $(BUILD)/tests/hostile
HOSTILE_SRCS = $(wildcard tests/hostile/*.c)
HOSTILE_TOOLS = $(HOSTILE_SRCS:tests/hostile/%.c=$(HOSTILE_TEST_DIR)/%)

$(HOSTILE_TEST_DIR)/%: $(BUILD)/tests/hostile/%.o $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(CORE_LIB) -o $@ $(LIBS) -lpthread

# A tool that drives libgtrace-target links the library instead.
$(HOSTILE_TEST_DIR)/kr-flood: $(BUILD)/tests/hostile/kr-flood.o $(TARGET_A)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ -o $@ $(TARGET_LIBS)
