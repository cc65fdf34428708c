/*
 * The plots of the layer profile: the naive layer's per-operation time and DRAM bytes per T
 * (DIR/profile) and the roofline (DIR/profile against DIR/ceilings.json). Notes:
 * - One layer shape per plot: fp32 (else the first row's dtype) and the d_model, heads and
 *   d_head of the first such row; rows of other shapes are left out.
 * - The naive layer is qkv_proj and out_proj (kernel "proj") around scores, softmax and av
 *   (kernel "naive"); a T that lacks one of the five is left out of perf and perf_bytes, and
 *   the data file says so.
 * - Stacked bars grow about T^2 from the smallest T to the largest, so each plot has two
 *   panels: the amounts, and each operation's share of the layer, where every T is legible
 *   and the dominant operation is written above its bar.
 * - The roofline's points are the profile's measured GFLOP/s against FLOPs per simulated
 *   DRAM byte; "layer" rows are sums of the others and are left out.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plot_impl.h"
#include "base/util.h"

/* The naive layer's operations, in execution order, and their colours (Okabe-Ito). */
static const char *const layer_ops[] = { "qkv_proj", "scores", "softmax", "av", "out_proj" };
static const char *const layer_kernels[] = { "proj", "naive", "naive", "naive", "proj" };
static const char *const layer_colors[] = { "#999999", "#E69F00", "#56B4E9", "#009E73", "#CC79A7" };
#define LAYER_OPS 5

struct shape {
	char dtype[8];
	unsigned d_model, heads, d_head;
	bool found;
};

static struct shape
pick_shape(const struct plot_op *ops, size_t n)
{
	struct shape s = { 0 };
	bool fp32 = false;

	for (size_t i = 0; i < n; i++)
		fp32 |= !strcmp(ops[i].dtype, "fp32");
	for (size_t i = 0; i < n && !s.found; i++) {
		if (fp32 && strcmp(ops[i].dtype, "fp32"))
			continue;
		snprintf(s.dtype, sizeof(s.dtype), "%s", ops[i].dtype);
		s.d_model = ops[i].d_model;
		s.heads = ops[i].heads;
		s.d_head = ops[i].d_head;
		s.found = true;
	}
	return s;
}

static bool
in_shape(const struct shape *s, const struct plot_op *o)
{
	return s->found && !strcmp(o->dtype, s->dtype) && o->d_model == s->d_model &&
	       o->heads == s->heads && o->d_head == s->d_head;
}

static char *
shape_words(const struct shape *s, char *buf, size_t len)
{
	snprintf(buf, len, "d_model = %u, %u heads × %u, %s", s->d_model, s->heads, s->d_head,
		 s->dtype);
	return buf;
}

static int
cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

/* The distinct T of the rows in shape s, sorted; returns how many (at most max). */
static size_t
list_T(const struct plot_op *ops, size_t n, const struct shape *s, unsigned *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		if (!in_shape(s, &ops[i]))
			continue;
		while (j < k && out[j] != ops[i].T)
			j++;
		if (j == k && k < max)
			out[k++] = ops[i].T;
	}
	qsort(out, k, sizeof(*out), cmp_unsigned);
	return k;
}

static const struct plot_op *
find_op(const struct plot_input *in, const struct shape *s, unsigned T, const char *kernel,
	const char *op)
{
	for (size_t i = 0; i < in->nops; i++) {
		const struct plot_op *o = &in->ops[i];

		if (in_shape(s, o) && o->T == T && !strcmp(o->kernel, kernel) && !strcmp(o->op, op))
			return o;
	}
	return NULL;
}

/* A unit for amounts up to max: its name and what one of it is in base units. */
struct unit {
	const char *name;
	double size;
};

static struct unit
time_unit(double max_seconds)
{
	if (max_seconds < 1e-3)
		return (struct unit){ "µs", 1e-6 };
	if (max_seconds < 1)
		return (struct unit){ "ms", 1e-3 };
	return (struct unit){ "s", 1 };
}

