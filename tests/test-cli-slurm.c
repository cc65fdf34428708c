/*
 * `memsim sweep --slurm N` with stand-ins for Slurm's programs (issue 21): shell scripts named
 * by MEMSIM_SBATCH, MEMSIM_SQUEUE, MEMSIM_SACCT, MEMSIM_SCANCEL and MEMSIM_SCONTROL that record
 * their arguments and answer what a case sets. The scripts memsim writes are run here by hand
 * as Slurm would run them (SLURM_ARRAY_TASK_ID=i sh sweep.sbatch), so the shards and the merge
 * are real.
 * tests/test-slurm.sh runs the same against a real Slurm.
 */

#include "config.h"

#include <cJSON.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/proc.h"
#include "tests/unit.h"

#define TMPDIR_NAME "cli-slurm"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

#define PLAN "--kernel naive,flash2 --N 64,128 --d 16"

static char env[2048];

/* Writes an executable stand-in tmpdir/name running body. */
static void
stand_in(const char *name, const char *body)
{
	char path[700], text[2200];

	snprintf(text, sizeof(text), "#!/bin/sh\n%s\n", body);
	write_file(name, text);
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_int_equal(chmod(path, 0755), 0);
}

/* The stand-ins: sbatch records its words in brackets, one call a line, and prints ids from 101
 * ("ID;cluster", as --parsable does); squeue prints squeue.txt, or without one fails as
 * squeue does for a job it no longer holds; squeue-down cannot reach the controller; sacct
 * has no accounting; scancel records its words. */
static void
stand_ins(void)
{
	char body[2048];

	snprintf(body, sizeof(body),
		 "printf '[%%s]' \"$@\" >>%s/sbatch.log; echo >>%s/sbatch.log\n"
		 "n=$(cat %s/sbatch.next 2>/dev/null || echo 101)\n"
		 "echo $((n + 1)) >%s/sbatch.next\necho \"$n;cluster\"",
		 tmpdir, tmpdir, tmpdir, tmpdir);
	stand_in("fake-sbatch", body);
	snprintf(body, sizeof(body),
		 "echo \"$*\" >>%s/squeue.log\ncat %s/squeue.txt 2>/dev/null && exit 0\n"
		 "echo 'slurm_load_jobs error: Invalid job id specified' >&2\nexit 1",
		 tmpdir, tmpdir);
	stand_in("fake-squeue", body);
	stand_in("fake-squeue-down", "echo 'slurm_load_jobs error: Unable to contact slurm "
				     "controller (connect failure)' >&2\nexit 1");
	stand_in("fake-sacct", "echo 'sacct: error: Slurm accounting storage is disabled' >&2\n"
			       "exit 1");
	snprintf(body, sizeof(body), "echo \"$*\" >>%s/scancel.log", tmpdir);
	stand_in("fake-scancel", body);
	/* scontrol show config prints scontrol.txt, or fails as with no slurm.conf. */
	snprintf(body, sizeof(body),
		 "[ \"$*\" = 'show config' ] && cat %s/scontrol.txt 2>/dev/null && exit 0\n"
		 "echo 'scontrol: error: failed to fetch config' >&2\nexit 1",
		 tmpdir);
	stand_in("fake-scontrol", body);
	stand_in("fake-sbatch-noid", "echo 'Submitted batch job'");
	stand_in("fake-sbatch-rejects",
		 "echo 'sbatch: error: Batch job submission failed: Invalid partition name "
		 "specified' >&2\nexit 1");
	snprintf(env, sizeof(env),
		 "MEMSIM_SBATCH=%s/fake-sbatch MEMSIM_SQUEUE=%s/fake-squeue "
		 "MEMSIM_SACCT=%s/fake-sacct MEMSIM_SCANCEL=%s/fake-scancel "
		 "MEMSIM_SCONTROL=%s/fake-scontrol",
		 tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
	memsim_env = env;
	sh("rm -f sbatch.log sbatch.next squeue.log squeue.txt scancel.log scontrol.txt");
}

/* The text of tmpdir/name ("" when missing); caller frees with free(). */
static char *
text_of(const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return slurp_text(path);
}

/* Runs shard i's task of dir as Slurm would. */
static void
run_task(const char *dir, int i)
{
	assert_int_equal(sh("SLURM_ARRAY_TASK_ID=%d sh %s/slurm/sweep.sbatch 2>/dev/null", i, dir),
			 0);
}

/* Runs task t of the array of dir's shards from first on, as Slurm would (sbatch gave the
 * script first as its argument). */
static void
run_task_from(const char *dir, int t, int first)
{
	assert_int_equal(
		sh("SLURM_ARRAY_TASK_ID=%d sh %s/slurm/sweep.sbatch %d 2>/dev/null", t, dir, first),
		0);
}

static int
lines_in(const char *name)
{
	char *t = text_of(name);
	int n = 0;

	for (char *c = t; *c; c++)
		n += *c == '\n';
	free(t);
	return n;
}

/* --dry-run writes both scripts, prints the two sbatch commands, submits nothing (no sbatch
 * needed); the scripts run as Slurm would run them make the shards and the merge. */
static void
test_dry_run_scripts(void **state)
{
	struct result r;
	char *sweep, *merge;

	(void)state;
	memsim_env = "MEMSIM_SBATCH=/nonexistent/sbatch";
	r = memsim("sweep --out dry " PLAN " --slurm 2 --dry-run");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "would run: /nonexistent/sbatch --parsable --array=0-1 "));
	assert_non_null(strstr(r.out, "/dry/slurm/sweep.sbatch\n"));
	assert_non_null(strstr(r.out, "--parsable --dependency=afterok:ARRAY_JOB_ID "));
	assert_non_null(strstr(r.out, "/dry/slurm/merge.sbatch\n"));
	result_free(&r);
	assert_int_equal(sh("test ! -e dry/slurm/jobs.json"), 0);
	sweep = text_of("dry/slurm/sweep.sbatch");
	merge = text_of("dry/slurm/merge.sbatch");
	print_commented(sweep);
	assert_non_null(strstr(sweep, "#SBATCH --cpus-per-task=1\n"));
	assert_non_null(strstr(sweep, "#SBATCH --mem="));
	assert_non_null(strstr(sweep, "#SBATCH --job-name=memsim-sweep\n"));
	assert_non_null(strstr(sweep, MEMSIM_BIN " sweep --out /"));
	assert_non_null(strstr(sweep,
			       "/dry/shards/\"$i\" --jobs 1 --kernel=naive,flash2 --N=64,128 "
			       "--d=16 --shard \"$i/2\" --resume\n"));
	assert_non_null(strstr(merge, MEMSIM_BIN " merge --out /"));
	free(sweep);
	free(merge);
	run_task("dry", 0);
	run_task("dry", 1);
	assert_int_equal(sh("sh dry/slurm/merge.sbatch >/dev/null 2>&1"), 0);
	assert_int_equal(lines_in("dry/results.json"), 4);
}

