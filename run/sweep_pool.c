#include "run/sweep_pool.h"

#include <cJSON.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "analysis/json_text.h"
#include "analysis/report.h"
#include "base/util.h"
#include "run/evaluate.h"
#include "run/simulate.h"
#include "sim/spec.h"

#define POOL_MAX_JOBS 256

struct worker {
	pid_t pid;
	int to, from; /* task pipe (write end), result pipe (read end) */
	char *buf;
	size_t len, cap;
	long task;     /* the item whose row comes next, or -1 */
	long tasknum;  /* the task being run */
	unsigned left; /* rows of it still to come */
};

static volatile sig_atomic_t interrupt_seen;

static void
on_signal(int sig)
{
	(void)sig;
	interrupt_seen = 1;
}

/* What made row r, which --resume and merge compare: this memsim's model revision and, for a
 * plugin, the build of it that ran (its file's hash). */
static void
add_makers(cJSON *r, const struct sweep_plan *p)
{
	cJSON_AddStringToObject(r, "model_revision", report_model_revision());
	if (p->plugin.p)
		cJSON_AddStringToObject(r, "plugin_hash", p->plugin_hash);
}

/* Writes item idx's report r as one line and frees r. */
static void
send_row(FILE *fout, const struct sweep_plan *p, const struct sweep_item *items, long idx, cJSON *r)
{
	char *text;

	cJSON_AddNumberToObject(r, "index", (double)idx);
	cJSON_AddStringToObject(r, "key", items[idx].key);
	add_makers(r, p);
	text = json_text_print(r, false);
	fprintf(fout, "%s\n", text ? text : "{}");
	fflush(fout);
	free(text);
	cJSON_Delete(r);
}

/* The row of a configuration that failed: the error and the configuration, as `memsim run`
 * reports it. */
static cJSON *
error_report(const struct sweep_plan *p, const struct sweep_item *it, const char *why)
{
	cJSON *r = cJSON_CreateObject();
	struct spec spec;
	char err[512];

	if (spec_parse(p->caches[it->cache], &spec, err, sizeof(err)))
		memset(&spec, 0, sizeof(spec));
	spec.cache.sample_sets = p->sample_sets;
	cJSON_AddStringToObject(r, "error", why);
	report_add_config(r, &it->cfg, &spec, p->flush, p->seed);
	if (p->plugin.p) {
		cJSON *cfg = cJSON_GetObjectItem(r, "config");
		struct plugin_params pp;

		sweep_plan_item_params(p, it, &pp);
		plugin_config_json(cfg, &p->plugin, &pp);
	}
	cJSON_AddBoolToObject(cJSON_GetObjectItem(r, "config"), "trace_only", p->trace_only);
	return r;
}

/* With --threads, the threads a row's simulation took, as memsim run reports them. */
static void
add_threads(cJSON *r, const struct sweep_plan *p, const struct sim_result *sim)
{
	cJSON *th;

	if (p->threads <= 1)
		return;
	th = cJSON_AddObjectToObject(r, "threads");
	cJSON_AddNumberToObject(th, "asked", p->threads);
	cJSON_AddNumberToObject(th, "used", sim->threads);
	cJSON_AddStringToObject(th, "why_not_more", sim->threads_why);
}

/* The evaluation of item it's configuration on spec as plan p asks for it, its --param pairs
 * in pp. */
static struct evaluation_job
plan_job(const struct sweep_plan *p, const struct sweep_item *it, const struct spec *spec,
	 struct plugin_params *pp)
{
	sweep_plan_item_params(p, it, pp);
	return (struct evaluation_job){
		.plugin = p->plugin.p ? &p->plugin : NULL,
		.params = pp,
		.cfg = &it->cfg,
		.spec = spec,
		.flush = p->flush,
		.seed = p->seed,
		.mode = !p->simulate    ? EVALUATION_FORMULA
			: p->trace_only ? EVALUATION_TRACE_ONLY
					: EVALUATION_SIMULATE,
		.threads = p->threads,
	};
}

/* One configuration on its own: its report, or its error. */
static cJSON *
one_row(const struct sweep_plan *p, const struct sweep_item *it)
{
	struct evaluation_job job;
	struct plugin_params pp;
	struct spec spec;
	struct evaluation ev;
	char err[1024];
	cJSON *r;

	if (spec_parse(p->caches[it->cache], &spec, err, sizeof(err)))
		return error_report(p, it, err);
	spec.cache.sample_sets = p->sample_sets;
	spec.cache.seed = p->seed; /* random replacement's, as memsim run's --seed */
	job = plan_job(p, it, &spec, &pp);
	if (evaluation_run(&ev, &job, err, sizeof(err)))
		return error_report(p, it, err);
	r = evaluation_json(&ev, 0, NULL);
	add_threads(r, p, &ev.sim);
	evaluation_finish(&ev);
	return r;
}

