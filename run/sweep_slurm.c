#include "run/sweep_slurm.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#include "analysis/report.h"
#include "analysis/results.h"
#include "base/message.h"
#include "base/util.h"
#include "run/slurm_tools.h"
#include "run/sweep_slurm_submit.h"
#include "sim/cache.h"

#define SLURM_ARGS_MAX 48
#define TMPFS_MAGIC_NUMBER 0x01021994 /* linux/magic.h TMPFS_MAGIC */

void
sweep_slurm_init(struct sweep_slurm *s)
{
	memset(s, 0, sizeof(*s));
}

void
sweep_slurm_finish(struct sweep_slurm *s)
{
	for (unsigned i = 0; i < s->nforward; i++)
		free(s->forward[i]);
	free(s->forward);
	memset(s, 0, sizeof(*s));
}

void
sweep_slurm_forward(struct sweep_slurm *s, const char *name, const char *value)
{
	char *w = xzalloc(strlen(name) + (value ? strlen(value) : 0) + 4);

	sprintf(w, "--%s%s%s", name, value ? "=" : "", value ? value : "");
	s->forward = xrealloc(s->forward, (s->nforward + 1) * sizeof(*s->forward));
	s->forward[s->nforward++] = w;
}

/* A warning where DIR may not be seen by the compute nodes. */
static void
warn_local(const char *dir)
{
	bool tmpfs = false;
#ifdef __linux__
	struct statfs st;

	tmpfs = statfs(dir, &st) == 0 && (unsigned long)st.f_type == TMPFS_MAGIC_NUMBER;
#endif
	if (tmpfs || strncmp(dir, "/tmp/", 5) == 0 || strcmp(dir, "/tmp") == 0)
		message_line("sweep: warning: %s is %s: compute nodes may not share it (use a "
			     "shared filesystem for --out)",
			     dir, tmpfs ? "on tmpfs" : "under /tmp");
}

/* A --cache-sweep runs a configuration's sizes in one pass only where they share a task: shard i
 * takes items i, i + N, ..., caches outermost, so N must divide the items of each cache. */
static void
warn_onepass(const struct submit *u)
{
	const struct sweep_plan *p = u->p;
	size_t per = p->ncaches ? u->nitems / p->ncaches : 0;
	bool onepass = false;

	for (unsigned g = 0; g < p->ngroups; g++)
		onepass |= p->groups[g].n > 1 && p->groups[g].method != CACHE_ONEPASS_SEPARATE;
	if (!onepass || !p->simulate || p->separate_runs || p->sample_sets > 1 ||
	    per % u->s->tasks == 0)
		return;
	message_line("sweep: warning: --slurm %llu does not divide the %zu configurations of each "
		     "cache: a configuration's --cache-sweep sizes land in different tasks and run "
		     "apart, not in one pass (a --slurm N dividing %zu keeps them together)",
		     (unsigned long long)u->s->tasks, per, per);
}

/* Opens DIR (made when missing) and DIR/slurm, and takes DIR/slurm's lock. */
static int
open_dirs(struct submit *u)
{
	char err[600];
	int fd = outdir_open(u->ro->out, err, sizeof(err));

	if (fd < 0)
		return sweep_fail(u->err, u->errlen, -EIO, "sweep: %s", err);
	close(fd);
	/* The tasks run elsewhere: every path they get is absolute. */
	if (u->ro->out[0] != '/' && !getcwd(u->dir, sizeof(u->dir)))
		return sweep_fail(u->err, u->errlen, -EIO,
				  "sweep: --out %s: cannot make the path absolute", u->ro->out);
	if (u->ro->out[0] == '/')
		u->dir[0] = '\0';
	if (strlen(u->dir) + strlen(u->ro->out) + 2 > 4000)
		return sweep_fail(u->err, u->errlen, -EIO, "sweep: --out %s: the path is too long",
				  u->ro->out);
	if (u->dir[0])
		strcat(u->dir, "/");
	strcat(u->dir, u->ro->out);
	while (strlen(u->dir) > 1 && u->dir[strlen(u->dir) - 1] == '/')
		u->dir[strlen(u->dir) - 1] = '\0';
	/* sbatch reads #SBATCH --output=PATH itself: no quoting there. */
	if (strpbrk(u->dir, " \t\n'\"\\%$`"))
		return sweep_fail(u->err, u->errlen, -EINVAL,
				  "--out %s: a --slurm sweep's directory may not have "
				  "blanks, quotes, '\\', '$', '`' or '%%' in its path",
				  u->dir);
	snprintf(u->slurm_dir, sizeof(u->slurm_dir), "%s/slurm", u->dir);
	u->slurm_fd = outdir_open(u->slurm_dir, err, sizeof(err));
	if (u->slurm_fd < 0)
		return sweep_fail(u->err, u->errlen, -EIO, "sweep: %s", err);
	u->lock = lock_dir(u->slurm_fd, u->slurm_dir, err, sizeof(err));
	if (u->lock < 0)
		return sweep_fail(u->err, u->errlen, -EIO, "sweep: %s", err);
	return 0;
}

