#include "cli/sweep_pool.h"

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

#include "analysis/evaluate.h"
#include "analysis/report.h"
#include "kernels/simulate.h"
#include "sim/spec.h"
#include "sim/util.h"

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

/* Writes item idx's report r as one line and frees r. */
static void
send_row(FILE *fout, const struct sweep_item *items, long idx, cJSON *r)
{
	char *text;

	cJSON_AddNumberToObject(r, "index", (double)idx);
	cJSON_AddStringToObject(r, "key", items[idx].key);
	text = cJSON_PrintUnformatted(r);
	fprintf(fout, "%s\n", text);
	fflush(fout);
	cJSON_free(text);
	cJSON_Delete(r);
}

/* One configuration on its own. */
static void
run_one(FILE *fout, const struct sweep_plan *p, const struct sweep_item *items, long idx)
{
	const struct sweep_item *it = &items[idx];
	enum evaluation_mode mode = !p->simulate    ? EVALUATION_FORMULA
				    : p->trace_only ? EVALUATION_TRACE_ONLY
						    : EVALUATION_SIMULATE;
	struct spec spec;
	struct evaluation ev;
	char err[512];
	cJSON *r;

	int rc = spec_parse(p->caches[it->cache], &spec, err, sizeof(err));

	spec.cache.sample_sets = p->sample_sets;
	spec.cache.seed = p->seed; /* random replacement's, as memsim run's --seed */
	if (rc ||
	    evaluation_run(&ev, &it->cfg, &spec, p->flush, p->seed, mode, err, sizeof(err))) {
		r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "error", err);
		report_add_config(r, &it->cfg, &spec, p->flush, p->seed);
		cJSON_AddBoolToObject(cJSON_GetObjectItem(r, "config"), "trace_only",
				      p->trace_only);
	} else {
		r = evaluation_json(&ev, 0, NULL);
		evaluation_finish(&ev);
	}
	send_row(fout, items, idx, r);
}

/* One configuration over n sizes of group g's swept level, in one pass; each row says so.
 * Where the pass cannot run, each size runs on its own. */
static void
run_group(FILE *fout, const struct sweep_plan *p, const struct sweep_item *items,
	  const long *idx, unsigned n, const struct sweep_cache_group *g)
{
	struct spec *specs = xzalloc(n * sizeof(*specs));
	struct sim_result *outs = xzalloc(n * sizeof(*outs));
	uint64_t *sizes = xzalloc(n * sizeof(*sizes));
	const struct attn_config *cfg = &items[idx[0]].cfg;
	char err[512];
	bool ok = true;

	for (unsigned k = 0; k < n && ok; k++) {
		ok = spec_parse(p->caches[items[idx[k]].cache], &specs[k], err, sizeof(err)) == 0;
		specs[k].cache.seed = p->seed;
		sizes[k] = specs[k].cache.level[g->level].size_bytes;
	}
	if (ok)
		ok = sim_kernel_onepass(cfg, &specs[0], g->level, sizes, n, g->method, p->flush,
					p->seed, p->trace_only, outs, err, sizeof(err)) == 0;
	for (unsigned k = 0; k < n; k++) {
		struct evaluation ev;
		cJSON *r, *o;

		if (!ok) {
			run_one(fout, p, items, idx[k]);
			continue;
		}
		evaluation_of_sim(&ev, cfg, &specs[k], p->flush, p->seed, p->trace_only,
				  &outs[k]);
		r = evaluation_json(&ev, 0, NULL);
		evaluation_finish(&ev);
		/* Which pass made these counters: the same as a run of this size alone. */
		o = cJSON_AddObjectToObject(r, "onepass");
		cJSON_AddStringToObject(o, "method", cache_onepass_str(g->method));
		cJSON_AddStringToObject(o, "level", specs[k].cache.level[g->level].name);
		cJSON_AddNumberToObject(o, "sizes", n);
		send_row(fout, items, idx[k], r);
	}
	free(sizes);
	free(outs);
	free(specs);
}

/* The worker loop: read a task's number, run it, write a JSON line per item. */
static void
worker_main(int in, int out, const struct sweep_plan *p, const struct sweep_item *items,
	    const long *todo, const struct sweep_task *tasks)
{
	FILE *fin = fdopen(in, "r"), *fout = fdopen(out, "w");
	char line[64];

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	while (fgets(line, sizeof(line), fin)) {
		const struct sweep_task *t = &tasks[strtol(line, NULL, 10)];

		if (t->group < 0)
			run_one(fout, p, items, todo[t->start]);
		else
			run_group(fout, p, items, todo + t->start, t->n, &p->groups[t->group]);
	}
	fclose(fout);
	_exit(0);
}

