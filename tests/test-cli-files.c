/*
 * The files memsim writes into a directory, as an attacker or an interrupt meets them (issue 18
 * items 7, 8, 10 and 12): links planted in an output directory are refused or replaced, never
 * followed; a directory of another user's is refused; profile takes the directory's lock and
 * never truncates rows it did not write; a merge of a partial sweep says so and exits 1 unless
 * --allow-partial; a merge is written whole or not at all, fast on many rows; --json over an
 * existing file keeps its mode, owner and hard links.
 */

#include "config.h"

#include <cJSON.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/slurp.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-files"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

#define FSWEEP "sweep --kernel naive,flash2 --N 256,512 --formula-only"
#define FPROFILE "profile --T 32 --kernel naive --min-time 0.001 --reps 2"
#define VICTIM "a file of someone else, not memsim's\n"


/* The text of tmpdir/name ("" when unreadable); caller frees. */
static char *
text_of(const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return slurp_text(path);
}

static int
lines_of(const char *name)
{
	char *text = text_of(name);
	int n = 0;

	for (char *p = text; *p; p++)
		n += *p == '\n';
	free(text);
	return n;
}

/* The JSON document in tmpdir/name; caller frees with cJSON_Delete(). */
static cJSON *
json_of(const char *name)
{
	char *text = text_of(name);
	cJSON *o = cJSON_Parse(text);

	free(text);
	if (!o)
		fail_msg("%s is not one JSON document", name);
	return o;
}

/* Writes tmpdir/victim, the target of every planted link. */
static void
write_victim(void)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/victim", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(VICTIM, f);
	fclose(f);
}

/* The victim file, the target of every planted link, still says VICTIM. */
static void
victim_untouched(void)
{
	char *text = text_of("victim");

	assert_string_equal(text, VICTIM);
	free(text);
}

