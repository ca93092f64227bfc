# SPDX-License-Identifier: MIT
#
# The golden tests' tools (tests/golden/README): each tests/golden/NAME.c is
# a program of its own, built like the unit tests from the core, that
# tests/golden/make-recordings.sh runs to make the committed recordings:
# stamp, a recording with stable names, and the synthetic recordings.

GOLDEN_TEST_DIR = $(BUILD)/tests/golden
GOLDEN_SRCS = $(wildcard tests/golden/*.c)
GOLDEN_TOOLS = $(GOLDEN_SRCS:tests/golden/%.c=$(GOLDEN_TEST_DIR)/%)

$(GOLDEN_TEST_DIR)/%: $(BUILD)/tests/golden/%.o $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(CORE_LIB) -o $@ $(LIBS)
