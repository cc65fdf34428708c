#pragma once

/*
 * `memsim sweep --slurm N`, inside: what a submission works with (run/sweep_slurm.c checks it),
 * and its scripts and sbatch calls (run/sweep_slurm_jobs.c).
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "run/slurm_tools.h"
#include "run/sweep.h"
#include "run/sweep_plan.h"
#include "run/sweep_slurm.h"

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
	/* Shards with good rows of another build of the plugin than the file there now: how
	 * many, the first, and its plugin_hash ("" where it records none). */
	uint64_t nbuild, build_first;
	char build_was[40];
	uint64_t max_array; /* tasks a job array may have here (slurm_max_array()) */
	struct {
		char id[48];
		uint64_t first;           /* its task j runs shard first + j */
	} arrays[SWEEP_SLURM_MAX_ARRAYS]; /* submitted */
	size_t narrays, nsubmitted;       /* and todo[0 .. nsubmitted) in them */
	char arrays_note[800];            /* how N goes in arrays, where it says anything */
	char moved_from[4096]; /* where DIR was when last submitted, if elsewhere (jobs.json) */
	bool wrote_jobs;       /* jobs.json written: jobs were submitted */
	struct slurm_tools tools;
	char *err; /* the failure's line (run/sweep.h sweep_fail()) */
	size_t errlen;
};

/* Writes DIR/slurm/sweep.sbatch and merge.sbatch. Returns 0, or -EIO with its line in u->err. */
int sweep_slurm_write_scripts(struct submit *u);

/* Submits the shards in u->todo (if any), as one array, or one array per block of u->max_array
 * shards where they pass it, and a merge after them all; records them in DIR/slurm/jobs.json
 * and prints them. Returns 0, or a failure (run/sweep.h) with its line in u->err. */
int sweep_slurm_submit_jobs(struct submit *u);