static struct unit
bytes_unit(double max_bytes)
{
	if (max_bytes < 1048576)
		return (struct unit){ "KiB", 1024 };
	if (max_bytes < 1073741824.0)
		return (struct unit){ "MiB", 1048576 };
	return (struct unit){ "GiB", 1073741824.0 };
}

#define MAX_T 64

/* perf (bytes false: p50 time) or perf_bytes (bytes true: simulated DRAM bytes). */
/* The naive layer's operations per T in shape s (bytes or p50 seconds), the Ts with all of them
 * (kept, returns how many) and their totals; the Ts left out named in missing. */
struct layer_bars {
	unsigned kept[MAX_T];
	double v[MAX_T][LAYER_OPS], total[MAX_T], max_total;
	char missing[600];
};

static size_t
layer_bars_collect(const struct plot_input *in, const struct shape *s, bool bytes,
		   struct layer_bars *lb)
{
	unsigned T[MAX_T];
	size_t nT = list_T(in->ops, in->nops, s, T, MAX_T), nkept = 0;
	char *missing = lb->missing;

	lb->max_total = 0;
	missing[0] = '\0';
	for (size_t i = 0; i < nT; i++) {
		const struct plot_op *op[LAYER_OPS];
		int k, gone = -1;

		for (k = 0; k < LAYER_OPS; k++) {
			op[k] = find_op(in, s, T[i], layer_kernels[k], layer_ops[k]);
			if (!op[k] && gone < 0)
				gone = k;
		}
		if (gone >= 0) {
			snprintf(missing + strlen(missing), sizeof(lb->missing) - strlen(missing),
				 "%s T = %u (no %s)", missing[0] ? "," : "", T[i], layer_ops[gone]);
			continue;
		}
		lb->total[nkept] = 0;
		for (k = 0; k < LAYER_OPS; k++) {
			lb->v[nkept][k] = bytes ? op[k]->dram_bytes : op[k]->p50_seconds;
			lb->total[nkept] += lb->v[nkept][k];
		}
		lb->max_total = fmax(lb->max_total, lb->total[nkept]);
		lb->kept[nkept++] = T[i];
	}
	return nkept;
}

/* The data: one row per kept T, each operation, the total, the dominant one and its share. */
static void
write_layer_bars_dat(FILE *f, const struct layer_bars *lb, size_t nkept, bool bytes)
{
	const unsigned *kept = lb->kept;
	const double(*v)[LAYER_OPS] = lb->v;
	const double *total = lb->total;
	const char *missing = lb->missing;

	fprintf(f,
		"# %s of each operation of the naive layer%s; total is their sum; "
		"dominant is the largest and share its part of total.\n",
		bytes ? "simulated DRAM bytes" : "p50 seconds",
		bytes ? "" : " (seconds.p50 of each profile row)");
	if (missing[0])
		fprintf(f, "# Left out, incomplete:%s.\n", missing);
	fprintf(f, "# %-6s", "T");
	for (int k = 0; k < LAYER_OPS; k++)
		fprintf(f, " %14s", layer_ops[k]);
	fprintf(f, " %14s %10s %8s\n", "total", "dominant", "share");
	for (size_t i = 0; i < nkept; i++) {
		int dom = 0;

		fprintf(f, "%-8u", kept[i]);
		for (int k = 0; k < LAYER_OPS; k++) {
			fprintf(f, bytes ? " %14.15g" : " %14.8g", v[i][k]);
			if (v[i][k] > v[i][dom])
				dom = k;
		}
		fprintf(f, bytes ? " %14.15g %10s %8.4f\n" : " %14.8g %10s %8.4f\n", total[i],
			layer_ops[dom], total[i] > 0 ? v[i][dom] / total[i] : 0);
	}

}

