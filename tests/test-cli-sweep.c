/*
 * A sweep's rows as a user resumes them (issue 18): a worker that dies is replaced and its
 * configuration marked failed with the signal while the rest run; --resume runs failed rows
 * again and keeps a configuration's copied rows once; --resume with another plan's mode is refused
 * and changes nothing, and so are rows of another model revision, which --rerun-other-revisions
 * runs again (a study's cross-checks and profile of another revision are made again); the
 * manifest's summary counts every row in the directory; tables label estimates and the settings
 * that tell rows apart, and never count an estimate as byte-equal.
 */

#include "config.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define TMPDIR_NAME "cli-sweep"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

/* The rows of tmpdir/dir/results.json, parsed; *n set. Caller frees with rows_free(). */
static cJSON **
rows_of(const char *dir, int *n)
{
	char path[700], *text, *save = NULL;
	cJSON **rows = NULL;

	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	text = slurp_text(path);
	*n = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		rows = realloc(rows, (size_t)(*n + 1) * sizeof(*rows));
		assert_non_null(rows);
		rows[*n] = cJSON_Parse(l);
		assert_non_null(rows[*n]);
		(*n)++;
	}
	free(text);
	return rows;
}

static void
rows_free(cJSON **rows, int n)
{
	for (int i = 0; i < n; i++)
		cJSON_Delete(rows[i]);
	free(rows);
}

/* The number at results_summary.key of tmpdir/dir/manifest.json; -1 when absent. */
static double
summary(const char *dir, const char *key)
{
	char name[300];
	cJSON *m, *v;
	double x;

	snprintf(name, sizeof(name), "%s/manifest.json", dir);
	m = read_json(name);
	v = cJSON_GetObjectItem(cJSON_GetObjectItem(m, "results_summary"), key);
	x = cJSON_IsBool(v) ? cJSON_IsTrue(v) : cJSON_IsNumber(v) ? v->valuedouble : -1;
	cJSON_Delete(m);
	return x;
}

/* Lines of tmpdir/dir/name. */
static int
lines_of(const char *dir, const char *name)
{
	char path[700], *text;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s/%s", tmpdir, dir, name);
	text = slurp_text(path);
	for (char *c = text; *c; c++)
		n += *c == '\n';
	free(text);
	return n;
}

/* Runs "memsim ARGS" in the background, kills its first worker with SIGKILL as soon as it
 * exists (as the out-of-memory killer would), and waits: its exit status on stdout, its
 * stderr on stderr. */
static struct result
kill_first_worker(const char *args)
{
	/* A child still called memsim 0.1 s after it appeared: the worker, not the child of
	 * popen("valgrind --version") in the moment before it becomes sh. */
	return shell("{ %s %s >/dev/null 2>killed.err & pid=$!; "
		     "while :; do c=$(pgrep -x -P $pid memsim | head -1); "
		     "if [ -n \"$c\" ]; then sleep 0.1; "
		     "[ \"$(cat /proc/$c/comm 2>/dev/null)\" = memsim ] && break; fi; "
		     "sleep 0.02; done; "
		     "kill -KILL $c; wait $pid; echo $?; cat killed.err >&2; }",
		     MEMSIM_BIN, args);
}

#define DEAD "sweep --out dead --kernel naive --N 2048,2056,2064 --cache lab --jobs 1"

/* The only worker is killed (SIGKILL, as the out-of-memory killer does) while it runs the first
 * configuration: a fresh worker runs the other two, the first gets a failed row naming the
 * signal, the exit status is 1; --resume runs it again and the sweep is whole. */
