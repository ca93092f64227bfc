/* SPDX-License-Identifier: MIT */
#include "util/duration.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int duration_parse(const char *s, uint64_t bare_unit_ns, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double ns;
	} units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	double unit_ns = (double)bare_unit_ns;
	char *end;
	double v;

	/* strtod would take leading blanks, a sign, "inf" and hex. */
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || strpbrk(s, "xXpP"))
		return -EINVAL;
	for (size_t i = 0; *end && i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			unit_ns = units[i].ns;
			end += strlen(end);
		}
	}
	if (*end || !(v * unit_ns < 1.8e19))	/* also NaN; UINT64_MAX means the default */
		return -EINVAL;
	*ns = (uint64_t)(v * unit_ns + 0.5);
	return 0;
}
