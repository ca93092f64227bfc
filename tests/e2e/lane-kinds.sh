# SPDX-License-Identifier: MIT
# The views never compare lane kinds: the model classifies each lane once
# at load and they ask it (model_lane_class). scripts/lane-kind-compares.sh
# counts the kinds a view spells to compare them, by strcmp or string id.
. "$SRCDIR/tests/e2e/lib.sh"

expect_count_at_most 0 \
	"lane-kind compares in the views: ask the model (model_lane_class, src/model/model.h)" \
	scripts/lane-kind-compares.sh