/* The submission: the array, then the merge after it, --slurm-args split as a shell would and
 * given to both before the script; jobs.json records the ids, tasks and time. */
static void
test_submit(void **state)
{
	struct result r;
	char *log, *script;
	cJSON *j, *sub;

	(void)state;
	stand_ins();
	r = memsim("sweep --out sub " PLAN " --jobs 3 --slurm 3 --slurm-args \"-p debug "
		   "--time=10 --comment='a b' --mem=2G\"");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "submitted array job 101 (--array=0-2, of 3 shards)"));
	assert_non_null(strstr(r.out, "submitted merge job 102 (afterok:101)"));
	result_free(&r);
	log = text_of("sbatch.log");
	print_commented(log);
	assert_non_null(strstr(log, "[--parsable][--array=0-2][-p][debug][--time=10][--comment=a "
				    "b][--mem=2G]["));
	assert_non_null(strstr(log,
			       "/sub/slurm/sweep.sbatch]\n[--parsable][--dependency=afterok:101]"
			       "[-p][debug][--time=10][--comment=a b][--mem=2G]["));
	assert_non_null(strstr(log, "/sub/slurm/merge.sbatch]\n"));
	free(log);
	script = text_of("sub/slurm/sweep.sbatch");
	assert_non_null(strstr(script, "#SBATCH --cpus-per-task=3\n"));
	assert_non_null(strstr(script, " --jobs 3 "));
	free(script);
	j = read_json("sub/slurm/jobs.json");
	assert_non_null(j);
	assert_int_equal(cJSON_GetObjectItem(j, "tasks")->valueint, 3);
	assert_int_equal(cJSON_GetObjectItem(j, "configurations")->valueint, 4);
	sub = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "submissions"), 0);
	assert_string_equal(cJSON_GetObjectItem(sub, "array_job")->valuestring, "101");
	assert_string_equal(cJSON_GetObjectItem(sub, "merge_job")->valuestring, "102");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(sub, "tasks_submitted")), 3);
	assert_non_null(cJSON_GetObjectItem(sub, "time"));
	cJSON_Delete(j);
}

/* Again on the same DIR: only the shards not complete, as an array of those indices, and a new
 * merge (the old one, pending, cancelled); then the merge alone; then nothing. Tasks still
 * queued or running are waited for. */
static void
test_resubmit_unfinished(void **state)
{
	struct result r;
	char *log;
	cJSON *j;

	(void)state;
	stand_ins();
	expect_ok("sweep --out re " PLAN " --slurm 3");
	run_task("re", 0);
	run_task("re", 2);
	/* A task still running: nothing is submitted. */
	write_file("squeue.txt", "101_1 RUNNING\n101_0 COMPLETED\n");
	expect_error("sweep --out re " PLAN " --slurm 3", 1,
		     "array job 101 still has 1 tasks queued or running");
	write_file("squeue.txt", "101_1 CANCELLED\n102 PENDING\n");
	sh("rm -f sbatch.log");
	r = memsim("sweep --out re " PLAN " --slurm 3");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "1 of 3 shards are not complete"));
	result_free(&r);
	log = text_of("sbatch.log");
	assert_non_null(strstr(log, "[--parsable][--array=1]["));
	assert_non_null(strstr(log, "[--parsable][--dependency=afterok:103]["));
	free(log);
	log = text_of("scancel.log");
	assert_string_equal(log, "102\n");
	free(log);
	j = read_json("re/slurm/jobs.json");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(j, "submissions")), 2);
	cJSON_Delete(j);
	/* Every shard complete: the merge alone, with no dependency. */
	run_task("re", 1);
	sh("rm -f sbatch.log squeue.txt");
	expect_ok("sweep --out re " PLAN " --slurm 3");
	log = text_of("sbatch.log");
	assert_int_equal(lines_in("sbatch.log"), 1);
	assert_null(strstr(log, "--array"));
	assert_null(strstr(log, "--dependency"));
	free(log);
	/* Merged: nothing to submit. */
	assert_int_equal(sh("sh re/slurm/merge.sbatch >/dev/null 2>&1"), 0);
	sh("rm -f sbatch.log");
	r = memsim("sweep --out re " PLAN " --slurm 3");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "complete and merged"));
	assert_int_equal(sh("test ! -e sbatch.log"), 0);
	result_free(&r);
}

