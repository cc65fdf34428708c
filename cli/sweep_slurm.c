#include "cli/sweep_slurm.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#include "analysis/report.h"
#include "analysis/results.h"
#include "cli/commands.h"
#include "cli/slurm_tools.h"
#include "kernels/attn.h"
#include "sim/cache.h"
#include "sim/spec.h"
#include "sim/util.h"

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

/* One word of text from *p on (past blanks) into out; *p after it. Returns 1 for a word, 0
 * at the end, -1 for an unterminated quote. */
static int
next_word(const char **p, char *out)
{
	const char *c = *p + strspn(*p, " \t\n");
	char quote = 0;

	if (!*c)
		return 0;
	for (; *c && (quote || !strchr(" \t\n", *c)); c++) {
		if (quote == '\'' && *c != '\'') {
			*out++ = *c;
		} else if (*c == quote) {
			quote = 0;
		} else if (!quote && (*c == '\'' || *c == '"')) {
			quote = *c;
		} else if (*c == '\\' && c[1] && (!quote || strchr("\"\\$`", c[1]))) {
			*out++ = *++c;
		} else {
			*out++ = *c;
		}
	}
	*out = '\0';
	*p = c;
	return quote ? -1 : 1;
}

int
sweep_slurm_split(const char *text, unsigned max, char ***words, char *err, size_t errlen)
{
	char *word = xzalloc(strlen(text) + 1);
	const char *p = text;
	int n = 0, r;

	*words = NULL;
	while ((r = next_word(&p, word)) == 1 && (unsigned)n < max) {
		*words = xrealloc(*words, (size_t)(n + 1) * sizeof(**words));
		(*words)[n++] = xstrdup(word);
	}
	free(word);
	if (r == 0)
		return n;
	if (r < 0)
		snprintf(err, errlen, "--slurm-args: unterminated quote in '%s'", text);
	else
		snprintf(err, errlen, "--slurm-args: more than %u words", max);
	for (int i = 0; i < n; i++)
		free((*words)[i]);
	free(*words);
	*words = NULL;
	return -1;
}

/* The bytes the model of plan cache c takes in a run: with a --cache-sweep that runs in one
 * pass, the pass's models of all the group's sizes (a worker splits it where memory is short,
 * so this is the most it takes). */
static uint64_t
model_bytes(const struct sweep_plan *p, unsigned c)
{
	int g = sweep_plan_group_of(p, c);
	const struct sweep_cache_group *gr = g >= 0 ? &p->groups[g] : NULL;
	uint64_t sizes[SWEEP_CACHES_MAX];
	struct spec spec, first;
	char err[512];

	if (spec_parse(p->caches[c], &spec, err, sizeof(err)))
		return 0;
	spec.cache.sample_sets = p->sample_sets > 1 ? p->sample_sets : 0;
	if (!gr || gr->method == CACHE_ONEPASS_SEPARATE || p->separate_runs || p->sample_sets > 1 ||
	    spec_parse(p->caches[gr->first], &first, err, sizeof(err)))
		return cache_model_bytes(&spec.cache);
	for (unsigned k = 0; k < gr->n; k++) {
		struct spec one;

		sizes[k] = spec_parse(p->caches[gr->first + k], &one, err, sizeof(err))
				   ? 0
				   : one.cache.level[gr->level].size_bytes;
	}
	return cache_onepass_bytes(&first.cache, gr->level, sizes, gr->n, gr->method);
}

/* A task's --mem in MiB: jobs workers each running the largest configuration (its arrays and
 * its cache models), plus a margin for the process, the allocator and the tracing layer. */
static uint64_t
task_mem_mib(const struct sweep_plan *p, const struct sweep_item *items, size_t n, unsigned jobs)
{
	uint64_t model[SWEEP_CACHES_MAX] = { 0 }, most = 0, total;

	if (p->simulate)
		for (unsigned c = 0; c < p->ncaches; c++)
			model[c] = model_bytes(p, c);
	for (size_t i = 0; i < n && p->simulate; i++) {
		uint64_t arrays = p->plugin.p     ? plugin_arrays_bytes(&p->plugin, &items[i].cfg,
									&p->params, UINT64_MAX / 4)
				  : p->trace_only ? 0 /* address space, not memory */
						  : attn_data_bytes(&items[i].cfg);

		if (arrays > UINT64_MAX / 8)
			arrays = UINT64_MAX / 8;
		if (arrays + model[items[i].cache] > most)
			most = arrays + model[items[i].cache];
	}
	/* An eighth more, and 256 MiB for the executable and what a run keeps besides. */
	total = (most + most / 8) / (1u << 20) * jobs + 256;
	return total;
}