/* jobs.json as recorded must be this sweep's: the same plan, the same number of tasks. */
static int
check_recorded(struct submit *u)
{
	char err[600];
	bool missing = false;
	const char *plan;

	u->recorded = report_read_json_at(u->slurm_fd, u->slurm_dir, "jobs.json", &missing, err,
					  sizeof(err));
	if (!u->recorded)
		return missing ? 0 : sweep_fail(u->err, u->errlen, -EIO, "sweep: %s", err);
	plan = results_string(u->recorded, "plan");
	if (results_number(u->recorded, "tasks", -1) != (double)u->s->tasks)
		return sweep_fail(u->err, u->errlen, -EINVAL,
				  "%s/jobs.json records %.0f tasks, not %llu: the same "
				  "--slurm N resumes; another sweep needs another --out",
				  u->slurm_dir, results_number(u->recorded, "tasks", -1),
				  (unsigned long long)u->s->tasks);
	if (strcmp(plan, u->plan) != 0) {
		/* The same plan into where DIR was: a directory moved since, the same sweep. */
		const char *was = results_string(u->recorded, "out");
		char *there = was[0] == '/' ? sweep_plan_command(u->p, was) : NULL;
		bool moved = there && strcmp(plan, there) == 0;

		free(there);
		if (!moved)
			return sweep_fail(u->err, u->errlen, -EINVAL,
					  "%s/jobs.json records another sweep (%s): the same "
					  "options resume it; another sweep needs another --out",
					  u->slurm_dir, plan);
		snprintf(u->moved_from, sizeof(u->moved_from), "%s", was);
	}
	return 0;
}

/* Notes shard i as one of another model revision where its manifest m records good rows of
 * one: its model_revision, or none (a memsim before rows recorded it). */
static void
note_revision(struct submit *u, uint64_t i, const cJSON *m)
{
	double good = results_number(m, "results_summary.runs_done", 0) -
		      results_number(m, "results_summary.runs_failed", 0);
	const char *rev = results_string(m, "model_revision");

	if (good <= 0 || strcmp(rev, report_model_revision()) == 0)
		return;
	if (!u->nother++) {
		u->other_first = i;
		if (rev[0])
			snprintf(u->other_rev, sizeof(u->other_rev), "%s", rev);
		else
			snprintf(u->other_rev, sizeof(u->other_rev),
				 "none recorded, memsim %s: made before rows recorded one",
				 results_string(m, "memsim_version"));
	}
}

/* Notes shard i as one of another build of the plugin where its manifest m records good rows
 * of one: its plugin_hash, or none (a memsim before rows recorded it). */
static void
note_build(struct submit *u, uint64_t i, const cJSON *m)
{
	double good = results_number(m, "results_summary.runs_done", 0) -
		      results_number(m, "results_summary.runs_failed", 0);
	const char *hash = results_string(m, "plugin_hash");

	if (!u->p->plugin.p || good <= 0 || strcmp(hash, u->p->plugin_hash) == 0)
		return;
	if (!u->nbuild++) {
		u->build_first = i;
		snprintf(u->build_was, sizeof(u->build_was), "%s", hash);
	}
}

/* The --out of sweep command cmd where it names a directory ".../shards/i", written into buf;
 * else buf as it is (DIR/shards/i). Returns buf. */
static const char *
shard_dir_of(const char *cmd, uint64_t i, char *buf, size_t len)
{
	static const char head[] = "memsim sweep --out /";
	char tail[48];
	size_t n, t;

	if (strncmp(cmd, head, sizeof(head) - 2) != 0 || cmd[sizeof(head) - 2] != '/')
		return buf;
	cmd += sizeof(head) - 2;
	n = strcspn(cmd, " ");
	t = (size_t)snprintf(tail, sizeof(tail), "/shards/%llu", (unsigned long long)i);
	if (n < len && n > t && strncmp(cmd + n - t, tail, t) == 0)
		snprintf(buf, len, "%.*s", (int)n, cmd);
	return buf;
}