static void
test_dead_worker(void **state)
{
	struct result r;
	cJSON **rows;
	int n, failed = 0;

	(void)state;
	r = kill_first_worker(DEAD);
	assert_string_equal(r.out, "1\n");
	result_free(&r);
	rows = rows_of("dead", &n);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++) {
		const char *e = cJSON_GetStringValue(cJSON_GetObjectItem(rows[i], "error"));

		if (!e)
			continue;
		failed++;
		print_message("# %s\n", e);
		assert_non_null(strstr(e, "was killed by signal 9"));
		assert_non_null(cJSON_GetObjectItem(rows[i], "key"));
		assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(rows[i], "config"), "N")
					 ->valueint,
				 2048);
	}
	rows_free(rows, n);
	assert_int_equal(failed, 1);
	assert_int_equal(summary("dead", "runs_failed"), 1);
	assert_int_equal(summary("dead", "complete"), 0);

	r = memsim(DEAD " --resume");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "1 to run (failed runs again)"));
	result_free(&r);
	rows = rows_of("dead", &n);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++)
		assert_null(cJSON_GetObjectItem(rows[i], "error"));
	rows_free(rows, n);
	assert_int_equal(lines_of("dead", "results.csv"), 4);
	assert_int_equal(summary("dead", "runs_done"), 3);
	assert_int_equal(summary("dead", "runs_failed"), 0);
	assert_int_equal(summary("dead", "complete"), 1);
}

#define PASS                                                                                 \
	"sweep --out pass --kernel naive --N 2048 --cache L1=32K:8:64,L2=256K:8:64 "          \
	"--cache-sweep L2=256K:1M:x2 --jobs 1"

/* The worker running one pass over three sizes is killed before its first row: the three
 * sizes run again one by one, every row is good (none says "onepass"), and the exit is 0. */
static void
test_dead_onepass_worker(void **state)
{
	struct result r;
	cJSON **rows;
	int n;

	(void)state;
	r = kill_first_worker(PASS);
	assert_string_equal(r.out, "0\n");
	assert_non_null(strstr(r.err, "one pass over 3 sizes was killed by signal 9"));
	result_free(&r);
	rows = rows_of("pass", &n);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++) {
		assert_null(cJSON_GetObjectItem(rows[i], "error"));
		assert_null(cJSON_GetObjectItem(rows[i], "onepass"));
	}
	rows_free(rows, n);
	assert_int_equal(summary("pass", "complete"), 1);
}

#define SMALL "sweep --out small --kernel naive,flash2 --N 64,128 --cache lab --jobs 2"

/* A failed row left by an earlier run (a transient "cannot map") runs again on --resume,
 * and leaves no trace; the summary counts the rows of both runs. */
static void
test_failed_row_retried(void **state)
{
	char path[700];
	struct result r = memsim(SMALL);
	cJSON **rows;
	FILE *f;
	int n;

	(void)state;
	assert_int_equal(r.rc, 0);
	result_free(&r);
	rows = rows_of("small", &n);
	assert_int_equal(n, 4);
	/* Row 2 becomes what a run that could not map its arrays writes. */
	cJSON_DeleteItemFromObject(rows[1], "dram");
	cJSON_AddStringToObject(rows[1], "error",
				"cannot map 6.0 GiB for the arrays and tiles: Cannot allocate memory");
	snprintf(path, sizeof(path), "%s/small/results.json", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < n; i++) {
		char *t = cJSON_PrintUnformatted(rows[i]);

		fprintf(f, "%s\n", t);
		cJSON_free(t);
	}
	fclose(f);
	rows_free(rows, n);

	r = memsim(SMALL " --resume");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "3 already done, 1 to run"));
	result_free(&r);
	rows = rows_of("small", &n);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++)
		assert_null(cJSON_GetObjectItem(rows[i], "error"));
	rows_free(rows, n);
	assert_int_equal(lines_of("small", "results.csv"), 5);
	assert_int_equal(summary("small", "runs_done"), 4);
	assert_int_equal(summary("small", "runs_failed"), 0);

	/* More sizes later: the summary is of all 6 rows, not of the 2 new ones. */
	r = memsim("sweep --out small --kernel naive,flash2 --N 64,128,256 --cache lab --resume");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_int_equal(summary("small", "runs_done"), 6);
	assert_int_equal(summary("small", "exact_within_5pct"), 6);
	assert_int_equal(summary("small", "complete"), 1);
}

#define DUP "sweep --out dup --kernel naive,flash2 --N 64,128,256 --formula-only"

