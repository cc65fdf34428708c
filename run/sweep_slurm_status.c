/*
 * `memsim sweep --status DIR`: each shard's rows and its task's state, the merge's.
 */

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "analysis/results.h"
#include "base/message.h"
#include "base/util.h"
#include "run/slurm_tools.h"
#include "run/sweep_slurm.h"

/* Array k of submission sub: its job id and first shard. A jobs.json from before
 * "array_jobs" has one, its "array_job", at shard 0. Returns false past the last. */
static bool
array_at(const cJSON *sub, int k, const char **id, uint64_t *first)
{
	const cJSON *arrays = cJSON_GetObjectItem(sub, "array_jobs"), *a;

	if (!arrays) {
		*id = results_string(sub, "array_job");
		*first = 0;
		return k == 0 && (*id)[0];
	}
	a = cJSON_GetArrayItem(arrays, k);
	*id = results_string(a, "job");
	*first = (uint64_t)results_number(a, "first_shard", 0);
	return a && (*id)[0];
}

int
sweep_slurm_sub_arrays(const cJSON *sub, char *ids, size_t len)
{
	const char *id;
	uint64_t first;
	int k = 0;

	ids[0] = '\0';
	for (; array_at(sub, k, &id, &first); k++)
		snprintf(ids + strlen(ids), len - strlen(ids), "%s%s", k ? " " : "", id);
	return k;
}

/* The array of submission sub holding shard i: the one with the last first shard at or below
 * it (arrays start at multiples of MaxArraySize). Its id, or NULL; *first its first shard. */
static const char *
holder(const cJSON *sub, uint64_t i, uint64_t *first)
{
	const char *id, *best = NULL;
	uint64_t f;

	*first = 0;
	for (int k = 0; array_at(sub, k, &id, &f); k++)
		if (f <= i && (!best || f >= *first)) {
			best = id;
			*first = f;
		}
	return best;
}

bool
sweep_slurm_task_job(const cJSON *sub, uint64_t i, char *job, size_t joblen)
{
	uint64_t first;
	const char *id = holder(sub, i, &first);

	if (id)
		snprintf(job, joblen, "%s_%llu", id, (unsigned long long)(i - first));
	return id != NULL;
}

bool
sweep_slurm_sub_states(struct slurm_tools *t, const cJSON *sub, uint64_t n,
		       char (*states)[SLURM_STATE_LEN], char *from, size_t fromlen)
{
	char(*one)[SLURM_STATE_LEN] = xzalloc((n + 1) * sizeof(*one));
	const char *id;
	uint64_t first, of;
	bool answered = true;
	char *why = NULL; /* the first unanswered array's from */

	for (uint64_t i = 0; i <= n; i++)
		states[i][0] = '\0';
	from[0] = '\0';
	for (int k = 0; array_at(sub, k, &id, &first); k++) {
		if (!slurm_job_states(t, id, n, one, from, fromlen) && answered) {
			answered = false;
			why = xstrdup(from);
		}
		/* Task j of this array is shard first + j, where no later array holds it. */
		for (uint64_t j = 0; first + j < n; j++)
			if (holder(sub, first + j, &of) && of == first)
				snprintf(states[first + j], SLURM_STATE_LEN, "%s", one[j]);
	}
	free(one);
	if (why)
		snprintf(from, fromlen, "%s", why);
	free(why);
	return answered;
}

static int
count_good(const cJSON *r, unsigned long line, void *ctx)
{
	(void)line;
	*(long *)ctx += cJSON_GetObjectItem(r, "error") == NULL;
	return 0;
}

/* What --status knows of the jobs: each submission's states, asked once. */
struct status {
	struct slurm_tools tools;
	const cJSON *subs;
	uint64_t n;
	char (**states)[SLURM_STATE_LEN]; /* per submission, NULL until asked */
	char from[1300];                  /* where the last answer came from, or why none */
	bool any;                         /* some state came from Slurm */
};

/* The state of shard i's latest task, its job ("ID_i") into job; "" where none is known. */
static const char *
task_state(struct status *st, uint64_t i, char *job, size_t joblen)
{
	for (int k = cJSON_GetArraySize(st->subs) - 1; k >= 0; k--) {
		const cJSON *sub = cJSON_GetArrayItem(st->subs, k), *t;

		cJSON_ArrayForEach (t, cJSON_GetObjectItem(sub, "tasks_submitted")) {
			if (!cJSON_IsNumber(t) || t->valuedouble != (double)i ||
			    !sweep_slurm_task_job(sub, i, job, joblen))
				continue;
			if (!st->states[k]) {
				st->states[k] = xzalloc((st->n + 1) * sizeof(*st->states[k]));
				sweep_slurm_sub_states(&st->tools, sub, st->n, st->states[k],
						       st->from, sizeof(st->from));
			}
			st->any |= st->states[k][i][0] != '\0';
			return st->states[k][i];
		}
	}
	snprintf(job, joblen, "-");
	return "";
}