/* Shard i's manifest, where one is: another sweep's is refused; *complete when it says so;
 * a shard of another model revision noted. */
static int
check_shard(struct submit *u, uint64_t i, bool *complete)
{
	char path[4400], shard[4300], ran[4300], err[600], *want, *full;
	const char *got;
	cJSON *m;

	*complete = false;
	snprintf(shard, sizeof(shard), "%s/shards/%llu", u->dir, (unsigned long long)i);
	snprintf(path, sizeof(path), "%s/manifest.json", shard);
	if (access(path, F_OK) != 0)
		return 0;
	m = report_read_json(path, err, sizeof(err));
	if (!m)
		return sweep_fail(u->err, u->errlen, -EIO, "sweep: %s", err);
	got = results_string(m, "sweep_command");
	/* The shard's plan into the directory it ran in: DIR/shards/i, or where DIR was then. */
	snprintf(ran, sizeof(ran), "%s", shard);
	want = sweep_plan_command(u->p, shard_dir_of(got, i, ran, sizeof(ran)));
	full = xzalloc(strlen(want) + 64);
	sprintf(full, "%s", want);
	if (u->s->tasks > 1)
		sprintf(full + strlen(full), " --shard %llu/%llu", (unsigned long long)i,
			(unsigned long long)u->s->tasks);
	*complete = results_true(m, "results_summary.complete");
	if (strcmp(got, full) != 0) {
		sweep_fail(u->err, u->errlen, -EEXIST,
			   "sweep: %s holds another sweep's shard (%s): the same options resume "
			   "it; another sweep needs another --out",
			   shard, got);
		free(want);
		free(full);
		cJSON_Delete(m);
		return -EEXIST;
	}
	note_revision(u, i, m);
	note_build(u, i, m);
	free(want);
	free(full);
	cJSON_Delete(m);
	return 0;
}

/* The last submission recorded, or NULL. */
static const cJSON *
last_submission(const cJSON *recorded)
{
	const cJSON *subs = cJSON_GetObjectItem(recorded, "submissions");
	int n = cJSON_GetArraySize(subs);

	return n > 0 ? cJSON_GetArrayItem(subs, n - 1) : NULL;
}

/* Where Slurm cannot say whether jobs of the last submission still run (squeue cannot reach
 * the controller, sacct has no accounting), nothing is submitted: a shard run twice at once
 * would meet its own lock. */
static int
refuse_unknown(const struct submit *u, const char *jobs, const char *why)
{
	/* Interrupted while squeue ran: the caller says so, in one line. */
	if (slurm_tools_interrupted())
		return -EIO;
	return sweep_fail(u->err, u->errlen, -EIO,
			  "sweep: cannot tell whether %s still queued or running (%s): nothing "
			  "submitted; run this again once Slurm answers (memsim sweep --status %s "
			  "shows what it says)",
			  jobs, why, u->dir);
}

/* The last submission's jobs must have ended before shards are submitted again (a shard run
 * twice at once would meet its own lock); a merge still pending is superseded. */