/* A results.json holding a configuration's row twice (or three times: a file joined by hand):
 * --resume keeps the first, drops the copies saying how many, and counts each configuration
 * once: never more done than the plan has, nor more rows in the summary or the table. */
static void
test_resume_duplicate_rows(void **state)
{
	struct result r;
	char *table;

	(void)state;
	expect_ok(DUP);
	assert_int_equal(sh("head -1 dup/results.json >>dup/results.json && "
			    "head -1 dup/results.json >>dup/results.json && "
			    "sed -n 4p dup/results.json >>dup/results.json"),
			 0);
	r = memsim(DUP " --resume");
	print_commented(r.err);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "dup/results.json held 3 rows of configurations it had a "
				      "row of already: dropped, the first row of each kept\n"));
	assert_non_null(strstr(r.err, "6 configurations, 6 already done, 0 to run"));
	result_free(&r);
	assert_int_equal(lines_of("dup", "results.json"), 6);
	assert_int_equal(lines_of("dup", "results.csv"), 7);
	assert_int_equal(summary("dup", "runs_done"), 6);
	assert_int_equal(summary("dup", "complete"), 1);
	r = memsim("table dup");
	assert_int_equal(r.rc, 0);
	table = r.out;
	for (int n = 0; (table = strstr(table, " naive ")); table++)
		assert_true(++n <= 3);
	result_free(&r);
}

/* --resume with another mode than the directory's rows: exit 2, one line naming both, the
 * files untouched. Lists that only add configurations are a plan's growth, and run. */
static void
test_resume_other_plan(void **state)
{
	static const char *const other[] = {
		"--no-flush", "--seed 2", "--trace-only", "--formula-only", "--sample-sets 2",
	};
	char path[700], *before_json, *before_csv;

	(void)state;
	{
		struct result r = memsim("sweep --out plan --kernel naive --N 64,128 "
					 "--cache L1=4K:4:64,L2=64K:8:64 --jobs 1");

		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	snprintf(path, sizeof(path), "%s/plan/results.json", tmpdir);
	before_json = slurp_text(path);
	snprintf(path, sizeof(path), "%s/plan/results.csv", tmpdir);
	before_csv = slurp_text(path);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		struct result r = memsim("sweep --out plan --kernel naive --N 64,128 "
					 "--cache L1=4K:4:64,L2=64K:8:64 --jobs 1 --resume %s",
					 other[i]);
		char *json, *csv;

		print_message("# %s: %s", other[i], r.err);
		assert_int_equal(r.rc, 2);
		assert_true(one_line_with(r.err, "holds runs of another plan (flush=1 seed=1 "
						 "simulated)"));
		snprintf(path, sizeof(path), "%s/plan/results.json", tmpdir);
		json = slurp_text(path);
		snprintf(path, sizeof(path), "%s/plan/results.csv", tmpdir);
		csv = slurp_text(path);
		assert_string_equal(json, before_json);
		assert_string_equal(csv, before_csv);
		free(json);
		free(csv);
		result_free(&r);
	}
	free(before_json);
	free(before_csv);
}

#define NOROWS_PLAN "--kernel naive --N 64,128 --cache L1=4K:4:64,L2=64K:8:64 --jobs 1"

/* A sweep stopped before its first row leaves no key to compare: --resume with another mode
 * (--trace-only after a computing sweep, and the others) is refused by the manifest's plan,
 * exit 2 in one line naming both, the files untouched; with no results.json too. The same
 * plan resumes. */