static void
run_one(FILE *fout, const struct sweep_plan *p, const struct sweep_item *items, long idx)
{
	send_row(fout, p, items, idx, one_row(p, &items[idx]));
}

/* A one-pass task as it runs: its items' specs and sizes, and each item's row once made. */
struct group_run {
	const struct sweep_plan *p;
	const struct sweep_item *items;
	const long *idx;
	const struct sweep_cache_group *g;
	struct spec *specs;
	uint64_t *sizes;
	cJSON **rows;
	unsigned n;
};

/* How row r was made: the pass (method, level, how many sizes it counted; method "separate"
 * and 1 for a size run on its own), and why, where that is not all the task's sizes at once. */
static void
add_onepass(cJSON *r, const struct group_run *gr, enum cache_onepass how, unsigned sizes,
	    const char *why)
{
	cJSON *o = cJSON_AddObjectToObject(r, "onepass");

	cJSON_AddNumberToObject(o, "group", (double)(gr->g - gr->p->groups));
	cJSON_AddStringToObject(o, "method", cache_onepass_str(how));
	cJSON_AddStringToObject(o, "level", gr->specs[0].cache.level[gr->g->level].name);
	cJSON_AddNumberToObject(o, "sizes", sizes);
	if (why)
		cJSON_AddStringToObject(o, "why", why);
}

/* Runs items list[0 .. m) of gr in one pass (one alone: a separate run) and makes their rows.
 * A pass whose models cannot be allocated runs as two halves, down to sizes alone, whose
 * failure is their row's error; why says why this is not all the task's sizes at once. */
static void
run_pass(struct group_run *gr, const unsigned *list, unsigned m, const char *why)
{
	const struct sweep_plan *p = gr->p;
	struct plugin_params pp;
	struct evaluation_job job = plan_job(p, &gr->items[gr->idx[list[0]]], NULL, &pp);
	struct evaluation *outs;
	struct spec *specs;
	uint64_t *sizes;
	char err[1024];
	int rc;

	if (m == 1) {
		gr->rows[list[0]] = one_row(p, &gr->items[gr->idx[list[0]]]);
		add_onepass(gr->rows[list[0]], gr, CACHE_ONEPASS_SEPARATE, 1, why);
		return;
	}
	outs = xzalloc(m * sizeof(*outs));
	specs = xzalloc(m * sizeof(*specs));
	sizes = xzalloc(m * sizeof(*sizes));
	for (unsigned j = 0; j < m; j++) {
		sizes[j] = gr->sizes[list[j]];
		specs[j] = gr->specs[list[j]];
	}
	/* The first size's spec is the base: it has the associativity every size keeps
	 * (cache_config_resize()), and what L1 looks like to the tracing layer in this pass. */
	rc = evaluation_onepass(outs, &job, specs, gr->g->level, sizes, m, gr->g->method, err,
				sizeof(err));
	free(sizes);
	free(specs);
	if (rc == -ENOMEM) {
		free(outs);
		run_pass(gr, list, m / 2, err);
		run_pass(gr, list + m / 2, m - m / 2, err);
		return;
	}
	for (unsigned j = 0; j < m; j++) {
		cJSON *r;

		if (rc) {
			r = one_row(p, &gr->items[gr->idx[list[j]]]);
			add_onepass(r, gr, CACHE_ONEPASS_SEPARATE, 1, err);
		} else {
			r = evaluation_json(&outs[j], 0, NULL);
			add_threads(r, p, &outs[j].sim);
			evaluation_finish(&outs[j]);
			/* Which pass made these counters: the same as a run of this size alone. */
			add_onepass(r, gr, gr->g->method, m, why);
		}
		gr->rows[list[j]] = r;
	}
	free(outs);
}

/* One configuration over n sizes of group g's swept level, in one pass where the models of
 * all fit in the memory this worker may take (sim_memory_share(): the machine's memory is
 * shared by the pool's `workers`), else in passes that fit, smallest sizes first; each row
 * says how it ran. Rows go out in the task's order, each as soon as those before it have.
 * Where no pass can run, each size runs on its own. */