static int
write_layer_bars(struct plot_set *set, const struct plot_input *in, const struct shape *s,
		 bool bytes, char *err, size_t errlen)
{
	static const enum plot_source inputs[] = { PLOT_SOURCE_PROFILE };
	const char *name = bytes ? "perf_bytes" : "perf";
	struct layer_bars lb;
	size_t nkept;
	char title[400], words[160];
	struct plot_out o;
	struct unit u;
	int rc;

	nkept = layer_bars_collect(in, s, bytes, &lb);
	if (nkept == 0) {
		plot_skip(set, name, false,
			  "no T with all of the naive layer's operations (qkv_proj, scores, "
			  "softmax, av, out_proj) in %s/%s",
			  in->dir, plot_source_path(PLOT_SOURCE_PROFILE));
		return 0;
	}
	u = bytes ? bytes_unit(lb.max_total) : time_unit(lb.max_total);
	snprintf(title, sizeof(title), "Naive attention layer per operation: %s (%s)",
		 bytes ? "simulated DRAM bytes" : "p50 time", shape_words(s, words, sizeof(words)));
	rc = plot_begin(&o, set, name, title,
			bytes ? "Stacked bars of the simulated DRAM bytes of each operation of "
				"the naive layer (qkv_proj, scores, softmax, av, out_proj) for "
				"each T, in bytes and as shares, the dominant one named."
			      : "Stacked bars of the p50 time of each operation of the naive layer "
				"(qkv_proj, scores, softmax, av, out_proj) for each T, in time and "
				"as shares, the dominant one named.",
			inputs, 1, err, errlen);
	if (rc)
		return rc;
	write_layer_bars_dat(o.dat, &lb, nkept, bytes);
	fprintf(o.gp,
		"\nunit = %g    # one %s in %s\n"
		"unset title\n"
		"set style data histograms\n"
		"set style histogram rowstacked\n"
		"set style fill solid 0.9 border lc rgb \"#444444\"\n"
		"set boxwidth 0.7\n"
		"set xtics scale 0\n"
		"set grid noxtics ytics\n"
		"unset xlabel\n"
		"set xrange [-0.6:%zu.6]\n",
		u.size, u.name, bytes ? "bytes" : "seconds", nkept - 1);
	for (int k = 0; k < LAYER_OPS; k++)
		fprintf(o.gp, "set style line %d lc rgb \"%s\"\n", k + 1, layer_colors[k]);
	plot_draw(&o);
	fprintf(o.gp,
		"\tset multiplot layout 2,1 title \"%s\" font \",14\"\n"
		"\tset lmargin at screen 0.09\n"
		"\tset rmargin at screen 0.97\n"
		"\t# Top: the amounts, the total above each bar.\n"
		"\tset ylabel \"%s (%s)\"\n"
		"\tset yrange [0:*]\n"
		"\tset offsets 0, 0, graph 0.12, 0\n"
		"\tset key outside top center horizontal noopaque nobox\n"
		"\tplot data using ($2/unit):xtic(1) ls 1 title \"qkv_proj\", \\\n"
		"\t\t'' using ($3/unit) ls 2 title \"scores\", \\\n"
		"\t\t'' using ($4/unit) ls 3 title \"softmax\", \\\n"
		"\t\t'' using ($5/unit) ls 4 title \"av\", \\\n"
		"\t\t'' using ($6/unit) ls 5 title \"out_proj\", \\\n"
		"\t\t'' using 0:($7/unit):(gprintf(\"%%.3g\", $7/unit)) with labels "
		"offset 0,0.7 notitle\n"
		"\t# Bottom: each operation's share, the dominant one named above its bar.\n"
		"\tset ylabel \"share of the layer's %s (%%)\"\n"
		"\tset xlabel \"sequence length T (tokens)\"\n"
		"\tset yrange [0:120]\n"
		"\tset ytics 0, 20, 100\n"
		"\tset offsets 0, 0, 0, 0\n"
		"\tunset key\n"
		"\tplot data using (100*$2/$7):xtic(1) ls 1, '' using (100*$3/$7) ls 2, \\\n"
		"\t\t'' using (100*$4/$7) ls 3, '' using (100*$5/$7) ls 4, \\\n"
		"\t\t'' using (100*$6/$7) ls 5, \\\n"
		"\t\t'' using 0:(100):(sprintf(\"%%s %%.0f%%%%\", strcol(8), 100*$9)) "
		"with labels offset 0,0.9 notitle\n"
		"\tunset multiplot\n"
		"\tunset xlabel\n"
		"\tset ytics autofreq\n",
		title, bytes ? "simulated DRAM bytes" : "p50 time", u.name,
		bytes ? "bytes" : "time");
	return plot_end(&o, err, errlen);
}