static void
test_resume_other_plan_no_rows(void **state)
{
	static const char *const other[] = {
		"--trace-only", "--no-flush", "--seed 2", "--formula-only", "--sample-sets 2",
	};
	char path[700], *before;
	struct result r;

	(void)state;
	snprintf(path, sizeof(path), "%s/norows/manifest.json", tmpdir);
	r = memsim("sweep --out norows " NOROWS_PLAN);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_int_equal(sh(": > norows/results.json"), 0);
	before = slurp_text(path);
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		char *after;

		r = memsim("sweep --out norows " NOROWS_PLAN " --resume %s", other[i]);
		print_message("# %s: %s", other[i], r.err);
		assert_int_equal(r.rc, 2);
		assert_true(one_line_with(r.err, "norows/manifest.json records another plan "
						 "(flush=1 seed=1 simulated) than this sweep's"));
		result_free(&r);
		assert_int_equal(lines_of("norows", "results.json"), 0);
		after = slurp_text(path);
		assert_string_equal(after, before);
		free(after);
	}
	assert_int_equal(sh("rm norows/results.json"), 0);
	r = memsim("sweep --out norows " NOROWS_PLAN " --resume --trace-only");
	assert_int_equal(r.rc, 2);
	assert_true(
		one_line_with(r.err, "than this sweep's (flush=1 seed=1 simulated trace-only)"));
	result_free(&r);
	assert_int_equal(sh("test ! -e norows/results.json"), 0);
	r = memsim("sweep --out norows " NOROWS_PLAN " --resume");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	assert_int_equal(lines_of("norows", "results.json"), 2);
	free(before);
}

/* The model revision this memsim records: row 0's of tmpdir/dir/results.json, in buf. */
static const char *
revision_of(const char *dir, char *buf, size_t len)
{
	int n;
	cJSON **rows = rows_of(dir, &n);
	const cJSON *rev;

	assert_true(n > 0);
	rev = cJSON_GetObjectItem(rows[0], "model_revision");
	assert_true(cJSON_IsString(rev));
	snprintf(buf, len, "%s", rev->valuestring);
	rows_free(rows, n);
	return buf;
}

#define REV_PLAN "--kernel naive --N 64,128,256 --cache L1=4K:4:64,L2=64K:8:64 --jobs 1"

/* Every row and the manifest record the model revision; --resume over a good row of another
 * (an older memsim's, whose cache model may have had a bug since fixed) is refused in one line
 * naming both, the files untouched; --rerun-other-revisions moves that row to
 * superseded.json and runs it again, and the directory is then of one revision. */
static void
test_resume_other_revision(void **state)
{
	char path[700], rev[160], want[400], *before_json, *before_csv, *text;
	cJSON **rows, *m;
	struct result r;
	int n;

	(void)state;
	expect_ok("sweep --out rev " REV_PLAN);
	revision_of("rev", rev, sizeof(rev));
	assert_non_null(strstr(rev, " model "));
	m = read_json("rev/manifest.json");
	assert_string_equal(cJSON_GetObjectItem(m, "model_revision")->valuestring, rev);
	cJSON_Delete(m);
	/* Row 2 becomes what an older memsim wrote. */
	assert_int_equal(sh("sed -i '2s/\"model_revision\":\"[^\"]*\"/"
			    "\"model_revision\":\"memsim 0.0.1 model 7\"/' rev/results.json"),
			 0);
	snprintf(path, sizeof(path), "%s/rev/results.json", tmpdir);
	before_json = slurp_text(path);
	assert_non_null(strstr(before_json, "memsim 0.0.1 model 7"));
	snprintf(path, sizeof(path), "%s/rev/results.csv", tmpdir);
	before_csv = slurp_text(path);
	r = memsim("sweep --out rev " REV_PLAN " --resume");
	print_message("# %s", r.err);
	assert_int_equal(r.rc, 2);
	snprintf(want, sizeof(want),
		 "rev/results.json holds 1 rows of another model revision (memsim 0.0.1 model 7) "
		 "than this memsim's (%s): sweep into another --out, or pass "
		 "--rerun-other-revisions to run them again",
		 rev);
	assert_true(one_line_with(r.err, want));
	result_free(&r);
	snprintf(path, sizeof(path), "%s/rev/results.json", tmpdir);
	text = slurp_text(path);
	assert_string_equal(text, before_json);
	free(text);
	snprintf(path, sizeof(path), "%s/rev/results.csv", tmpdir);
	text = slurp_text(path);
	assert_string_equal(text, before_csv);
	free(text);
	assert_int_equal(sh("test ! -e rev/superseded.json"), 0);
	expect_error("sweep --out rev " REV_PLAN " --rerun-other-revisions", 2,
		     "--rerun-other-revisions goes with --resume");
	/* As a run stopped between keeping the old row and rewriting results.json leaves it:
	 * the row in both files. It must be kept once. */
	assert_int_equal(sh("sed -n 2p rev/results.json > rev/superseded.json"), 0);

	r = memsim("sweep --out rev " REV_PLAN " --resume --rerun-other-revisions");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "1 rows of another model revision moved to "));
	assert_non_null(strstr(r.err, "3 configurations, 2 already done, 1 to run"));
	result_free(&r);
	rows = rows_of("rev", &n);
	assert_int_equal(n, 3);
	for (int i = 0; i < n; i++)
		assert_string_equal(cJSON_GetObjectItem(rows[i], "model_revision")->valuestring,
				    rev);
	rows_free(rows, n);
	assert_int_equal(lines_of("rev", "results.csv"), 4);
	assert_int_equal(summary("rev", "runs_done"), 3);
	assert_int_equal(summary("rev", "complete"), 1);
	/* The old row is kept, not lost, and once. */
	assert_int_equal(lines_of("rev", "superseded.json"), 1);
	assert_int_equal(sh("grep -q 'memsim 0.0.1 model 7' rev/superseded.json"), 0);
	free(before_json);
	free(before_csv);
}