static void
run_group(FILE *fout, const struct sweep_plan *p, const struct sweep_item *items, const long *idx,
	  unsigned n, const struct sweep_cache_group *g, unsigned workers)
{
	struct group_run gr = { .p = p, .items = items, .idx = idx, .g = g, .n = n };
	unsigned *pass = xzalloc(n * sizeof(*pass)), *list = xzalloc(n * sizeof(*list));
	unsigned npasses = 1, sent = 0;
	const char *what;
	char err[512], why[640] = "", shared[64];
	uint64_t avail, budget, need;
	bool ok = true;

	gr.specs = xzalloc(n * sizeof(*gr.specs));
	gr.sizes = xzalloc(n * sizeof(*gr.sizes));
	gr.rows = xzalloc(n * sizeof(*gr.rows));
	for (unsigned k = 0; k < n && ok; k++) {
		const char *text = p->caches[items[idx[k]].cache];

		ok = spec_parse(text, &gr.specs[k], err, sizeof(err)) == 0;
		gr.specs[k].cache.seed = p->seed; /* random replacement's, as memsim run's --seed */
		gr.sizes[k] = gr.specs[k].cache.level[g->level].size_bytes;
	}
	if (ok) {
		/* Some room for what is not the models: the allocator, the tracing layer. */
		struct plugin_params pp;

		sweep_plan_item_params(p, &items[idx[0]], &pp);
		avail = p->plugin.p ? plugin_memory_available(&p->plugin, &items[idx[0]].cfg, &pp,
							      workers, &what)
				    : sim_memory_share(&items[idx[0]].cfg, p->trace_only, workers,
						       &what);
		budget = avail - (avail / 16 < (64u << 20) ? avail / 16 : 64u << 20);
		/* Each slice thread keeps a one-pass model of its own, besides the caller's
		 * (sim_kernel_onepass_split()). */
		if (p->threads > 1)
			budget /= p->threads + 1;
		if (workers > 1 &&
		    (strcmp(what, "MemAvailable") == 0 || strcmp(what, "MEMSIM_MEMORY") == 0)) {
			snprintf(shared, sizeof(shared), "%s shared by %u workers", what, workers);
			what = shared;
		}
		npasses = sim_onepass_split(&gr.specs[0], g->level, gr.sizes, n, g->method, budget,
					    pass);
		need = cache_onepass_bytes(&gr.specs[0].cache, g->level, gr.sizes, n, g->method);
		if (npasses > 1 && need > budget)
			snprintf(why, sizeof(why),
				 "one pass of all %u sizes needs %.2f GiB for its models, more "
				 "than the %.2f GiB left under %s: run in %u passes",
				 n, (double)need / (1u << 30), (double)budget / (1u << 30), what,
				 npasses);
		else if (npasses > 1)
			snprintf(why, sizeof(why), "%s: %u passes",
				 "an L1 of one set is traced apart from an L1 of several", npasses);
	}
	for (unsigned k = 0; k < n; k++) {
		unsigned m = 0;

		if (!ok) {
			run_one(fout, p, items, idx[k]);
			continue;
		}
		if (!gr.rows[k]) {
			/* Item k's pass: its sizes, smallest first as the split made it. */
			for (unsigned j = 0; j < n; j++)
				if (pass[j] == pass[k])
					list[m++] = j;
			for (unsigned a = 1; a < m; a++)
				for (unsigned b = a;
				     b > 0 && gr.sizes[list[b]] < gr.sizes[list[b - 1]]; b--) {
					unsigned t = list[b];

					list[b] = list[b - 1];
					list[b - 1] = t;
				}
			run_pass(&gr, list, m, why[0] ? why : NULL);
		}
		for (; sent < n && gr.rows[sent]; sent++)
			send_row(fout, p, items, idx[sent], gr.rows[sent]);
	}
	free(list);
	free(pass);
	free(gr.rows);
	free(gr.sizes);
	free(gr.specs);
}

/* The worker loop: read a line, "t K" (task K) or "i I" (item I alone), run it, write a
 * JSON line per item. */
static void
worker_main(int in, int out, const struct sweep_plan *p, const struct sweep_item *items,
	    const long *todo, const struct sweep_task *tasks, unsigned workers)
{
	FILE *fin = fdopen(in, "r"), *fout = fdopen(out, "w");
	char line[64];

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	while (fgets(line, sizeof(line), fin)) {
		long k = strtol(line + 2, NULL, 10);
		const struct sweep_task *t = &tasks[k];

		if (line[0] == 'i')
			run_one(fout, p, items, k);
		else if (t->group < 0)
			run_one(fout, p, items, todo[t->start]);
		else
			run_group(fout, p, items, todo + t->start, t->n, &p->groups[t->group],
				  workers);
	}
	fclose(fout);
	_exit(0);
}