/* Where Slurm cannot say whether the last submission's jobs still run (squeue cannot reach the
 * controller, sacct has no accounting), the command again refuses in one line naming each
 * command and its error, and submits nothing; once squeue answers, or says it no longer holds
 * the jobs, it submits. The same for a merge submitted alone. */
static void
test_resubmit_unanswered(void **state)
{
	char down[2400], *log;

	(void)state;
	stand_ins();
	snprintf(down, sizeof(down), "%s MEMSIM_SQUEUE=%s/fake-squeue-down", env, tmpdir);
	expect_ok("sweep --out un " PLAN " --slurm 2");
	run_task("un", 0);
	memsim_env = down;
	expect_error("sweep --out un " PLAN " --slurm 2", 1,
		     "sweep: cannot tell whether array job 101 has tasks still queued or running "
		     "(squeue: slurm_load_jobs error: Unable to contact slurm controller (connect "
		     "failure); sacct: sacct: error: Slurm accounting storage is disabled): "
		     "nothing submitted; run this again once Slurm answers");
	assert_int_equal(lines_in("sbatch.log"), 2);
	memsim_env = env;
	expect_ok("sweep --out un " PLAN " --slurm 2");
	log = text_of("sbatch.log");
	assert_non_null(strstr(log, "[--parsable][--array=1]["));
	free(log);
	run_task("un", 1);
	expect_ok("sweep --out un " PLAN " --slurm 2");
	assert_int_equal(lines_in("sbatch.log"), 5); /* and the merge alone, 105 */
	memsim_env = down;
	expect_error("sweep --out un " PLAN " --slurm 2", 1,
		     "sweep: cannot tell whether merge job 105 is still queued or running (squeue: "
		     "slurm_load_jobs error: Unable to contact slurm controller");
	assert_int_equal(lines_in("sbatch.log"), 5);
}

/* Another plan or another N on a DIR with jobs.json or shards is refused, one line. */
static void
test_config_change(void **state)
{
	(void)state;
	stand_ins();
	expect_ok("sweep --out cc " PLAN " --slurm 2");
	expect_error("sweep --out cc --kernel naive,flash2 --N 64,256 --d 16 --slurm 2", 2,
		     "records another sweep");
	expect_error("sweep --out cc " PLAN " --slurm 4", 2, "records 2 tasks, not 4");
	/* No jobs.json (a dry run), a shard of another plan. */
	expect_ok("sweep --out cc2 " PLAN " --slurm 2 --dry-run");
	run_task("cc2", 0);
	expect_error("sweep --out cc2 " PLAN " --no-flush --slurm 2 --dry-run", 2,
		     "holds another sweep's shard");
}

/* Makes the rows and the manifest of tmpdir/dir those of model revision "memsim 0.0.1 model 7",
 * as an older memsim would have left them. */
static void
forge_revision(const char *dir)
{
	assert_int_equal(sh("sed -i 's/\"model_revision\":[[:space:]]*\"[^\"]*\"/"
			    "\"model_revision\": \"memsim 0.0.1 model 7\"/' %s/results.json "
			    "%s/manifest.json && grep -q 'memsim 0.0.1 model 7' %s/manifest.json",
			    dir, dir, dir),
			 0);
}

/* A shard of another model revision (an older memsim's rows): the command again refuses up
 * front in one line naming the shard and both revisions, where each task would refuse its
 * shard; with --rerun-other-revisions it submits that shard again, complete or not, and its
 * task runs the rows again (the old ones to superseded.json). A sweep complete and merged of
 * another revision is left as it is, saying so; --rerun-other-revisions does not replace its
 * merge. */
static void
test_other_revision(void **state)
{
	struct result r;
	char *log;

	(void)state;
	stand_ins();
	expect_ok("sweep --out rv " PLAN " --slurm 2");
	run_task("rv", 0);
	run_task("rv", 1);
	forge_revision("rv/shards/1");
	r = memsim("sweep --out rv " PLAN " --slurm 2");
	print_commented(r.err);
	assert_int_equal(r.rc, 2);
	assert_true(one_line_with(r.err, "/rv/shards/1 holds rows of another model revision "
					 "(memsim 0.0.1 model 7) than this memsim's (memsim "));
	assert_non_null(strstr(r.err, "pass --rerun-other-revisions to run them again"));
	result_free(&r);
	sh("rm -f sbatch.log");
	expect_ok("sweep --out rv " PLAN " --slurm 2 --rerun-other-revisions");
	log = text_of("sbatch.log");
	assert_non_null(strstr(log, "[--parsable][--array=1]["));
	free(log);
	log = text_of("rv/slurm/sweep.sbatch");
	assert_non_null(strstr(log, " --rerun-other-revisions "));
	free(log);
	run_task("rv", 1);
	assert_int_equal(lines_in("rv/shards/1/superseded.json"), 2);
	assert_int_equal(sh("! grep -q 'memsim 0.0.1 model 7' rv/shards/1/results.json"), 0);
	assert_int_equal(sh("sh rv/slurm/merge.sbatch >/dev/null 2>&1"), 0);
	assert_int_equal(lines_in("rv/results.json"), 4);

	/* Complete and merged, all of an older memsim. */
	forge_revision("rv/shards/0");
	forge_revision("rv/shards/1");
	forge_revision("rv");
	sh("rm -f sbatch.log");
	r = memsim("sweep --out rv " PLAN " --slurm 2");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "complete and merged"));
	assert_true(one_line_with(r.err, "note: its rows are of model revision (memsim 0.0.1 "
					 "model 7), not this memsim's"));
	result_free(&r);
	expect_error("sweep --out rv " PLAN " --slurm 2 --rerun-other-revisions", 2,
		     "/rv holds the merged sweep, of model revision (memsim 0.0.1 model 7), not "
		     "this memsim's");
	assert_int_equal(sh("test ! -e sbatch.log"), 0);
}

