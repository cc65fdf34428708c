#include "run/sweep.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/message.h"
#include "base/util.h"
#include "run/simulate.h"
#include "run/sweep_pool.h"
#include "run/sweep_writer.h"
#include "sim/drive/sample.h"
#include "sim/spec.h"

void
sweep_run_options_init(struct sweep_run_options *o)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	memset(o, 0, sizeof(*o));
	o->jobs = cores > 0 ? (unsigned)cores : 1;
	o->shard_n = 1;
}

/* What the pool's callbacks need. */
struct run_state {
	struct sweep_writer *w;
	const struct sweep_item *items;
	double t0;
	bool tty;
	long shown;
	char err[600];
};

static int
on_row(void *ctx, long index, const char *line)
{
	struct run_state *s = ctx;

	(void)index;
	return sweep_writer_row(s->w, line, s->err, sizeof(s->err)) ? -1 : 0;
}

static void
on_died(void *ctx, long index, const char *why)
{
	struct run_state *s = ctx;

	fputc('\n', stderr);
	message_line("sweep: %s: %s", s->items[index].key, why);
}

static void
on_progress(void *ctx, size_t finished, size_t n)
{
	struct run_state *s = ctx;
	double el = now_seconds() - s->t0;
	double eta = finished ? el / (double)finished * (double)(n - finished) : 0;
	long f = (long)finished, total = (long)n;

	if (f == s->shown)
		return;
	/* A terminal gets one line rewritten in place; a log a line per tenth. */
	if (s->tty || f * 10 / total != s->shown * 10 / total || f == total)
		fprintf(stderr,
			"%smemsim: sweep: %ld/%ld done, %ld failed, %.0f s elapsed, about %.0f s "
			"left%s",
			s->tty ? "\r" : "", f, total, s->w->now.errors, el, eta,
			s->tty ? "   " : "\n");
	s->shown = f;
}

int
sweep_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err[0])
		message_line("%s", err);
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

struct sweep_item *
sweep_check_items(const struct sweep_plan *p, size_t *count, char *err, size_t errlen)
{
	struct sweep_item *items;
	uint64_t memory;
	char why[600];

	if (sim_memory_setting(&memory) < 0) {
		snprintf(err, errlen, "MEMSIM_MEMORY: '%s' is not a size (512M, 16G)",
			 getenv("MEMSIM_MEMORY"));
		return NULL;
	}
	items = sweep_plan_items(p, count);
	/* Every configuration is checked up front, so a bad one is a usage error before any run
	 * starts, not a failed row. */
	for (size_t i = 0; i < *count; i++) {
		int crc = p->trace_only
				  ? attn_config_check_trace_only(&items[i].cfg, why, sizeof(why))
				  : attn_config_check(&items[i].cfg, why, sizeof(why));
		struct spec spec;

		/* Set sampling needs sets to sample in every cache. */
		if (p->sample_sets > 1 && (!i || items[i].cache != items[i - 1].cache) &&
		    spec_parse(p->caches[items[i].cache], &spec, why, sizeof(why)) == 0) {
			spec.cache.sample_sets = p->sample_sets;
			crc = cache_config_validate(&spec.cache, why, sizeof(why)) ? -EINVAL : crc;
		}
		if (crc && (p->simulate || crc != -ENOMEM)) {
			snprintf(err, errlen, "%s", why);
			free(items);
			return NULL;
		}
	}
	return items;
}

