/*
 * Faults a user meets at the edges (issue 18 item 12): a sweep plan too big to make, or with
 * a value twice, an empty item or no configuration left, is a one-line usage error before
 * anything runs; runtime errors show control bytes and bytes that are not UTF-8 from paths and
 * trace lines as \xNN; an interrupted xcheck or bench stops its child and removes its
 * temporary directory.
 */

#include "config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-faults"
#include "tests/tmpdir.h"

struct result {
	int rc;
	char *out, *err;
};

/* Runs the shell command line in tmpdir; captures stdout and stderr. */
static struct result
shell(const char *fmt, ...)
{
	char line[4096], cmd[5000], out[300], err[300];
	struct result r;
	va_list ap;
	int status;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(out, sizeof(out), "%s/stdout", tmpdir);
	snprintf(err, sizeof(err), "%s/stderr", tmpdir);
	snprintf(cmd, sizeof(cmd), "cd %s && %s >%s 2>%s", tmpdir, line, out, err);
	status = system(cmd);
	r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	r.out = slurp(out, NULL);
	r.err = slurp(err, NULL);
	if (!r.out)
		r.out = calloc(1, 1);
	if (!r.err)
		r.err = calloc(1, 1);
	return r;
}

/* "memsim ARGS" through shell(). */
#define memsim(...) shell(MEMSIM_BIN " " __VA_ARGS__)

static void
result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

/* True when s is exactly one line holding what. */
static bool
one_line_with(const char *s, const char *what)
{
	const char *nl = strchr(s, '\n');

	return strstr(s, what) && nl && nl[1] == '\0';
}

static const char *limit = ""; /* shell words before the memsim of expect_error() */

/* "memsim ARGS" exits rc with one stderr line holding msg. */
static void
expect_error(int rc, const char *msg, const char *args)
{
	struct result r = shell("(%s%s %s)", limit, MEMSIM_BIN, args);

	if (r.rc != rc || !one_line_with(r.err, msg))
		fail_msg("memsim %s: exit %d (expected %d), stderr '%s' (expected one line with "
			 "'%s')",
			 args, r.rc, rc, r.err, msg);
	result_free(&r);
}

/* Whether "ls PATTERN" in tmpdir finds something. */
static bool
exists(const char *pattern)
{
	struct result r = shell("ls -d %s", pattern);
	bool yes = r.rc == 0;

	result_free(&r);
	return yes;
}

#define SWEEP "sweep --out sw --kernel naive --formula-only "

/* A plan is counted before anything is made: 16.7 M configurations are refused at once (they
 * took 12 s and 4.5 GB, then aborted), as is a count past 2^64; a plan of a million is made
 * in well under 1 GB. */
static void
test_plan_too_big(void **state)
{
	(void)state;
	/* Under 1 GiB of address space (not with ASan, which reserves terabytes), so that a
	 * memsim that makes the plan fails at once instead of filling the machine. */
	if (!test_sanitized())
		limit = "ulimit -v 1048576 && ";
	expect_error(2, "the lists give 16777216 configurations, over the limit of 1000000",
		     SWEEP "--N 1:256:+1 --d 1:256:+1 --Br 1:256:+1");
	expect_error(2, "the lists give more than 2^64 configurations",
		     SWEEP "--kernel naive,flash1,flash2,proj --dtype fp32,fp16,bf16 "
			   "--causal=no,yes --N 1:256:+1 --d 1:256:+1 --Br 1:256:+1 "
			   "--Bc 1:256:+1 --heads 1:256:+1 --batch 1:256:+1 --kv-heads 1:256:+1 "
			   "--cache L1=32K:8:64,L2=1M:full:64 --cache-sweep L2=64K:2M:+64K");
	limit = "";
	/* Nothing was made: no directory. */
	assert_false(exists("sw"));
	/* 1,000,000 items (one run of them, --shard) under 1 GiB: 1 KiB of key per item took
	 * 2.2 GB with its doubling. */
	if (!test_sanitized()) {
		struct result r = shell(
			"(ulimit -v 1048576 && exec %s sweep --out big --kernel naive "
			"--formula-only --N 1:250:+1 --d 1:250:+1 --Br 1,2,4,8 --Bc 1,2,4,8 "
			"--jobs 1 --shard 0/1000000)",
			MEMSIM_BIN);

		if (r.rc != 0 || !strstr(r.err, "1000000 configurations, 0 already done, 1 to run"))
			fail_msg("a plan of 1,000,000: exit %d, '%s'", r.rc, r.err);
		result_free(&r);
		r = shell("rm -rf big");
		result_free(&r);
	}
}

/* Each list item once: an empty item, a value given twice (also by a range or an equal
 * spelling) and a cache given twice are usage errors naming the option and the item. */