/* A sweep directory moved after submission: while tasks of its last array may still run (their
 * scripts name the old paths, where they would write), the command refuses in one line saying
 * so and what to do; once they ended it resubmits from the new place (a note says the move),
 * the shards and the merge complete there, a shard finished before the move counts, and
 * another plan is still refused. */
static void
test_moved_dir(void **state)
{
	struct result r;
	char *log, want[900];
	cJSON *j;

	(void)state;
	stand_ins();
	expect_ok("sweep --out mv1 " PLAN " --slurm 2");
	run_task("mv1", 0);
	assert_int_equal(sh("mv mv1 mv2"), 0);
	write_file("squeue.txt", "101_0 COMPLETED\n101_1 PENDING\n102 PENDING\n");
	r = memsim("sweep --out mv2 " PLAN " --slurm 2");
	print_commented(r.err);
	assert_int_equal(r.rc, 1);
	snprintf(want, sizeof(want),
		 "/mv2 was moved from %s/mv1 since array job 101 was submitted, and 1 of its "
		 "tasks are still queued or running, writing to %s/mv1: scancel 101 (or move the "
		 "directory back and wait for them), then run this again",
		 tmpdir, tmpdir);
	assert_true(one_line_with(r.err, want));
	result_free(&r);
	assert_int_equal(lines_in("sbatch.log"), 2); /* nothing more submitted */
	write_file("squeue.txt", "101_0 COMPLETED\n101_1 CANCELLED\n102 PENDING\n");
	sh("rm -f sbatch.log");
	r = memsim("sweep --out mv2 " PLAN " --slurm 2");
	print_commented(r.err);
	assert_int_equal(r.rc, 0);
	snprintf(want, sizeof(want), "/mv2 was at %s/mv1 when last submitted", tmpdir);
	assert_non_null(strstr(r.err, want));
	result_free(&r);
	log = text_of("sbatch.log");
	assert_non_null(strstr(log, "[--parsable][--array=1]["));
	assert_non_null(strstr(log, "/mv2/slurm/sweep.sbatch]"));
	free(log);
	log = text_of("scancel.log");
	assert_string_equal(log, "102\n");
	free(log);
	log = text_of("mv2/slurm/sweep.sbatch");
	assert_non_null(strstr(log, "/mv2/shards/\"$i\" "));
	assert_null(strstr(log, "/mv1/"));
	free(log);
	j = read_json("mv2/slurm/jobs.json");
	assert_non_null(strstr(cJSON_GetObjectItem(j, "out")->valuestring, "/mv2"));
	cJSON_Delete(j);
	run_task("mv2", 1);
	assert_int_equal(sh("sh mv2/slurm/merge.sbatch >/dev/null 2>&1"), 0);
	assert_int_equal(lines_in("mv2/results.json"), 4);
	assert_int_equal(sh("test ! -e mv1"), 0);
	sh("rm -f squeue.txt");
	r = memsim("sweep --out mv2 " PLAN " --slurm 2");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "complete and merged"));
	result_free(&r);
	expect_error("sweep --out mv2 --kernel naive,flash2 --N 64,256 --d 16 --slurm 2", 2,
		     "records another sweep");
}

#define MAX3 "Configuration data as of 2026-11-26T19:00:00\nMaxArraySize            = 3\n"

/* More shards than the cluster's MaxArraySize (3, from scontrol show config) go as several
 * arrays, array k's task j running shard 3k + j (its script given 3k), the merge afterok on
 * all: the sweep completes. jobs.json records each array and its first shard; --status names
 * each shard's task; the command again splits the shards left the same way. */