static bool
is_link(const char *name)
{
	char path[700];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

/* Makes directory dir (afresh) holding a link name -> ../victim. */
static void
plant(const char *dir, const char *name)
{
	assert_int_equal(sh("rm -rf %s && mkdir %s && ln -s ../victim %s/%s", dir, dir, dir, name),
			 0);
}

/* A link planted in sweep's output directory (.memsim-lock, results.json) is refused with a
 * line naming it, exit 1, its target untouched; manifest.json and results.csv, written whole
 * through a renamed temporary, replace a link there without following it. */
static void
test_sweep_planted_links(void **state)
{
	static const char *const refused[] = { ".memsim-lock", "results.json", NULL };
	static const char *const replaced[] = { "manifest.json", "results.csv", NULL };
	char args[600], want[200], link[100];

	(void)state;
	write_victim();
	for (int i = 0; refused[i]; i++) {
		plant("pl", refused[i]);
		snprintf(args, sizeof(args), FSWEEP " --out pl --resume");
		snprintf(want, sizeof(want), "pl/%s is a symbolic link: refused", refused[i]);
		expect_error(args, 1, want);
		victim_untouched();
		snprintf(link, sizeof(link), "pl/%s", refused[i]);
		assert_true(is_link(link));
	}
	/* Files written whole go through a temporary renamed over the name. */
	for (int i = 0; replaced[i]; i++) {
		plant("pl", replaced[i]);
		expect_ok(FSWEEP " --out pl --resume");
		victim_untouched();
		snprintf(link, sizeof(link), "pl/%s", replaced[i]);
		assert_false(is_link(link));
	}
	cJSON_Delete(json_of("pl/manifest.json"));
}

/* The same for profile (.memsim-lock, results.json refused; manifest.json replaced) and merge
 * (.memsim-lock refused; results.csv and manifest.json replaced by their temporaries). */
static void
test_profile_merge_planted_links(void **state)
{
	(void)state;
	write_victim();
	plant("pp", ".memsim-lock");
	expect_error(FPROFILE " --out pp", 1, "pp/.memsim-lock is a symbolic link: refused");
	plant("pp", "results.json");
	expect_error(FPROFILE " --out pp", 1, "pp/results.json is a symbolic link: refused");
	victim_untouched();
	plant("pp", "manifest.json");
	expect_ok(FPROFILE " --out pp");
	victim_untouched();
	assert_false(is_link("pp/manifest.json"));

	expect_ok(FSWEEP " --out ms0 --shard 0/2");
	expect_ok(FSWEEP " --out ms1 --shard 1/2");
	plant("mm", ".memsim-lock");
	expect_error("merge --out mm ms0 ms1", 1, "mm/.memsim-lock is a symbolic link: refused");
	victim_untouched();
	for (int i = 0; i < 2; i++) {
		plant("mm", i ? "manifest.json" : "results.csv");
		expect_ok("merge --out mm ms0 ms1");
		victim_untouched();
		assert_false(is_link(i ? "mm/manifest.json" : "mm/results.csv"));
		assert_int_equal(lines_of("mm/results.csv"), 5);
	}
}

/* An output directory of another user's, or a link to one of another user's making, is refused
 * with one line before anything is written; the user's own link to a directory is followed. */
static void
test_foreign_directories(void **state)
{
	(void)state;
	expect_ok(FSWEEP " --out real0 --shard 0/2");
	assert_int_equal(sh("ln -sfn real0 mine"), 0);
	expect_ok(FSWEEP " --out mine --shard 0/2 --resume");
	if (geteuid() != 0) {
		print_message("# not root: no directory of another user's to make\n");
		return;
	}
	assert_int_equal(sh("rm -rf theirs && mkdir theirs && chown 65534 theirs"), 0);
	expect_error(FSWEEP " --out theirs", 1, "theirs belongs to user 65534, not to you (0)");
	expect_error(FPROFILE " --out theirs", 1, "theirs belongs to user 65534");
	expect_error("merge --out theirs real0", 1, "theirs belongs to user 65534");
	assert_int_equal(sh("test -z \"$(ls -A theirs)\""), 0);
	assert_int_equal(sh("ln -sfn real0 planted && chown -h 65534 planted"), 0);
	expect_error(FSWEEP " --out planted --shard 0/2 --resume", 1,
		     "planted is a symbolic link of user 65534, not yours: refused");
}

/* A child holding dir's lock as another memsim would (flock on dir/.memsim-lock); returns its
 * pid once it holds it. */
static pid_t
hold_lock(const char *dir)
{
	char path[700];
	int ready[2];
	pid_t pid;
	char c;

	snprintf(path, sizeof(path), "%s/%s/.memsim-lock", tmpdir, dir);
	assert_int_equal(pipe(ready), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_RDWR | O_CREAT, 0644);

		if (fd < 0 || flock(fd, LOCK_EX) || write(fd, "4242\n", 5) != 5)
			_exit(1);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		alarm(60); /* gone even if the test fails before killing it */
		pause();
		_exit(0);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	return pid;
}

/* profile takes the directory's lock, refuses a results.json it did not write (a sweep's, or
 * rows with no profile manifest), leaving it byte for byte, and replaces its own. */
static void
test_profile_own_rows(void **state)
{
	char *before, *after;
	pid_t pid;

	(void)state;
	expect_ok(FSWEEP " --out sw");
	before = text_of("sw/results.json");
	expect_error(FPROFILE " --out sw", 1,
		     "sw/results.json holds rows memsim profile did not write (the directory's "
		     "manifest.json is memsim sweep's)");
	after = text_of("sw/results.json");
	assert_string_equal(before, after);
	assert_int_equal(lines_of("sw/results.json"), 4);
	free(before);
	free(after);

	assert_int_equal(sh("rm -rf nm && mkdir nm && echo '{\"T\": 1}' > nm/results.json"), 0);
	expect_error(FPROFILE " --out nm", 1, "no profile manifest.json beside it");
	assert_int_equal(lines_of("nm/results.json"), 1);

	expect_ok(FPROFILE " --out own");
	expect_ok(FPROFILE " --out own");
	assert_int_equal(lines_of("own/results.json"), 6);

	assert_int_equal(sh("rm -rf lk && mkdir lk"), 0);
	pid = hold_lock("lk");
	expect_error(FPROFILE " --out lk", 1, "lk is in use by another memsim (pid 4242)");
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(sh("test ! -e lk/results.json"), 0);
}

/* The merged manifest's "complete", and its partial_reason holding want ("" for none). */
static void
check_complete(const char *manifest, bool complete, const char *want)
{
	cJSON *m = json_of(manifest);
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(m, "partial_reason"));

	assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(m, "complete")), complete);
	assert_int_equal(cJSON_GetObjectItem(m, "sweep_command") != NULL, complete);
	if (complete)
		assert_null(why);
	else if (!why || !strstr(why, want))
		fail_msg("%s: partial_reason '%s' lacks '%s'", manifest, why ? why : "", want);
	cJSON_Delete(m);
}