static bool
send_task(struct worker *w, const long *todo, const struct sweep_task *tasks, long k)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%ld\n", k);

	w->tasknum = k;
	w->task = todo[tasks[k].start];
	w->left = tasks[k].n;
	return write(w->to, line, (size_t)n) == n;
}

/* Reads what worker w has sent; hands every complete line to ops->row and the worker its next
 * task. Returns 0 or row's nonzero value; *finished counts the runs that ended. */
static int
drain(struct worker *w, const long *todo, const struct sweep_task *tasks, size_t n, size_t *next,
      size_t *finished, const struct sweep_pool_ops *ops, void *ctx)
{
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
		ops->died(ctx, w->task);
		w->task = -1;
		*finished += w->left;
		w->left = 0;
		return 0;
	}
	w->len += (size_t)got;
	w->buf[w->len] = '\0';
	while ((nl = strchr(w->buf, '\n'))) {
		int rc;

		*nl = '\0';
		rc = ops->row(ctx, w->task, w->buf);
		w->len -= (size_t)(nl + 1 - w->buf);
		memmove(w->buf, nl + 1, w->len + 1);
		(*finished)++;
		if (--w->left > 0) {
			/* The next row of a one-pass task: its next item. */
			w->task = todo[tasks[w->tasknum].start + tasks[w->tasknum].n - w->left];
			if (rc)
				return rc;
			continue;
		}
		w->task = -1;
		if (rc)
			return rc;
		if (*next < n && !interrupt_seen)
			send_task(w, todo, tasks, (long)(*next)++);
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
	size_t next = 0, finished = 0, started = 0, rows = 0;
	struct sigaction sa, old_int, old_term;
	pid_t parent = getpid();
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
	for (unsigned j = 0; j < jobs; j++) {
		int tp[2], rp[2];

		if (pipe(tp)) {
			snprintf(err, errlen, "pipe: %s", strerror(errno));
			rc = -1;
			break;
		}
		if (pipe(rp)) {
			snprintf(err, errlen, "pipe: %s", strerror(errno));
			close(tp[0]);
			close(tp[1]);
			rc = -1;
			break;
		}
		fflush(NULL);
		w[j].pid = fork();
		if (w[j].pid == 0) {
#ifdef __linux__
			/* A worker dies with its parent, however the parent ends (SIGKILL too),
			 * instead of simulating on for nobody. */
			if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
				_exit(1);
#endif
			close(tp[1]);
			close(rp[0]);
			for (unsigned k = 0; k < j; k++) {
				close(w[k].to);
				close(w[k].from);
			}
			worker_main(tp[0], rp[1], p, items, todo, tasks);
		}
		close(tp[0]);
		close(rp[1]);
		if (w[j].pid < 0) {
			snprintf(err, errlen, "fork: %s", strerror(errno));
			close(tp[1]);
			close(rp[0]);
			rc = -1;
			break;
		}
		started++;
		w[j].to = tp[1];
		w[j].from = rp[0];
		w[j].task = -1;
		if (next < n)
			send_task(&w[j], todo, tasks, (long)next++);
	}
	for (size_t k = 0; k < n; k++)
		rows += tasks[k].n;
	while (!rc && finished < rows && !interrupt_seen) {
		struct pollfd fds[POOL_MAX_JOBS];
		unsigned who[POOL_MAX_JOBS];
		int nf = 0;

		for (unsigned j = 0; j < started; j++)
			if (w[j].task >= 0) {
				who[nf] = j;
				fds[nf++] = (struct pollfd){ w[j].from, POLLIN, 0 };
			}
		if (nf == 0)
			break;
		if (poll(fds, (nfds_t)nf, 1000) < 0)
			continue; /* EINTR: the loop looks at the flag */
		for (int k = 0; k < nf && !rc; k++)
			if (fds[k].revents & (POLLIN | POLLHUP | POLLERR))
				rc = drain(&w[who[k]], todo, tasks, n, &next, &finished, ops,
					   ctx);
		ops->progress(ctx, finished, rows);
	}
	*interrupted = interrupt_seen != 0;
	for (unsigned j = 0; j < started; j++) {
		close(w[j].to);
		if (*interrupted || rc)
			kill(w[j].pid, SIGTERM);
		close(w[j].from);
		waitpid(w[j].pid, NULL, 0);
		free(w[j].buf);
	}
	free(w);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