/* The roofline's point series: an operation of a kernel. */
static const struct {
	const char *kernel, *op, *title, *color;
	int pt;
} series[] = {
	{ "proj", "qkv_proj", "qkv_proj", "#999999", 7 },
	{ "naive", "scores", "scores (naive)", "#E69F00", 7 },
	{ "naive", "softmax", "softmax (naive)", "#56B4E9", 7 },
	{ "naive", "av", "av (naive)", "#009E73", 7 },
	{ "proj", "out_proj", "out_proj", "#CC79A7", 7 },
	{ "flash1", "attention", "flash1 attention", "#000000", 5 },
	{ "flash2", "attention", "flash2 attention", "#D55E00", 5 },
};
#define SERIES (sizeof(series) / sizeof(series[0]))

static int
series_of(const struct plot_op *o)
{
	for (size_t i = 0; i < SERIES; i++)
		if (!strcmp(o->kernel, series[i].kernel) && !strcmp(o->op, series[i].op))
			return (int)i;
	return -1;
}

/* The roofline's points in shape s: how many, which series have one, their x and y range. */
static size_t
roofline_points(const struct plot_input *in, const struct shape *s, bool have[SERIES],
		double range[4])
{
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
	size_t npoints = 0;

	for (size_t i = 0; i < in->nops; i++) {
		const struct plot_op *op = &in->ops[i];
		int k = series_of(op);

		if (!in_shape(s, op) || k < 0 || op->intensity <= 0 || op->gflops <= 0)
			continue;
		have[k] = true;
		npoints++;
		xmin = fmin(xmin, op->intensity);
		xmax = fmax(xmax, op->intensity);
		ymin = fmin(ymin, op->gflops);
		ymax = fmax(ymax, op->gflops);
	}
	range[0] = xmin, range[1] = xmax, range[2] = ymin, range[3] = ymax;
	return npoints;
}

/* One data row per operation and T. */
static void
write_roofline_dat(FILE *f, const struct plot_input *in, const struct shape *s)
{
	fprintf(f,
		"# One point per operation and T: intensity = FLOPs / simulated DRAM bytes, "
		"gflops = FLOPs / p50 time / 1e9 (measured).\n"
		"# series = kernel_op. Layer rows (sums of the others) left out.\n"
		"# %-18s %6s %14s %14s %14s %14s %14s\n",
		"series", "T", "intensity", "gflops", "flops", "dram_bytes", "p50_seconds");
	for (size_t i = 0; i < in->nops; i++) {
		const struct plot_op *op = &in->ops[i];
		int k = series_of(op);
		char sname[40];

		if (!in_shape(s, op) || k < 0 || op->intensity <= 0 || op->gflops <= 0)
			continue;
		snprintf(sname, sizeof(sname), "%s_%s", op->kernel, op->op);
		fprintf(f, "%-20s %6u %14.8g %14.8g %14.15g %14.15g %14.8g\n", sname, op->T,
			op->intensity, op->gflops, op->flops, op->dram_bytes, op->p50_seconds);
	}

}