/* A directory of a memsim from before rows recorded their revision: --resume says so in one
 * line (not a crash, not a silent mix); --rerun-other-revisions runs every row again. */
static void
test_resume_unrecorded_revision(void **state)
{
	char rev[160];
	struct result r;
	cJSON **rows;
	int n;

	(void)state;
	expect_ok("sweep --out old " REV_PLAN);
	revision_of("old", rev, sizeof(rev));
	/* As memsim 0.3.0 wrote them: no model_revision, in the rows or the manifest. */
	assert_int_equal(sh("sed -i 's/,\"model_revision\":\"[^\"]*\"//' "
			    "old/results.json && sed -i '/\"model_revision\"/d' "
			    "old/manifest.json && ! grep -q model_revision old/results.json "
			    "old/manifest.json"),
			 0);
	r = memsim("sweep --out old " REV_PLAN " --resume");
	print_message("# %s", r.err);
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "old/results.json holds 3 rows that record no model "
					 "revision (memsim "));
	assert_non_null(strstr(r.err, ": made before rows recorded one), not this memsim's ("));
	assert_non_null(strstr(r.err, rev));
	result_free(&r);
	/* A row without even its memsim_version. */
	assert_int_equal(sh("sed -i '1s/\"memsim_version\":\"[^\"]*\",//' "
			    "old/results.json"),
			 0);
	expect_error("sweep --out old " REV_PLAN " --resume", 2,
		     "rows that record no model revision (an older memsim");
	r = memsim("sweep --out old " REV_PLAN " --resume --rerun-other-revisions");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "3 configurations, 0 already done, 3 to run"));
	result_free(&r);
	rows = rows_of("old", &n);
	assert_int_equal(n, 3);
	rows_free(rows, n);
	assert_int_equal(lines_of("old", "superseded.json"), 3);
}

/* merge refuses shards whose rows are of two model revisions, exit 2 in one line naming both
 * and leaving no results.json; shards of one revision merge, the manifest recording it. */
static void
test_merge_other_revision(void **state)
{
	char rev[160];
	cJSON *m;

	(void)state;
	expect_ok("sweep --out mr0 " REV_PLAN " --shard 0/2");
	expect_ok("sweep --out mr1 " REV_PLAN " --shard 1/2");
	revision_of("mr0", rev, sizeof(rev));
	expect_ok("merge --out mr-ok mr0 mr1");
	m = read_json("mr-ok/manifest.json");
	assert_string_equal(cJSON_GetObjectItem(m, "model_revision")->valuestring, rev);
	cJSON_Delete(m);
	assert_int_equal(sh("sed -i 's/\"model_revision\":\"[^\"]*\"/"
			    "\"model_revision\":\"memsim 0.0.1 model 7\"/' mr1/results.json"),
			 0);
	expect_error("merge --out mr-mixed mr0 mr1", 2, "mr0 holds rows of model revision (");
	expect_error("merge --out mr-mixed mr0 mr1", 2,
		     "and mr1/results.json:1 of another (memsim 0.0.1 model 7): rows of two "
		     "revisions of memsim's model are not merged");
	assert_int_equal(sh("test ! -e mr-mixed/results.json"), 0);
	/* Unrecorded rows (an older memsim's) do not mix with recorded ones either. */
	assert_int_equal(sh("sed -i 's/,\"model_revision\":\"[^\"]*\"//' mr1/results.json"), 0);
	expect_error("merge --out mr-mixed mr0 mr1", 2, "of another (none recorded, memsim ");
}