/* The work handed out: the tasks in order, then items whose one-pass task died, alone. */
struct work {
	const struct sweep_plan *p;
	const struct sweep_item *items;
	const long *todo;
	const struct sweep_task *tasks;
	size_t ntasks, next;
	long *again; /* items to run alone */
	size_t nagain, next_again;
	const struct sweep_pool_ops *ops;
	void *ctx;
	pid_t parent;
};

/* Hands w its next piece of work, if any is left: false when none is, or the pipe failed. */
static bool
send_work(struct worker *w, struct work *wk)
{
	char line[40];
	int n;

	if (interrupt_seen)
		return false;
	if (wk->next_again < wk->nagain) {
		long idx = wk->again[wk->next_again++];

		w->tasknum = -1;
		w->task = idx;
		w->left = 1;
		n = snprintf(line, sizeof(line), "i %ld\n", idx);
	} else if (wk->next < wk->ntasks) {
		long k = (long)wk->next++;

		w->tasknum = k;
		w->task = wk->todo[wk->tasks[k].start];
		w->left = wk->tasks[k].n;
		n = snprintf(line, sizeof(line), "t %ld\n", k);
	} else {
		return false;
	}
	return write(w->to, line, (size_t)n) == n;
}

/* Starts worker j of all[0 .. n) in the slot w. Returns 0 or -1 with err. */
static int
spawn(struct worker *all, unsigned n, unsigned j, const struct work *wk, char *err, size_t errlen)
{
	struct worker *w = &all[j];
	int tp[2], rp[2];

	if (pipe(tp)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	if (pipe(rp)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		close(tp[0]);
		close(tp[1]);
		return -1;
	}
	fflush(NULL);
	w->pid = fork();
	if (w->pid == 0) {
#ifdef __linux__
		/* A worker dies with its parent, however the parent ends (SIGKILL too),
		 * instead of simulating on for nobody. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != wk->parent)
			_exit(1);
#endif
		close(tp[1]);
		close(rp[0]);
		for (unsigned k = 0; k < n; k++)
			if (k != j && all[k].pid > 0) {
				close(all[k].to);
				close(all[k].from);
			}
		worker_main(tp[0], rp[1], wk->p, wk->items, wk->todo, wk->tasks, n);
	}
	close(tp[0]);
	close(rp[1]);
	if (w->pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(tp[1]);
		close(rp[0]);
		return -1;
	}
	w->to = tp[1];
	w->from = rp[0];
	w->task = -1;
	w->len = 0;
	return 0;
}

/* How a worker ended, from its wait status: "killed by signal 11 (Segmentation fault)". */
static void
describe_end(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "ended");
}

/* Worker w ended early (its pipe closed). A sweep that was interrupted (the worker got
 * SIGINT or SIGTERM with it) stops; otherwise the configuration it was running gets a failed
 * row saying how it died, the items of a one-pass task it had not sent run again alone, and
 * a fresh worker takes its place. Returns 0, row's nonzero value, or -1 with err. */
static int
worker_died(struct worker *all, unsigned n, unsigned j, struct work *wk, size_t *finished,
	    char *err, size_t errlen)
{
	struct worker *w = &all[j];
	char how[128], why[300];
	int status = 0, rc = 0;

	close(w->to);
	close(w->from);
	while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
		;
	w->pid = -1;
	if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM)) {
		interrupt_seen = 1;
		return 0;
	}
	describe_end(status, how, sizeof(how));
	if (w->task >= 0 && w->tasknum >= 0 && wk->tasks[w->tasknum].n > 1) {
		/* A one-pass task: what it did not send runs again, one size at a time. */
		const struct sweep_task *t = &wk->tasks[w->tasknum];

		wk->again = xrealloc(wk->again, (wk->nagain + w->left) * sizeof(*wk->again));
		for (unsigned k = t->n - w->left; k < t->n; k++)
			wk->again[wk->nagain++] = wk->todo[t->start + k];
		snprintf(why, sizeof(why), "the worker running one pass over %u sizes %s", w->left,
			 how);
		wk->ops->died(wk->ctx, w->task, why);
	} else if (w->task >= 0) {
		cJSON *r;
		char *text;

		snprintf(why, sizeof(why), "the worker running it %s", how);
		wk->ops->died(wk->ctx, w->task, why);
		r = error_report(wk->p, &wk->items[w->task], why);
		cJSON_AddNumberToObject(r, "index", (double)w->task);
		cJSON_AddStringToObject(r, "key", wk->items[w->task].key);
		add_makers(r, wk->p);
		text = json_text_print(r, false);
		rc = wk->ops->row(wk->ctx, w->task, text ? text : "{}");
		free(text);
		cJSON_Delete(r);
		(*finished)++;
	}
	w->task = -1;
	w->left = 0;
	if (rc)
		return rc;
	if (spawn(all, n, j, wk, err, errlen))
		return -1;
	/* Items to run again may be more than one: every idle worker takes some. */
	for (unsigned k = 0; k < n; k++)
		if (all[k].pid > 0 && all[k].task < 0)
			send_work(&all[k], wk);
	return 0;
}

