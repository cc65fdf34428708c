#pragma once

/*
 * Running a sweep: its plan (cli/sweep_plan.h) on a worker pool (cli/sweep_pool.h) into a
 * results directory (cli/sweep_writer.h). `memsim sweep` and `memsim study` call it.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cli/sweep_plan.h"

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
 * after a one-line usage message (MEMSIM_MEMORY not a size, a configuration or a sampled cache
 * that cannot run). Caller frees with free(). */
struct sweep_item *sweep_check_items(const struct sweep_plan *p, size_t *count);

/* Runs the plan. Every configuration is checked first (a bad one is a usage error before any
 * run). Returns the exit status: 0 when every run succeeded, 1 for a failed or interrupted
 * sweep (what finished is kept), 2 for a usage error; each after a one-line message. */
int sweep_run(const struct sweep_plan *p, const struct sweep_run_options *o);