/* merge of sampled shards says, as the sweep does, how many rows are estimates and how many
 * sampled too few chunks for their bound: in the manifest and one warning line. Before, the
 * merged manifest said nothing of them. */
static void
test_merge_estimates(void **state)
{
	static const char *sweep = "sweep --kernel flash2 --N 256,512 --d 64 --cache "
				   "L1=32K:8:64,L2=1M:16:64 --sample-sets 64";
	struct result r;
	cJSON *m;

	(void)state;
	expect_ok("%s --out e0 --shard 0/2", sweep);
	expect_ok("%s --out e1 --shard 1/2", sweep);
	r = memsim("merge --out em e0 e1");
	assert_int_equal(r.rc, 0);
	if (!one_line_with(r.err, "2 of 2 estimates sampled too few chunks"))
		fail_msg("merge's stderr: '%s'", r.err);
	result_free(&r);
	m = read_json("em/manifest.json");
	assert_non_null(m);
	assert_int_equal(cJSON_GetObjectItem(m, "estimates")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(m, "sample_too_small")->valueint, 2);
	cJSON_Delete(m);
	/* Exact shards: no such keys, no warning. */
	expect_ok(FSWEEP " --out x0 --shard 0/1");
	r = memsim("merge --out xm x0");
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	result_free(&r);
	m = read_json("xm/manifest.json");
	assert_null(cJSON_GetObjectItem(m, "estimates"));
	cJSON_Delete(m);
}

/* merge of a missing shard, a shard short of rows, or configurations that only failed is
 * partial: said on stdout, one stderr line and the manifest, exit 1, exit 0 with
 * --allow-partial; a failed row retried to success is complete. */
static void
test_merge_partial(void **state)
{
	struct result r;

	(void)state;
	expect_ok(FSWEEP " --out p0 --shard 0/2");
	expect_ok(FSWEEP " --out p1 --shard 1/2");
	expect_error("merge --out q1 p0", 1, "partial: 1 of 2 shards missing (1)");
	check_complete("q1/manifest.json", false, "1 of 2 shards missing (1)");
	assert_int_equal(lines_of("q1/results.json"), 2);
	r = memsim("merge --out q2 --allow-partial p0");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "merged 2 runs (0 duplicates dropped) into q2: partial"));
	assert_non_null(strstr(r.err, "partial: 1 of 2 shards missing"));
	result_free(&r);
	check_complete("q2/manifest.json", false, "shards missing");

	/* Shard 1 less its last row. */
	assert_int_equal(sh("rm -rf c1 && cp -r p1 c1 && sed -i '$d' c1/results.json"), 0);
	expect_error("merge --out q3 p0 c1", 1, "shard 1/2 holds 1 of its 2 configurations");
	check_complete("q3/manifest.json", false, "shard 1/2 holds 1 of its 2");

	/* A failed row, then (a retry) the same configuration's good row; then failed alone. */
	assert_int_equal(sh("rm -rf f0 && cp -r p0 f0 && head -1 p0/results.json | "
			    "sed 's/^{/{\"error\":\"injected\",/' > f0/results.json && "
			    "cat p0/results.json >> f0/results.json"),
			 0);
	r = memsim("merge --out q4 f0 p1");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "merged 4 runs (1 duplicates dropped) into q4\n"));
	result_free(&r);
	check_complete("q4/manifest.json", true, "");
	assert_int_equal(sh("! grep -q injected q4/results.json"), 0);
	assert_int_equal(sh("sed -i '2d' f0/results.json"), 0);
	expect_error("merge --out q5 f0 p1", 1, "1 configuration only failed");
	check_complete("q5/manifest.json", false, "1 configuration only failed");
	assert_int_equal(sh("grep -c injected q5/results.json | grep -qx 1"), 0);

	expect_ok("merge --out q6 p1 p0");
	check_complete("q6/manifest.json", true, "");
}

