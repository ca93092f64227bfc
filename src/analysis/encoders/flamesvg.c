/* SPDX-License-Identifier: MIT */
/*
 * The SVG flame graph: one rectangle per call tree node, the root at the
 * bottom, widths proportional to samples or to the target time of lane
 * work. Self-contained: the script for click-to-zoom and search is inline
 * and nothing is fetched.
 */
#include "analysis/encoders/flamesvg.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "util/saturate.h"
#include "util/utf8.h"

#define SVG_WIDTH 1200
#define SVG_PAD 10		/* left and right margins */
#define FRAME_HEIGHT 16
#define TOP_MARGIN 40		/* title and buttons */
#define BOTTOM_MARGIN 30	/* the details line */
#define CHAR_WIDTH 7		/* of the 12px font, roughly */
#define MIN_FRAME_WIDTH 0.1	/* narrower frames are left out */

/* Frame positions are in weight units (samples or ns); the script maps them to pixels. */
static const char svg_script[] =
	"var frames = [], total = 1, unzoomBtn, details, matched;\n"
	"function nameOf(g) {\n"
	"  return g.querySelector('title').textContent.replace(/ \\([^()]*\\)$/, '');\n"
	"}\n"
	"function fit(name, w) {\n"
	"  var n = Math.floor((w - 6) / CW);\n"
	"  if (n < 3) return '';\n"
	"  return name.length <= n ? name : name.slice(0, n - 2) + '..';\n"
	"}\n"
	"function place(f, x0, w0) {\n"
	"  var left = Math.max(f.x, x0), right = Math.min(f.x + f.w, x0 + w0);\n"
	"  var s = (W - 2 * PAD) / w0, w = (right - left) * s;\n"
	"  if (right <= left || w < 0.1) { f.g.style.display = 'none'; return; }\n"
	"  f.g.style.display = '';\n"
	"  var x = PAD + (left - x0) * s;\n"
	"  f.r.setAttribute('x', x.toFixed(1));\n"
	"  f.r.setAttribute('width', w.toFixed(1));\n"
	"  f.t.setAttribute('x', (x + 3).toFixed(1));\n"
	"  f.t.textContent = fit(f.name, w);\n"
	"}\n"
	"function zoom(f) {\n"
	"  frames.forEach(function (e) { place(e, f.x, f.w); });\n"
	"  unzoomBtn.style.opacity = f.w < total ? '1' : '0';\n"
	"}\n"
	"function unzoom() { zoom({ x: 0, w: total }); }\n"
	"function search() {\n"
	"  var term = prompt('Search for (regular expression), empty to clear', '');\n"
	"  var re, spans = [], sum = 0, end = -1;\n"
	"  if (term === null) return;\n"
	"  try { re = new RegExp(term); } catch (e) { return; }\n"
	"  frames.forEach(function (f) {\n"
	"    var hit = term !== '' && re.test(f.name);\n"
	"    f.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
	"    if (hit) spans.push([f.x, f.x + f.w]);\n"
	"  });\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  spans.forEach(function (s) {\n"
	"    if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }\n"
	"    else if (s[1] > end) { sum += s[1] - end; end = s[1]; }\n"
	"  });\n"
	"  matched.textContent = term === '' ? '' :\n"
	"    'Matched: ' + (100 * sum / total).toFixed(2) + '%';\n"
	"}\n"
	"function init() {\n"
	"  unzoomBtn = document.getElementById('unzoom');\n"
	"  details = document.getElementById('details');\n"
	"  matched = document.getElementById('matched');\n"
	"  document.querySelectorAll('g.f').forEach(function (g) {\n"
	"    var f = { g: g, x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'),\n"
	"              r: g.querySelector('rect'), t: g.querySelector('text'), name: nameOf(g) };\n"
	"    f.fill = f.r.getAttribute('fill');\n"
	"    if (f.x === 0 && f.w > total) total = f.w;\n"
	"    g.addEventListener('click', function () { zoom(f); });\n"
	"    g.addEventListener('mouseover', function () {\n"
	"      details.textContent = g.querySelector('title').textContent;\n"
	"    });\n"
	"    g.addEventListener('mouseout', function () { details.textContent = ' '; });\n"
	"    frames.push(f);\n"
	"  });\n"
	"  unzoomBtn.addEventListener('click', unzoom);\n"
	"  document.getElementById('search').addEventListener('click', search);\n"
	"}\n";

