/*
 * The option layer (cli/optparse.c) on its own: each kind of value, bounds, lists, unknown
 * options, missing values, repeats, operands, --help and the hooks. usage_error() is replaced
 * by one that keeps the message, so each case checks the exact line a command would print.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/optparse.h"

/* cli/commands.h's, which cannot come in beside cmocka.h (both declare print_error()) */
enum { EXIT_USAGE = 2 };
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static char message[512];
static int usages;

/* What cli/main.c's usage_error() prints, kept here. */
int
usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	(void)cmd;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	return EXIT_USAGE;
}

static void
usage(FILE *f)
{
	(void)f;
	usages++;
}

/* Everything the test table gives. */
struct values {
	bool flag, on, flag_given;
	const char *text;
	uint64_t n, size, pow2;
	double x, positive;
	unsigned word;
	char calls[256];
	int each;
};

static int
call_keep(const char *cmd, const struct optparse_option *opt, const char *value)
{
	char *calls = opt->dest;
	size_t used = strlen(calls);

	if (value && strcmp(value, "bad") == 0)
		return usage_error(cmd, "--%s: bad is bad", opt->name);
	snprintf(calls + used, 256 - used, "[%s]", value ? value : "(none)");
	return 0;
}

static int
count_each(void *ctx, const struct optparse_option *opt, const char *value)
{
	(void)opt;
	(void)value;
	((struct values *)ctx)->each++;
	return 0;
}

static const char *const words[] = { "lru", "random", "hashed", NULL };