/* A merge that fails part way (a bad line in its second shard) leaves no results.json, no
 * results.csv, no temporary; once the shard is repaired the same merge completes. Temporaries
 * of a merge killed before its renames (their process gone) are removed by the next. */
static void
test_merge_atomic(void **state)
{
	pid_t dead;

	(void)state;
	expect_ok(FSWEEP " --out a0 --shard 0/2");
	expect_ok(FSWEEP " --out a1 --shard 1/2");
	assert_int_equal(sh("cp a1/results.json a1.good && echo 'not json' >> a1/results.json"), 0);
	expect_error("merge --out am a0 a1", 1, "a1/results.json:3: not a JSON object");
	assert_int_equal(sh("test -z \"$(ls -A am | grep -v '^.memsim-lock$')\""), 0);

	dead = fork();
	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	assert_int_equal(sh("touch am/.memsim-tmp.%ld.0.results.json && cp a1.good a1/results.json",
			    (long)dead),
			 0);
	expect_ok("merge --out am a0 a1");
	assert_int_equal(lines_of("am/results.json"), 4);
	assert_int_equal(lines_of("am/results.csv"), 5);
	check_complete("am/manifest.json", true, "");
	assert_int_equal(sh("test -z \"$(ls -A am | grep memsim-tmp)\""), 0);
}

/* A merge that runs out of room (a full disk; here a file-size limit) stops with one line
 * naming the file and the reason, exit 1, and leaves no results.json and no temporary. */
static void
test_merge_full_disk(void **state)
{
	struct result r;

	(void)state;
	/* Rows past stdio's buffer, so that a row's write fails, not the last flush. */
	for (int i = 0; i < 2; i++)
		expect_ok("sweep --kernel naive,flash2 --N 256,512,1024,2048 --d 32,64 "
			  "--formula-only --out fd%d --shard %d/2",
			  i, i);
	r = shell("rm -rf fdm && ulimit -f 2 && trap '' XFSZ && %s merge --out fdm fd0 fd1",
		  MEMSIM_BIN);
	print_commented(r.err);
	assert_int_equal(r.rc, 1);
	assert_true(one_line_with(r.err, "merge: cannot write fdm/results.json: File too large"));
	result_free(&r);
	assert_int_equal(sh("test -z \"$(ls -A fdm | grep -v '^.memsim-lock$')\""), 0);
}

/* Writes a shard directory of a sweep of n configurations holding them all. */
static void
write_big_shard(const char *dir, long n)
{
	char path[700];
	FILE *f;

	assert_int_equal(sh("rm -rf %s && mkdir %s", dir, dir), 0);
	snprintf(path, sizeof(path), "%s/%s/manifest.json", tmpdir, dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"sweep_command\": \"memsim sweep --out %s --kernel naive\", "
		"\"config\": {\"configurations\": %ld}}\n",
		dir, n);
	fclose(f);
	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (long i = 0; i < n; i++)
		fprintf(f, "{\"index\": %ld, \"key\": \"kernel=naive N=%ld d=64 cache=lab\"}\n", i,
			i);
	fclose(f);
}

