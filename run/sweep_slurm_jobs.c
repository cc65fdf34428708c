/*
 * `memsim sweep --slurm N`: the scripts, the sbatch calls and DIR/slurm/jobs.json.
 */

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/report.h"
#include "base/message.h"
#include "base/util.h"
#include "run/slurm_tools.h"
#include "run/sweep_slurm_submit.h"

/* The words of a command line, shell-quoted, into f. */
static void
put_words(FILE *f, int n, char **words)
{
	char *line = report_command_line(n, words);

	fputs(line, f);
	free(line);
}

/* The #SBATCH lines of a script: defaults, which the command line's --slurm-args override. */
static void
put_header(FILE *f, const struct submit *u, const char *what, const char *name, unsigned cpus,
	   uint64_t mem_mib, const char *log)
{
	fprintf(f,
		"#!/bin/sh\n"
		"# Written by memsim sweep --slurm: %s.\n"
		"# The same memsim sweep command again submits the shards not complete\n"
		"# and a new merge.\n"
		"#SBATCH --job-name=%s\n"
		"#SBATCH --cpus-per-task=%u\n"
		"#SBATCH --mem=%lluM\n"
		"#SBATCH --output=%s/%s\n",
		what, name, cpus, (unsigned long long)mem_mib, u->slurm_dir, log);
}

/* DIR/slurm/sweep.sbatch: array task t runs shard i = t + $1 (0 without: the shards past
 * MaxArraySize go in arrays of their own, given their first shard) of N into DIR/shards/i,
 * resuming it. */
static char *
sweep_script(const struct submit *u)
{
	char *text = NULL, jobs[16], *self[] = { (char *)u->self };
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	snprintf(jobs, sizeof(jobs), "%u", u->ro->jobs);
	/* With --threads T a worker's simulation runs T slice threads besides its own. */
	put_header(f, u, "array task t runs shard t + $1 (0 without) of the sweep", "memsim-sweep",
		   u->ro->jobs * (u->p->threads > 1 ? u->p->threads + 1 : 1), u->mem_mib,
		   "sweep-%A_%a.out");
	fprintf(f, "t=${SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}\n"
		   "i=$((t + ${1:-0}))\nexec ");
	put_words(f, 1, self);
	fprintf(f, " sweep --out %s/shards/\"$i\" --jobs %s ", u->dir, jobs);
	put_words(f, (int)u->s->nforward, u->s->forward);
	fprintf(f, " --shard \"$i/%llu\" --resume\n", (unsigned long long)u->s->tasks);
	fclose(f);
	return text;
}

/* DIR/slurm/merge.sbatch: memsim merge of DIR/shards/0 .. N-1 into DIR. */
static char *
merge_script(const struct submit *u)
{
	char *text = NULL, *self[] = { (char *)u->self };
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	put_header(f, u, "the merge of the shards, once the array succeeded", "memsim-merge", 1,
		   1024, "merge-%j.out");
	fprintf(f,
		"set --\n"
		"i=0\n"
		"while [ \"$i\" -lt %llu ]; do\n"
		"\tset -- \"$@\" %s/shards/\"$i\"\n"
		"\ti=$((i + 1))\n"
		"done\n"
		"exec ",
		(unsigned long long)u->s->tasks, u->dir);
	put_words(f, 1, self);
	fprintf(f, " merge --out %s \"$@\"\n", u->dir);
	fclose(f);
	return text;
}

int
sweep_slurm_write_scripts(struct submit *u)
{
	char *sweep = sweep_script(u), *merge = merge_script(u), err[600];
	int rc = write_file_whole_at(u->slurm_fd, u->slurm_dir, "sweep.sbatch", sweep,
				     strlen(sweep), err, sizeof(err));

	if (!rc)
		rc = write_file_whole_at(u->slurm_fd, u->slurm_dir, "merge.sbatch", merge,
					 strlen(merge), err, sizeof(err));
	free(sweep);
	free(merge);
	return rc ? sweep_fail(u->err, u->errlen, -EIO, "sweep: %s", err) : 0;
}

/* "--array=0-3" or "--array=1,3,5-7": the shards to run. Caller frees with free(). */
static char *
array_arg(const uint64_t *todo, size_t n)
{
	char *s = xzalloc(16 + n * 24), *p = s + sprintf(s, "--array=");

	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && todo[j + 1] == todo[j] + 1)
			j++;
		p += sprintf(p, "%s%llu", i ? "," : "", (unsigned long long)todo[i]);
		if (j > i)
			p += sprintf(p, "-%llu", (unsigned long long)todo[j]);
		i = j + 1;
	}
	return s;
}

