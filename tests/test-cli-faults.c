/*
 * Faults a user meets at the edges (issue 18 item 12): a sweep plan too big to make, or with
 * a value twice, an empty item or no configuration left, is a one-line usage error before
 * anything runs; runtime errors show control bytes and bytes that are not UTF-8 from paths and
 * trace lines as \xNN, and the JSON written with them is valid UTF-8 that reads back as the
 * same bytes; an interrupted xcheck or bench stops its child and removes its temporary
 * directory.
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

#include "tests/proc.h"
#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-faults"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

/* expect_error() with the message before the arguments, as the cases here read. */
#define expect_fault(rc, msg, args) expect_error(args, rc, msg)

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
		memsim_env = "ulimit -v 1048576 &&";
	expect_fault(2, "the lists give 16777216 configurations, over the limit of 1000000",
		     SWEEP "--N 1:256:+1 --d 1:256:+1 --Br 1:256:+1");
	expect_fault(2, "the lists give more than 2^64 configurations",
		     SWEEP "--kernel naive,flash1,flash2,proj --dtype fp32,fp16,bf16 "
			   "--causal=no,yes --N 1:256:+1 --d 1:256:+1 --Br 1:256:+1 "
			   "--Bc 1:256:+1 --heads 1:256:+1 --batch 1:256:+1 --kv-heads 1:256:+1 "
			   "--cache L1=32K:8:64,L2=1M:full:64 --cache-sweep L2=64K:2M:+64K");
	memsim_env = "";
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
		expect_fault(2, cases[i].msg, args);
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
	expect_fault(2,
		     "no configuration remains of the 1 listed: 1 of kernel proj with --causal "
		     "(proj has no causal mask)",
		     "sweep --out sw --kernel proj --causal --formula-only");
	expect_fault(2, "no configuration remains of the 2 listed: 2 with kv_heads not dividing heads",
		     SWEEP "--heads 4 --kv-heads 3,8");
	expect_fault(2,
		     "no configuration remains of the 2 listed: 1 with kv_heads not dividing "
		     "heads, 1 of kernel proj with --causal",
		     "sweep --out sw --kernel proj --formula-only --causal --heads 4,6 --kv-heads 4");
	assert_false(exists("sw"));
	/* run and formula refuse it as the sweep does, not a run labelled causal */
	expect_fault(2, "--causal is for the attention kernels: proj has no causal mask",
		     "run --kernel proj --N 64 --causal --trace-only");
	expect_fault(2, "--causal is for the attention kernels: proj has no causal mask",
		     "formula --kernel proj --N 64 --causal");
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
	expect_fault(2, "--N: '64\\xe2\\x82' is not a number", "sweep --out sw --kernel naive --N "
							       "\"$(printf '64\\342\\202')\"");
}

/* A child's pid, from a file it wrote (0 if none yet). */
static pid_t
pid_in(const char *name)
{
	char path[1200], *text;
	long pid = 0;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp(path, NULL);
	if (text && strchr(text, '\n'))
		pid = strtol(text, NULL, 10);
	free(text);
	return (pid_t)pid;
}

/* Starts memsim with argv in tmpdir, env (NAME=value, NULL-terminated) added, stdout to
 * /dev/null and stderr to tmpdir/err_name. */
static pid_t
start(char *const argv[], char *const env[], const char *err_name)
{
	char path[1200];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, err_name);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int null = open("/dev/null", O_WRONLY);

		if (fd < 0 || null < 0 || chdir(tmpdir) != 0)
			_exit(99);
		dup2(null, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		for (int i = 0; env[i]; i++) {
			char *eq = strchr(env[i], '=');

			*eq = '\0';
			setenv(env[i], eq + 1, 1);
		}
		execv(memsim_bin, argv);
		_exit(98);
	}
	return pid;
}