/* Merging scales with the rows, not their square (the key search was once quadratic: 20 s
 * for 131,072 rows): four times the rows take well under 16 times as long, measured in the
 * same run, so a slow or loaded machine does not matter. */
static double
merge_seconds(const char *dir, long rows)
{
	struct timespec a, b;
	char out[64];

	write_big_shard(dir, rows);
	snprintf(out, sizeof(out), "%sm", dir);
	clock_gettime(CLOCK_MONOTONIC, &a);
	expect_ok("merge --out %s %s", out, dir);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

static void
test_merge_many_rows(void **state)
{
	double small, big;

	(void)state;
	small = merge_seconds("small", 32768);
	big = merge_seconds("big", 131072);
	print_message("# merge of 32768 rows: %.2f s, 131072 rows: %.2f s (x%.1f)\n", small, big,
		      big / small);
	assert_true(big < 10 * small);
	assert_int_equal(lines_of("bigm/results.json"), 131072);
	check_complete("bigm/manifest.json", true, "");
}

/* --json over an existing file keeps its mode and, where memsim may give it, its owner; a file
 * with a second hard link is written in place, so both names see the new report. */
static void
test_json_keeps_file(void **state)
{
	char path[700];
	struct stat st;
	char *a, *b;

	(void)state;
	assert_int_equal(sh("rm -f jm && echo old > jm && chmod 640 jm"), 0);
	expect_ok("formula --kernel naive --json jm");
	snprintf(path, sizeof(path), "%s/jm", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	cJSON_Delete(json_of("jm"));

	assert_int_equal(sh("rm -f jh jh2 && echo old > jh && ln jh jh2"), 0);
	expect_ok("formula --kernel flash2 --json jh");
	a = text_of("jh");
	b = text_of("jh2");
	assert_string_equal(a, b);
	assert_non_null(strstr(a, "flash2"));
	free(a);
	free(b);
	snprintf(path, sizeof(path), "%s/jh", tmpdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_nlink, 2);

	if (geteuid() == 0) {
		assert_int_equal(sh("rm -f jo && echo old > jo && chown 65534:65534 jo"), 0);
		expect_ok("formula --kernel naive --json jo");
		snprintf(path, sizeof(path), "%s/jo", tmpdir);
		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(st.st_uid, 65534);
		assert_int_equal(st.st_gid, 65534);
	}
	/* No temporary left beside them. */
	assert_int_equal(sh("! ls -A | grep -q tmp"), 0);
}

/* A FIFO where a reader looks for a sweep's results.json (planted, or left by a tool) is
 * refused in one line naming it, exit 1, by table and merge alike: never waited on (the
 * timeout says a hang). */
static void
test_readers_refuse_fifo(void **state)
{
	static const char *const readers[] = { "table ff", "table --exact ff", "merge --out fm ff",
					       NULL };

	(void)state;
	expect_ok(FSWEEP " --out ff");
	assert_int_equal(sh("rm ff/results.json && mkfifo ff/results.json"), 0);
	memsim_env = "timeout 20";
	for (int i = 0; readers[i]; i++)
		expect_error(readers[i], 1, "ff/results.json is not a regular file: refused");
	memsim_env = "";
	expect_error(FSWEEP " --out ff --resume", 1, "ff/results.json is not a regular file");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sweep_planted_links),
		cmocka_unit_test(test_profile_merge_planted_links),
		cmocka_unit_test(test_foreign_directories),
		cmocka_unit_test(test_profile_own_rows),
		cmocka_unit_test(test_merge_partial),
		cmocka_unit_test(test_merge_estimates),
		cmocka_unit_test(test_merge_atomic),
		cmocka_unit_test(test_merge_full_disk),
		cmocka_unit_test(test_merge_many_rows),
		cmocka_unit_test(test_json_keeps_file),
		cmocka_unit_test(test_readers_refuse_fifo),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
