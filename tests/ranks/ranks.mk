# SPDX-License-Identifier: MIT
#
# The tools of the tests of many ranks: retime, a recording as another
# machine's clock would have made it (tests/ranks/retime.c). Built like
# the unit tests, from the core.

RANKS_TEST_DIR = $(BUILD)/tests/ranks
RANKS_TOOLS = $(RANKS_TEST_DIR)/retime

$(RANKS_TEST_DIR)/retime: $(BUILD)/tests/ranks/retime.o $(CORE_LIB)
	$(call say,LINK,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $< $(CORE_LIB) -o $@ $(LIBS)
