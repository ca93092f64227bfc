/* SPDX-License-Identifier: MIT */
/* The escapes of the text views (util/text.h). */
#include "util/text.h"

#include "test.h"

static void test_plain_text_as_is(void)
{
	const char *s = "main;worker (x.py:3) \xc3\xa9t\xc3\xa9 \xe2\x82\xac";

	/* Not a copy: the views print ordinary names at no cost. */
	CHECK(text_escape(s) == s);
	CHECK(text_escape("") != NULL);
	CHECK_STREQ(text_escape("std::vector<int>::at(unsigned long) const"),
		    "std::vector<int>::at(unsigned long) const");
}

static void test_control_bytes(void)
{
	CHECK_STREQ(text_escape("\x1b]0;PWN\a\x1b[2J"), "\\x1b]0;PWN\\x07\\x1b[2J");
	CHECK_STREQ(text_escape("fake\nline\r\t"), "fake\\x0aline\\x0d\\x09");
	CHECK_STREQ(text_escape("del\x7f"), "del\\x7f");
	/* A backslash, so that an escape reads back as one. */
	CHECK_STREQ(text_escape("a\\x1b"), "a\\\\x1b");
}

static void test_c1_and_broken_utf8(void)
{
	/* U+009B, a CSI to some terminals; U+00A0 is printable. */
	CHECK_STREQ(text_escape("a\xc2\x9b" "b\xc2\xa0"), "a\\xc2\\x9bb\xc2\xa0");
	/* A comm the kernel cut mid-character, a stray continuation byte. */
	CHECK_STREQ(text_escape("ab\xe2\x82"), "ab\\xe2\\x82");
	CHECK_STREQ(text_escape("\x80z"), "\\x80z");
}

static void test_folded_separator(void)
{
	CHECK_STREQ(text_escape_folded("fake\nline;frame"), "fake\\x0aline\\x3bframe");
	CHECK_STREQ(text_escape("line;frame"), "line;frame");
}

static void test_copies_last_one_printf(void)
{
	const char *a[TEXT_ESCAPES];
	char in[TEXT_ESCAPES][8];

	for (int i = 0; i < TEXT_ESCAPES; i++) {
		snprintf(in[i], sizeof(in[i]), "%d\n", i);
		a[i] = text_escape(in[i]);
	}
	for (int i = 0; i < TEXT_ESCAPES; i++) {
		char want[16];

		snprintf(want, sizeof(want), "%d\\x0a", i);
		CHECK_STREQ(a[i], want);
	}
}

int main(void)
{
	RUN(test_plain_text_as_is);
	RUN(test_control_bytes);
	RUN(test_c1_and_broken_utf8);
	RUN(test_folded_separator);
	RUN(test_copies_last_one_printf);
	return test_summary();
}
