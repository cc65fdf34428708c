#pragma once

/*
 * The plots of `memsim plot`: for every plot a study directory's inputs allow, a data file
 * (NAME.dat: whitespace columns under a header comment) and a gnuplot script (NAME.gp) that
 * draws NAME.png (pngcairo) and NAME.svg beside itself, from any working directory:
 * `gnuplot DIR/plots/NAME.gp`; `gnuplot -e 'formats="svg"' DIR/plots/NAME.gp` draws one.
 * Running gnuplot is the caller's; so is recording which images it drew (png, svg).
 *
 *   bytes_vs_n_CACHE    DRAM bytes vs N per cache of DIR/lab: simulated, lab and exact formula
 *   intensity_ratio     flash2 / naive arithmetic intensity vs N, per cache of DIR/lab
 *   dram_vs_cache_size  DRAM bytes vs the last level's size at DIR/exact's largest N
 *   perf, perf_bytes    the naive layer's per-operation p50 time and DRAM bytes per T
 *   roofline            every profiled operation against the measured ceilings
 *   decode_per_token    DIR/decode: bytes per generated token vs N_kv per head layout
 *   decode_tokens_per_s DIR/decode: the tokens/s bound at the rows' bandwidth vs N_kv
 */

#include <stdbool.h>
#include <stddef.h>

#include "analysis/plot_input.h"

enum plot_format {
	PLOT_FORMAT_PNG = 1 << 0,
	PLOT_FORMAT_SVG = 1 << 1,
};

struct plot_info {
	char name[80];
	char description[400];      /* what it shows, one sentence */
	enum plot_source inputs[3]; /* what it read */
	unsigned ninputs;
	bool png, svg; /* images drawn: set by the caller */
};

struct plot_skip {
	char name[80];
	char reason[700];
	bool error; /* an input is there but unusable (else: missing, or nothing to draw) */
};

struct plot_set {
	char dir[4200]; /* DIR/plots */
	unsigned formats;
	struct plot_info *plots;
	size_t nplots;
	struct plot_skip *skipped;
	size_t nskipped;
};

/* Parses a --format list ("png,svg", "svg") into formats. Returns NULL, or a static message
 * naming the problem. */
const char *plot_parse_formats(const char *s, unsigned *formats);

/* Writes the data file and the script of every plot in's inputs allow into in->dir/plots
 * (created), scripts drawing the images in formats; the others go to set->skipped with the
 * reason. Returns 0, or a negative errno with "path: what" in err (files already written
 * stay). Release set with plot_set_finish() either way. */
int plot_set_write(struct plot_set *set, const struct plot_input *in, unsigned formats, char *err,
		   size_t errlen);

/* Removes from set->dir what an earlier run left there and this one did not write: the
 * files (.dat, .gp, .png, .svg, .log) of plots not written this time, and images in a format
 * not asked for, so that set->dir holds what index.json lists. Only names of memsim's plots
 * are touched. */
void plot_set_remove_stale(const struct plot_set *set);

/* Frees set's lists; a no-op on a zeroed set. */
void plot_set_finish(struct plot_set *set);

/* Writes set->dir/index.json: every plot written (name, its images or null where not drawn,
 * data, script, description, inputs) and every plot skipped with its reason. Returns 0 or a
 * negative errno with a message in err. */
int plot_write_index(const struct plot_set *set, char *err, size_t errlen);
