#pragma once

/*
 * Slurm's programs as `memsim sweep --slurm` runs them: found on PATH or named by an
 * environment variable (MEMSIM_SBATCH, MEMSIM_SQUEUE, MEMSIM_SACCT, MEMSIM_SCANCEL,
 * MEMSIM_SCONTROL: stand-ins in tests), run with their output caught in a private temporary
 * directory, and what they print about jobs read back.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum slurm_tool {
	SLURM_SBATCH,
	SLURM_SQUEUE,
	SLURM_SACCT,
	SLURM_SCANCEL,
	SLURM_SCONTROL,
	SLURM_TOOL_COUNT,
};

struct slurm_tools {
	char path[SLURM_TOOL_COUNT][4096]; /* "" where not found */
	char tmp[4096];                    /* the private directory for their output; "" before */
};

/* Finds each program. Nothing is run or created yet. From here to slurm_tools_finish(),
 * SIGINT and SIGTERM do not end this process (spawn_guard_begin()): a program running gets
 * the signal and ends, none starts after it, and slurm_tools_interrupted() says which came, so
 * that the caller winds down and the temporary directory goes; SIGPIPE is ignored (a closed
 * standard output is a write error, said at the end). Not nested. */
void slurm_tools_init(struct slurm_tools *t);
/* Removes the temporary directory and what is in it; the signals' handling as before. */
void slurm_tools_finish(struct slurm_tools *t);
/* The SIGINT or SIGTERM seen since slurm_tools_init() (also after finish), or 0. */
int slurm_tools_interrupted(void);

/* "sbatch", ... as found, or as the variable named it. */
const char *slurm_tool_name(enum slurm_tool which);

/* Runs tool which with args (NULL-terminated, after the program itself). *out gets its
 * standard output (caller frees with free()), last its last stderr line ("" for none).
 * Returns its exit status, or -1 with a message in last (not found, not started, a signal). */
int slurm_tool_run(struct slurm_tools *t, enum slurm_tool which, const char *const *args,
		   char **out, char *last, size_t lastlen);

/* A job state's text (squeue's %T, sacct's State) is at most this long, with its NUL. */
#define SLURM_STATE_LEN 32

/* The states of job id's array tasks 0 .. n - 1 (states[i]) and of the job itself when not an
 * array (states[n]): from squeue (-t all: finished jobs it still holds too), then sacct for
 * those squeue does not list. An entry stays "" where neither knows it. *from says which
 * answered ("squeue", "squeue, sacct"), or why none did. Returns whether Slurm answered:
 * squeue or sacct listed, or squeue said it no longer holds the job ("Invalid job id
 * specified": it ended a while ago); false where neither could be asked (no controller, no
 * accounting), from then naming each command and its error. */
bool slurm_job_states(struct slurm_tools *t, const char *id, uint64_t n,
		      char (*states)[SLURM_STATE_LEN], char *from, size_t fromlen);

/* Slurm's default MaxArraySize: array indices 0 .. 1000. */
#define SLURM_DEFAULT_MAX_ARRAY 1001

/* The most tasks one job array may have here, each indexed below it: MaxArraySize of `scontrol
 * show config`, or SchedulerParameters' max_array_tasks where smaller; what names which
 * ("MaxArraySize 1001", "max_array_tasks 500"). Returns it (0: arrays are disabled), or
 * SLURM_DEFAULT_MAX_ARRAY with why scontrol did not say in why ("" when it did). */
uint64_t slurm_max_array(struct slurm_tools *t, char *what, size_t whatlen, char *why,
			 size_t whylen);

/* Whether a job in this state may still run (pending, running, suspended...), not ended. */
bool slurm_state_active(const char *state);