/* sbatch --parsable [FIRST] (--slurm-args) SCRIPT [ARG]: the job id into id, or 1 after one
 * line (sbatch's own last words). With dry_run, prints the command instead, id dry_id. */
static int
sbatch(struct submit *u, const char *first, const char *script, const char *arg, char *id,
       size_t idlen, const char *dry_id)
{
	const char **args = xzalloc((size_t)(u->nwords + 5) * sizeof(*args));
	char last[600], *out = NULL, **shown = xzalloc((size_t)(u->nwords + 6) * sizeof(*shown));
	int n = 0, rc;

	args[n++] = "--parsable";
	if (first)
		args[n++] = first;
	for (int i = 0; i < u->nwords; i++)
		args[n++] = u->words[i];
	args[n++] = script;
	if (arg)
		args[n++] = arg;
	if (u->s->dry_run) {
		shown[0] = (char *)slurm_tool_name(SLURM_SBATCH);
		memcpy(shown + 1, args, (size_t)n * sizeof(*args));
		printf("would run: ");
		put_words(stdout, n + 1, shown);
		printf("\n");
		snprintf(id, idlen, "%s", dry_id);
		free(shown);
		free(args);
		return 0;
	}
	free(shown);
	rc = slurm_tool_run(&u->tools, SLURM_SBATCH, args, &out, last, sizeof(last));
	free(args);
	if (rc == 0 && out && out[0] >= '0' && out[0] <= '9') {
		snprintf(id, idlen, "%.*s", (int)strspn(out, "0123456789"), out);
		free(out);
		return 0;
	}
	if (rc == 0) {
		sweep_fail(u->err, u->errlen, -EIO, "sweep: %s printed no job id for %s ('%.80s')",
			   slurm_tool_name(SLURM_SBATCH), script, out ? out : "");
		free(out);
		return -EIO;
	}
	free(out);
	/* Interrupted: the caller says so, in one line. */
	if (rc < 0 && slurm_tools_interrupted())
		return -EIO;
	if (rc < 0)
		return sweep_fail(u->err, u->errlen, -EIO, "sweep: %s: submitting %s: %s",
				  slurm_tool_name(SLURM_SBATCH), script, last);
	return sweep_fail(u->err, u->errlen, -EIO, "sweep: %s rejected %s (exit %d): %s",
			  slurm_tool_name(SLURM_SBATCH), script, rc, last[0] ? last : "no message");
}

/* Writes DIR/slurm/jobs.json (whole, renamed into place): the sweep, and each submission with
 * its jobs (the arrays submitted, each with its first shard; "array_job" the first, as
 * before arrays were split), tasks and time, this one last. */
static int
record(struct submit *u, const char *merge)
{
	const cJSON *old = cJSON_GetObjectItem(u->recorded, "submissions");
	cJSON *j = report_manifest_create("memsim sweep --slurm", u->ro->argc, u->ro->argv);
	cJSON *subs = old ? cJSON_Duplicate(old, 1) : cJSON_CreateArray(), *one, *tasks, *args;
	cJSON *arrays;
	char date[32], err[600];
	time_t now = time(NULL);
	struct tm tm;
	int rc;

	cJSON_AddStringToObject(j, "out", u->dir);
	cJSON_AddNumberToObject(j, "tasks", (double)u->s->tasks);
	cJSON_AddNumberToObject(j, "configurations", (double)u->nitems);
	cJSON_AddStringToObject(j, "plan", u->plan);
	cJSON_AddNumberToObject(j, "jobs_per_task", u->ro->jobs);
	cJSON_AddNumberToObject(j, "mem_per_task_mib", (double)u->mem_mib);
	one = cJSON_CreateObject();
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	cJSON_AddStringToObject(one, "time", date);
	if (u->narrays)
		cJSON_AddStringToObject(one, "array_job", u->arrays[0].id);
	else
		cJSON_AddNullToObject(one, "array_job");
	arrays = cJSON_AddArrayToObject(one, "array_jobs");
	for (size_t k = 0; k < u->narrays; k++) {
		cJSON *a = cJSON_CreateObject();

		cJSON_AddStringToObject(a, "job", u->arrays[k].id);
		cJSON_AddNumberToObject(a, "first_shard", (double)u->arrays[k].first);
		cJSON_AddItemToArray(arrays, a);
	}
	tasks = cJSON_AddArrayToObject(one, "tasks_submitted");
	for (size_t i = 0; i < u->nsubmitted; i++)
		cJSON_AddItemToArray(tasks, cJSON_CreateNumber((double)u->todo[i]));
	cJSON_AddStringToObject(one, "merge_job", merge);
	if (u->stale_merge[0])
		cJSON_AddStringToObject(one, "cancelled_merge_job", u->stale_merge);
	args = cJSON_AddArrayToObject(one, "slurm_args");
	for (int i = 0; i < u->nwords; i++)
		cJSON_AddItemToArray(args, cJSON_CreateString(u->words[i]));
	cJSON_AddItemToArray(subs, one);
	cJSON_AddItemToObject(j, "submissions", subs);
	rc = report_write_json_at(u->slurm_fd, u->slurm_dir, "jobs.json", j, err, sizeof(err));
	cJSON_Delete(j);
	u->wrote_jobs |= rc == 0;
	return rc ? sweep_fail(u->err, u->errlen, -EIO, "sweep: %s", err) : 0;
}