static void
test_max_array(void **state)
{
	struct result r;
	char *log;
	cJSON *j, *arrays;

	(void)state;
	stand_ins();
	write_file("scontrol.txt", MAX3 "SchedulerParameters     = (null)\n");
	r = memsim("sweep --out ma " PLAN " --slurm 4");
	print_commented(r.out);
	print_commented(r.err);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "submitted array job 101 (--array=0-2, of 4 shards)"));
	assert_non_null(strstr(
		r.out, "submitted array job 102 (--array=0, shard = task + 3, of 4 shards)"));
	assert_non_null(strstr(r.out, "submitted merge job 103 (afterok:101:102)"));
	assert_non_null(strstr(r.err, "--slurm 4 passes"));
	assert_true(
		one_line_with(strstr(r.err, "--slurm 4 passes"),
			      "--slurm 4 passes this cluster's MaxArraySize 3 tasks an array: the "
			      "shards go as 2 arrays, the merge after all of them"));
	result_free(&r);
	log = text_of("sbatch.log");
	assert_non_null(strstr(log, "[--parsable][--array=0-2]["));
	assert_non_null(strstr(log, "/ma/slurm/sweep.sbatch]\n[--parsable][--array=0]["));
	assert_non_null(strstr(log, "/ma/slurm/sweep.sbatch][3]\n"));
	assert_non_null(strstr(log, "[--parsable][--dependency=afterok:101:102]["));
	free(log);
	j = read_json("ma/slurm/jobs.json");
	arrays = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "submissions"), 0),
				     "array_jobs");
	assert_int_equal(cJSON_GetArraySize(arrays), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(arrays, 1), "job")->valuestring,
			    "102");
	assert_int_equal(
		cJSON_GetObjectItem(cJSON_GetArrayItem(arrays, 1), "first_shard")->valueint, 3);
	cJSON_Delete(j);
	/* The tasks as Slurm runs them: shard 2's is cancelled. */
	run_task_from("ma", 0, 0);
	run_task_from("ma", 1, 0);
	run_task_from("ma", 0, 3);
	assert_int_equal(lines_in("ma/shards/3/results.json"), 1);
	write_file("squeue.txt", "101_0 COMPLETED\n101_1 COMPLETED\n101_2 CANCELLED\n"
				 "102_0 COMPLETED\n103 PENDING\n");
	r = memsim("sweep --status ma");
	print_commented(r.out);
	assert_non_null(strstr(r.out, "\n2      not started no        101_2          CANCELLED\n"));
	assert_non_null(strstr(r.out, "\n3      1/1         yes       102_0          COMPLETED\n"));
	result_free(&r);
	/* Shard 2 again, in the first block: one array; then every shard, merged. */
	sh("rm -f sbatch.log");
	expect_ok("sweep --out ma " PLAN " --slurm 4");
	log = text_of("sbatch.log");
	assert_non_null(strstr(log, "[--parsable][--array=2]["));
	assert_non_null(strstr(log, "[--parsable][--dependency=afterok:104]["));
	assert_int_equal(lines_in("sbatch.log"), 2);
	free(log);
	run_task_from("ma", 2, 0);
	assert_int_equal(sh("sh ma/slurm/merge.sbatch >/dev/null 2>&1"), 0);
	assert_int_equal(lines_in("ma/results.json"), 4);
}

/* SchedulerParameters' max_array_tasks smaller than MaxArraySize bounds an array too; no
 * answer from scontrol takes Slurm's default 1001, saying so where N passes it; past 64
 * arrays, or with arrays disabled, the sweep is refused before anything is made. */
static void
test_max_array_limits(void **state)
{
	struct result r;

	(void)state;
	stand_ins();
	write_file("scontrol.txt", MAX3 "SchedulerParameters     = "
					"bf_continue,max_array_tasks=2,default_queue_depth=100\n");
	r = memsim("sweep --out mt " PLAN " --slurm 4 --dry-run");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "--parsable --array=0-1 "));
	assert_non_null(strstr(r.out, "/mt/slurm/sweep.sbatch 2\n"));
	assert_non_null(strstr(r.out, "--dependency=afterok:ARRAY_JOB_ID:ARRAY_JOB_ID_2 "));
	assert_non_null(strstr(r.err, "passes this cluster's max_array_tasks 2 tasks an array"));
	result_free(&r);
	sh("rm -f scontrol.txt");
	r = memsim("sweep --out md --kernel naive --N 1:251:+1 --d 16,32,64,128 --formula-only "
		   "--slurm 1002 --dry-run");
	assert_int_equal(r.rc, 0);
	assert_true(
		one_line_with(strstr(r.err, "cannot read MaxArraySize"),
			      "fake-scontrol show config: scontrol: error: failed to fetch "
			      "config): taking Slurm's default 1001, the 1002 shards in 2 arrays"));
	assert_non_null(strstr(r.out, "--parsable --array=0-1000 "));
	assert_non_null(strstr(r.out, "/md/slurm/sweep.sbatch 1001\n"));
	result_free(&r);
	write_file("scontrol.txt", "MaxArraySize = 1\n");
	expect_error("sweep --out mx --kernel naive --N 1:65:+1 --d 16 --formula-only --slurm 65",
		     2,
		     "--slurm 65 needs 65 job arrays under this cluster's MaxArraySize 1 tasks an "
		     "array, more than 64: --slurm 64 at most");
	assert_int_equal(sh("test ! -e mx"), 0);
	write_file("scontrol.txt", "MaxArraySize = 0\n");
	expect_error("sweep --out mx " PLAN " --slurm 2", 1, "this cluster's MaxArraySize is 0 (");
	assert_int_equal(sh("test ! -e mx && test ! -e sbatch.log"), 0);
}

/* --status: each shard's rows done/total and its task's state, the merge's; where Slurm knows
 * nothing, the files alone, saying so. */
static void
test_status(void **state)
{
	struct result r;

	(void)state;
	stand_ins();
	expect_ok("sweep --out st " PLAN " --slurm 2");
	run_task("st", 0);
	write_file("squeue.txt", "101_0 COMPLETED\n101_1 PENDING\n102 PENDING\n");
	r = memsim("sweep --status st");
	print_commented(r.out);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n0      2/2         yes       101_0          COMPLETED\n"));
	assert_non_null(strstr(r.out, "\n1      not started no        101_1          PENDING\n"));
	assert_non_null(strstr(r.out, "\nmerge  not yet     -         102            PENDING\n"));
	assert_non_null(strstr(r.out, "states from squeue"));
	result_free(&r);
	/* squeue no longer lists them, sacct has no accounting: the files alone. */
	sh("rm -f squeue.txt");
	r = memsim("sweep --status st");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n0      2/2         yes       101_0          -\n"));
	assert_non_null(strstr(r.out, "accounting storage is disabled"));
	assert_non_null(strstr(r.out, "from the files alone"));
	result_free(&r);
	expect_error("sweep --status nowhere", 1, "not a memsim sweep --slurm directory");
	expect_error("sweep --status st --N 64", 2, "--status DIR takes no other options");
}