/* Rows that are estimates say so in `table` and `table --exact` (never byte-equal there), and
 * rows that differ in a setting the table has no column for are told apart by it. */
/* The model revision recorded in the JSON file tmpdir/rel, in buf ("" when none). */
static const char *
file_revision(const char *rel, char *buf, size_t len)
{
	cJSON *j = read_json(rel);
	const cJSON *rev = cJSON_GetObjectItem(j, "model_revision");

	snprintf(buf, len, "%s", cJSON_IsString(rev) ? rev->valuestring : "");
	cJSON_Delete(j);
	return buf;
}

/* study --resume keeps a cross-check report or a profile (whose DRAM bytes are the
 * simulator's) only if this model revision made it: another revision's, or one that records
 * none, is made again, saying so. */
static void
test_study_resume_other_revision(void **state)
{
	const char *xc = "st/xcheck/naive-N256-Bc64.json";
	char rev[160], got[160], want[600];
	struct result r;
	bool vg;

	(void)state;
	/* valgrind cannot run a sanitized memsim: the study then skips its cross-checks */
	if (test_sanitized())
		assert_int_equal(setenv("MEMSIM_VALGRIND", "/nonexistent/valgrind", 1), 0);
	expect_ok("study --small --out st");
	file_revision("st/profile/manifest.json", rev, sizeof(rev));
	assert_non_null(strstr(rev, " model "));
	vg = sh("test -e %s", xc) == 0;
	if (vg)
		assert_string_equal(file_revision(xc, got, sizeof(got)), rev);
	else
		print_message("# valgrind not installed: no cross-checks to resume\n");
	assert_int_equal(
		sh("sed -i 's/\"model_revision\":[[:space:]]*\"[^\"]*\"/"
		   "\"model_revision\": \"memsim 0.0.1 model 7\"/' st/profile/manifest.json"),
		0);
	if (vg)
		assert_int_equal(sh("sed -i '/\"model_revision\"/d' %s", xc), 0);
	assert_string_equal(file_revision("st/profile/manifest.json", got, sizeof(got)),
			    "memsim 0.0.1 model 7");
	r = memsim("study --small --out st --resume");
	assert_int_equal(r.rc, 0);
	snprintf(want, sizeof(want),
		 "memsim: study: st/profile was made by memsim 0.0.1 model 7; made again with %s",
		 rev);
	assert_non_null(strstr(r.out, want));
	if (vg) {
		snprintf(want, sizeof(want),
			 "memsim: study: %s was made by a memsim that recorded no model revision; "
			 "made again with %s",
			 xc, rev);
		assert_non_null(strstr(r.out, want));
	}
	result_free(&r);
	assert_string_equal(file_revision("st/profile/manifest.json", got, sizeof(got)), rev);
	if (vg)
		assert_string_equal(file_revision(xc, got, sizeof(got)), rev);
	/* Of this revision, both are kept: nothing is said. */
	r = memsim("study --small --out st --resume");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "made again"));
	result_free(&r);
	unsetenv("MEMSIM_VALGRIND");
}