/* One ASCII character in XML text: reserved ones escaped, control bytes dropped. */
static void put_xml_ascii(FILE *out, char c)
{
	switch (c) {
	case '&': fputs("&amp;", out); break;
	case '<': fputs("&lt;", out); break;
	case '>': fputs("&gt;", out); break;
	case '"': fputs("&quot;", out); break;
	case '\'': fputs("&apos;", out); break;
	default:
		if ((unsigned char)c >= 0x20)
			fputc(c, out);
	}
}

/*
 * Writes s as XML text, with bytes that are not UTF-8 (a comm the kernel cut
 * mid-character) as U+FFFD: one such byte would leave the whole file unreadable.
 */
static void put_xml(FILE *out, const char *s)
{
	utf8_fput(out, s, put_xml_ascii);
}

/* Warm colors, stable per name so a function looks the same everywhere. */
static void put_color(FILE *out, const char *name)
{
	uint64_t h = hash_bytes(name, strlen(name));

	fprintf(out, "rgb(%u,%u,%u)", 205 + (unsigned)(h % 50),
		(unsigned)((h >> 8) % 200), (unsigned)((h >> 16) % 60));
}

/* Red for growth, blue for shrinking, as strong as delta (-1 to 1) is large. */
static void put_diff_color(FILE *out, double delta)
{
	unsigned fade = (unsigned)(255 - 200 * fabs(delta) + 0.5);

	if (delta >= 0)
		fprintf(out, "rgb(255,%u,%u)", fade, fade);
	else
		fprintf(out, "rgb(%u,%u,255)", fade, fade);
}

struct svg_ctx {
	FILE *out;
	const struct calltree *t;
	const struct funcs *f;
	const struct flame_diff *diff;
	enum calltree_weight weight;
	double px_per_unit;
	int height;
};

/* Counts characters, not bytes, and never cuts one in two. */
static void put_label(FILE *out, const char *name, double width)
{
	long fits, chars = 0;
	size_t len = 0, cut = 0;
	char buf[512];

	/* No frame is wider than the graph: said in double, which a long could not hold. */
	if (!(width <= SVG_WIDTH))
		width = SVG_WIDTH;
	fits = (long)((width - 6) / CHAR_WIDTH);
	if (fits < 3)
		return;
	while (name[len]) {
		size_t n = utf8_len(name + len);

		len += n ? n : 1;
		if (++chars == fits - 2)
			cut = len;
	}
	if (chars <= fits) {
		put_xml(out, name);
		return;
	}
	if (cut >= sizeof(buf))
		for (cut = sizeof(buf) - 1; cut && ((unsigned char)name[cut] & 0xc0) == 0x80; cut--)
			;
	memcpy(buf, name, cut);
	buf[cut] = '\0';
	put_xml(out, buf);
	fputs("..", out);
}