static int
check_active(struct submit *u)
{
	const cJSON *last = last_submission(u->recorded);
	const char *merge = results_string(last, "merge_job");
	char(*st)[SLURM_STATE_LEN] = xzalloc((u->s->tasks + 1) * sizeof(*st)), from[1300];
	char array[SWEEP_SLURM_MAX_ARRAYS * 24], jobs[sizeof(array) + 64];
	int narrays = sweep_slurm_sub_arrays(last, array, sizeof(array));
	unsigned active = 0;
	bool answered = true;

	if (!last || !u->tools.path[SLURM_SQUEUE][0]) {
		if (last)
			message_line(
				"sweep: warning: %s not found: cannot tell whether jobs %s and %s "
				"still run",
				slurm_tool_name(SLURM_SQUEUE), array, merge);
		free(st);
		return 0;
	}
	if (narrays) {
		answered = sweep_slurm_sub_states(&u->tools, last, u->s->tasks, st, from,
						  sizeof(from));
		for (uint64_t i = 0; i < u->s->tasks; i++)
			active += slurm_state_active(st[i]);
	}
	if (active && u->moved_from[0]) {
		free(st);
		/* Their scripts name the old paths: they would write there, not here. */
		return sweep_fail(u->err, u->errlen, -EIO,
				  "sweep: %s was moved from %s since array job%s %s was "
				  "submitted, and %u of its tasks are still queued or running, "
				  "writing to %s: scancel %s (or move the directory back and wait "
				  "for them), then run this again",
				  u->dir, u->moved_from, narrays > 1 ? "s" : "", array, active,
				  u->moved_from, array);
	}
	if (active) {
		free(st);
		return sweep_fail(u->err, u->errlen, -EIO,
				  "sweep: array job%s %s still ha%s %u tasks queued or running: "
				  "wait for them (memsim sweep --status %s), or scancel %s, then "
				  "run this again",
				  narrays > 1 ? "s" : "", array, narrays > 1 ? "ve" : "s", active,
				  u->dir, array);
	}
	if (!answered) {
		free(st);
		snprintf(jobs, sizeof(jobs), "array job%s %s ha%s tasks", narrays > 1 ? "s" : "",
			 array, narrays > 1 ? "ve" : "s");
		return refuse_unknown(u, jobs, from);
	}
	if (merge[0]) {
		if (!slurm_job_states(&u->tools, merge, 0, st, from, sizeof(from))) {
			free(st);
			snprintf(jobs, sizeof(jobs), "merge job %s is", merge);
			return refuse_unknown(u, jobs, from);
		}
		if (strcmp(st[0], "PENDING") == 0)
			snprintf(u->stale_merge, sizeof(u->stale_merge), "%s", merge);
		else if (slurm_state_active(st[0])) {
			sweep_fail(u->err, u->errlen, -EIO,
				   "sweep: merge job %s is %s: wait for it, then run this again",
				   merge, st[0]);
			free(st);
			return -EIO;
		}
	}
	free(st);
	return 0;
}

/* Whether DIR holds a complete merge of the shards. */
static bool
merged(const struct submit *u)
{
	char path[4300], err[600];
	cJSON *m;
	bool ok;

	snprintf(path, sizeof(path), "%s/manifest.json", u->dir);
	if (access(path, F_OK) != 0)
		return false;
	m = report_read_json(path, err, sizeof(err));
	ok = m && strcmp(results_string(m, "experiment"), "memsim merge") == 0 &&
	     results_true(m, "complete");
	cJSON_Delete(m);
	return ok;
}

/* Which shards are not complete; another sweep's shard is refused. With
 * --rerun-other-revisions a complete shard of another model revision runs again too. */
static int
scan_shards(struct submit *u)
{
	int rc = 0;

	u->todo = xzalloc((size_t)u->s->tasks * sizeof(*u->todo));
	for (uint64_t i = 0; i < u->s->tasks && !rc; i++) {
		uint64_t before = u->nother + u->nbuild;
		bool complete;

		rc = check_shard(u, i, &complete);
		if (!complete || (u->nother + u->nbuild > before && u->ro->rerun_other))
			u->todo[u->ntodo++] = i;
	}
	return rc;
}

/* The build a shard's rows record, for messages. */
static const char *
build_of(const struct submit *u)
{
	return u->build_was[0] ? u->build_was : "none recorded: made before rows recorded one";
}

/* Shards of another build of the plugin, as check_revisions() takes those of another model
 * revision. */
static int
check_builds(struct submit *u, bool done)
{
	if (!u->nbuild || (done && !u->ro->rerun_other))
		return 0;
	if (done)
		return sweep_fail(u->err, u->errlen, -EINVAL,
				  "%s holds the merged sweep, of another build of plugin %s (%s) "
				  "than the file there now (%s): to compute it again with this "
				  "build, sweep into another --out",
				  u->dir, u->p->plugin.path, build_of(u), u->p->plugin_hash);
	if (!u->ro->rerun_other)
		return sweep_fail(
			u->err, u->errlen, -EINVAL,
			"%s/shards/%llu%s holds rows of plugin %s made by another build "
			"of it (%s), not the file there now (%s): the plugin changed; "
			"sweep into another --out, or pass --rerun-other-revisions to run "
			"them again (the old rows kept in each shard's superseded.json)",
			u->dir, (unsigned long long)u->build_first,
			u->nbuild > 1 ? " (and others)" : "", u->p->plugin.path, build_of(u),
			u->p->plugin_hash);
	return 0;
}

