#pragma once

/*
 * The worker pool of a sweep: configurations run in forked worker processes (each builds its
 * report, the JSON object of run/evaluate.h, and sends it as one line); the parent hands
 * out tasks and receives the lines, so it alone writes the output files. A task is one
 * configuration, or one configuration over the sizes of a --cache-sweep run in one pass, or
 * in passes that fit in the memory the worker may take (each row's "onepass" says which).
 */

#include <stdbool.h>
#include <stddef.h>

#include "run/sweep_plan.h"

struct sweep_pool_ops {
	/* A finished run: its report as one JSON line (no newline). Returns 0, or a nonzero
	 * value that stops the pool (the workers are stopped) and is returned. */
	int (*row)(void *ctx, long index, const char *line);
	/* The worker running index died (killed, out of memory); why says how ("the worker
	 * running it was killed by signal 9 (Killed)"). A fresh worker takes its place; index
	 * gets a failed row (through row) when it ran alone, and the sizes a one-pass task had
	 * not sent run again one by one. */
	void (*died)(void *ctx, long index, const char *why);
	/* After each batch of finished runs: how many of the n so far. */
	void (*progress)(void *ctx, size_t finished, size_t n);
};

/* Runs tasks[0 .. ntasks) (over items[todo[...]], run/sweep_plan.h) on jobs workers; a task
 * of a one-pass group sends a row per item. SIGINT and SIGTERM stop it: runs in flight are
 * abandoned, *interrupted is set and 0 returned. Returns 0, ops->row's nonzero value, or -1
 * with a message in err (a pipe or fork failed). */
int sweep_pool_run(const struct sweep_plan *p, const struct sweep_item *items, const long *todo,
		   const struct sweep_task *tasks, size_t ntasks, unsigned jobs,
		   const struct sweep_pool_ops *ops, void *ctx, bool *interrupted, char *err,
		   size_t errlen);