static void put_frame(struct svg_ctx *c, uint32_t i, uint64_t offset)
{
	const struct calltree_node *n = &c->t->nodes.v[i];
	const char *name = funcs_name(c->f, n->name);
	uint64_t weight = calltree_weight_total(n, c->weight);
	uint64_t all = calltree_weight_total(&c->t->nodes.v[0], c->weight);
	double x = SVG_PAD + (double)offset * c->px_per_unit;
	double w = (double)weight * c->px_per_unit;
	int y = c->height - BOTTOM_MARGIN - (int)(n->depth + 1) * FRAME_HEIGHT;

	if (w < MIN_FRAME_WIDTH)
		return;
	fprintf(c->out, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\"><title>",
		offset, weight);
	put_xml(c->out, name);
	if (c->weight != WEIGHT_SAMPLES)
		fprintf(c->out, " (%.3f ms, %" PRIu64 " %s, %.2f%%)</title>",
			(double)weight / 1e6, n->spans_total,
			c->weight == WEIGHT_TARGET ? "spans" : "samples",
			100.0 * (double)weight / (double)all);
	else if (c->diff && c->diff->node_path[i])
		fprintf(c->out, " (%" PRIu64 " samples, %.2f%%; self %.2f%% -> %.2f%%)</title>",
			weight, 100.0 * (double)weight / (double)all,
			100 * flame_diff_share(c->diff, c->diff->node_path[i], 0),
			100 * flame_diff_share(c->diff, c->diff->node_path[i], 1));
	else
		fprintf(c->out, " (%" PRIu64 " samples, %.2f%%)</title>", weight,
			100.0 * (double)weight / (double)all);
	fprintf(c->out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" rx=\"2\" fill=\"",
		x, y, w, FRAME_HEIGHT - 1);
	if (c->diff)
		put_diff_color(c->out, c->diff->delta[i]);
	else
		put_color(c->out, name);
	fprintf(c->out, "\"/><text x=\"%.1f\" y=\"%d\">", x + 3, y + FRAME_HEIGHT - 4);
	put_label(c->out, name, w);
	fputs("</text></g>\n", c->out);

	for (uint32_t k = c->t->kid_start[i]; k < c->t->kid_start[i + 1]; k++) {
		put_frame(c, c->t->kids[k], offset);
		offset = u64_sat_add(offset,
				      calltree_weight_total(&c->t->nodes.v[c->t->kids[k]], c->weight));
	}
}

void calltree_write_svg(FILE *out, const struct calltree *t, const struct funcs *f,
			const char *title, enum calltree_weight weight, const struct flame_diff *diff)
{
	uint64_t all = calltree_weight_total(&t->nodes.v[0], weight);
	struct svg_ctx c = {
		.out = out, .t = t, .f = f, .diff = diff, .weight = weight,
		.px_per_unit = all ? (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)all : 0,
	};
	uint32_t depth = 0;

	for (size_t i = 0; i < t->nodes.len; i++)
		if (t->nodes.v[i].depth > depth &&
		    (double)calltree_weight_total(&t->nodes.v[i], weight) * c.px_per_unit >=
		    MIN_FRAME_WIDTH)
			depth = t->nodes.v[i].depth;
	c.height = TOP_MARGIN + (int)(depth + 1) * FRAME_HEIGHT + BOTTOM_MARGIN;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" onload=\"init()\">\n",
		SVG_WIDTH, c.height, SVG_WIDTH, c.height);
	fputs("<style>\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
	      "#title { font-size: 17px; text-anchor: middle; }\n"
	      ".button { cursor: pointer; fill: #036; }\n"
	      "g.f { cursor: pointer; }\n"
	      "g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      "</style>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fprintf(out, "var W = %d, PAD = %d, CW = %d;\n", SVG_WIDTH, SVG_PAD, CHAR_WIDTH);
	fputs(svg_script, out);
	fputs("]]></script>\n", out);
	fprintf(out, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text id=\"title\" x=\"%d\" y=\"24\">", SVG_WIDTH / 2);
	put_xml(out, title);
	fprintf(out, "</text>\n"
		"<text id=\"unzoom\" class=\"button\" x=\"%d\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%d\" y=\"24\">Search</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\"></text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n<g id=\"frames\">\n",
		SVG_PAD, SVG_WIDTH - SVG_PAD - 60, SVG_WIDTH - SVG_PAD - 160,
		c.height - 10, SVG_PAD, c.height - 10);
	if (all)
		put_frame(&c, 0, 0);
	fputs("</g>\n</svg>\n", out);
}