/* A FIFO where --status or a resubmission reads (jobs.json, a shard's results.json or
 * manifest.json) is refused naming it, never waited on (the timeout says a hang): --status
 * says the shard's file cannot be read and goes on with the others; the submission refuses in
 * one line. jobs.json's tasks and configurations must be whole numbers. */
static void
test_status_fifo(void **state)
{
	char line[2200];
	struct result r;

	(void)state;
	stand_ins();
	expect_ok("sweep --out sf " PLAN " --slurm 2");
	run_task("sf", 0);
	run_task("sf", 1);
	snprintf(line, sizeof(line), "%s timeout 20", env);
	memsim_env = line;
	assert_int_equal(sh("rm sf/shards/0/results.json && mkfifo sf/shards/0/results.json && "
			    "rm sf/shards/1/manifest.json && mkfifo sf/shards/1/manifest.json"),
			 0);
	r = memsim("sweep --status sf");
	print_commented(r.out);
	print_commented(r.err);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\n0      unreadable  yes "));
	assert_non_null(strstr(r.out, "\n1      2/2         no  "));
	assert_non_null(strstr(r.err, "sf/shards/0/results.json is not a regular file: refused\n"));
	assert_non_null(
		strstr(r.err, "sf/shards/1/manifest.json is not a regular file: refused\n"));
	result_free(&r);
	expect_error("sweep --out sf " PLAN " --slurm 2", 1,
		     "sf/shards/1/manifest.json is not a regular file: refused");
	assert_int_equal(sh("cp sf/slurm/jobs.json jobs.json.was && rm sf/slurm/jobs.json && "
			    "mkfifo sf/slurm/jobs.json"),
			 0);
	expect_error("sweep --status sf", 1, "sf/slurm/jobs.json is not a regular file: refused");
	assert_int_equal(sh("rm sf/slurm/jobs.json && sed 's/\"tasks\":[[:space:]]*2/"
			    "\"tasks\": 1.5/' jobs.json.was >sf/slurm/jobs.json && "
			    "grep -q 1.5 sf/slurm/jobs.json && rm jobs.json.was"),
			 0);
	expect_error("sweep --status sf", 1, "no whole number of tasks and configurations");
	memsim_env = env;
}

/* Each error one line, exit 2 for usage and 1 for the rest; /tmp a warning only. */
static void
test_errors(void **state)
{
	char line[1200];
	struct result r;

	(void)state;
	memsim_env = "PATH=/nonexistent";
	expect_error("sweep --out e " PLAN " --slurm 2", 1,
		     "sbatch not found on PATH (install slurm-client, or use --dry-run)");
	snprintf(line, sizeof(line), "MEMSIM_SBATCH=%s/fake-sbatch-rejects", tmpdir);
	stand_ins();
	memsim_env = line;
	/* After the warning where the DIR is under /tmp: the error's one line is the last. */
	r = memsim("sweep --out e " PLAN " --slurm 2 --slurm-args '-p nope'");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "sbatch-rejects rejected "));
	assert_true(
		one_line_with(strstr(r.err, "sbatch-rejects rejected "),
			      "/e/slurm/sweep.sbatch (exit 1): sbatch: error: Batch job submission "
			      "failed: Invalid partition name specified"));
	result_free(&r);
	snprintf(line, sizeof(line), "MEMSIM_SBATCH=%s/fake-sbatch-noid", tmpdir);
	r = memsim("sweep --out e " PLAN " --slurm 2");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "fake-sbatch-noid printed no job id for "));
	result_free(&r);
	memsim_env = env;
	expect_error("sweep --out e " PLAN " --slurm 2 --shard 0/2", 2, "--slurm makes the shards");
	expect_error("sweep --out e " PLAN " --slurm 2 --resume", 2, "--slurm makes the shards");
	expect_error("sweep --out e " PLAN " --slurm 0", 2, "--slurm: '0' is not 1 to 10000");
	expect_error("sweep --out e " PLAN " --slurm 10001", 2, "is not 1 to 10000");
	expect_error("sweep --out e " PLAN " --slurm 5", 2, "more tasks than the plan's 4");
	expect_error("sweep --out e " PLAN " --slurm 2 --slurm-args \"-p 'x\"", 2,
		     "--slurm-args: unterminated quote");
	expect_error("sweep --out e " PLAN " --dry-run", 2, "go with --slurm N");
	/* A DIR under /tmp works, with a warning. */
	if (strncmp(tmpdir, "/tmp/", 5) == 0) {
		r = memsim("sweep --out tmpwarn " PLAN " --slurm 2 --dry-run");
		assert_int_equal(r.rc, 0);
		assert_true(one_line_with(r.err, "is under /tmp: compute nodes may not share it"));
		result_free(&r);
	}
}

/* The --mem of dir's sweep.sbatch, in MiB. */
static long
mem_of(const char *dir)
{
	char name[300], *t, *m;
	long mib;

	snprintf(name, sizeof(name), "%s/slurm/sweep.sbatch", dir);
	t = text_of(name);
	m = strstr(t, "#SBATCH --mem=");
	assert_non_null(m);
	mib = strtol(m + strlen("#SBATCH --mem="), NULL, 10);
	free(t);
	return mib;
}