/* Parses args (separated by single spaces; "" for none) with the test table into v. */
static int
parse_into(struct values *v, bool operands_last, const char *args, char **argv, int *argc)
{
	static char buf[512];
	const struct optparse_option opts[] = {
		{ "flag", 'f', OPTPARSE_FLAG, .dest = &v->flag, .given = &v->flag_given },
		{ "no-on", 0, OPTPARSE_CLEAR, .dest = &v->on },
		{ "text", 't', OPTPARSE_STRING, .dest = &v->text },
		{ "n", 'n', OPTPARSE_U64, .dest = &v->n, .min = 1, .max = 100,
		  .expect = "a number from 1 to 100" },
		{ "size", 0, OPTPARSE_SIZE, .dest = &v->size, .max = UINT64_C(1) << 30 },
		{ "pow2", 0, OPTPARSE_POW2, .dest = &v->pow2, .min = 2, .max = 1024 },
		{ "x", 0, OPTPARSE_DOUBLE, .dest = &v->x },
		{ "positive", 0, OPTPARSE_POSITIVE, .dest = &v->positive },
		{ "word", 0, OPTPARSE_CHOICE, .dest = &v->word, .words = words },
		{ "call", 0, OPTPARSE_CALL, .dest = v->calls, .call = call_keep },
		{ "maybe", 0, OPTPARSE_CALL, .dest = v->calls, .call = call_keep,
		  .value_optional = true },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_option extra[] = {
		{ "extra", 0, OPTPARSE_U64, .dest = &v->n },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "test",
					      .usage = usage,
					      .options = opts,
					      .extra = extra,
					      .operands_last = operands_last,
					      .each = count_each,
					      .ctx = v };
	int n = 0;

	memset(v, 0, sizeof(*v));
	v->on = true;
	message[0] = '\0';
	snprintf(buf, sizeof(buf), "%s", args);
	argv[n++] = "test";
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	*argc = n;
	return optparse_argv(&cmd, n, argv);
}

/* The parse of args: its exit code and, on EXIT_USAGE, the message. */
static int
parse(struct values *v, const char *args)
{
	char *argv[64];
	int argc;

	return parse_into(v, false, args, argv, &argc);
}

static void
test_flags(void **state)
{
	struct values v;

	(void)state;
	assert_int_equal(parse(&v, ""), 0);
	assert_false(v.flag);
	assert_false(v.flag_given);
	assert_true(v.on);
	assert_int_equal(v.each, 0);
	assert_int_equal(parse(&v, "--flag --no-on"), 0);
	assert_true(v.flag);
	assert_true(v.flag_given);
	assert_false(v.on);
	assert_int_equal(v.each, 2);
	/* a short letter, grouped, and a unique prefix of a long name */
	assert_int_equal(parse(&v, "-ft abc"), 0);
	assert_true(v.flag);
	assert_string_equal(v.text, "abc");
	assert_int_equal(parse(&v, "--fl --te=xyz"), 0);
	assert_true(v.flag);
	assert_string_equal(v.text, "xyz");
	/* a flag takes no value */
	assert_int_equal(parse(&v, "--flag=yes"), EXIT_USAGE);
	assert_string_equal(message, "option '--flag' takes no value: '--flag=yes'");
	assert_int_equal(parse(&v, "--fla=1"), EXIT_USAGE);
	assert_string_equal(message, "option '--flag' takes no value: '--fla=1'");
}

static void
test_bounds(void **state)
{
	static const struct {
		const char *args;
		uint64_t n; /* 0: refused with message */
		const char *message;
	} cases[] = {
		{ "--n 1", 1, NULL },
		{ "--n 100", 100, NULL },
		{ "-n 0x20", 32, NULL },
		{ "--n 0", 0, "--n: '0' is not a number from 1 to 100" },
		{ "--n 101", 0, "--n: '101' is not a number from 1 to 100" },
		{ "--n 12x", 0, "--n: '12x' is not a number from 1 to 100" },
		{ "--n -5", 0, "--n: '-5' is not a number from 1 to 100" },
		{ "--n +5", 0, "--n: '+5' is not a number from 1 to 100" },
		{ "--n=", 0, "--n: '' is not a number from 1 to 100" },
		{ "--n 18446744073709551616", 0,
		  "--n: '18446744073709551616' is not a number from 1 to 100" },
		/* no expect: the kind's words; no max: no upper bound */
		{ "--extra 18446744073709551615", UINT64_MAX, NULL },
		{ "--extra 1.5", 0, "--extra: '1.5' is not a whole number" },
		{ NULL, 0, NULL },
	};
	struct values v;

	(void)state;
	for (int i = 0; cases[i].args; i++) {
		int rc = parse(&v, cases[i].args);

		if (cases[i].message) {
			assert_int_equal(rc, EXIT_USAGE);
			assert_string_equal(message, cases[i].message);
		} else {
			assert_int_equal(rc, 0);
			assert_true(v.n == cases[i].n);
		}
	}
}

static void
test_sizes_and_numbers(void **state)
{
	struct values v;

	(void)state;
	assert_int_equal(parse(&v, "--size 4K --pow2 64 --x -2.5e3 --positive 0.25"), 0);
	assert_true(v.size == 4096);
	assert_true(v.pow2 == 64);
	assert_true(v.x == -2500.0);
	assert_true(v.positive == 0.25);
	assert_int_equal(parse(&v, "--size 1G"), 0);
	assert_true(v.size == UINT64_C(1) << 30);
	assert_int_equal(parse(&v, "--size 2G"), EXIT_USAGE);
	assert_string_equal(message, "--size: '2G' is not a size");
	assert_int_equal(parse(&v, "--size -1"), EXIT_USAGE);
	assert_string_equal(message, "--size: '-1' is not a size");
	assert_int_equal(parse(&v, "--size 1Q"), EXIT_USAGE);
	assert_string_equal(message, "--size: '1Q' is not a size");
	assert_int_equal(parse(&v, "--pow2 48"), EXIT_USAGE);
	assert_string_equal(message, "--pow2: '48' is not a power of two");
	assert_int_equal(parse(&v, "--pow2 1"), EXIT_USAGE);
	assert_int_equal(parse(&v, "--pow2 2048"), EXIT_USAGE);
	assert_int_equal(parse(&v, "--x inf"), EXIT_USAGE);
	assert_string_equal(message, "--x: 'inf' is not a number");
	assert_int_equal(parse(&v, "--x nan"), EXIT_USAGE);
	assert_int_equal(parse(&v, "--x 1e999"), EXIT_USAGE);
	assert_int_equal(parse(&v, "--x 3x"), EXIT_USAGE);
	assert_int_equal(parse(&v, "--positive 0"), EXIT_USAGE);
	assert_string_equal(message, "--positive: '0' is not a positive number");
	assert_int_equal(parse(&v, "--positive -1"), EXIT_USAGE);
}

static void
test_lists(void **state)
{
	struct values v;

	(void)state;
	assert_int_equal(parse(&v, "--word hashed"), 0);
	assert_int_equal(v.word, 2);
	assert_int_equal(parse(&v, "--word lru"), 0);
	assert_int_equal(v.word, 0);
	/* whole words only, the list said in the message */
	assert_int_equal(parse(&v, "--word hash"), EXIT_USAGE);
	assert_string_equal(message, "--word: 'hash' is not lru, random or hashed");
	assert_int_equal(parse(&v, "--word LRU"), EXIT_USAGE);
	/* the command's own parser, with its own message */
	assert_int_equal(parse(&v, "--call a --call b"), 0);
	assert_string_equal(v.calls, "[a][b]");
	assert_int_equal(parse(&v, "--call bad"), EXIT_USAGE);
	assert_string_equal(message, "--call: bad is bad");
	/* an optional value: none, or after '=' only */
	assert_int_equal(parse(&v, "--maybe --maybe=x"), 0);
	assert_string_equal(v.calls, "[(none)][x]");
}

static void
test_unknown_and_missing(void **state)
{
	struct values v;

	(void)state;
	assert_int_equal(parse(&v, "--bogus"), EXIT_USAGE);
	assert_string_equal(message, "unknown option '--bogus'");
	assert_int_equal(parse(&v, "--bogus=1"), EXIT_USAGE);
	assert_string_equal(message, "unknown option '--bogus=1'");
	assert_int_equal(parse(&v, "-z"), EXIT_USAGE);
	assert_string_equal(message, "unknown option '-z'");
	/* an ambiguous prefix (--pow2? --positive?) is not a guess */
	assert_int_equal(parse(&v, "--p"), EXIT_USAGE);
	assert_string_equal(message, "unknown option '--p'");
	assert_int_equal(parse(&v, "--n"), EXIT_USAGE);
	assert_string_equal(message, "option '--n' needs a value");
	assert_int_equal(parse(&v, "--flag -t"), EXIT_USAGE);
	assert_string_equal(message, "option '-t' needs a value");
	/* the first bad option stops the parse: what follows is not applied */
	assert_int_equal(parse(&v, "--n 0 --flag"), EXIT_USAGE);
	assert_false(v.flag);
	assert_int_equal(v.each, 0);
}

static void
test_repeated(void **state)
{
	struct values v;

	(void)state;
	assert_int_equal(parse(&v, "--n 5 --n 7 -t a -t b --flag --flag"), 0);
	assert_true(v.n == 7);
	assert_string_equal(v.text, "b");
	assert_true(v.flag);
	assert_int_equal(v.each, 6);
	/* the second table's rows are options like the first's */
	assert_int_equal(parse(&v, "--n 5 --extra 500"), 0);
	assert_true(v.n == 500);
}

static void
test_operands_and_help(void **state)
{
	struct values v;
	char *argv[64];
	int argc;

	(void)state;
	/* operands anywhere, moved after the options */
	assert_int_equal(parse_into(&v, false, "a --flag b", argv, &argc), 0);
	assert_true(v.flag);
	assert_int_equal(argc - optind, 2);
	assert_string_equal(argv[optind], "a");
	/* operands_last: the options stop at the first operand */
	assert_int_equal(parse_into(&v, true, "--n 3 a --flag", argv, &argc), 0);
	assert_false(v.flag);
	assert_true(v.n == 3);
	assert_int_equal(argc - optind, 2);
	assert_string_equal(argv[optind + 1], "--flag");
	/* "--" ends the options */
	assert_int_equal(parse_into(&v, false, "-- --flag", argv, &argc), 0);
	assert_false(v.flag);
	assert_string_equal(argv[optind], "--flag");
	/* --help or -h: the usage once, and the parse stops there */
	usages = 0;
	assert_int_equal(parse(&v, "--flag --help --bogus"), OPTPARSE_HELP_SHOWN);
	assert_int_equal(usages, 1);
	assert_int_equal(parse(&v, "-h"), OPTPARSE_HELP_SHOWN);
	assert_int_equal(usages, 2);
}

/* optparse_value(): one row applied as the parser would (for a parser that hands on). */
static void
test_value(void **state)
{
	uint64_t n = 0;
	const struct optparse_option row = {
		.name = "ways", .kind = OPTPARSE_U64, .dest = &n, .max = 64
	};

	(void)state;
	assert_int_equal(optparse_value("test", &row, "64"), 0);
	assert_true(n == 64);
	assert_int_equal(optparse_value("test", &row, "65"), EXIT_USAGE);
	assert_string_equal(message, "--ways: '65' is not a whole number");
	assert_true(n == 64);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_sizes_and_numbers),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_unknown_and_missing),
		cmocka_unit_test(test_repeated),
		cmocka_unit_test(test_operands_and_help),
		cmocka_unit_test(test_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