static void
test_tables_label_rows(void **state)
{
	struct result r;

	(void)state;
	r = memsim("sweep --out est --kernel naive --N 256 --cache L1=32K:8:64,L2=256K:8:64 "
		   "--sample-sets 4 --jobs 1");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("table est");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, " sampled 1/4 "));
	assert_non_null(strstr(r.out, "1 of 1 runs are estimates"));
	result_free(&r);
	r = memsim("table --exact est");
	assert_non_null(strstr(r.out, "naive        1           0 "));
	assert_non_null(strstr(r.out, "1 of 1 runs are estimates"));
	result_free(&r);

	r = memsim("sweep --out dd --kernel naive,flash2 --N 128,256 --d 32,64 --cache lab "
		   "--jobs 2");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("table dd");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, " config "));
	assert_non_null(strstr(r.out, "   128 d=32 "));
	assert_non_null(strstr(r.out, "   128 d=64 "));
	assert_non_null(strstr(r.out, "(lab, fp32, d=32)"));
	assert_non_null(strstr(r.out, "(lab, fp32, d=64)"));
	result_free(&r);
}

/* A small run refused under a memory limit says what it asked for: the arrays and the arena's
 * alignment, not "cannot map 0.0 GiB". */
static void
test_map_failure_message(void **state)
{
	struct result r;

	(void)state;
	if (test_sanitized()) {
		print_message("# ASan reserves more address space than the limit: not run here\n");
		return;
	}
	r = memsim("run --kernel naive --N 16 --d 8 --cache lab");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	{
		char cmd[1200], path[800], *text;

		snprintf(cmd, sizeof(cmd),
			 "cd %s && (ulimit -v 500000; %s run --kernel naive --N 16 --d 8 "
			 "--cache lab) >/dev/null 2>map.err; echo $? >map.rc",
			 tmpdir, MEMSIM_BIN);
		assert_int_equal(system(cmd), 0);
		snprintf(path, sizeof(path), "%s/map.rc", tmpdir);
		text = slurp_text(path);
		assert_string_equal(text, "1\n");
		free(text);
		snprintf(path, sizeof(path), "%s/map.err", tmpdir);
		text = slurp_text(path);
		print_message("# %s", text);
		assert_true(one_line_with(text, "GiB with the 1 GiB alignment the arena reserves"));
		assert_null(strstr(text, "cannot map 0.0 GiB"));
		free(text);
	}
}

/* A --formula-only sweep's `table` (issue 40, E7): each row's lab and exact formulas in MiB
 * as its JSON holds them, "-" where nothing was measured, no "no lab formula", and no
 * crossover or byte-equality claimed of formulas alone. */
static void
test_table_formula_only(void **state)
{
	char cells[16][64], want[64];
	struct result r, x;
	cJSON **rows;
	int n;

	(void)state;
	expect_ok("sweep --out fo --kernel naive,flash2 --N 64,128 --formula-only --jobs 1");
	r = memsim("table fo");
	assert_int_equal(r.rc, 0);
	print_commented(r.out);
	rows = rows_of("fo", &n);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++) {
		const cJSON *cfg = cJSON_GetObjectItem(rows[i], "config");
		const cJSON *f = cJSON_GetObjectItem(rows[i], "formulas");
		const char *kernel = cJSON_GetObjectItem(cfg, "kernel")->valuestring;
		double N = cJSON_GetObjectItem(cfg, "N")->valuedouble;
		double lab =
			cJSON_GetObjectItem(cJSON_GetObjectItem(f, "lab"), "bytes")->valuedouble;
		double exact =
			cJSON_GetObjectItem(cJSON_GetObjectItem(f, "exact"), "bytes")->valuedouble;

		if (table_cells(r.out, kernel, N, cells, 16) < 10)
			fail_msg("no table line for %s N=%.0f", kernel, N);
		assert_true(lab > 0 && exact > 0);
		assert_string_equal(cells[4], "-"); /* measured */
		snprintf(want, sizeof(want), "%.3f", lab / 1048576);
		assert_string_equal(cells[5], want);
		snprintf(want, sizeof(want), "%.3f", exact / 1048576);
		assert_string_equal(cells[6], want);
		assert_string_equal(cells[7], "-"); /* measured / lab */
		assert_string_equal(cells[8], "-"); /* measured / exact */
		assert_string_equal(cells[9], "formula");
	}
	rows_free(rows, n);
	assert_null(strstr(r.out, "no lab formula"));
	assert_null(strstr(r.out, "crossover"));
	x = memsim("table --exact fo");
	assert_int_equal(x.rc, 0);
	assert_null(strstr(x.out, "equal to the byte"));
	assert_non_null(strstr(x.out, "4 of 4 rows are formulas alone (--formula-only)"));
	result_free(&x);
	result_free(&r);
}