/* A task's --mem: the largest configuration's arrays and cache models for each worker, plus a
 * margin; nothing but the margin for the formulas alone. */
static void
test_mem_estimate(void **state)
{
	long one, two, formula;

	(void)state;
	memsim_env = "";
	expect_ok("sweep --out mem1 --kernel naive --N 64,4096 --d 64 --slurm 1 --dry-run");
	expect_ok(
		"sweep --out mem2 --kernel naive --N 64,4096 --d 64 --slurm 1 --jobs 2 --dry-run");
	expect_ok("sweep --out mem3 --kernel naive --N 4096 --d 64 --formula-only --slurm 1 "
		  "--dry-run");
	one = mem_of("mem1");
	two = mem_of("mem2");
	formula = mem_of("mem3");
	print_message("# --mem %ldM, with --jobs 2 %ldM, formulas only %ldM\n", one, two, formula);
	/* naive at N = 4096, d = 64: Q, K, V, O and the 4096 x 4096 scores, 64 MiB of them. */
	assert_true(one - 256 >= 64 + 3);
	assert_true(two - 256 >= 2 * (one - 256) - 1);
	assert_int_equal(formula, 256);
	/* --threads: a computing run keeps one model (its values split by head), a trace-only
	 * run one a slice thread besides the feed's */
	expect_ok("sweep --out mem4 --kernel naive --N 4096 --d 64 --cache h100-50m --slurm 1 "
		  "--dry-run");
	expect_ok("sweep --out mem5 --kernel naive --N 4096 --d 64 --cache h100-50m --threads 4 "
		  "--slurm 1 --dry-run");
	expect_ok("sweep --out mem6 --kernel naive --N 4096 --d 64 --cache h100-50m --trace-only "
		  "--slurm 1 --dry-run");
	expect_ok("sweep --out mem7 --kernel naive --N 4096 --d 64 --cache h100-50m --trace-only "
		  "--threads 4 --slurm 1 --dry-run");
	print_message("# h100-50m: %ldM, --threads 4 %ldM; trace-only %ldM, --threads 4 %ldM\n",
		      mem_of("mem4"), mem_of("mem5"), mem_of("mem6"), mem_of("mem7"));
	assert_int_equal(mem_of("mem5"), mem_of("mem4"));
	assert_true(mem_of("mem7") - 256 >= 5 * (mem_of("mem6") - 256) - 5);
}

/* A --cache-sweep's sizes of one configuration share a task (one pass) only where --slurm N
 * divides the configurations of each cache: a warning otherwise. */
static void
test_onepass_warning(void **state)
{
	struct result r;

	(void)state;
	memsim_env = "";
	r = memsim("sweep --out op3 --kernel flash2 --N 256,512 --d 16 --cache "
		   "L1=32K:8:64,L2=1M:16:64 --cache-sweep L2=256K:1M:x2 --slurm 3 --dry-run");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "--slurm 3 does not divide the 2 configurations of each "
				      "cache"));
	result_free(&r);
	r = memsim("sweep --out op2 --kernel flash2 --N 256,512 --d 16 --cache "
		   "L1=32K:8:64,L2=1M:16:64 --cache-sweep L2=256K:1M:x2 --slurm 2 --dry-run");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "does not divide"));
	result_free(&r);
	/* Task 0 of 2 runs its configuration's three sizes in one pass. */
	run_task("op2", 0);
	assert_int_equal(sh("grep -c '\"method\":\"stack\",\"level\":\"L2\",\"sizes\":3' "
			    "op2/shards/0/results.json | grep -qx 3"),
			 0);
}

/* Starts memsim args (argv after "memsim") in tmpdir with the stand-ins, but sbatch and squeue
 * the ones named, and TMPDIR=tmpdir/tmp; stdout and stderr to int.out and int.err. Once a
 * stand-in has written int.pid (it blocks after), sends sig; returns memsim's exit status
 * (128 + the signal that ended it) and the stand-in's pid in *blocked. */
