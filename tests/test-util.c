/*
 * sim/util.c: the strict number parsers, size formatting, and mkdir_p() on the paths it must
 * create and the ones it must refuse.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/util.h"
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_parse_hex_u64),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_mkdir_p),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