int
sweep_run(const struct sweep_plan *p, const struct sweep_run_options *o, char *msg, size_t msglen)
{
	static const struct sweep_pool_ops ops = { on_row, on_died, on_progress };
	struct sweep_item *items;
	struct sweep_writer w;
	struct run_state s = {
		.w = &w, .t0 = now_seconds(), .tty = isatty(STDERR_FILENO), .shown = -1
	};
	size_t nitems, ntodo = 0, ntasks = 0, nmine = 0;
	long *todo = NULL;
	struct sweep_task *tasks = NULL;
	char err[600];
	bool interrupted = false;
	int rc = -EIO, prc, orc;

	msg[0] = '\0';
	if (sweep_plan_check(p, msg, msglen))
		return -EINVAL;
	items = sweep_check_items(p, &nitems, msg, msglen);
	if (!items)
		return -EINVAL;
	s.items = items;
	orc = sweep_writer_open(&w, o->out, p, o->resume, o->rerun_other, err, sizeof(err));
	if (orc) {
		free(items);
		if (orc == -2)
			return sweep_fail(msg, msglen, -EINVAL, "%s", err);
		return sweep_fail(msg, msglen, -EIO, "sweep: %s", err);
	}
	todo = xzalloc((nitems + 1) * sizeof(*todo));
	for (size_t i = 0; i < nitems; i++) {
		if (i % o->shard_n != o->shard_i)
			continue;
		nmine++;
		if (!sweep_writer_has(&w, items[i].key))
			todo[ntodo++] = (long)i;
	}
	w.missing = (long)ntodo;
	tasks = xzalloc((ntodo + 1) * sizeof(*tasks));
	ntasks = sweep_plan_tasks(p, items, nitems, todo, ntodo, tasks);
	if (sweep_writer_manifest(&w, p, o->shard_i, o->shard_n, nitems, o->argc, o->argv, err,
				  sizeof(err))) {
		sweep_fail(msg, msglen, -EIO, "sweep: %s", err);
		goto out;
	}
	if (w.superseded > w.superseded_builds)
		message_line("sweep: %ld rows of another model revision moved to "
			     "%s/superseded.json: they run again",
			     w.superseded - w.superseded_builds, o->out);
	if (w.superseded_builds)
		message_line("sweep: %ld rows of another build of plugin %s moved to "
			     "%s/superseded.json: they run again",
			     w.superseded_builds, p->plugin.path, o->out);
	if (w.duplicates)
		message_line("sweep: %s/results.json held %ld rows of configurations it had a row "
			     "of already: dropped, the first row of each kept",
			     o->out, w.duplicates);
	/* Done: this sweep's (shard's) configurations with a row, not the directory's rows. */
	message_line(
		"sweep: %zu configurations, %zu already done, %zu to run%s on %u workers -> %s",
		nitems, nmine - ntodo, ntodo, w.retried ? " (failed runs again)" : "",
		o->jobs < ntasks ? o->jobs : (unsigned)(ntasks ? ntasks : 1), o->out);
	prc = sweep_pool_run(p, items, todo, tasks, ntasks, o->jobs, &ops, &s, &interrupted, err,
			     sizeof(err));
	if (s.tty)
		fprintf(stderr, "\n");
	if (prc) {
		sweep_fail(msg, msglen, -EIO, "sweep: %s", s.err[0] ? s.err : err);
		goto out;
	}
	if (sweep_writer_manifest(&w, p, o->shard_i, o->shard_n, nitems, o->argc, o->argv, err,
				  sizeof(err))) {
		sweep_fail(msg, msglen, -EIO, "sweep: %s", err);
		goto out;
	}
	if (interrupted) {
		sweep_fail(msg, msglen, -EIO,
			   "sweep interrupted: %ld of %zu runs kept in %s; --resume continues",
			   w.now.rows, ntodo, o->out);
		goto out;
	}
	if (w.now.sample_too_small)
		message_line("sweep: warning: %ld of %ld rows sampled too few chunks for the "
			     "estimate's %.0f%% bound (estimate.sample_too_small and reason in "
			     "results.json)",
			     w.now.sample_too_small, w.now.rows, 100 * SAMPLE_ERROR_BOUND);
	if (w.now.errors)
		sweep_fail(msg, msglen, -EIO,
			   "sweep: %ld of %ld runs failed (their rows say why); --resume runs them "
			   "again",
			   w.now.errors, w.now.rows);
	rc = w.now.errors || w.missing ? -EIO : 0;
out:
	if (sweep_writer_close(&w, err, sizeof(err)))
		rc = sweep_fail(msg, msglen, -EIO, "sweep: %s", err);
	free(tasks);
	free(todo);
	free(items);
	return rc;
}