/* The ceilings, the ridge points and the roofs' labels. */
static void
write_roofline_ceilings(FILE *gp, const struct plot_ceilings *c, const char *title,
			const char *cores, const double range[4], const unsigned *T, size_t nT)
{
	double xmin = range[0], xmax = range[1], ymin = range[2], ymax = range[3];
	char tq[700], q[300];

	fprintf(gp,
		"\n# The measured ceilings (DIR/ceilings.json): bytes/s and FLOP/s.\n"
		"bw_all = %.6g; pk_all = %.6g    # %s\n"
		"bw_one = %.6g; pk_one = %.6g    # one core\n"
		"ridge_all = pk_all / bw_all    # FLOP/byte\n"
		"ridge_one = pk_one / bw_one\n"
		"xmin = %g; xmax = %g    # FLOP/byte\n"
		"# Marker size by T: %u (smallest) to %u (largest).\n"
		"size(T) = 0.8 + 0.45 * log(T / %u.0) / log(2)\n"
		"\nset logscale x 10\n"
		"set logscale y 10\n"
		"# Each roof is two straight lines in log-log: two samples each draw them exactly.\n"
		"set samples 2\n"
		"set xrange [xmin:xmax]\n"
		"set yrange [%g:%g]\n"
		"set format x \"%%g\"\n"
		"set format y \"%%g\"\n"
		"set xlabel \"arithmetic intensity (FLOP per simulated DRAM byte)\"\n"
		"set ylabel \"performance (GFLOP/s, measured, p50 time)\"\n"
		"set key outside right top\n",
		c->bw_all_bytes_per_s, c->flops_all_per_s, cores, c->bw_one_bytes_per_s,
		c->flops_one_per_s, xmin, xmax, T[0], T[nT - 1], T[0], ymin, ymax);
	fprintf(gp,
		"set title \"%s\\nceilings measured on %s%s%s\" font \",14\"\n"
		"set style line 100 lw 2.5 lc rgb \"#222222\"    # all cores\n"
		"set style line 101 lw 2 dt (10,6) lc rgb \"#222222\"    # one core\n"
		"set style textbox opaque margins 0.5,0.5 noborder\n"
		"# The ridge points: where the bandwidth slope meets the compute peak.\n"
		"set object 1 circle at ridge_all, pk_all / 1e9 size screen 0.006 fc rgb "
		"\"#000000\" fs solid front\n"
		"set label 1 sprintf(\"ridge %%.3g FLOP/B\", ridge_all) at ridge_all, pk_all / 1e9 right "
		"offset -0.8,0.9 front\n"
		"set object 2 circle at ridge_one, pk_one / 1e9 size screen 0.005 fc rgb "
		"\"#000000\" fs solid front\n"
		"set label 2 sprintf(\"ridge %%.3g FLOP/B\", ridge_one) at ridge_one, pk_one / 1e9 left "
		"offset 0.8,-0.9 front\n"
		"# Each roof's numbers, above its flat part at the right.\n"
		"set label 3 sprintf(\"%s: %%.3g GB/s, %%.3g GFLOP/s\", "
		"bw_all / 1e9, pk_all / 1e9) at graph 0.98, first pk_all / 1e9 right "
		"offset 0,0.9 boxed front\n"
		"set label 4 sprintf(\"one core: %%.3g GB/s, %%.3g GFLOP/s\", bw_one / 1e9, "
		"pk_one / 1e9) at graph 0.98, first pk_one / "
		"1e9 right offset 0,0.9 boxed front\n",
		plot_quote(title, tq, sizeof(tq)),
		plot_quote(c->cpu[0] ? c->cpu : "this machine", q, sizeof(q)),
		c->quick ? " (quick run)" : "",
		c->inconsistent ? ", inconsistent: unreliable (see memsim ceilings)" : "", cores);
}

/* The plot command: the roofs, each series' points, the marker sizes' legend. */
static void
write_roofline_plot(FILE *gp, const char *cores, const bool have[SERIES], const unsigned *T,
		    size_t nT)
{
	char q[300];

	fprintf(gp,
		"\tplot sample [x=xmin:ridge_all] bw_all * x / 1e9 with lines ls 100 "
		"title \"roof, %s\", \\\n"
		"\t\t[x=ridge_all:xmax] pk_all / 1e9 with lines ls 100 notitle, \\\n"
		"\t\t[x=xmin:ridge_one] bw_one * x / 1e9 with lines ls 101 title \"roof, one "
		"core\", \\\n"
		"\t\t[x=ridge_one:xmax] pk_one / 1e9 with lines ls 101 notitle",
		plot_quote(cores, q, sizeof(q)));
	for (size_t k = 0; k < SERIES; k++) {
		char sname[40];

		if (!have[k])
			continue;
		snprintf(sname, sizeof(sname), "%s_%s", series[k].kernel, series[k].op);
		fprintf(gp,
			", \\\n\t\tdata using 3:(strcol(1) eq \"%s\" ? $4 : NaN):(size($2)) "
			"with points pt %d ps variable lc rgb \"%s\" title \"%s\"",
			sname, series[k].pt, series[k].color, series[k].title);
	}
	/* The marker sizes' legend. */
	for (size_t i = 0; i < nT; i++)
		fprintf(gp,
			", \\\n\t\tkeyentry with points pt 6 ps size(%u) lc rgb \"#444444\" "
			"title \"T = %u\"",
			T[i], T[i]);
	fputc('\n', gp);
}