/* A --formula-only row's regime is its formula's, as `memsim formula` gives it (it said "not
 * within the lab's assumptions", text "", for every row), and it holds no verdict of arrays
 * against a measurement it has not (arrays_within false); results.csv says the same. */
static void
test_formula_rows_regime(void **state)
{
	char path[700], want[2][600], *csv;
	cJSON **rows;
	int n;

	(void)state;
	expect_ok("sweep --out fr --kernel flash2,naive --N 256 --formula-only --jobs 1");
	rows = rows_of("fr", &n);
	assert_int_equal(n, 2);
	for (int i = 0; i < n; i++) {
		const cJSON *cfg = cJSON_GetObjectItem(rows[i], "config");
		const cJSON *reg = cJSON_GetObjectItem(rows[i], "regime");
		const cJSON *fo = cJSON_GetObjectItem(rows[i], "formulas");
		const cJSON *in = cJSON_GetObjectItem(reg, "within_lab_assumptions");
		const char *text = cJSON_GetObjectItem(reg, "text")->valuestring;
		cJSON *f;

		expect_ok("formula --kernel %s --N 256 --json f.json",
			  cJSON_GetObjectItem(cfg, "kernel")->valuestring);
		f = read_json("f.json");
		assert_non_null(f);
		assert_true(
			cJSON_Compare(in, cJSON_GetObjectItem(f, "within_lab_assumptions"), true));
		assert_string_equal(text, cJSON_GetObjectItem(f, "regime")->valuestring);
		assert_true(strlen(text) > 0);
		cJSON_Delete(f);
		assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(fo, "exact"), "arrays_within"));
		/* exact_bytes, then exact_ratio, exact_within and arrays_within empty, lab_bytes,
		 * the three lab comparisons empty, in_lab_regime, the regime */
		snprintf(
			want[i], sizeof(want[i]), ",formula,,,,,%.0f,,,,%.0f,,,,%d,\"%s\"",
			cJSON_GetObjectItem(cJSON_GetObjectItem(fo, "exact"), "bytes")->valuedouble,
			cJSON_GetObjectItem(cJSON_GetObjectItem(fo, "lab"), "bytes")->valuedouble,
			cJSON_IsTrue(in), text);
	}
	/* flash2 without a cache is inside the lab's assumptions at N 256, naive is not */
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(rows[0], "regime"),
						     "within_lab_assumptions")) !=
		    cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(rows[1], "regime"),
						     "within_lab_assumptions")));
	rows_free(rows, n);
	snprintf(path, sizeof(path), "%s/fr/results.csv", tmpdir);
	csv = slurp_text(path);
	for (int i = 0; i < n; i++)
		if (!strstr(csv, want[i]))
			fail_msg("results.csv lacks '%s':\n%s", want[i], csv);
	free(csv);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dead_worker),
		cmocka_unit_test(test_dead_onepass_worker),
		cmocka_unit_test(test_failed_row_retried),
		cmocka_unit_test(test_resume_duplicate_rows),
		cmocka_unit_test(test_resume_other_plan),
		cmocka_unit_test(test_resume_other_plan_no_rows),
		cmocka_unit_test(test_resume_other_revision),
		cmocka_unit_test(test_resume_unrecorded_revision),
		cmocka_unit_test(test_merge_other_revision),
		cmocka_unit_test(test_study_resume_other_revision),
		cmocka_unit_test(test_tables_label_rows),
		cmocka_unit_test(test_table_formula_only),
		cmocka_unit_test(test_formula_rows_regime),
		cmocka_unit_test(test_map_failure_message),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
