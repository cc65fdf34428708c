#pragma once

/*
 * A sweep's output files, written by the parent alone, one line per finished run, flushed at
 * once:
 *   DIR/results.json   one JSON object per line (a run's report, plus "key" and "index")
 *   DIR/results.csv    one row per run (analysis/results.h)
 *   DIR/manifest.json  date, versions, host, seed, the command, the plan, a summary
 * Resuming keeps every complete line of results.json but the failed runs (an "error" key),
 * which run again, and a configuration's good rows after its first (a copy), and cuts off a
 * torn last line; results.csv is rewritten from the rows kept.
 * Every row records the model revision that made it (report_model_revision()), and a
 * plugin's row the build of the plugin (plugin_hash): rows of another revision, or of another
 * build of the plan's plugin, are refused on resuming, or with rerun_other moved to
 * DIR/superseded.json and run again.
 * The manifest's summary counts every row in the directory, those from earlier runs too.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "run/sweep_plan.h"

/* What a set of rows says. */
struct sweep_tally {
	long rows, errors, exact_within, lab_in_regime, lab_in_regime_within;
	long sample_too_small; /* set sampling's rows whose sample is too small */
};

struct sweep_writer {
	char dir[4096];
	int dirfd;   /* outdir_open() of dir; -1 when none */
	int lock;    /* lock_dir() of dir; -1 when none */
	int results; /* results.json, opened O_APPEND; -1 when closed */
	FILE *csv;
	/* the plan's --param keys, a column each in results.csv (borrowed from the plan) */
	const char *param_keys[PLUGIN_MAX_PARAMS];
	unsigned nparams;
	long long results_bytes; /* results.json's length after its last whole row */
	char **done_keys; /* keys of the runs kept when opened (failed ones not), sorted */
	size_t ndone;
	long retried;		/* failed rows dropped on opening, to run again */
	long duplicates;        /* good rows of a configuration that had one already, dropped */
	long superseded; /* rows of another model revision or plugin build moved to superseded.json
			  */
	long superseded_builds; /* of them, those of another build of the plugin */
	struct sweep_tally now; /* the rows written since opening */
	struct sweep_tally all; /* every row in results.json: those kept on opening too */
	/* The configurations of the sweep (its shard) still without a good row: set by the
	 * caller once known (-1 before), one less for each good row written. */
	long missing;
	/* Rows of each --cache-sweep group (onepass.group) that did not run in one pass with all
	 * their task's sizes (onepass.why), all of them, those read on opening too; the first
	 * reason. */
	long onepass_apart[SWEEP_CACHES_MAX];
	char onepass_why[SWEEP_CACHES_MAX][256];
};

/* Locks dir (a second sweep into it is refused, naming the first one's pid) and opens its
 * results for appending (creating dir and them), after reading the runs already there and
 * dropping the failed ones. Every file is opened inside the directory's descriptor without
 * following links (outdir_open(), base/util.h): a link planted there, or a directory of another
 * user's, is refused. Existing rows are refused (-2) unless resume; every row's key must end
 * in plan p's mode (sweep_plan_mode()), and on resume the plan manifest.json records must have
 * it: another plan's rows or manifest are refused (-2), before anything changes. Good rows of
 * another model revision, or of another build of p's plugin (their plugin_hash not
 * p->plugin_hash), are refused (-2) too, unless rerun_other: then they are appended to
 * DIR/superseded.json and dropped, to run again. Returns 0, -2 (a usage error), or -1 with a
 * one-line message in err. Close with sweep_writer_close(). */
int sweep_writer_open(struct sweep_writer *w, const char *dir, const struct sweep_plan *p,
		      bool resume, bool rerun_other, char *err, size_t errlen);

/* Whether results.json held the configuration with this key when opened. */
bool sweep_writer_has(const struct sweep_writer *w, const char *key);

/* Appends one run's report (a JSON line without newline) to results.json and results.csv.
 * Returns 0, or -1 with "cannot write path: why" in err when a write failed (a full disk):
 * results.json is then cut back to its last whole row, which --resume continues from. */
int sweep_writer_row(struct sweep_writer *w, const char *line, char *err, size_t errlen);

/* Writes manifest.json: command (argv) and sweep_command (the plan, and shard i of n when n >
 * 1, as one command), the plan, total configurations, and the summary of every row in the
 * directory (results_summary; "complete" when missing is 0).
 * Returns 0 or -1 with err. */
int sweep_writer_manifest(const struct sweep_writer *w, const struct sweep_plan *p,
			  uint64_t shard_i, uint64_t shard_n, size_t total, int argc, char **argv,
			  char *err, size_t errlen);

/* Closes the files. Returns 0, or -1 with err when a last write failed. */
int sweep_writer_close(struct sweep_writer *w, char *err, size_t errlen);
