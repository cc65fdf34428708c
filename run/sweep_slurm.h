#pragma once

/*
 * `memsim sweep --slurm N`: a sweep as a Slurm job array of N tasks, task i running shard i/N
 * of the plan into DIR/shards/i with --resume, and a merge job (afterok on the array) joining
 * them into DIR. Where N passes the cluster's MaxArraySize M (scontrol show config), the
 * shards go as several arrays of at most M tasks, array k's task j running shard k * M + j
 * (its script given k * M), the merge afterok on all of them. The scripts go to
 * DIR/slurm/sweep.sbatch and merge.sbatch, the job ids to DIR/slurm/jobs.json. Running the same
 * command again submits only the shards whose manifest is not complete, and a new merge; `--status
 * DIR` tells each shard's rows and job state. sbatch, squeue, sacct, scancel and scontrol are found
 * on PATH, or named by MEMSIM_SBATCH, MEMSIM_SQUEUE, MEMSIM_SACCT, MEMSIM_SCANCEL and
 * MEMSIM_SCONTROL.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "run/slurm_tools.h"
#include "run/sweep.h"
#include "run/sweep_plan.h"

#define SWEEP_SLURM_MAX_TASKS 10000
/* Job arrays a submission may be split into where the cluster's MaxArraySize is smaller than
 * --slurm N: array k runs shards k * M .. k * M + M - 1 as its tasks 0 .. M - 1. */
#define SWEEP_SLURM_MAX_ARRAYS 64

struct sweep_slurm {
	uint64_t tasks;   /* --slurm N; 0: the sweep runs here */
	const char *args; /* --slurm-args, as given (split as a shell splits words) */
	bool dry_run;     /* write the scripts, print what would be submitted */
	char **forward;   /* the plan's options as given ("--N=64,128", "--causal"), owned */
	unsigned nforward;
};

void sweep_slurm_init(struct sweep_slurm *s);
void sweep_slurm_finish(struct sweep_slurm *s);

/* Records an option of the plan for the tasks' command line: "--name=value", or "--name"
 * where value is NULL. */
void sweep_slurm_forward(struct sweep_slurm *s, const char *name, const char *value);

/* Writes the scripts and submits the array and the merge (or, resubmitting, the shards not
 * complete; only the merge where all are), for plan p into ro->out with ro->jobs workers a
 * task. Returns 0, or a failure as run/sweep.h says, its line in err: -EINVAL for a usage
 * error (another sweep's DIR, a bad --slurm-args), -EEXIST for another sweep's shard, another
 * negative errno for a runtime one (no sbatch, a rejected submission, jobs of this sweep still
 * queued or running, a signal). */
int sweep_slurm_submit(const struct sweep_slurm *s, const struct sweep_plan *p,
		       const struct sweep_run_options *ro, char *err, size_t errlen);

/* Prints each shard's rows done/total and its task's state (squeue, else sacct, else the files
 * alone, saying so) and the merge job's. Returns 0, or -EIO with a line in err when dir holds
 * no --slurm sweep or a signal cut it short. */
int sweep_slurm_status(const char *dir, char *err, size_t errlen);

/* The ids of submission sub's array jobs, separated by blanks, into ids. Returns how many. */
int sweep_slurm_sub_arrays(const cJSON *sub, char *ids, size_t len);

/* The job holding shard i in submission sub of jobs.json ("array_jobs", or the "array_job" of
 * an older jobs.json), as "ID_TASK" into job (may be NULL with joblen 0). Returns false where
 * the submission has no array. */
bool sweep_slurm_task_job(const cJSON *sub, uint64_t i, char *job, size_t joblen);

/* The states of shards 0 .. n - 1 in submission sub's arrays into states (n + 1 entries; ""
 * where unknown), asked with slurm_job_states(); from says who answered. Returns whether Slurm
 * answered about every array (slurm_job_states()). */
bool sweep_slurm_sub_states(struct slurm_tools *t, const cJSON *sub, uint64_t n,
			    char (*states)[SLURM_STATE_LEN], char *from, size_t fromlen);

/* A task's --mem in MiB: jobs workers each running the largest of the n items (its arrays and
 * its cache models), plus a margin for the process, the allocator and the tracing layer
 * (run/sweep_slurm_mem.c). */
uint64_t sweep_slurm_task_mem_mib(const struct sweep_plan *p, const struct sweep_item *items,
				  size_t n, unsigned jobs);

/* Splits text into words as a shell would (blanks separate; '...' literal; "..." with \" \\ \$
 * \` escapes; a backslash outside quotes escapes the next character), with no expansion.
 * Returns the number of words (*words: caller frees each and the array with free()), or -1 with
 * a one-line message in err (an unterminated quote, more than max words). */
int sweep_slurm_split(const char *text, unsigned max, char ***words, char *err, size_t errlen);