/* Shards of another model revision: refused up front (each task would refuse its shard), or
 * with --rerun-other-revisions run again, unless DIR holds their merge already: a new merge
 * cannot replace it. A sweep complete and merged is left as it is. The same for shards of
 * another build of the plugin. */
static int
check_revisions(struct submit *u)
{
	bool done = merged(u);

	if (!u->nother || (done && !u->ro->rerun_other))
		return check_builds(u, done);
	if (done)
		return sweep_fail(u->err, u->errlen, -EINVAL,
				  "%s holds the merged sweep, of model revision (%s), not this "
				  "memsim's (%s): to compute it again with this memsim, sweep into "
				  "another --out",
				  u->dir, u->other_rev, report_model_revision());
	if (!u->ro->rerun_other)
		return sweep_fail(u->err, u->errlen, -EINVAL,
				  "%s/shards/%llu%s holds rows of another model revision (%s) than "
				  "this memsim's (%s): sweep into another --out, or pass "
				  "--rerun-other-revisions to run them again (the old rows kept in "
				  "each shard's superseded.json)",
				  u->dir, (unsigned long long)u->other_first,
				  u->nother > 1 ? " (and others)" : "", u->other_rev,
				  report_model_revision());
	return check_builds(u, done);
}

/* How many tasks an array may have here (MaxArraySize): N past it goes in several arrays, up
 * to SWEEP_SLURM_MAX_ARRAYS of them; more, or arrays disabled, is refused before anything is
 * made. */
static int
check_max_array(struct submit *u)
{
	char why[600], what[64];
	uint64_t n = u->s->tasks, arrays;

	u->max_array = slurm_max_array(&u->tools, what, sizeof(what), why, sizeof(why));
	if (u->max_array == 0)
		return sweep_fail(u->err, u->errlen, -EIO,
				  "sweep: this cluster's MaxArraySize is 0 (%s show config): job "
				  "arrays are disabled, and --slurm submits its shards as arrays; "
				  "run memsim sweep --shard i/n in jobs of your own",
				  slurm_tool_name(SLURM_SCONTROL));
	arrays = (n + u->max_array - 1) / u->max_array;
	if (arrays > SWEEP_SLURM_MAX_ARRAYS)
		return sweep_fail(u->err, u->errlen, -EINVAL,
				  "--slurm %llu needs %llu job arrays under this cluster's %s "
				  "tasks an array, more than %d: --slurm %llu at most",
				  (unsigned long long)n, (unsigned long long)arrays, what,
				  SWEEP_SLURM_MAX_ARRAYS,
				  (unsigned long long)u->max_array * SWEEP_SLURM_MAX_ARRAYS);
	/* Said after the refusals, so that each of them is one line. */
	if (why[0] && n > u->max_array)
		snprintf(u->arrays_note, sizeof(u->arrays_note),
			 "warning: cannot read MaxArraySize (%s): taking Slurm's default %d, the "
			 "%llu shards in %llu arrays",
			 why, SLURM_DEFAULT_MAX_ARRAY, (unsigned long long)n,
			 (unsigned long long)arrays);
	else if (arrays > 1)
		snprintf(u->arrays_note, sizeof(u->arrays_note),
			 "--slurm %llu passes this cluster's %s tasks an array: the shards go as "
			 "%llu arrays, the merge after all of them",
			 (unsigned long long)n, what, (unsigned long long)arrays);
	return 0;
}