static int
write_roofline(struct plot_set *set, const struct plot_input *in, const struct shape *s, char *err,
	       size_t errlen)
{
	static const enum plot_source inputs[] = { PLOT_SOURCE_PROFILE, PLOT_SOURCE_CEILINGS };
	const struct plot_ceilings *c = &in->ceilings;
	unsigned T[MAX_T];
	size_t nT = list_T(in->ops, in->nops, s, T, MAX_T), npoints;
	double range[4], xmin, xmax, ymin, ymax;
	double ridge_all = c->flops_all_per_s / c->bw_all_bytes_per_s;
	double ridge_one = c->flops_one_per_s / c->bw_one_bytes_per_s;
	bool have[SERIES] = { false };
	char title[600], words[160], cores[40];
	struct plot_out o;
	int rc;

	npoints = roofline_points(in, s, have, range);
	xmin = range[0], xmax = range[1], ymin = range[2], ymax = range[3];
	if (npoints == 0) {
		plot_skip(set, "roofline", false,
			  "no operation with FLOPs, DRAM bytes and a time in %s/%s", in->dir,
			  plot_source_path(PLOT_SOURCE_PROFILE));
		return 0;
	}
	xmin = fmin(xmin, fmin(ridge_all, ridge_one)) / 4;
	xmax = fmax(xmax, fmax(ridge_all, ridge_one)) * 4;
	ymin = fmin(ymin, c->bw_one_bytes_per_s * xmin / 1e9) / 2;
	ymax = fmax(ymax, c->flops_all_per_s / 1e9) * 4;
	range[0] = xmin, range[1] = xmax, range[2] = ymin, range[3] = ymax;
	if (c->cores)
		snprintf(cores, sizeof(cores), "all %u cores", c->cores);
	else
		snprintf(cores, sizeof(cores), "all cores");
	snprintf(title, sizeof(title), "Roofline: the attention layer's operations (%s)",
		 shape_words(s, words, sizeof(words)));
	rc = plot_begin(&o, set, "roofline", title,
			"Measured GFLOP/s vs FLOPs per simulated DRAM byte (log-log) of every "
			"profiled operation at every T, coloured by operation, marker size by T, "
			"under the measured bandwidth and peak-FLOP ceilings of one core and of "
			"all cores.",
			inputs, 2, err, errlen);
	if (rc)
		return rc;
	write_roofline_dat(o.dat, in, s);
	write_roofline_ceilings(o.gp, c, title, cores, range, T, nT);
	plot_draw(&o);
	write_roofline_plot(o.gp, cores, have, T, nT);
	return plot_end(&o, err, errlen);
}

int
plot_profile_write(struct plot_set *set, const struct plot_input *in, char *err, size_t errlen)
{
	struct shape s = { 0 };
	int rc;

	if (in->usable[PLOT_SOURCE_PROFILE])
		s = pick_shape(in->ops, in->nops);
	if (!s.found) {
		plot_skip_source(set, "perf", in, PLOT_SOURCE_PROFILE, NULL, "no rows");
		plot_skip_source(set, "perf_bytes", in, PLOT_SOURCE_PROFILE, NULL, "no rows");
		plot_skip_source(set, "roofline", in, PLOT_SOURCE_PROFILE, NULL, "no rows");
		return 0;
	}
	rc = write_layer_bars(set, in, &s, false, err, errlen);
	if (!rc)
		rc = write_layer_bars(set, in, &s, true, err, errlen);
	if (rc)
		return rc;
	if (in->usable[PLOT_SOURCE_CEILINGS])
		return write_roofline(set, in, &s, err, errlen);
	plot_skip_source(set, "roofline", in, PLOT_SOURCE_CEILINGS, NULL, "nothing");
	return 0;
}