static void
test_plan_duplicates(void **state)
{
	static const struct {
		const char *args, *msg;
	} cases[] = {
		{ "--N 64,64,64", "--N: '64' repeats 64" },
		{ "--N 64,,128", "--N: empty item in '64,,128'" },
		{ "--N 64,", "--N: empty item in '64,'" },
		{ "--N ,64", "--N: empty item in ',64'" },
		{ "--N ''", "--N: empty item in ''" },
		{ "--N 64,32:128:x2", "--N: '32:128:x2' repeats 64" },
		{ "--N 32:128:x2,128", "--N: '128' repeats 128" },
		{ "--d 64 --Br 64,64", "--Br: '64' repeats 64" },
		{ "--kernel naive,naive", "--kernel: 'naive' is listed twice" },
		{ "--kernel naive,FLASH2,flash2", "--kernel: 'flash2' is listed twice" },
		{ "--kernel naive,", "--kernel: empty item in 'naive,'" },
		{ "--dtype fp32,,fp16", "--dtype: empty item in 'fp32,,fp16'" },
		{ "--dtype fp16,fp16", "--dtype: 'fp16' is listed twice" },
		{ "--causal=no,0", "--causal: '0' is listed twice" },
		{ "--causal=yes,", "--causal: empty item in 'yes,'" },
		{ "--cache lab --cache lab", "--cache: 'lab' is given twice" },
		{ "--cache L1=32K:8:64 --cache L1=32K:8:64:lru", "--cache: 'L1=32K:8:64" },
		{ "--cache L1=4K:4:64,L2=64K:8:64 --cache-sweep L2=64K,65536",
		  "--cache-sweep: '65536' repeats 65536" },
		{ NULL, NULL },
	};
	char args[512];
	struct result r = shell("rm -rf sw");

	(void)state;
	result_free(&r);
	for (int i = 0; cases[i].args; i++) {
		snprintf(args, sizeof(args), SWEEP "%s", cases[i].args);
		expect_error(2, cases[i].msg, args);
	}
	assert_false(exists("sw"));
	/* what stays accepted */
	r = memsim(SWEEP "--N 32:128:x2,48 --kernel naive,flash2 --dtype fp32,fp16 "
			 "--causal=no,yes --jobs 1");
	if (r.rc != 0 || !strstr(r.err, "32 configurations"))
		fail_msg("a plan without repeats: exit %d, '%s'", r.rc, r.err);
	result_free(&r);
	r = shell("rm -rf sw");
	result_free(&r);
}

/* A plan of which the kernels take no configuration says why, instead of exiting 0 with
 * nothing run. */
static void
test_plan_empty(void **state)
{
	struct result r = shell("rm -rf sw");

	(void)state;
	result_free(&r);
	expect_error(2,
		     "no configuration remains of the 1 listed: 1 of kernel proj with --causal "
		     "(proj has no causal mask)",
		     "sweep --out sw --kernel proj --causal --formula-only");
	expect_error(2, "no configuration remains of the 2 listed: 2 with kv_heads not dividing heads",
		     SWEEP "--heads 4 --kv-heads 3,8");
	expect_error(2,
		     "no configuration remains of the 2 listed: 1 with kv_heads not dividing "
		     "heads, 1 of kernel proj with --causal",
		     "sweep --out sw --kernel proj --formula-only --causal --heads 4,6 --kv-heads 4");
	assert_false(exists("sw"));
}

/* Writes text into tmpdir/name. */
static void
write_file(const char *name, const char *text)
{
	char path[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Runtime errors show what a file or a path holds as escapes where a terminal would act on
 * it (ESC, C1 controls) or it is not UTF-8; valid UTF-8 passes through. */
static void
test_error_escapes(void **state)
{
	struct result r;

	(void)state;
	/* a path with ESC (a colour sequence), a C1 CSI and a byte that is not UTF-8 */
	r = memsim("replay --cache lab \"$(printf '/nonexistent/a\\033[31mb\\302\\233c\\377d')\"");
	assert_int_equal(r.rc, 1);
	if (!one_line_with(r.err, "/nonexistent/a\\x1b[31mb\\xc2\\x9bc\\xffd: No such file"))
		fail_msg("stderr '%s'", r.err);
	result_free(&r);
	/* a trace line with escapes in it; the file's UTF-8 name passes through */
	write_file("caf\xc3\xa9.din", "0 1000\n0 zz\033]0;title\007\376\n");
	r = memsim("replay --cache lab caf\xc3\xa9.din");
	assert_int_equal(r.rc, 1);
	if (!one_line_with(r.err, "caf\xc3\xa9.din:2: bad address in '0 zz\\x1b]0;title\\x07\\xfe'"))
		fail_msg("stderr '%s'", r.err);
	result_free(&r);
	/* a --json path, written by run (below a file: not even root can make it) */
	write_file("afile", "");
	r = memsim("run --kernel naive --N 64 --json \"$(printf 'afile/x\\033[2Jy')\"");
	assert_int_equal(r.rc, 1);
	if (!one_line_with(r.err, "cannot write afile/x\\x1b[2Jy: Not a directory"))
		fail_msg("stderr '%s'", r.err);
	result_free(&r);
	/* a table directory, and a usage error's invalid UTF-8 */
	r = memsim("table \"$(printf 'no\\033such\\nthing')\"");
	assert_int_equal(r.rc, 1);
	if (!one_line_with(r.err, "no\\x1bsuch\\x0athing"))
		fail_msg("stderr '%s'", r.err);
	result_free(&r);
	expect_error(2, "--N: '64\\xe2\\x82' is not a number", "sweep --out sw --kernel naive --N "
							       "\"$(printf '64\\342\\202')\"");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_too_big),
		cmocka_unit_test(test_plan_duplicates),
		cmocka_unit_test(test_plan_empty),
		cmocka_unit_test(test_error_escapes),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