/* One row per shard: rows done of its share, whether its manifest says complete, its task. */
static void
print_shards(struct status *st, const char *dir, uint64_t configs)
{
	printf("%-6s %-11s %-9s %-14s %s\n", "shard", "rows", "complete", "task", "state");
	for (uint64_t i = 0; i < st->n; i++) {
		char path[4300], err[600], job[64];
		uint64_t share = configs > i ? (configs - i + st->n - 1) / st->n : 0;
		long good = 0;
		const char *state = task_state(st, i, job, sizeof(job));
		cJSON *m;
		int rc;

		snprintf(path, sizeof(path), "%s/shards/%llu/results.json", dir,
			 (unsigned long long)i);
		rc = results_read(path, count_good, &good, NULL, err, sizeof(err));
		/* A file that cannot be read (not a regular file, a line that is not JSON) is
		 * said, not counted as rows. */
		if (rc && rc != -ENOENT)
			message_line("sweep: --status: %s", err);
		snprintf(path, sizeof(path), "%s/shards/%llu/manifest.json", dir,
			 (unsigned long long)i);
		m = access(path, F_OK) == 0 ? report_read_json(path, err, sizeof(err)) : NULL;
		if (!m && access(path, F_OK) == 0)
			message_line("sweep: --status: %s", err);
		snprintf(err, sizeof(err), "%ld/%llu", good, (unsigned long long)share);
		printf("%-6llu %-11s %-9s %-14s %s\n", (unsigned long long)i,
		       rc == -ENOENT ? "not started"
		       : rc          ? "unreadable"
				     : err,
		       results_true(m, "results_summary.complete") ? "yes" : "no", job,
		       state[0] ? state : "-");
		cJSON_Delete(m);
	}
}

int
sweep_slurm_status(const char *dir, char *msg, size_t msglen)
{
	char path[4300], err[600], job[64] = "-", merge_from[1300] = "";
	char merge_state[1][SLURM_STATE_LEN] = { "" };
	struct status st = { .n = 0 };
	const cJSON *last;
	double tasks, configs;
	cJSON *j, *m;
	int sig;

	msg[0] = '\0';
	snprintf(path, sizeof(path), "%s/slurm/jobs.json", dir);
	j = report_read_json(path, err, sizeof(err));
	if (!j)
		return sweep_fail(msg, msglen, -EIO,
				  "sweep: --status: %s (not a memsim sweep --slurm directory)",
				  err);
	tasks = results_number(j, "tasks", 0);
	configs = results_number(j, "configurations", 0);
	if (tasks < 1 || tasks > SWEEP_SLURM_MAX_TASKS || configs < 0 ||
	    configs > 9007199254740992.0 || floor(tasks) != tasks || floor(configs) != configs) {
		cJSON_Delete(j);
		return sweep_fail(
			msg, msglen, -EIO,
			"sweep: --status: %s: no whole number of tasks and configurations "
			"recorded",
			path);
	}
	st.n = (uint64_t)tasks;
	st.subs = cJSON_GetObjectItem(j, "submissions");
	st.states = xzalloc(((size_t)cJSON_GetArraySize(st.subs) + 1) * sizeof(*st.states));
	slurm_tools_init(&st.tools);
	printf("%s: %llu shards, %.0f configurations\n", dir, (unsigned long long)st.n, configs);
	print_shards(&st, dir, (uint64_t)configs);
	last = cJSON_GetArrayItem(st.subs, cJSON_GetArraySize(st.subs) - 1);
	if (results_string(last, "merge_job")[0]) {
		snprintf(job, sizeof(job), "%s", results_string(last, "merge_job"));
		slurm_job_states(&st.tools, job, 0, merge_state, merge_from, sizeof(merge_from));
		st.any |= merge_state[0][0] != '\0';
	}
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = access(path, F_OK) == 0 ? report_read_json(path, err, sizeof(err)) : NULL;
	printf("%-6s %-11s %-9s %-14s %s\n", "merge",
	       m ? results_true(m, "complete") ? "merged" : "partial" : "not yet", "-", job,
	       merge_state[0][0] ? merge_state[0] : "-");
	if (st.any)
		printf("states from %s\n", st.from[0] ? st.from : merge_from);
	else
		printf("no job states from Slurm (%s): rows and completeness from the files "
		       "alone\n",
		       st.from[0]      ? st.from
		       : merge_from[0] ? merge_from
				       : "no jobs submitted");
	for (int k = 0; k < cJSON_GetArraySize(st.subs); k++)
		free(st.states[k]);
	free(st.states);
	slurm_tools_finish(&st.tools);
	cJSON_Delete(m);
	cJSON_Delete(j);
	/* After the signal no squeue or sacct ran: the states are not all there. */
	if ((sig = slurm_tools_interrupted())) {
		return sweep_fail(msg, msglen, -EINTR, "sweep: --status interrupted by signal %d",
				  sig);
	}
	return 0;
}
