/* SPDX-License-Identifier: MIT */
/*
 * The window of time offline commands take (--start, --end, --time):
 * parsed with the options, resolved and applied once the model is loaded.
 */
#include "cmd/offline-window.h"

#include <stdlib.h>
#include <string.h>

#include "cmd/cmds.h"
#include "util/duration.h"
#include "util/log.h"

int offline_time_option(const char *opt, const char *arg, uint64_t *ns)
{
	if (!duration_parse(arg, 1, ns))
		return 0;
	pr_err("invalid %s '%s'; use e.g. 2.5s, 300ms, 20us or a number of ns", opt, arg);
	return EXIT_USAGE;
}

/* A percentage of --time, "P%": false unless 0 <= P <= 100. */
static bool percent_of(const char *s, const char *end, double *percent)
{
	char *stop;

	if (end - s < 2 || end[-1] != '%' || *s < '0' || *s > '9')
		return false;
	*percent = strtod(s, &stop);
	return stop == end - 1 && *percent <= 100;
}

/* --time P%/N, the Nth slice of P% of the recording, or A%-B%. */
static bool time_percent(struct offline_args *a, const char *arg)
{
	const char *slash = strchr(arg, '/'), *dash = strchr(arg, '-');
	double p;

	if (slash) {
		char *stop;
		unsigned long n;

		if (!percent_of(arg, slash, &p) || !p || slash[1] < '1' || slash[1] > '9')
			return false;
		n = strtoul(slash + 1, &stop, 10);
		if (*stop || (double)n * p > 100 + 1e-9)
			return false;
		a->time_from_percent = p * (double)(n - 1);
		a->time_to_percent = p * (double)n;
	} else if (!dash || !percent_of(arg, dash, &a->time_from_percent) ||
		   !percent_of(dash + 1, dash + strlen(dash), &a->time_to_percent)) {
		return false;
	}
	a->time_percent = true;
	return true;
}

/* --time START,END in seconds after the start, either left out. */
static bool time_seconds(struct offline_args *a, const char *arg)
{
	const char *comma = strchr(arg, ',');
	char start[64];

	if (!comma || (size_t)(comma - arg) >= sizeof(start))
		return false;
	memcpy(start, arg, (size_t)(comma - arg));
	start[comma - arg] = '\0';
	return (!*start || !duration_parse(start, 1000000000ull, &a->start_ns)) &&
	       (!comma[1] || !duration_parse(comma + 1, 1000000000ull, &a->end_ns));
}

/* --time arg, or NULL for a --start or --end after a --time: an error. */
int offline_time_window_option(struct offline_args *a, const char *arg)
{
	if (!arg || a->start_arg || a->end_arg || a->time_arg) {
		pr_err("--time and --start or --end, or --time twice: give the window once");
		return EXIT_USAGE;
	}
	a->time_arg = arg;
	if (strchr(arg, '%') ? time_percent(a, arg) : time_seconds(a, arg))
		return 0;
	pr_err("invalid --time '%s'; use START,END in seconds (2.5,4 or 300ms,), "
	       "PCT%%/N (10%%/2: the second tenth) or A%%-B%%", arg);
	return EXIT_USAGE;
}

/* At the end of the options: a window that holds no time is an error. */
int offline_check_window(const struct offline_args *a)
{
	if (a->time_percent ? a->time_from_percent < a->time_to_percent : a->start_ns < a->end_ns)
		return 0;
	if (a->time_arg)
		pr_err("empty time window: --time '%s' ends where it starts or before", a->time_arg);
	else
		pr_err("empty time window: --start '%s' is not before --end '%s'",
		       a->start_arg ? a->start_arg : "0", a->end_arg);
	return EXIT_USAGE;
}

/* Whether the window holds events of m; if not, says so. */
static bool window_has_events(const struct offline_args *a, const struct model *m)
{
	const char *start = a->start_arg ? a->start_arg : "0";

	if (model_window_has_events(m, a->start_ns, a->end_ns))
		return true;
	if (a->time_arg)
		pr_err("no events in --time '%s' in '%s'", a->time_arg, a->input);
	else if (a->end_arg)
		pr_err("no events between %s and %s in '%s'", start, a->end_arg, a->input);
	else
		pr_err("no events after %s in '%s'", start, a->input);
	return false;
}

bool offline_window_has_events(struct offline_args *a, struct model *m)
{
	if (window_has_events(a, m))
		return true;
	model_free(m);
	offline_args_free(a);
	return false;
}

bool offline_windowed(const struct offline_args *a)
{
	return a->time_percent || a->start_ns || a->end_ns != UINT64_MAX;
}

/*
 * Once m is loaded: a --time in percent becomes the ns of m's length, and
 * for a command that shows the model cut to the window, m is cut. Returns
 * 0, or EXIT_FAIL when the window holds no events.
 */
int offline_apply_window(struct offline_args *a, struct model *m)
{
	uint64_t zero = model_time_zero(m);
	uint64_t length = m->last_ts > zero ? m->last_ts - zero + 1 : 1;

	if (a->time_percent) {
		a->start_ns = (uint64_t)((double)length * a->time_from_percent / 100);
		a->end_ns = a->time_to_percent >= 100 ? UINT64_MAX
			    : (uint64_t)((double)length * a->time_to_percent / 100);
	}
	if (!a->clip_window || !offline_windowed(a))
		return 0;
	if (!window_has_events(a, m))
		return EXIT_FAIL;
	model_clip(m, zero + a->start_ns,
		   a->end_ns > UINT64_MAX - zero ? UINT64_MAX : zero + a->end_ns);
	return 0;
}