/* memsim's exit status (128 + the signal that ended it). */
static int
finish(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Whether tmpdir/name is a directory with nothing in it. */
static bool
empty_dir(const char *name)
{
	struct result r = shell("ls -A %s", name);
	bool yes = r.rc == 0 && r.out[0] == '\0';

	result_free(&r);
	return yes;
}

/* xcheck interrupted while "valgrind" runs (a stand-in that sleeps): it is stopped with xcheck
 * and xcheck's temporary directory goes; one line says so and the exit status is 1. Killed
 * outright (SIGKILL), xcheck takes the stand-in with it (PR_SET_PDEATHSIG). */
static void
test_xcheck_interrupt(void **state)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGKILL };
	char *argv[] = { "memsim", "xcheck", "--kernel", "naive", "--N", "64", "--with",
			 "cachegrind", NULL };
	char vg[1200], tmp[1200];
	char *env[] = { vg, tmp, NULL };

	(void)state;
	write_file("vg-sleeps", "#!/bin/sh\necho $$ > vg.pid.tmp && mv vg.pid.tmp vg.pid\n"
				"exec sleep 60\n");
	snprintf(vg, sizeof(vg), "%s/vg-sleeps", tmpdir);
	assert_int_equal(chmod(vg, 0755), 0);
	snprintf(vg, sizeof(vg), "MEMSIM_VALGRIND=%s/vg-sleeps", tmpdir);
	snprintf(tmp, sizeof(tmp), "TMPDIR=%s/xt", tmpdir);
	for (size_t k = 0; k < sizeof(sigs) / sizeof(sigs[0]); k++) {
		struct result r = shell("rm -rf xt vg.pid && mkdir xt");
		pid_t m, child = 0;
		char *err, path[1200];
		int rc;

		result_free(&r);
		m = start(argv, env, "xi.err");
		for (int i = 0; i < 1200 && !(child = pid_in("vg.pid")); i++)
			sleep_ms(25);
		assert_true(child > 0);
		kill(m, sigs[k]);
		rc = finish(m);
		snprintf(path, sizeof(path), "%s/xi.err", tmpdir);
		err = slurp(path, NULL);
		if (sigs[k] == SIGKILL) {
			/* The stand-in dies with xcheck; only the directory stays. */
			assert_int_equal(rc, 128 + SIGKILL);
			for (int i = 0; i < 200 && proc_running(child); i++)
				sleep_ms(10);
			assert_false(proc_running(child));
		} else {
			assert_false(proc_running(child));
			if (rc != 1 || !one_line_with(err, "xcheck: interrupted by signal"))
				fail_msg("xcheck interrupted by %d: exit %d, stderr '%s'", sigs[k],
					 rc, err);
			assert_true(empty_dir("xt"));
		}
		free(err);
		if (proc_running(child))
			kill(child, SIGKILL);
	}
	{
		struct result r = shell("rm -rf xt vg.pid");

		result_free(&r);
	}
}

/* The last line of tmpdir/name (caller frees). */
static char *
last_line(const char *name)
{
	char path[1200], *text, *nl;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp(path, NULL);
	assert_non_null(text);
	nl = strlen(text) > 1 ? text + strlen(text) - 2 : text;
	while (nl > text && *nl != '\n')
		nl--;
	if (*nl == '\n')
		memmove(text, nl + 1, strlen(nl + 1) + 1);
	return text;
}

/* bench interrupted while it writes its traces (hundreds of MB) removes them and exits 1 with
 * a line saying so; with --keep they stay and the line says where; bench --kernels stops the
 * run under way and removes its directory. */
static void
test_bench_interrupt(void **state)
{
	char *bench[] = { "memsim", "bench", "--dir", "bt", NULL, NULL };
	char *kernels[] = { "memsim", "bench", "--kernels", "--N", "1024", NULL };
	char tmp[1200];
	char path_env[8192];
	char *no_env[] = { NULL }, *env[] = { tmp, path_env, NULL }, *line;
	struct result r;
	pid_t m, child = 0;

	(void)state;
	if (!bench_begin())
		return;
	for (int keep = 0; keep < 2; keep++) {
		r = shell("rm -rf bt && mkdir bt");
		result_free(&r);
		bench[4] = keep ? "--keep" : NULL;
		m = start(bench, no_env, "bi.err");
		/* up to 30 s: a sanitized build generates slowly */
		for (int i = 0; i < 3000 && !exists("bt/memsim-bench-*/trace.din"); i++)
			sleep_ms(10);
		kill(m, keep ? SIGTERM : SIGINT);
		assert_int_equal(finish(m), 1);
		line = last_line("bi.err");
		if (!strstr(line, keep ? "bench: interrupted by signal 15: the trace files so far "
					 "are in bt/memsim-bench-"
				       : "bench: interrupted by signal 2: removed bt/memsim-bench-"))
			fail_msg("bench interrupted: '%s'", line);
		free(line);
		assert_true(keep ? exists("bt/memsim-bench-*/trace.mtr") : empty_dir("bt"));
	}
	/* A stand-in valgrind that answers --version and then sleeps: bench --kernels is still
	 * running (and its child with it) when the interrupt comes, however fast the runs. */
	r = shell("rm -rf bt fakebin && mkdir bk fakebin && printf '#!/bin/sh\\ncase \"$1\" in "
		  "--version) echo valgrind-3.19.0; exit 0;; esac\\nexec sleep 120\\n' "
		  ">fakebin/valgrind && chmod +x fakebin/valgrind");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	snprintf(tmp, sizeof(tmp), "TMPDIR=%s/bk", tmpdir);
	snprintf(path_env, sizeof(path_env), "PATH=%s/fakebin:%s", tmpdir, getenv("PATH"));
	m = start(kernels, env, "bk.err");
	for (int i = 0; i < 6000 && !(child = proc_child_named(m, "sleep")); i++)
		sleep_ms(10);
	if (child <= 0) {
		snprintf(tmp, sizeof(tmp), "%s/bk.err", tmpdir);
		line = slurp_text(tmp);
		fail_msg("bench --kernels started no stand-in valgrind in 60 s: '%s'", line);
	}
	kill(m, SIGINT);
	assert_int_equal(finish(m), 1);
	line = last_line("bk.err");
	if (!strstr(line, "bench: interrupted by signal 2: removed "))
		fail_msg("bench --kernels interrupted: '%s'", line);
	free(line);
	assert_false(proc_running(child));
	assert_true(empty_dir("bk"));
	r = shell("rm -rf bk fakebin");
	result_free(&r);
	bench_end();
}