static int
interrupt(char *const args[], const char *sbatch, const char *squeue, int sig, pid_t *blocked)
{
	static const char *const vars[] = { "MEMSIM_SBATCH",  "MEMSIM_SQUEUE",   "MEMSIM_SACCT",
					    "MEMSIM_SCANCEL", "MEMSIM_SCONTROL", "TMPDIR" };
	const char *names[] = {
		sbatch, squeue, "fake-sacct", "fake-scancel", "fake-scontrol", "tmp"
	};
	char path[700], *pid_text = NULL;
	int status;
	pid_t m;

	sh("rm -rf tmp int.pid && mkdir tmp");
	fflush(NULL);
	m = fork();
	assert_true(m >= 0);
	if (m == 0) {
		int out = chdir(tmpdir) ? -1 : open("int.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int err = open("int.err", O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (out < 0 || err < 0)
			_exit(99);
		dup2(out, STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", tmpdir, names[i]);
			setenv(vars[i], path, 1);
		}
		execv(MEMSIM_BIN, args);
		_exit(98);
	}
	snprintf(path, sizeof(path), "%s/int.pid", tmpdir);
	for (int i = 0; i < 1000 && !(pid_text && *pid_text); i++) {
		free(pid_text);
		sleep_ms(10);
		pid_text = slurp_text(path);
	}
	*blocked = pid_text ? (pid_t)strtol(pid_text, NULL, 10) : 0;
	free(pid_text);
	assert_true(*blocked > 0);
	kill(m, sig);
	assert_int_equal(waitpid(m, &status, 0), m);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The last line of tmpdir/name; caller frees with free(). */
static char *
last_line_of(const char *name)
{
	char *t = text_of(name), *nl;

	while (strlen(t) && t[strlen(t) - 1] == '\n')
		t[strlen(t) - 1] = '\0';
	nl = strrchr(t, '\n');
	if (nl)
		memmove(t, nl + 1, strlen(nl + 1) + 1);
	return t;
}

/* SIGTERM or SIGINT while sbatch runs (a stand-in that blocks), or squeue under --status: the
 * program is stopped and waited for, the temporary directory of their output is removed, one
 * line says what was submitted, and the exit status is 1 (as an interrupted xcheck or bench).
 * A submission interrupted after its first array records that array in jobs.json. */
static void
test_interrupted(void **state)
{
	char *sweep[] = { "memsim",       "sweep", "--out",  "in",  "--kernel",
			  "naive,flash2", "--N",   "64,128", "--d", "16",
			  "--slurm",      "4",     NULL };
	char *status[] = { "memsim", "sweep", "--status", "in", NULL };
	char *line;
	pid_t blocked;
	cJSON *j;

	(void)state;
	stand_ins();
	stand_in("sbatch-blocks", "echo $$ >int.pid.tmp && mv int.pid.tmp int.pid\nexec sleep 60");
	/* The first call answers, the second blocks. */
	stand_in("sbatch-second-blocks",
		 "[ -e sbatch.next ] && exec ./sbatch-blocks\necho 102 >sbatch.next\n"
		 "echo '101;cluster'");
	assert_int_equal(interrupt(sweep, "sbatch-blocks", "fake-squeue", SIGTERM, &blocked), 1);
	line = last_line_of("int.err");
	assert_string_equal(line, "memsim: sweep: interrupted by signal 15: nothing submitted");
	free(line);
	assert_false(proc_running(blocked));
	assert_int_equal(sh("test -z \"$(ls -A tmp)\" && test ! -e in/slurm/jobs.json"), 0);

	write_file("scontrol.txt", MAX3);
	sh("rm -rf in");
	assert_int_equal(interrupt(sweep, "sbatch-second-blocks", "fake-squeue", SIGINT, &blocked),
			 1);
	line = last_line_of("int.err");
	assert_non_null(strstr(line, "memsim: sweep: interrupted by signal 2: the jobs submitted "
				     "are recorded in "));
	assert_non_null(strstr(line, "/in/slurm/jobs.json; the same command again submits the "
				     "rest"));
	free(line);
	assert_false(proc_running(blocked));
	assert_int_equal(sh("test -z \"$(ls -A tmp)\""), 0);
	j = read_json("in/slurm/jobs.json");
	assert_non_null(j);
	assert_string_equal(
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "submissions"), 0),
				    "array_job")
			->valuestring,
		"101");
	cJSON_Delete(j);

	/* Standard output closed after the first line: the writes fail, the submission goes
	 * on and is recorded, the directory goes, and memsim does not exit 0. */
	stand_in("sbatch-slow", "n=$(cat sbatch.next 2>/dev/null || echo 101)\n"
				"echo $((n + 1)) >sbatch.next\n"
				"[ \"$n\" -gt 101 ] && sleep 0.3\necho \"$n;cluster\"");
	sh("rm -f sbatch.next && mkdir -p tmp");
	assert_int_equal(sh("{ TMPDIR=%s/tmp %s MEMSIM_SBATCH=%s/sbatch-slow %s sweep --out pp "
			    "--kernel naive,flash2 --N 64,128 --d 16 --slurm 4 2>/dev/null; "
			    "echo $? >pp.rc; } | head -c 1 >/dev/null",
			    tmpdir, env, tmpdir, MEMSIM_BIN),
			 0);
	assert_int_equal(sh("test -z \"$(ls -A tmp)\" && ! grep -qx 0 pp.rc && "
			    "grep -q '\"merge_job\":.*\"103\"' pp/slurm/jobs.json"),
			 0);

	assert_int_equal(interrupt(status, "fake-sbatch", "sbatch-blocks", SIGTERM, &blocked), 1);
	line = last_line_of("int.err");
	assert_string_equal(line, "memsim: sweep: --status interrupted by signal 15");
	free(line);
	assert_false(proc_running(blocked));
	assert_int_equal(sh("test -z \"$(ls -A tmp)\" && rm -rf tmp in pp pp.rc int.*"), 0);
}

/* --slurm-args is split as a shell splits words, with no shell. */
static void
test_split_words(void **state)
{
	(void)state;
	stand_ins();
	expect_ok("sweep --out sp " PLAN " --slurm 2 --slurm-args \"-A 'my acct' "
		  "--comment=\\\"x\\\\\\\"y\\\" a\\\\ b '\\$HOME'\"");
	{
		char *log = text_of("sbatch.log");

		print_commented(log);
		assert_non_null(strstr(log, "[-A][my acct][--comment=x\"y][a b][$HOME]"));
		free(log);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dry_run_scripts),
		cmocka_unit_test(test_submit),
		cmocka_unit_test(test_resubmit_unfinished),
		cmocka_unit_test(test_resubmit_unanswered),
		cmocka_unit_test(test_config_change),
		cmocka_unit_test(test_other_revision),
		cmocka_unit_test(test_moved_dir),
		cmocka_unit_test(test_max_array),
		cmocka_unit_test(test_max_array_limits),
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_status_fifo),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_split_words),
		cmocka_unit_test(test_interrupted),
		cmocka_unit_test(test_mem_estimate),
		cmocka_unit_test(test_onepass_warning),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
