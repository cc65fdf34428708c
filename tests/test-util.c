/*
 * base/util.c: the strict number parsers, size formatting, and mkdir_p() on the paths it must
 * create and the ones it must refuse; base/utf8.c: strict UTF-8, printable lines and JSON's
 * escapes for the bytes that are not UTF-8.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/utf8.h"
#include "base/util.h"
#include "tests/unit.h"

#define TMPDIR_NAME "util"
#include "tests/tmpdir.h"

struct u64_case {
	const char *text;
	bool ok;
	uint64_t value;
};

/* clang-format off */
static const struct u64_case u64_cases[] = {
	{ "0", true, 0 },
	{ "42", true, 42 },
	{ "0x1f", true, 31 },
	{ "0X1F", true, 31 },
	{ "18446744073709551615", true, UINT64_MAX },
	{ "0xffffffffffffffff", true, UINT64_MAX },
	{ "18446744073709551616", false, 0 },
	{ "0x10000000000000000", false, 0 },
	{ "", false, 0 },
	{ "0x", false, 0 },
	{ "-1", false, 0 },
	{ "+1", false, 0 },
	{ " 1", false, 0 },
	{ "1 ", false, 0 },
	{ "12a", false, 0 },
	{ "0x1g", false, 0 },
	/* strtoull() took a second prefix (found by fuzz-spec). */
	{ "0x0x10", false, 0 },
	{ "0x0X111", false, 0 },
	{ NULL, false, 0 },
};
/* clang-format on */

static void
test_parse_u64(void **state)
{
	(void)state;
	for (const struct u64_case *c = u64_cases; c->text; c++) {
		uint64_t v = 7;
		bool ok = parse_u64(c->text, &v);

		if (ok != c->ok || (ok && v != c->value))
			fail_msg("parse_u64(\"%s\"): %s %llu", c->text, ok ? "accepted" : "refused",
				 (unsigned long long)v);
	}
	assert_false(parse_u64(NULL, &(uint64_t){ 0 }));
}

static void
test_parse_hex_u64(void **state)
{
	uint64_t v;

	(void)state;
	assert_true(parse_hex_u64("7ff000ff0", 9, &v) && v == 0x7ff000ff0);
	assert_true(parse_hex_u64("FFFFFFFFFFFFFFFF", 16, &v) && v == UINT64_MAX);
	assert_false(parse_hex_u64("10000000000000000", 17, &v));
	assert_false(parse_hex_u64("0x10", 4, &v));
	assert_false(parse_hex_u64("", 0, &v));
	assert_true(parse_hex_u64("12zz", 2, &v) && v == 0x12); /* only len bytes are read */
}

static void
test_sizes(void **state)
{
	uint64_t v;
	char buf[24];

	(void)state;
	assert_true(parse_size_bytes("64", &v) == 0 && v == 64);
	assert_true(parse_size_bytes("32K", &v) == 0 && v == 32768);
	assert_true(parse_size_bytes("32KiB", &v) == 0 && v == 32768);
	assert_true(parse_size_bytes("1mb", &v) == 0 && v == 1048576);
	assert_true(parse_size_bytes("3G", &v) == 0 && v == UINT64_C(3) << 30);
	assert_int_equal(parse_size_bytes("17179869184G", &v), -ERANGE);
	assert_int_equal(parse_size_bytes("99999999999999999999", &v), -ERANGE);
	assert_int_equal(parse_size_bytes("", &v), -EINVAL);
	assert_int_equal(parse_size_bytes("K", &v), -EINVAL);
	assert_int_equal(parse_size_bytes("32KX", &v), -EINVAL);
	assert_string_equal(format_size_bytes(32768, buf, sizeof(buf)), "32K");
	assert_string_equal(format_size_bytes(UINT64_C(6) << 20, buf, sizeof(buf)), "6M");
	assert_string_equal(format_size_bytes(100, buf, sizeof(buf)), "100B");
	assert_string_equal(format_size_bytes(0, buf, sizeof(buf)), "0B");
}