/* Reads what worker j has sent; hands every complete line to ops->row and the worker its next
 * work. Returns 0, row's nonzero value, or -1 with err; *finished counts the runs that ended. */
static int
drain(struct worker *all, unsigned n, unsigned j, struct work *wk, size_t *finished, char *err,
      size_t errlen)
{
	struct worker *w = &all[j];
	ssize_t got;
	char *nl;

	if (w->len + 65536 > w->cap) {
		w->cap = w->cap ? w->cap * 2 : 1 << 20;
		w->buf = xrealloc(w->buf, w->cap);
	}
	got = read(w->from, w->buf + w->len, w->cap - w->len - 1);
	if (got <= 0) {
		if (got < 0 && errno == EINTR)
			return 0;
		return worker_died(all, n, j, wk, finished, err, errlen);
	}
	w->len += (size_t)got;
	w->buf[w->len] = '\0';
	while ((nl = strchr(w->buf, '\n'))) {
		int rc;

		*nl = '\0';
		rc = wk->ops->row(wk->ctx, w->task, w->buf);
		w->len -= (size_t)(nl + 1 - w->buf);
		memmove(w->buf, nl + 1, w->len + 1);
		(*finished)++;
		if (--w->left > 0) {
			/* The next row of a one-pass task: its next item. */
			const struct sweep_task *t = &wk->tasks[w->tasknum];

			w->task = wk->todo[t->start + t->n - w->left];
			if (rc)
				return rc;
			continue;
		}
		w->task = -1;
		if (rc)
			return rc;
		send_work(w, wk);
	}
	return 0;
}

int
sweep_pool_run(const struct sweep_plan *p, const struct sweep_item *items, const long *todo,
	       const struct sweep_task *tasks, size_t n, unsigned jobs,
	       const struct sweep_pool_ops *ops, void *ctx, bool *interrupted, char *err,
	       size_t errlen)
{
	struct worker *w;
	struct work wk = { p, items, todo, tasks, n, 0, NULL, 0, 0, ops, ctx, getpid() };
	size_t finished = 0, rows = 0;
	unsigned started = 0;
	struct sigaction sa, old_int, old_term;
	int rc = 0;

	*interrupted = false;
	if (n == 0)
		return 0;
	if (jobs > n)
		jobs = (unsigned)n;
	if (jobs > POOL_MAX_JOBS)
		jobs = POOL_MAX_JOBS;
	interrupt_seen = 0;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	signal(SIGPIPE, SIG_IGN);
	w = xzalloc(jobs * sizeof(*w));
	for (unsigned j = 0; j < jobs; j++)
		w[j].pid = -1;
	for (unsigned j = 0; j < jobs && !rc; j++) {
		if (spawn(w, jobs, j, &wk, err, errlen)) {
			rc = -1;
			break;
		}
		started++;
		send_work(&w[j], &wk);
	}
	for (size_t k = 0; k < n; k++)
		rows += tasks[k].n;
	while (!rc && finished < rows && !interrupt_seen) {
		struct pollfd fds[POOL_MAX_JOBS];
		unsigned who[POOL_MAX_JOBS];
		int nf = 0;

		for (unsigned j = 0; j < started; j++)
			if (w[j].pid > 0 && w[j].task >= 0) {
				who[nf] = j;
				fds[nf++] = (struct pollfd){ w[j].from, POLLIN, 0 };
			}
		if (nf == 0)
			break;
		if (poll(fds, (nfds_t)nf, 1000) < 0)
			continue; /* EINTR: the loop looks at the flag */
		for (int k = 0; k < nf && !rc; k++)
			if (fds[k].revents & (POLLIN | POLLHUP | POLLERR))
				rc = drain(w, started, who[k], &wk, &finished, err, errlen);
		ops->progress(ctx, finished, rows);
	}
	*interrupted = interrupt_seen != 0;
	for (unsigned j = 0; j < started; j++) {
		if (w[j].pid <= 0)
			continue;
		close(w[j].to);
		if (*interrupted || rc)
			kill(w[j].pid, SIGTERM);
		close(w[j].from);
		waitpid(w[j].pid, NULL, 0);
	}
	for (unsigned j = 0; j < jobs; j++)
		free(w[j].buf);
	free(w);
	free(wk.again);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
