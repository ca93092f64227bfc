# SPDX-License-Identifier: MIT
# The views never compare lane kinds: the model classifies each lane once
# at load and they ask it (model_lane_class). scripts/lane-kind-compares.sh
# counts the kinds a view spells to compare them, by strcmp or string id.
. "$SRCDIR/tests/e2e/lib.sh"

sh "$SRCDIR/scripts/lane-kind-compares.sh" -v >compares.txt || fail "lane-kind-compares.sh failed"
n=$(tail -n 1 compares.txt)
if [ "$n" -gt 0 ]; then
	show compares.txt
	fail "$n lane-kind compares in the views: ask the model (model_lane_class, src/model/model.h)"
fi