static bool
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static void
test_mkdir_p(void **state)
{
	char path[600];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/a/b/c", tmpdir);
	assert_int_equal(mkdir_p(path), 0);
	assert_true(is_dir(path));
	assert_int_equal(mkdir_p(path), 0); /* already there */
	snprintf(path, sizeof(path), "%s/a/b/d/", tmpdir);
	assert_int_equal(mkdir_p(path), 0);
	assert_true(is_dir(path));

	/* An empty path: the loop read past its end (found by ASan: memsim study --out ""). */
	assert_int_equal(mkdir_p(""), -ENOENT);

	/* A file in the way, as the path itself or as a parent: mkdir()'s EEXIST passed for
	 * success. */
	snprintf(path, sizeof(path), "%s/file", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(mkdir_p(path), -ENOTDIR);
	snprintf(path, sizeof(path), "%s/file/sub", tmpdir);
	assert_int_equal(mkdir_p(path), -ENOTDIR);
}

/* Strict UTF-8 (RFC 3629): overlong forms, surrogates, past U+10FFFF, stray or missing
 * continuation bytes are not. */
static void
test_utf8_sequence(void **state)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{ "a", 1 },
		{ "\xc3\xa4", 2 },
		{ "\xe2\x82\xac", 3 },
		{ "\xf0\x9f\x98\x80", 4 },
		{ "\xf4\x8f\xbf\xbf", 4 },
		{ "\xc0\xaf", 0 },
		{ "\xc1\xbf", 0 },
		{ "\xe0\x80\xaf", 0 },
		{ "\xed\xa0\x80", 0 },
		{ "\xed\xb3\xbf", 0 },
		{ "\xf4\x90\x80\x80", 0 },
		{ "\xf5\x80\x80\x80", 0 },
		{ "\xff", 0 },
		{ "\x80", 0 },
		{ "\xe2\x82", 0 },
		{ "\xc3(", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *s = cases[i].s;

		if (utf8_sequence((const unsigned char *)s, strlen(s)) != cases[i].len)
			fail_msg("case %zu: not %zu", i, cases[i].len);
	}
	assert_true(utf8_valid("caf\xc3\xa9 \xe2\x82\xac"));
	assert_false(utf8_valid("caf\xc3"));
}

/* One printable line: controls, C1 controls and bytes that are not UTF-8 as \xNN; at most n
 * bytes read (no NUL needed); what does not fit left out whole. */
static void
test_utf8_printable(void **state)
{
	char out[64], nonul[4] = { 'a', '\n', (char)0xc2, (char)0x9b };

	(void)state;
	assert_string_equal(utf8_printable("a\033[31m\n\xff\xc3\xa9\x7f", 64, out, sizeof(out)),
			    "a\\x1b[31m\\x0a\\xff\xc3\xa9\\x7f");
	assert_string_equal(utf8_printable(nonul, sizeof(nonul), out, sizeof(out)),
			    "a\\x0a\\xc2\\x9b");
	assert_string_equal(utf8_printable("abcdef", 3, out, sizeof(out)), "abc");
	assert_string_equal(utf8_printable("ab\xff", 8, out, 6), "ab");
	assert_string_equal(utf8_printable("a\xc3\xa9", 8, out, 3), "a");
}

/* JSON text: each byte that is not UTF-8 as \udcXX, valid UTF-8 kept; back again exactly,
 * an escaped backslash and a surrogate pair's low half left alone. */
static void
test_utf8_json_escapes(void **state)
{
	const char *raw = "{\"p\":\"r\xff\xfe.mt \xc3\xa9 \xed\xa0\x80\"}";
	char *text, back[128];
	size_t n;

	(void)state;
	text = utf8_json_escape(raw);
	assert_string_equal(text, "{\"p\":\"r\\udcff\\udcfe.mt \xc3\xa9 \\udced\\udca0\\udc80\"}");
	snprintf(back, sizeof(back), "%s", text);
	n = utf8_json_unescape(back, strlen(back));
	assert_int_equal(n, strlen(raw));
	assert_string_equal(back, raw);
	free(text);
	snprintf(back, sizeof(back), "%s", "[\"\\\\udcff\",\"\\ud83d\\udcff\",\"\\udc7f\\u00e9\"]");
	n = utf8_json_unescape(back, strlen(back));
	assert_string_equal(back, "[\"\\\\udcff\",\"\\ud83d\\udcff\",\"\\udc7f\\u00e9\"]");
	assert_int_equal(n, strlen(back));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_hex_u64),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_mkdir_p),
		cmocka_unit_test(test_utf8_sequence),
		cmocka_unit_test(test_utf8_printable),
		cmocka_unit_test(test_utf8_json_escapes),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
