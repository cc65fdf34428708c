#pragma once

/*
 * Inside the plot modules: writing one plot's data file and script (analysis/plot.c), and
 * the plot families (analysis/plot_study.c, analysis/plot_profile.c).
 *
 * A script's shape: a comment header (what, from where, how to redraw), `here` (the script's
 * directory, from ARG0) and `data`, the caller's settings, then one loop over the image
 * formats whose body is the caller's plot command(s):
 *
 *     plot_begin() ... set title ... plot_draw() ... plot ... plot_end()
 */

#include <stdarg.h>
#include <stdio.h>

#include "analysis/plot.h"

/* What each plot needs of a sweep's rows (`memsim plot` on a sweep's directory), said after
 * PLOT_SWEEP_LACKS where they do not allow it. */
#define PLOT_SWEEP_LACKS "%s/%s has none of what it needs: %s"
#define PLOT_NEEDS_BYTES_VS_N                                                                      \
	"naive or flash2 rows over two or more N on one cache (memsim sweep --kernel "             \
	"naive,flash2 --N 256:4096:x2)"
#define PLOT_NEEDS_INTENSITY_RATIO                                                                 \
	"naive and flash2 rows at the same N, over two or more N (as bytes_vs_n)"
#define PLOT_NEEDS_DRAM_VS_CACHE_SIZE                                                              \
	"naive, flash1 or flash2 rows over two or more sizes of one cache level (memsim "          \
	"sweep --cache-sweep L2=64K:64M:x2)"
#define PLOT_NEEDS_DECODE                                                                          \
	"decode rows, fewer queries than keys, over two or more N_kv (memsim sweep "               \
	"--kernel flash2 --N 1 --N-kv 1024:65536:x2)"

/* Okabe-Ito colours, distinct for colour-blind readers. */
#define PLOT_COLOR_NAIVE "#D55E00"
#define PLOT_COLOR_FLASH1 "#009E73"
#define PLOT_COLOR_FLASH2 "#0072B2"

struct plot_out {
	struct plot_set *set;
	struct plot_info info;
	FILE *dat, *gp;
	char dat_path[4300], gp_path[4300];
};

/* Opens set->dir/NAME.dat and NAME.gp and writes their headers: title is the plot's title,
 * description one sentence for index.json and the script's header. Returns 0, or a negative
 * errno with "path: what" in err and nothing open. */
int plot_begin(struct plot_out *o, struct plot_set *set, const char *name, const char *title,
	       const char *description, const enum plot_source *inputs, unsigned ninputs, char *err,
	       size_t errlen);

/* Starts the script's loop over the image formats: terminal, output file; what the caller
 * writes next is drawn once per format. */
void plot_draw(struct plot_out *o);

/* Closes the loop and both files and adds the plot to its set. Returns 0, or a negative
 * errno with "path: what" in err (write errors included). */
int plot_end(struct plot_out *o, char *err, size_t errlen);

/* Records that plot name is not drawn, and why (printf format). */
void plot_skip(struct plot_set *set, const char *name, bool error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Records that plot name is skipped for want of source s: missing (with hint, or NULL),
 * unusable (its error), or usable but holding nothing to draw (the words in empty). */
void plot_skip_source(struct plot_set *set, const char *name, const struct plot_input *in,
		      enum plot_source s, const char *hint, const char *empty);

/* s as the inside of a gnuplot double-quoted string (", \ escaped). Returns buf. */
char *plot_quote(const char *s, char *buf, size_t len);

/* A byte count for a label: "640 KiB", "16 MiB", "1.5 GiB". Returns buf. */
char *plot_bytes_label(double bytes, char *buf, size_t len);

/* A positive number with n significant digits, without exponent when it is within
 * 1e-3 .. 1e6 ("2.6", "124", "0.0123"). Returns buf. */
char *plot_number_label(double x, int n, char *buf, size_t len);

/* Writes the plots of the sweeps (DIR/lab, DIR/exact) and of the profile (DIR/profile,
 * DIR/ceilings.json), or records why not. Return 0 or a negative errno with err. */
int plot_study_write(struct plot_set *set, const struct plot_input *in, char *err, size_t errlen);
int plot_profile_write(struct plot_set *set, const struct plot_input *in, char *err, size_t errlen);
/* The plots of the decode step (DIR/decode), or why not. */
int plot_decode_write(struct plot_set *set, const struct plot_input *in, char *err, size_t errlen);
