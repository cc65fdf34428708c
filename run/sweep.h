#pragma once

/*
 * Running a sweep: its plan (run/sweep_plan.h) on a worker pool (run/sweep_pool.h) into a
 * results directory (run/sweep_writer.h). `memsim sweep` and `memsim study` call it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/sweep_plan.h"

struct sweep_run_options {
	const char *out;
	unsigned jobs;    /* worker processes */
	bool resume;      /* run only the configurations not in out/results.json yet */
	bool rerun_other; /* on resume, run again the rows of another model revision */
	uint64_t shard_i; /* run configurations i, i + n, ...: shard i of n */
	uint64_t shard_n;
	int argc; /* the command that asked, for the manifest */
	char **argv;
};

/* The defaults: out NULL, one worker per core, no resume, shard 0 of 1. */
void sweep_run_options_init(struct sweep_run_options *o);

/* The plan's configurations (sweep_plan_items()), each checked as a run would check it: NULL
 * with a one-line usage message in err (MEMSIM_MEMORY not a size, a configuration or a
 * sampled cache that cannot run). Caller frees with free(). */
struct sweep_item *sweep_check_items(const struct sweep_plan *p, size_t *count, char *err,
				     size_t errlen);

/*
 * A sweep's failures, here and in run/sweep_slurm.h: a negative errno and one line in err, the
 * text after "memsim: ", for the caller to print:
 *   -EINVAL  a usage error: the options, or what they name, cannot run (a bad configuration,
 *            DIR holding another sweep's results)
 *   -EEXIST  DIR/shards/i holds another sweep's shard (as a usage error, but said as it is)
 *   other    the sweep failed or was interrupted (what finished is kept); err may be "" where
 *            each failure was said on stderr as it happened
 * What is said along the way (counts, warnings, notes, a worker that died) goes to stderr
 * (base/message.h). err must start as "" (the calls below set it so).
 */

/* A failure's line, fmt, into err; returns rc. A line already in err, an earlier failure of the
 * same run, is said on stderr first (message_line()), so that each failure is one line, in
 * the order they came. */
int sweep_fail(char *err, size_t errlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Runs the plan. Every configuration is checked first (a bad one is a usage error before any
 * run). Returns 0 when every run succeeded, else a failure as above. */
int sweep_run(const struct sweep_plan *p, const struct sweep_run_options *o, char *err,
	      size_t errlen);
