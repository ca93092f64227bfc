/* SPDX-License-Identifier: MIT */
#ifndef GTRACE_UTIL_TEXT_H
#define GTRACE_UTIL_TEXT_H

/*
 * Names from a recording as the text views print them. A recording holds
 * what the program it watched chose to call its threads, lanes, spans and
 * functions: printed raw, a name's escape sequences would drive the
 * reader's terminal and its newline would add a line of its own. So each
 * byte that is not part of a printable UTF-8 character is written \xHH
 * (two lowercase hex digits, as in C): the control bytes (below 0x20, and
 * 0x7f), both bytes of a C1 control character (U+0080 to U+009F) and a
 * byte that is not UTF-8; a backslash is written \\, so that what was
 * escaped reads back unambiguously. JSON and SVG escape by their own rules.
 *
 * Each returns s itself when it needs no escape, else its escaped copy,
 * valid until TEXT_ESCAPES more calls: enough for the arguments of one
 * printf. Not for use from several threads.
 */
#define TEXT_ESCAPES 8

const char *text_escape(const char *s);

/*
 * The same for a frame of folded stacks ("thread;outer;...;leaf count"):
 * a ';' too is written \x3b, as it would split the frame in two.
 */
const char *text_escape_folded(const char *s);

/* The last component of path, as views name a file: path itself when it ends in '/'. */
const char *path_basename(const char *path);

#endif