/* The superseded merge job goes before its successor is submitted. */
static void
cancel_stale(struct submit *u)
{
	const char *args[] = { u->stale_merge, NULL };
	char last[600], *out = NULL;

	if (!u->stale_merge[0] || u->s->dry_run)
		return;
	if (slurm_tool_run(&u->tools, SLURM_SCANCEL, args, &out, last, sizeof(last)) != 0 &&
	    !slurm_tools_interrupted())
		message_line("sweep: warning: cannot cancel the earlier merge job %s (%s): scancel "
			     "it",
			     u->stale_merge, last);
	free(out);
}

/* Submits todo[from .. to), shards of one block of max_array (from its first shard on), as one
 * array job; records it in u->arrays. Returns 0 or the exit status after one line. */
static int
submit_array(struct submit *u, const char *script, size_t from, size_t to, uint64_t first)
{
	uint64_t *idx = xzalloc((to - from) * sizeof(*idx));
	char offset[24], dry[48], *arr;
	int rc;

	for (size_t i = from; i < to; i++)
		idx[i - from] = u->todo[i] - first;
	arr = array_arg(idx, to - from);
	snprintf(offset, sizeof(offset), "%llu", (unsigned long long)first);
	snprintf(dry, sizeof(dry), "ARRAY_JOB_ID%s%s", u->narrays ? "_" : "",
		 u->narrays ? offset : "");
	rc = sbatch(u, arr, script, first ? offset : NULL, u->arrays[u->narrays].id,
		    sizeof(u->arrays[0].id), dry);
	if (!rc) {
		u->arrays[u->narrays++].first = first;
		u->nsubmitted = to;
		if (!u->s->dry_run)
			printf("submitted array job %s (%s%s%s, of %llu shards) -> %s/shards\n",
			       u->arrays[u->narrays - 1].id, arr, first ? ", shard = task + " : "",
			       first ? offset : "", (unsigned long long)u->s->tasks, u->dir);
	}
	free(arr);
	free(idx);
	return rc;
}

/* Submits the shards in u->todo (if any), as one array, or one array per block of
 * MaxArraySize shards where they pass it, and a merge after them all; records and prints
 * them. An array rejected after others were submitted: those are recorded, with no merge,
 * and the same command again submits the rest once they end. */
int
sweep_slurm_submit_jobs(struct submit *u)
{
	char sweep[4300], merge[4300], merge_id[32], *dep;
	size_t at = 0;
	int rc = 0;

	snprintf(sweep, sizeof(sweep), "%s/sweep.sbatch", u->slurm_dir);
	snprintf(merge, sizeof(merge), "%s/merge.sbatch", u->slurm_dir);
	cancel_stale(u);
	while (at < u->ntodo && !rc) {
		uint64_t first = u->todo[at] / u->max_array * u->max_array;
		size_t to = at;

		while (to < u->ntodo && u->todo[to] < first + u->max_array)
			to++;
		rc = submit_array(u, sweep, at, to, first);
		at = to;
	}
	if (rc) {
		if (u->narrays && !u->s->dry_run)
			record(u, "");
		return rc;
	}
	dep = xzalloc(32 + u->narrays * 33);
	strcpy(dep, "--dependency=afterok");
	for (size_t k = 0; k < u->narrays; k++)
		sprintf(dep + strlen(dep), ":%s", u->arrays[k].id);
	rc = sbatch(u, u->narrays ? dep : NULL, merge, NULL, merge_id, sizeof(merge_id),
		    "ARRAY_JOB_ID");
	if (u->s->dry_run || rc)
		merge_id[0] = '\0';
	if (u->s->dry_run) {
		free(dep);
		return rc;
	}
	if (record(u, merge_id) || rc) {
		free(dep);
		return -EIO;
	}
	printf("submitted merge job %s%s%s%s -> %s; memsim sweep --status %s follows them\n",
	       merge_id, u->narrays ? " (" : "", u->narrays ? dep + strlen("--dependency=") : "",
	       u->narrays ? ")" : "", u->dir, u->dir);
	free(dep);
	return 0;
}