/* An --out with control bytes, in the errors of sweep, study and profile that name it. */
static void
test_out_escapes(void **state)
{
	(void)state;
	write_file("afile", "");
	expect_fault(1, "sweep: cannot create afile/\\x1b[31mx: Not a directory",
		     "sweep --out \"$(printf 'afile/\\033[31mx')\" --kernel naive --formula-only");
	expect_fault(1, "study: cannot create afile/\\x1b[31mx: Not a directory",
		     "study --small --out \"$(printf 'afile/\\033[31mx')\"");
	expect_fault(1, "cannot create afile/\\x1b[31mx: Not a directory",
		     "profile --T 64 --out \"$(printf 'afile/\\033[31mx')\"");
}

/* Whether text is ASCII and holds what. */
static bool
ascii_with(const char *text, const char *what)
{
	bool ok = strstr(text, what) != NULL;

	for (const unsigned char *c = (const unsigned char *)text; ok && *c; c++)
		ok = *c < 0x80;
	if (!ok)
		print_commented(text);
	return ok;
}

/* Whether tmpdir's file name (a shell word) is ASCII and holds what. */
static bool
file_ascii_with(const char *name, const char *what)
{
	struct result r = shell("cat %s", name);
	bool ok = r.rc == 0 && ascii_with(r.out, what);

	result_free(&r);
	return ok;
}

/* Paths whose bytes are not UTF-8 in every JSON memsim writes (a report on stdout and in a
 * file, a sweep's manifest and rows): each such byte as \udcXX, the text ASCII there, so valid
 * UTF-8; memsim reads its own rows back as the same bytes (table, resume). */
static void
test_json_not_utf8(void **state)
{
	struct result r;

	(void)state;
	r = memsim("run --kernel naive --N 16 --d 8 --record \"$(printf 'r\\377.mt')\" --json -");
	assert_int_equal(r.rc, 0);
	assert_true(ascii_with(r.out, "--record 'r\\udcff.mt' --json -\""));
	result_free(&r);
	assert_true(exists("\"$(printf 'r\\377.mt')\""));
	expect_ok("run --kernel naive --N 16 --d 8 --json \"$(printf 'j\\376.json')\"");
	assert_true(file_ascii_with("\"$(printf 'j\\376.json')\"", "--json 'j\\udcfe.json'\""));
	expect_ok("sweep --out \"$(printf 's\\377')\" --kernel naive --N 16,32 --d 8 "
		  "--formula-only");
	assert_true(file_ascii_with("\"$(printf 's\\377')\"/manifest.json", "--out 's\\udcff'"));
	assert_true(file_ascii_with("\"$(printf 's\\377')\"/results.json", "\"N\":32"));
	r = memsim("sweep --out \"$(printf 's\\377')\" --kernel naive --N 16,32,64 --d 8 "
		   "--formula-only --resume");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "2 already done"));
	result_free(&r);
	expect_ok("table \"$(printf 's\\377')\"");
	assert_int_equal(sh("rm -rf \"$(printf 'r\\377.mt')\" \"$(printf 'j\\376.json')\" "
			    "\"$(printf 's\\377')\""),
			 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_too_big),     cmocka_unit_test(test_plan_duplicates),
		cmocka_unit_test(test_plan_empty),       cmocka_unit_test(test_error_escapes),
		cmocka_unit_test(test_xcheck_interrupt), cmocka_unit_test(test_bench_interrupt),
		cmocka_unit_test(test_out_escapes),      cmocka_unit_test(test_json_not_utf8),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