/* The checks and the submission, once the plan's items are known. */
static int
submit_checked(struct submit *u)
{
	int rc;
	char err[600];

	if (u->s->tasks > u->nitems)
		return sweep_fail(u->err, u->errlen, -EINVAL,
				  "--slurm %llu: more tasks than the plan's %zu "
				  "configurations",
				  (unsigned long long)u->s->tasks, u->nitems);
	u->nwords = u->s->args ? sweep_slurm_split(u->s->args, SLURM_ARGS_MAX, &u->words, err,
						   sizeof(err))
			       : 0;
	if (u->nwords < 0)
		return sweep_fail(u->err, u->errlen, -EINVAL, "%s", err);
	ssize_t n = readlink("/proc/self/exe", u->self, sizeof(u->self) - 1);
	if (n <= 0)
		return sweep_fail(u->err, u->errlen, -EIO,
				  "sweep: cannot find the memsim executable (/proc/self/exe)");
	u->self[n] = '\0';
	if (!u->s->dry_run && !u->tools.path[SLURM_SBATCH][0])
		return sweep_fail(u->err, u->errlen, -EIO,
				  "sweep: %s not found%s (install slurm-client, or use --dry-run)",
				  slurm_tool_name(SLURM_SBATCH),
				  getenv("MEMSIM_SBATCH") ? "" : " on PATH");
	if ((rc = check_max_array(u)) || (rc = open_dirs(u)))
		return rc;
	u->plan = sweep_plan_command(u->p, u->dir);
	if ((rc = check_recorded(u)) || (rc = scan_shards(u)) || (rc = check_revisions(u)))
		return rc;
	if (!u->s->dry_run && (rc = check_active(u)))
		return rc;
	if (slurm_tools_interrupted())
		return -EIO; /* said by the caller */
	if (!u->ntodo && merged(u)) {
		printf("all %llu shards are complete and merged into %s: nothing to submit\n",
		       (unsigned long long)u->s->tasks, u->dir);
		if (u->nother)
			message_line("sweep: note: its rows are of model revision (%s), not this "
				     "memsim's (%s)",
				     u->other_rev, report_model_revision());
		if (u->nbuild)
			message_line("sweep: note: its rows are of another build of plugin %s (%s) "
				     "than the file there now (%s)",
				     u->p->plugin.path, build_of(u), u->p->plugin_hash);
		return 0;
	}
	/* After the refusals, so that each of them is one line. */
	warn_local(u->dir);
	warn_onepass(u);
	if (u->arrays_note[0])
		message_line("sweep: %s", u->arrays_note);
	if (u->moved_from[0])
		message_line("sweep: note: %s was at %s when last submitted (its jobs.json): the "
			     "scripts now name %s",
			     u->dir, u->moved_from, u->dir);
	if ((rc = sweep_slurm_write_scripts(u)))
		return rc;
	if (!u->ntodo)
		message_line("sweep: all %llu shards are complete: submitting the merge alone",
			     (unsigned long long)u->s->tasks);
	else if (u->ntodo < u->s->tasks)
		message_line("sweep: %zu of %llu shards are not complete: submitting those",
			     u->ntodo, (unsigned long long)u->s->tasks);
	return sweep_slurm_submit_jobs(u);
}

/* After SIGINT or SIGTERM (slurm_tools_init() holds them): one line saying what was
 * submitted, a failure (exit 1), as an interrupted xcheck, bench or sweep. */
static int
interrupted(const struct submit *u, int sig)
{
	if (u->wrote_jobs)
		return sweep_fail(u->err, u->errlen, -EINTR,
				  "sweep: interrupted by signal %d: the jobs submitted are "
				  "recorded in %s/jobs.json; the same command again submits the "
				  "rest",
				  sig, u->slurm_dir);
	return sweep_fail(u->err, u->errlen, -EINTR,
			  "sweep: interrupted by signal %d: nothing submitted", sig);
}

int
sweep_slurm_submit(const struct sweep_slurm *s, const struct sweep_plan *p,
		   const struct sweep_run_options *ro, char *err, size_t errlen)
{
	struct submit u = {
		.s = s, .p = p, .ro = ro, .slurm_fd = -1, .lock = -1, .err = err, .errlen = errlen
	};
	struct sweep_item *items;
	int rc;

	err[0] = '\0';
	if (sweep_plan_check(p, err, errlen))
		return -EINVAL;
	items = sweep_check_items(p, &u.nitems, err, errlen);
	if (!items)
		return -EINVAL;
	u.mem_mib = sweep_slurm_task_mem_mib(p, items, u.nitems, ro->jobs);
	free(items);
	slurm_tools_init(&u.tools);
	rc = submit_checked(&u);
	slurm_tools_finish(&u.tools);
	if (slurm_tools_interrupted())
		rc = interrupted(&u, slurm_tools_interrupted());
	if (u.lock >= 0)
		close(u.lock);
	if (u.slurm_fd >= 0)
		close(u.slurm_fd);
	for (int i = 0; i < u.nwords; i++)
		free(u.words[i]);
	free(u.words);
	free(u.plan);
	free(u.todo);
	cJSON_Delete(u.recorded);
	return rc;
}