/* What a submission works with. */
struct submit {
	const struct sweep_slurm *s;
	const struct sweep_plan *p;
	const struct sweep_run_options *ro;
	char dir[4096]; /* DIR, absolute */
	char slurm_dir[4200];
	int slurm_fd, lock;
	char self[4096]; /* this executable */
	char *plan;      /* sweep_plan_command() into dir */
	size_t nitems;
	uint64_t mem_mib;
	char **words; /* --slurm-args */
	int nwords;
	cJSON *recorded; /* jobs.json as found, or NULL */
	uint64_t *todo;  /* the shards not complete */
	size_t ntodo;
	char stale_merge[32]; /* the last merge job, still pending: superseded */
	/* Shards with good rows of another model revision than this memsim's: how many, the
	 * first, and its revision. */
	uint64_t nother, other_first;
	char other_rev[160];
	struct slurm_tools tools;
};

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
		print_error("sweep: warning: %s is %s: compute nodes may not share it (use a "
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
	print_error("sweep: warning: --slurm %llu does not divide the %zu configurations of each "
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
		return print_error("sweep: %s", err);
	close(fd);
	/* The tasks run elsewhere: every path they get is absolute. */
	if (u->ro->out[0] != '/' && !getcwd(u->dir, sizeof(u->dir)))
		return print_error("sweep: --out %s: cannot make the path absolute", u->ro->out);
	if (u->ro->out[0] == '/')
		u->dir[0] = '\0';
	if (strlen(u->dir) + strlen(u->ro->out) + 2 > 4000)
		return print_error("sweep: --out %s: the path is too long", u->ro->out);
	if (u->dir[0])
		strcat(u->dir, "/");
	strcat(u->dir, u->ro->out);
	while (strlen(u->dir) > 1 && u->dir[strlen(u->dir) - 1] == '/')
		u->dir[strlen(u->dir) - 1] = '\0';
	/* sbatch reads #SBATCH --output=PATH itself: no quoting there. */
	if (strpbrk(u->dir, " \t\n'\"\\%$`"))
		return usage_error("sweep",
				   "--out %s: a --slurm sweep's directory may not have "
				   "blanks, quotes, '\\', '$', '`' or '%%' in its path",
				   u->dir);
	snprintf(u->slurm_dir, sizeof(u->slurm_dir), "%s/slurm", u->dir);
	u->slurm_fd = outdir_open(u->slurm_dir, err, sizeof(err));
	if (u->slurm_fd < 0)
		return print_error("sweep: %s", err);
	u->lock = lock_dir(u->slurm_fd, u->slurm_dir, err, sizeof(err));
	if (u->lock < 0)
		return print_error("sweep: %s", err);
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
		return missing ? 0 : print_error("sweep: %s", err);
	plan = results_string(u->recorded, "plan");
	if (results_number(u->recorded, "tasks", -1) != (double)u->s->tasks)
		return usage_error("sweep",
				   "%s/jobs.json records %.0f tasks, not %llu: the same "
				   "--slurm N resumes; another sweep needs another --out",
				   u->slurm_dir, results_number(u->recorded, "tasks", -1),
				   (unsigned long long)u->s->tasks);
	if (strcmp(plan, u->plan) != 0)
		return usage_error("sweep",
				   "%s/jobs.json records another sweep (%s): the same "
				   "options resume it; another sweep needs another --out",
				   u->slurm_dir, plan);
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

/* Shard i's manifest, where one is: another sweep's is refused; *complete when it says so;
 * a shard of another model revision noted. */
static int
check_shard(struct submit *u, uint64_t i, bool *complete)
{
	char path[4400], shard[4300], err[600], *want, *full;
	const char *got;
	cJSON *m;

	*complete = false;
	snprintf(shard, sizeof(shard), "%s/shards/%llu", u->dir, (unsigned long long)i);
	snprintf(path, sizeof(path), "%s/manifest.json", shard);
	if (access(path, F_OK) != 0)
		return 0;
	m = report_read_json(path, err, sizeof(err));
	if (!m)
		return print_error("sweep: %s", err);
	want = sweep_plan_command(u->p, shard);
	full = xzalloc(strlen(want) + 64);
	sprintf(full, "%s", want);
	if (u->s->tasks > 1)
		sprintf(full + strlen(full), " --shard %llu/%llu", (unsigned long long)i,
			(unsigned long long)u->s->tasks);
	got = results_string(m, "sweep_command");
	*complete = results_true(m, "results_summary.complete");
	if (strcmp(got, full) != 0) {
		print_error("sweep: %s holds another sweep's shard (%s): the same options resume "
			    "it; another sweep needs another --out",
			    shard, got);
		free(want);
		free(full);
		cJSON_Delete(m);
		return EXIT_USAGE;
	}
	note_revision(u, i, m);
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

/* The last submission's jobs must have ended before shards are submitted again (a shard run
 * twice at once would meet its own lock); a merge still pending is superseded. */
static int
check_active(struct submit *u)
{
	const cJSON *last = last_submission(u->recorded);
	const char *array = results_string(last, "array_job"), *merge;
	char(*st)[SLURM_STATE_LEN] = xzalloc((u->s->tasks + 1) * sizeof(*st)), from[1300];
	unsigned active = 0;

	merge = results_string(last, "merge_job");
	if (!last || !u->tools.path[SLURM_SQUEUE][0]) {
		if (last)
			print_error(
				"sweep: warning: %s not found: cannot tell whether jobs %s and %s "
				"still run",
				slurm_tool_name(SLURM_SQUEUE), array, merge);
		free(st);
		return 0;
	}
	if (array[0]) {
		slurm_job_states(&u->tools, array, u->s->tasks, st, from, sizeof(from));
		for (uint64_t i = 0; i < u->s->tasks; i++)
			active += slurm_state_active(st[i]);
	}
	if (active) {
		free(st);
		return print_error("sweep: array job %s still has %u tasks queued or running: wait "
				   "for them (memsim sweep --status %s), or scancel %s, then run "
				   "this again",
				   array, active, u->dir, array);
	}
	if (merge[0]) {
		slurm_job_states(&u->tools, merge, 0, st, from, sizeof(from));
		if (strcmp(st[0], "PENDING") == 0)
			snprintf(u->stale_merge, sizeof(u->stale_merge), "%s", merge);
		else if (slurm_state_active(st[0])) {
			print_error("sweep: merge job %s is %s: wait for it, then run this again",
				    merge, st[0]);
			free(st);
			return EXIT_RUNTIME;
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

/* DIR/slurm/sweep.sbatch: array task i runs shard i/N into DIR/shards/i, resuming it. */
static char *
sweep_script(const struct submit *u)
{
	char *text = NULL, jobs[16], *self[] = { (char *)u->self };
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	snprintf(jobs, sizeof(jobs), "%u", u->ro->jobs);
	put_header(f, u, "array task i runs shard i of the sweep", "memsim-sweep", u->ro->jobs,
		   u->mem_mib, "sweep-%A_%a.out");
	fprintf(f, "i=${SLURM_ARRAY_TASK_ID:?not run as a Slurm array task}\nexec ");
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

static int
write_scripts(struct submit *u)
{
	char *sweep = sweep_script(u), *merge = merge_script(u), err[600];
	int rc = write_file_whole_at(u->slurm_fd, u->slurm_dir, "sweep.sbatch", sweep,
				     strlen(sweep), err, sizeof(err));

	if (!rc)
		rc = write_file_whole_at(u->slurm_fd, u->slurm_dir, "merge.sbatch", merge,
					 strlen(merge), err, sizeof(err));
	free(sweep);
	free(merge);
	return rc ? print_error("sweep: %s", err) : 0;
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

/* sbatch --parsable [FIRST] (--slurm-args) SCRIPT: the job id into id, or 1 after one line
 * (sbatch's own last words). With dry_run, prints the command instead. */
static int
sbatch(struct submit *u, const char *first, const char *script, char *id, size_t idlen)
{
	const char **args = xzalloc((size_t)(u->nwords + 4) * sizeof(*args));
	char last[600], *out = NULL, **shown = xzalloc((size_t)(u->nwords + 5) * sizeof(*shown));
	int n = 0, rc;

	args[n++] = "--parsable";
	if (first)
		args[n++] = first;
	for (int i = 0; i < u->nwords; i++)
		args[n++] = u->words[i];
	args[n++] = script;
	if (u->s->dry_run) {
		shown[0] = (char *)slurm_tool_name(SLURM_SBATCH);
		memcpy(shown + 1, args, (size_t)n * sizeof(*args));
		printf("would run: ");
		put_words(stdout, n + 1, shown);
		printf("\n");
		snprintf(id, idlen, "ARRAY_JOB_ID");
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
		print_error("sweep: %s printed no job id for %s ('%.80s')",
			    slurm_tool_name(SLURM_SBATCH), script, out ? out : "");
		free(out);
		return EXIT_RUNTIME;
	}
	free(out);
	if (rc < 0)
		return print_error("sweep: %s: submitting %s: %s", slurm_tool_name(SLURM_SBATCH),
				   script, last);
	return print_error("sweep: %s rejected %s (exit %d): %s", slurm_tool_name(SLURM_SBATCH),
			   script, rc, last[0] ? last : "no message");
}

/* Writes DIR/slurm/jobs.json (whole, renamed into place): the sweep, and each submission with
 * its jobs, tasks and time, this one last. */
static int
record(struct submit *u, const char *array, const char *merge)
{
	const cJSON *old = cJSON_GetObjectItem(u->recorded, "submissions");
	cJSON *j = report_manifest_create("memsim sweep --slurm", u->ro->argc, u->ro->argv);
	cJSON *subs = old ? cJSON_Duplicate(old, 1) : cJSON_CreateArray(), *one, *tasks, *args;
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
	if (array[0])
		cJSON_AddStringToObject(one, "array_job", array);
	else
		cJSON_AddNullToObject(one, "array_job");
	tasks = cJSON_AddArrayToObject(one, "tasks_submitted");
	for (size_t i = 0; i < u->ntodo; i++)
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
	return rc ? print_error("sweep: %s", err) : 0;
}

/* The superseded merge job goes before its successor is submitted. */
static void
cancel_stale(struct submit *u)
{
	const char *args[] = { u->stale_merge, NULL };
	char last[600], *out = NULL;

	if (!u->stale_merge[0] || u->s->dry_run)
		return;
	if (slurm_tool_run(&u->tools, SLURM_SCANCEL, args, &out, last, sizeof(last)) != 0)
		print_error("sweep: warning: cannot cancel the earlier merge job %s (%s): scancel "
			    "it",
			    u->stale_merge, last);
	free(out);
}

/* Submits the shards in u->todo (if any) and a merge after them; records and prints both. */
static int
submit_jobs(struct submit *u)
{
	char sweep[4300], merge[4300], array[32] = "", merge_id[32], dep[64], *arr;
	int rc = 0;

	snprintf(sweep, sizeof(sweep), "%s/sweep.sbatch", u->slurm_dir);
	snprintf(merge, sizeof(merge), "%s/merge.sbatch", u->slurm_dir);
	cancel_stale(u);
	if (u->ntodo) {
		arr = array_arg(u->todo, u->ntodo);
		rc = sbatch(u, arr, sweep, array, sizeof(array));
		if (!rc && !u->s->dry_run)
			printf("submitted array job %s (%s, of %llu shards) -> %s/shards\n", array,
			       arr, (unsigned long long)u->s->tasks, u->dir);
		free(arr);
		if (rc)
			return rc;
	}
	snprintf(dep, sizeof(dep), "--dependency=afterok:%s", array);
	rc = sbatch(u, array[0] ? dep : NULL, merge, merge_id, sizeof(merge_id));
	if (u->s->dry_run)
		return rc;
	if (rc)
		merge_id[0] = '\0';
	if (record(u, array, merge_id) || rc)
		return EXIT_RUNTIME;
	printf("submitted merge job %s%s%s%s -> %s; memsim sweep --status %s follows them\n",
	       merge_id, array[0] ? " (afterok:" : "", array, array[0] ? ")" : "", u->dir, u->dir);
	return 0;
}

/* Which shards are not complete; another sweep's shard is refused. With
 * --rerun-other-revisions a complete shard of another model revision runs again too. */
static int
scan_shards(struct submit *u)
{
	int rc = 0;

	u->todo = xzalloc((size_t)u->s->tasks * sizeof(*u->todo));
	for (uint64_t i = 0; i < u->s->tasks && !rc; i++) {
		uint64_t before = u->nother;
		bool complete;

		rc = check_shard(u, i, &complete);
		if (!complete || (u->nother > before && u->ro->rerun_other))
			u->todo[u->ntodo++] = i;
	}
	return rc;
}

/* Shards of another model revision: refused up front (each task would refuse its shard), or
 * with --rerun-other-revisions run again, unless DIR holds their merge already: a new merge
 * cannot replace it. A sweep complete and merged is left as it is. */
static int
check_revisions(struct submit *u)
{
	bool done = merged(u);

	if (!u->nother || (done && !u->ro->rerun_other))
		return 0;
	if (done)
		return usage_error(
			"sweep",
			"%s holds the merged sweep, of model revision (%s), not this "
			"memsim's (%s): to compute it again with this memsim, sweep into "
			"another --out",
			u->dir, u->other_rev, report_model_revision());
	if (!u->ro->rerun_other)
		return usage_error(
			"sweep",
			"%s/shards/%llu%s holds rows of another model revision (%s) than "
			"this memsim's (%s): sweep into another --out, or pass "
			"--rerun-other-revisions to run them again (the old rows kept in "
			"each shard's superseded.json)",
			u->dir, (unsigned long long)u->other_first,
			u->nother > 1 ? " (and others)" : "", u->other_rev,
			report_model_revision());
	return 0;
}

/* The checks and the submission, once the plan's items are known. */
static int
submit_checked(struct submit *u)
{
	int rc;
	char err[600];

	if (u->s->tasks > u->nitems)
		return usage_error("sweep",
				   "--slurm %llu: more tasks than the plan's %zu "
				   "configurations",
				   (unsigned long long)u->s->tasks, u->nitems);
	u->nwords = u->s->args ? sweep_slurm_split(u->s->args, SLURM_ARGS_MAX, &u->words, err,
						   sizeof(err))
			       : 0;
	if (u->nwords < 0)
		return usage_error("sweep", "%s", err);
	ssize_t n = readlink("/proc/self/exe", u->self, sizeof(u->self) - 1);
	if (n <= 0)
		return print_error("sweep: cannot find the memsim executable (/proc/self/exe)");
	u->self[n] = '\0';
	if (!u->s->dry_run && !u->tools.path[SLURM_SBATCH][0])
		return print_error("sweep: %s not found%s (install slurm-client, or use --dry-run)",
				   slurm_tool_name(SLURM_SBATCH),
				   getenv("MEMSIM_SBATCH") ? "" : " on PATH");
	if ((rc = open_dirs(u)))
		return rc;
	u->plan = sweep_plan_command(u->p, u->dir);
	if ((rc = check_recorded(u)) || (rc = scan_shards(u)) || (rc = check_revisions(u)))
		return rc;
	if (!u->s->dry_run && (rc = check_active(u)))
		return rc;
	if (!u->ntodo && merged(u)) {
		printf("all %llu shards are complete and merged into %s: nothing to submit\n",
		       (unsigned long long)u->s->tasks, u->dir);
		if (u->nother)
			print_error("sweep: note: its rows are of model revision (%s), not this "
				    "memsim's (%s)",
				    u->other_rev, report_model_revision());
		return 0;
	}
	/* After the refusals, so that each of them is one line. */
	warn_local(u->dir);
	warn_onepass(u);
	if ((rc = write_scripts(u)))
		return rc;
	if (!u->ntodo)
		print_error("sweep: all %llu shards are complete: submitting the merge alone",
			    (unsigned long long)u->s->tasks);
	else if (u->ntodo < u->s->tasks)
		print_error("sweep: %zu of %llu shards are not complete: submitting those",
			    u->ntodo, (unsigned long long)u->s->tasks);
	return submit_jobs(u);
}

int
sweep_slurm_submit(const struct sweep_slurm *s, const struct sweep_plan *p,
		   const struct sweep_run_options *ro)
{
	struct submit u = { .s = s, .p = p, .ro = ro, .slurm_fd = -1, .lock = -1 };
	struct sweep_item *items;
	int rc;

	if (sweep_plan_check(p))
		return EXIT_USAGE;
	items = sweep_check_items(p, &u.nitems);
	if (!items)
		return EXIT_USAGE;
	u.mem_mib = task_mem_mib(p, items, u.nitems, ro->jobs);
	free(items);
	slurm_tools_init(&u.tools);
	rc = submit_checked(&u);
	slurm_tools_finish(&u.tools);
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
