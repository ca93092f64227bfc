/* SPDX-License-Identifier: MIT */
/* The streaming JSON writer (util/json.h): the layout the views print. */
#include "util/json.h"

#include "test.h"

static char *text;
static size_t text_len;

static struct json start(void)
{
	struct json j;

	json_init(&j, open_memstream(&text, &text_len));
	return j;
}

/* The document written, NUL-terminated; freed by the next call. */
static const char *written(struct json *j)
{
	static char *last;

	fclose(j->out);
	free(last);
	last = text;
	return last;
}

static void test_lines_and_inline(void)
{
	struct json j;

	json_begin_document(&j, open_memstream(&text, &text_len), 1);
	json_string(&j, "path", "a.data");
	json_begin_array(&j, "rows", JSON_LINES);
	for (int i = 0; i < 2; i++) {
		json_begin_object(&j, NULL, JSON_INLINE);
		json_uint(&j, "self", 52u + (unsigned)i);
		json_fixed(&j, "self_percent", 4, 47.70642);
		json_fixed_or_null(&j, "mean", i == 0, 1, 2.25);
		json_ratio_or_null(&j, "ratio", 2, 1.0, i);
		json_end(&j);
	}
	json_end(&j);
	json_end(&j);
	CHECK_STREQ(written(&j), "{\n  \"version\": 1,\n  \"path\": \"a.data\",\n  \"rows\": [\n"
		    "    {\"self\": 52, \"self_percent\": 47.7064, \"mean\": 2.2, \"ratio\": null},\n"
		    "    {\"self\": 53, \"self_percent\": 47.7064, \"mean\": null, \"ratio\": 1.00}"
		    "\n  ]\n}\n");
}

/* An array a line inside an inline object is indented by the lines around it only. */
static void test_indent_counts_lines_only(void)
{
	struct json j = start();

	json_begin_object(&j, NULL, JSON_LINES);
	json_begin_object(&j, "lanes", JSON_INLINE);
	json_uint(&j, "lanes", 1);
	json_begin_array(&j, "rows", JSON_LINES);
	json_begin_object(&j, NULL, JSON_INLINE);
	json_int(&j, "tid", -1);
	json_end(&j);
	json_end(&j);
	json_end(&j);
	json_end(&j);
	CHECK_STREQ(written(&j), "{\n  \"lanes\": {\"lanes\": 1, \"rows\": [\n"
		    "    {\"tid\": -1}\n  ]}\n}\n");
}

static void test_empty_containers(void)
{
	struct json j = start();

	json_begin_object(&j, NULL, JSON_LINES);
	json_begin_array(&j, "losses", JSON_LINES);
	json_end(&j);
	json_begin_object(&j, "meta", JSON_INLINE);
	json_end(&j);
	json_end(&j);
	CHECK_STREQ(written(&j), "{\n  \"losses\": [],\n  \"meta\": {}\n}\n");
}

static void test_values(void)
{
	struct json j = start();

	json_begin_array(&j, NULL, JSON_INLINE);
	json_null(&j, NULL);
	json_string(&j, NULL, NULL);
	json_bool(&j, NULL, true);
	json_bool(&j, NULL, false);
	json_int(&j, NULL, INT64_MIN);
	json_uint(&j, NULL, UINT64_MAX);
	json_fixed(&j, NULL, 0, 2.5);
	json_fixed(&j, NULL, 3, 1.0 / 3);
	json_general(&j, NULL, 6, 3.40403e-06);
	json_general(&j, NULL, 6, 0.99);
	json_end(&j);
	CHECK_STREQ(written(&j), "[null, null, true, false, -9223372036854775808, "
		    "18446744073709551615, 2, 0.333, 3.40403e-06, 0.99]\n");
}

static void test_escapes(void)
{
	struct json j = start();

	json_begin_object(&j, NULL, JSON_INLINE);
	json_string(&j, "a\"b", "q\"\\\n\x1b");
	/* A comm cut mid-character. */
	json_string(&j, "c", "ab\xe2\x82");
	json_string(&j, "u", "\xc3\xa9");
	json_end(&j);
	CHECK_STREQ(written(&j), "{\"a\\\"b\": \"q\\\"\\\\\\u000a\\u001b\", "
		    "\"c\": \"ab\xef\xbf\xbd\xef\xbf\xbd\", \"u\": \"\xc3\xa9\"}\n");
}

static void test_break(void)
{
	struct json j = start();

	json_begin_array(&j, NULL, JSON_LINES);
	json_begin_object(&j, NULL, JSON_INLINE);
	json_string(&j, "kind", "cpu");
	json_break(&j, 5);
	json_begin_object(&j, "base", JSON_INLINE);
	json_uint(&j, "count", 1);
	json_end(&j);
	json_uint(&j, "new", 2);
	json_end(&j);
	json_end(&j);
	CHECK_STREQ(written(&j), "[\n  {\"kind\": \"cpu\",\n     \"base\": {\"count\": 1}, "
		    "\"new\": 2}\n]\n");
}

static void test_scaled(void)
{
	struct json j = start();

	json_begin_array(&j, NULL, JSON_INLINE);
	json_scaled(&j, NULL, 1234567, 3);
	json_scaled(&j, NULL, 5, 3);
	json_scaled(&j, NULL, 42, 0);
	json_scaled(&j, NULL, UINT64_MAX, 40);
	json_end(&j);
	CHECK_STREQ(written(&j), "[1234.567, 0.005, 42, 1.8446744073709551615]\n");
}

/* Export's Chrome JSON: no spaces, a line per event from the line's start. */
static void test_compact(void)
{
	struct json j;

	json_init_compact(&j, open_memstream(&text, &text_len));
	json_begin_object(&j, NULL, JSON_INLINE);
	json_begin_array(&j, "traceEvents", JSON_LINES);
	for (int i = 0; i < 2; i++) {
		json_begin_object(&j, NULL, JSON_INLINE);
		json_string(&j, "ph", "i");
		json_int(&j, "tid", i);
		json_end(&j);
	}
	json_end(&j);
	json_break(&j, 0);
	json_begin_object(&j, "metadata", JSON_LINES);
	json_end(&j);
	json_end(&j);
	CHECK_STREQ(written(&j), "{\"traceEvents\":[\n{\"ph\":\"i\",\"tid\":0},\n"
		    "{\"ph\":\"i\",\"tid\":1}],\n\"metadata\":{}}\n");
}

int main(void)
{
	RUN(test_lines_and_inline);
	RUN(test_indent_counts_lines_only);
	RUN(test_empty_containers);
	RUN(test_values);
	RUN(test_escapes);
	RUN(test_break);
	RUN(test_scaled);
	RUN(test_compact);
	return test_summary();
}
