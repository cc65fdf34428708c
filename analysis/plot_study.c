/*
 * The plots of the sweeps: DRAM bytes vs N per cache and the intensity ratio (DIR/lab), DRAM
 * bytes vs the cache size (DIR/exact). Notes:
 * - One configuration per plot: fp32 (else the first row's dtype), not causal where any run
 *   is not, and the d, B_r and B_c of the first such row; other rows are left out and the
 *   data file's header says how many.
 * - The crossover is the first N, in increasing order, at which flash2's simulated bytes are
 *   below naive's, as `memsim table` prints it; "much better" is the first N at which
 *   naive / flash2 >= PLOT_MUCH_BETTER.
 * - Bytes are per run as the sweep reports them; the plots show MiB.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plot_impl.h"
#include "base/util.h"

#define PLOT_MUCH_BETTER 2.0
#define MAX_COLUMNS 16

/* Rows keyed by x (sorted, unique), columns of values; NaN where no run gave one. */
struct table {
	size_t nrows, cap;
	double *x;
	double (*v)[MAX_COLUMNS];
};

static size_t
table_row(struct table *t, double x)
{
	size_t i = 0;

	while (i < t->nrows && t->x[i] < x)
		i++;
	if (i < t->nrows && t->x[i] == x)
		return i;
	if (t->nrows == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->x = xrealloc(t->x, t->cap * sizeof(*t->x));
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	memmove(&t->x[i + 1], &t->x[i], (t->nrows - i) * sizeof(*t->x));
	memmove(&t->v[i + 1], &t->v[i], (t->nrows - i) * sizeof(*t->v));
	t->x[i] = x;
	for (size_t c = 0; c < MAX_COLUMNS; c++)
		t->v[i][c] = NAN;
	t->nrows++;
	return i;
}

/* The first run of a configuration wins; a repeat (another seed) is left out. */
static void
table_set(struct table *t, double x, size_t col, double v)
{
	size_t r = table_row(t, x);

	if (isnan(t->v[r][col]))
		t->v[r][col] = v;
}

static void
table_finish(struct table *t)
{
	free(t->x);
	free(t->v);
}

/* Writes the table's rows: x then ncols values, NaN for none. The first whole columns hold
 * whole numbers (bytes: every digit, exact up to 2^53), the others ratios. */
static void
table_write(FILE *f, const struct table *t, size_t ncols, size_t whole)
{
	for (size_t r = 0; r < t->nrows; r++) {
		fprintf(f, "%-8.15g", t->x[r]);
		for (size_t c = 0; c < ncols; c++)
			fprintf(f, c < whole ? " %14.15g" : " %14.6g", t->v[r][c]);
		fputc('\n', f);
	}
}

/* The configuration a plot shows, chosen from the runs as the notes say. */
struct pick {
	char dtype[8];
	bool causal;
	unsigned d, Br, Bc;
	bool found;
};

static bool
plotted_kernel(const char *k)
{
	return !strcmp(k, "naive") || !strcmp(k, "flash1") || !strcmp(k, "flash2");
}

static struct pick
pick_config(const struct plot_run *runs, size_t n)
{
	struct pick p = { .causal = true };
	bool fp32 = false;

	for (size_t i = 0; i < n; i++) {
		fp32 |= plotted_kernel(runs[i].kernel) && !strcmp(runs[i].dtype, "fp32");
		p.causal &= !plotted_kernel(runs[i].kernel) || runs[i].causal;
	}
	for (size_t i = 0; i < n && !p.found; i++) {
		const struct plot_run *r = &runs[i];

		if (!plotted_kernel(r->kernel) || r->causal != p.causal ||
		    (fp32 && strcmp(r->dtype, "fp32")))
			continue;
		snprintf(p.dtype, sizeof(p.dtype), "%s", r->dtype);
		p.d = r->d;
		p.Br = r->Br;
		p.Bc = r->Bc;
		p.found = true;
	}
	return p;
}

static bool
picked(const struct pick *p, const struct plot_run *r)
{
	return p->found && plotted_kernel(r->kernel) && r->causal == p->causal &&
	       !strcmp(r->dtype, p->dtype) && r->d == p->d && r->Br == p->Br && r->Bc == p->Bc;
}

/* "fp32, d = 64, B_r = B_c = 64" (", causal" when it is). */
static char *
pick_words(const struct pick *p, char *buf, size_t len)
{
	if (p->Br == p->Bc)
		snprintf(buf, len, "%s, d = %u, B_r = B_c = %u%s", p->dtype, p->d, p->Br,
			 p->causal ? ", causal" : "");
	else
		snprintf(buf, len, "%s, d = %u, B_r = %u, B_c = %u%s", p->dtype, p->d, p->Br, p->Bc,
			 p->causal ? ", causal" : "");
	return buf;
}

/* A cache's name as part of a file name: letters, digits, '-' and '.', others '_'. */
static void
file_part(const char *cache, char *out, size_t len)
{
	size_t j = 0;

	for (; *cache && j + 1 < len && j < 48; cache++) {
		char ch = *cache;
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '-' || ch == '.';

		if (ok || (j && out[j - 1] != '_'))
			out[j++] = ok ? ch : '_';
	}
	while (j && out[j - 1] == '_')
		j--;
	out[j] = '\0';
}

/* The distinct caches of the picked runs, in order of appearance; returns how many. */
static size_t
list_caches(const struct plot_run *runs, size_t n, const struct pick *p, const char **out,
	    size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		if (!picked(p, &runs[i]) || strcmp(runs[i].kernel, "flash1") == 0)
			continue;
		while (j < k && strcmp(out[j], runs[i].cache))
			j++;
		if (j == k && k < max)
			out[k++] = runs[i].cache;
	}
	return k;
}

static void
write_textbox_style(FILE *gp)
{
	fprintf(gp, "set style textbox opaque margins 1.5,1.5 border lc rgb \"#999999\"\n");
}

/* Columns of bytes_vs_n's data: simulated, lab formula, exact formula of naive, flash2. */
enum {
	BN_NAIVE_SIM,
	BN_FLASH2_SIM,
	BN_NAIVE_LAB,
	BN_FLASH2_LAB,
	BN_NAIVE_EXACT,
	BN_FLASH2_EXACT,
	BN_RATIO,
	BN_COLUMNS,
};

/* bytes_vs_n's data for one cache: the table, its y range, and the rows marked. */
struct bytes_vs_n {
	struct table t;
	double ymin, ymax;
	double cross, much, last; /* row indices, -1 for none */
	double much_ratio;
	size_t left_out; /* runs of other configurations */
};

static void
bytes_vs_n_collect(const struct plot_input *in, const struct pick *p, const char *cache,
		   struct bytes_vs_n *b)
{
	*b = (struct bytes_vs_n){ .ymin = INFINITY, .cross = -1, .much = -1, .last = -1 };
	for (size_t i = 0; i < in->nlab; i++) {
		const struct plot_run *r = &in->lab[i];
		bool flash2 = !strcmp(r->kernel, "flash2");

		if (strcmp(r->cache, cache) || (!flash2 && strcmp(r->kernel, "naive")))
			continue;
		if (!picked(p, r)) {
			b->left_out++;
			continue;
		}
		table_set(&b->t, r->N, flash2 ? BN_FLASH2_SIM : BN_NAIVE_SIM, r->dram_bytes);
		if (r->lab_bytes >= 0)
			table_set(&b->t, r->N, flash2 ? BN_FLASH2_LAB : BN_NAIVE_LAB, r->lab_bytes);
		if (r->exact_bytes >= 0)
			table_set(&b->t, r->N, flash2 ? BN_FLASH2_EXACT : BN_NAIVE_EXACT,
				  r->exact_bytes);
	}
	for (size_t i = 0; i < b->t.nrows; i++) {
		double *v = b->t.v[i];

		for (int c = 0; c < BN_RATIO; c++)
			if (v[c] > 0) {
				b->ymin = fmin(b->ymin, v[c]);
				b->ymax = fmax(b->ymax, v[c]);
			}
		v[BN_RATIO] = v[BN_NAIVE_SIM] / v[BN_FLASH2_SIM];
		if (isnan(v[BN_RATIO]) || isinf(v[BN_RATIO]))
			continue;
		if (b->cross < 0 && v[BN_RATIO] > 1)
			b->cross = (double)i;
		if (b->much < 0 && v[BN_RATIO] >= PLOT_MUCH_BETTER) {
			b->much = (double)i;
			b->much_ratio = v[BN_RATIO];
		}
		b->last = (double)i;
	}

}

/* The crossover, where flash2 is much better, and the ratio at the largest N. */
static void
bytes_vs_n_marks(FILE *gp, const struct bytes_vs_n *b)
{
	char lbl[64];

	/* Where flash2 is much better: shaded from that N on. */
	if (b->much >= 0) {
		size_t i = (size_t)b->much;

		fprintf(gp,
			"\n# From the first N where naive / flash2 >= %g: shaded.\n"
			"set object 1 rect from %.10g, graph 0 to graph 1, graph 1 behind "
			"fc rgb \"%s\" fs transparent solid 0.07 noborder\n"
			"set label 1 \"flash2 moves ≥ %g× fewer bytes from N = %.10g (%s×; shaded)\" "
			"at graph 0.98, graph 0.96 right\n",
			PLOT_MUCH_BETTER, b->t.x[i], PLOT_COLOR_FLASH2, PLOT_MUCH_BETTER, b->t.x[i],
			plot_number_label(b->much_ratio, 2, lbl, sizeof(lbl)));
	} else if (b->last >= 0) {
		fprintf(gp,
			"\nset label 1 \"flash2 never moves %g× fewer bytes than naive here\" "
			"at graph 0.98, graph 0.96 right\n",
			PLOT_MUCH_BETTER);
	}
	/* The crossover, pointed at from below and to the right, where no line runs. */
	if (b->cross >= 0) {
		size_t i = (size_t)b->cross;
		double y = b->t.v[i][BN_FLASH2_SIM] / 1048576;

		fprintf(gp,
			"\n# The crossover: the first N where flash2 moves fewer bytes than naive.\n"
			"set arrow 1 from %.10g, %.6g to %.10g, %.6g head filled size screen "
			"0.012,20 lw 1.5 lc rgb \"#333333\" front\n"
			"set label 2 \"crossover: flash2 below naive from N = %.10g%s\" "
			"at %.10g, %.6g left boxed front\n",
			b->t.x[i] * 1.35, y / 3.2, b->t.x[i] * 1.04, y / 1.2, b->t.x[i],
			i == 0 ? "\\n(the smallest N run)" : "", b->t.x[i] * 1.38, y / 4.5);
	} else if (b->last >= 0) {
		fprintf(gp,
			"\nset label 2 \"no crossover: flash2 never moves fewer bytes than naive "
			"here\" at graph 0.98, graph 0.05 right boxed front\n");
	}
	/* The ratio at the largest N where both ran, right of its points. */
	if (b->last >= 0) {
		size_t i = (size_t)b->last;
		double lo = b->t.v[i][BN_FLASH2_SIM] / 1048576, hi = b->t.v[i][BN_NAIVE_SIM] / 1048576;
		double ratio = b->t.v[i][BN_RATIO];
		bool flash_better = ratio >= 1;

		/* The larger over the smaller, so the number reads as "times more". */
		fprintf(gp,
			"\n# The ratio at the largest N.\n"
			"set arrow 2 from %.10g, %.6g to %.10g, %.6g heads filled size screen "
			"0.01,20 lw 1.5 lc rgb \"#333333\"\n"
			"set label 3 \"%s\\n= %s×\" at %.10g, %.6g left\n",
			b->t.x[i] * 1.2, lo, b->t.x[i] * 1.2, hi,
			flash_better ? "naive / flash2" : "flash2 / naive",
			plot_number_label(flash_better ? ratio : 1 / ratio, 3, lbl, sizeof(lbl)),
			b->t.x[i] * 1.28, sqrt(lo * hi));
	}
}

static int
write_bytes_vs_n(struct plot_set *set, const struct plot_input *in, const struct pick *p,
		 const char *cache, char *err, size_t errlen)
{
	const enum plot_source inputs[] = { plot_input_source(in, PLOT_SOURCE_LAB) };
	struct bytes_vs_n b;
	struct plot_out o;
	char name[80], part[64], title[400], words[96], desc[400];
	int rc;

	bytes_vs_n_collect(in, p, cache, &b);
	file_part(cache, part, sizeof(part));
	snprintf(name, sizeof(name), "bytes_vs_n_%s", part);
	if (b.t.nrows == 0 || b.ymax <= 0) {
		plot_skip(set, name, false, "no naive or flash2 run with DRAM bytes in %s/%s",
			  in->dir, plot_source_path(inputs[0]));
		table_finish(&b.t);
		return 0;
	}
	snprintf(title, sizeof(title), "DRAM traffic vs sequence length, cache %s (%s)", cache,
		 pick_words(p, words, sizeof(words)));
	snprintf(desc, sizeof(desc),
		 "DRAM bytes moved vs N (log-log) for naive and flash2 on the %s cache: "
		 "simulated points, the lab and exact formulas as dashed lines, the crossover "
		 "and where flash2 moves %gx fewer bytes marked.",
		 cache, PLOT_MUCH_BETTER);
	rc = plot_begin(&o, set, name, title, desc, inputs, 1, err, errlen);
	if (rc) {
		table_finish(&b.t);
		return rc;
	}
	fprintf(o.dat, "# DRAM bytes (read + written, final flush included) per run; NaN: no run. "
		       "ratio = naive_sim / flash2_sim.\n");
	if (b.left_out)
		fprintf(o.dat, "# %zu runs of other dtypes, sizes or tiles left out.\n", b.left_out);
	fprintf(o.dat, "# %-6s %14s %14s %14s %14s %14s %14s %14s\n", "N", "naive_sim",
		"flash2_sim", "naive_lab", "flash2_lab", "naive_exact", "flash2_exact", "ratio");
	table_write(o.dat, &b.t, BN_COLUMNS, BN_RATIO);

	fprintf(o.gp,
		"\nmib = 1048576.0\n"
		"set logscale x 2\n"
		"set logscale y 10\n"
		"set xrange [%g:%g]\n"
		"set yrange [%g:%g]\n"
		"set format y \"%%g\"\n"
		"set xtics (",
		b.t.x[0] / 1.4, b.t.x[b.t.nrows - 1] * 2.2, b.ymin / 1048576 / 25, b.ymax / 1048576 * 8);
	for (size_t i = 0; i < b.t.nrows; i++)
		fprintf(o.gp, "%s%.10g", i ? ", " : "", b.t.x[i]);
	fprintf(o.gp, ")\n"
		      "set xlabel \"sequence length N (tokens)\"\n"
		      "set ylabel \"DRAM bytes moved (MiB, read + written)\"\n"
		      "set key top left\n");
	write_textbox_style(o.gp);
	fprintf(o.gp,
		"set style line 1 lc rgb \"%s\" pt 7 ps 1.5\n"
		"set style line 2 lc rgb \"%s\" pt 5 ps 1.4\n"
		"set style line 3 lc rgb \"%s\" lw 2 dt (10,6)\n"
		"set style line 4 lc rgb \"%s\" lw 2 dt (10,6)\n"
		"set style line 5 lc rgb \"%s\" lw 1.5 dt (2,4)\n"
		"set style line 6 lc rgb \"%s\" lw 1.5 dt (2,4)\n",
		PLOT_COLOR_NAIVE, PLOT_COLOR_FLASH2, PLOT_COLOR_NAIVE, PLOT_COLOR_FLASH2,
		PLOT_COLOR_NAIVE, PLOT_COLOR_FLASH2);

	bytes_vs_n_marks(o.gp, &b);
	plot_draw(&o);
	fprintf(o.gp,
		"\tplot data using 1:($2/mib) with points ls 1 title \"naive, simulated\", \\\n"
		"\t\t'' using 1:($4/mib) with lines ls 3 title \"naive, lab formula\", \\\n"
		"\t\t'' using 1:($6/mib) with lines ls 5 title \"naive, exact formula\", \\\n"
		"\t\t'' using 1:($3/mib) with points ls 2 title \"flash2, simulated\", \\\n"
		"\t\t'' using 1:($5/mib) with lines ls 4 title \"flash2, lab formula\", \\\n"
		"\t\t'' using 1:($7/mib) with lines ls 6 title \"flash2, exact formula\"\n");
	table_finish(&b.t);
	return plot_end(&o, err, errlen);
}

/* Okabe-Ito colours for the caches of intensity_ratio, in order. */
static const char *const cache_colors[] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7",
					    "#E69F00", "#56B4E9", "#000000" };

/* intensity_ratio's table: per cache c, flash2's intensity over naive's simulated (column
 * 2c) and by the lab formula (2c + 1); the y range; the first column with a lab value. */
static void
intensity_collect(const struct plot_input *in, const struct pick *p, const char **caches,
		  size_t ncaches, struct table *out, double *yrange, size_t *lab_column)
{
	struct table t = { 0 }, lab = { 0 };
	double ymin = INFINITY, ymax = 0;
	size_t lab_col = SIZE_MAX;

	/* Per cache: naive and flash2 intensities, simulated (t) and by the lab formula. */
	for (size_t i = 0; i < in->nlab; i++) {
		const struct plot_run *r = &in->lab[i];
		bool flash2 = !strcmp(r->kernel, "flash2");
		size_t c = 0;

		if (!picked(p, r) || (!flash2 && strcmp(r->kernel, "naive")))
			continue;
		while (c < ncaches && strcmp(caches[c], r->cache))
			c++;
		if (c == ncaches)
			continue;
		table_set(&t, r->N, 2 * c + flash2, r->intensity);
		if (r->lab_bytes > 0)
			table_set(&lab, r->N, 2 * c + flash2, r->flops / r->lab_bytes);
	}
	/* Ratios in place: column 2c simulated, 2c + 1 the lab formula's. */
	for (size_t i = 0; i < t.nrows; i++) {
		size_t li = table_row(&lab, t.x[i]);

		for (size_t c = 0; c < ncaches; c++) {
			double sim = t.v[i][2 * c + 1] / t.v[i][2 * c];
			double f = lab.v[li][2 * c + 1] / lab.v[li][2 * c];

			t.v[i][2 * c] = sim;
			t.v[i][2 * c + 1] = f;
			if (!isnan(f) && lab_col == SIZE_MAX)
				lab_col = 2 * c + 1;
			if (sim > 0 && isfinite(sim)) {
				ymin = fmin(ymin, sim);
				ymax = fmax(ymax, sim);
			}
			if (f > 0 && isfinite(f)) {
				ymin = fmin(ymin, f);
				ymax = fmax(ymax, f);
			}
		}
	}
	table_finish(&lab);
	*out = t;
	yrange[0] = ymin, yrange[1] = ymax;
	*lab_column = lab_col;
}

/* y tics at 1, 2, 5, 10, 20, ... from lo to hi: the ratios span a decade or two. */
static void
write_125_tics(FILE *gp, double ylo, double yhi)
{
	bool first = true;

	for (double dec = pow(10, floor(log10(ylo))); dec <= yhi; dec *= 10) {
		static const double steps[] = { 1, 2, 5 };

		for (int m = 0; m < 3; m++) {
			double y = dec * steps[m];

			if (y >= ylo && y <= yhi) {
				fprintf(gp, "%s%g", first ? "" : ", ", y);
				first = false;
			}
		}
	}
}

static int
write_intensity_ratio(struct plot_set *set, const struct plot_input *in, const struct pick *p,
		      const char **caches, size_t ncaches, char *err, size_t errlen)
{
	const enum plot_source inputs[] = { plot_input_source(in, PLOT_SOURCE_LAB) };
	struct table t;
	struct plot_out o;
	char title[400], words[96], q[400];
	double yrange[2], ymin, ymax;
	size_t lab_col;
	int rc;

	if (ncaches > MAX_COLUMNS / 2)
		ncaches = MAX_COLUMNS / 2;
	intensity_collect(in, p, caches, ncaches, &t, yrange, &lab_col);
	ymin = yrange[0], ymax = yrange[1];
	if (ymax <= 0) {
		plot_skip(set, "intensity_ratio", false,
			  "no N with both naive and flash2 runs in %s/%s", in->dir,
			  plot_source_path(inputs[0]));
		table_finish(&t);
		return 0;
	}
	snprintf(title, sizeof(title), "Arithmetic intensity of flash2 over naive (%s)",
		 pick_words(p, words, sizeof(words)));
	rc = plot_begin(&o, set, "intensity_ratio", title,
			"flash2's arithmetic intensity (FLOPs per DRAM byte) divided by naive's "
			"vs N (log x), simulated on each cache of the lab sweep and by the lab "
			"formula.",
			inputs, 1, err, errlen);
	if (rc) {
		table_finish(&t);
		return rc;
	}
	fprintf(o.dat,
		"# intensity = FLOPs / DRAM bytes; each column is flash2's over naive's "
		"at N (both kernels do the same FLOPs). NaN: no run.\n# %-6s",
		"N");
	for (size_t c = 0; c < ncaches; c++) {
		char part[64], col[80];

		file_part(caches[c], part, sizeof(part));
		snprintf(col, sizeof(col), "%s_sim", part);
		fprintf(o.dat, " %14s", col);
		snprintf(col, sizeof(col), "%s_lab", part);
		fprintf(o.dat, " %14s", col);
	}
	fputc('\n', o.dat);
	table_write(o.dat, &t, 2 * ncaches, 0);

	fprintf(o.gp,
		"\nset logscale x 2\n"
		"set logscale y 10\n"
		"set xrange [%g:%g]\n"
		"set yrange [%g:%g]\n"
		"set format y \"%%g\"\n"
		"set xtics (",
		t.x[0] / 1.3, t.x[t.nrows - 1] * 1.3, fmin(ymin, 1) / 1.6, ymax * 3);
	for (size_t i = 0; i < t.nrows; i++)
		fprintf(o.gp, "%s%.10g", i ? ", " : "", t.x[i]);
	fprintf(o.gp, ")\nset ytics (");
	write_125_tics(o.gp, fmin(ymin, 1) / 1.6, ymax * 3);
	fprintf(o.gp, ")\n"
		      "set xlabel \"sequence length N (tokens)\"\n"
		      "set ylabel \"flash2 / naive arithmetic intensity (ratio of FLOP/byte)\"\n"
		      "set key top left\n"
		      "# Equal intensity.\n"
		      "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead lw 1.2 "
		      "lc rgb \"#777777\" dt (6,4)\n"
		      "set label 1 \"equal intensity\" at graph 0.98, first 1 right offset 0,0.7 "
		      "tc rgb \"#555555\"\n");
	for (size_t c = 0; c < ncaches; c++)
		fprintf(o.gp, "set style line %zu lc rgb \"%s\" lw 2 pt %d ps 1.4\n", c + 1,
			cache_colors[c % 7], c % 2 ? 5 : 7);
	fprintf(o.gp, "set style line 20 lc rgb \"#444444\" lw 2 dt (10,6)\n");
	plot_draw(&o);
	fprintf(o.gp, "\tplot ");
	for (size_t c = 0; c < ncaches; c++)
		fprintf(o.gp,
			"%sdata using 1:%zu with linespoints ls %zu title \"simulated, cache "
			"%s\"",
			c ? ", \\\n\t\t" : "", 2 * c + 2, c + 1,
			plot_quote(caches[c], q, sizeof(q)));
	/* The lab formula does not depend on the cache: one line. */
	if (lab_col != SIZE_MAX)
		fprintf(o.gp,
			", \\\n\t\tdata using 1:%zu with lines ls 20 title \"lab formula (the "
			"same for every cache)\"",
			lab_col + 2);
	fputc('\n', o.gp);
	table_finish(&t);
	return plot_end(&o, err, errlen);
}

/* The cache spec with the last level's size replaced by SIZE, for the plot's label. */
static void
spec_pattern(const char *spec, char *out, size_t len)
{
	const char *lvl = NULL, *s;
	size_t n;

	for (s = spec; *s; s++)
		if ((s == spec || s[-1] == ',') && s[0] == 'L' && s[1] >= '1' && s[1] <= '4' &&
		    s[2] == '=')
			lvl = s + 3;
	if (!lvl) {
		snprintf(out, len, "%s", spec);
		return;
	}
	n = strcspn(lvl, ":,");
	snprintf(out, len, "%.*sSIZE%s", (int)(lvl - spec), spec, lvl + n);
}

static const char *const exact_kernels[] = { "naive", "flash1", "flash2" };
static const int exact_points[] = { 7, 9, 5 }; /* circle, triangle, square */
static const char *const exact_colors[] = { PLOT_COLOR_NAIVE, PLOT_COLOR_FLASH1,
					    PLOT_COLOR_FLASH2 };

/* The working sets per head as vertical lines, each label on the side with more room. */
static void
working_set_marks(FILE *gp, const struct table *t, double kv, double s, int sz)
{
	const struct {
		double at;
		const char *color, *words, *what;
	} ws[2] = { { kv, PLOT_COLOR_FLASH2, "K + V = 2·N·d",
		      "flash reads K and V once when they fit" },
		    { s, PLOT_COLOR_NAIVE, "S = N²", "naive's score matrix" } };
	double lo = log2(fmin(t->x[0], kv) / 1.5),
	       hi = log2(fmax(t->x[t->nrows - 1], s) * 1.5);

	for (int i = 0; i < 2; i++) {
		double x = log2(ws[i].at), other = log2(ws[1 - i].at);
		/* Room on each side of the line: to the border or the other line. */
		double left = x - (other < x ? other : lo),
		       right = (other > x ? other : hi) - x;
		char sz_lbl[32];

		fprintf(gp,
			"set arrow %d from %.10g, graph 0 to %.10g, graph 1 nohead lw 1.5 "
			"dt (8,5) lc rgb \"%s\"\n"
			"set label %d \"%s × %d B = %s\\n%s\" at %.10g, graph %s %s offset "
			"%s0.6,0 boxed front\n",
			i + 1, ws[i].at, ws[i].at, ws[i].color, i + 1, ws[i].words, sz,
			plot_bytes_label(ws[i].at, sz_lbl, sizeof(sz_lbl)), ws[i].what,
			ws[i].at, i == 0 ? "0.955" : "0.83",
			left > right ? "right" : "left", left > right ? "-" : "");
	}
}

/* dram_vs_cache_size's table at N: DRAM bytes by the last level's size, a column per kernel
 * (have[] those with a run), the y range and the cache spec as a pattern. */
static void
dram_vs_size_collect(const struct plot_input *in, const struct pick *p, unsigned N,
		     struct table *t, bool have[3], double yrange[2], char *pattern, size_t plen)
{
	char mine[200];

	for (size_t i = 0; i < in->nexact; i++) {
		const struct plot_run *r = &in->exact[i];

		if (!picked(p, r) || r->N != N || r->ll_size_bytes <= 0)
			continue;
		/* one cache swept over its size: those of the first run's spec pattern */
		spec_pattern(r->cache, mine, sizeof(mine));
		if (pattern[0] && strcmp(mine, pattern))
			continue;
		for (int k = 0; k < 3; k++) {
			if (strcmp(r->kernel, exact_kernels[k]))
				continue;
			table_set(t, r->ll_size_bytes, (size_t)k, r->dram_bytes);
			have[k] = true;
			if (!pattern[0])
				snprintf(pattern, plen, "%s", mine);
			if (r->dram_bytes > 0) {
				yrange[0] = fmin(yrange[0], r->dram_bytes);
				yrange[1] = fmax(yrange[1], r->dram_bytes);
			}
		}
	}
}

static int
write_dram_vs_cache_size(struct plot_set *set, const struct plot_input *in, char *err,
			 size_t errlen)
{
	const enum plot_source inputs[] = { plot_input_source(in, PLOT_SOURCE_EXACT) };
	const char *name = "dram_vs_cache_size";
	struct pick p = pick_config(in->exact, in->nexact);
	struct table t = { 0 };
	struct plot_out o;
	char title[400], words[96], q[400], pattern[200] = "";
	double ymin, ymax, yrange[2] = { INFINITY, 0 }, kv, s;
	unsigned N = 0;
	bool have[3] = { false };
	int rc, sz;

	for (size_t i = 0; i < in->nexact; i++)
		if (picked(&p, &in->exact[i]) && in->exact[i].ll_size_bytes > 0 &&
		    in->exact[i].N > N)
			N = in->exact[i].N;
	if (!N && in->sweep) {
		plot_skip(set, name, false, PLOT_SWEEP_LACKS, in->dir, plot_source_path(inputs[0]),
			  PLOT_NEEDS_DRAM_VS_CACHE_SIZE);
		return 0;
	}
	if (!N) {
		plot_skip(set, name, false, "no naive, flash1 or flash2 run with a cache in %s/%s",
			  in->dir, plot_source_path(inputs[0]));
		return 0;
	}
	dram_vs_size_collect(in, &p, N, &t, have, yrange, pattern, sizeof(pattern));
	if (in->sweep && t.nrows < 2) {
		plot_skip(set, name, false, PLOT_SWEEP_LACKS, in->dir, plot_source_path(inputs[0]),
			  PLOT_NEEDS_DRAM_VS_CACHE_SIZE);
		table_finish(&t);
		return 0;
	}
	ymin = yrange[0], ymax = yrange[1];
	/* The working sets, per head: naive's score matrix, and K with V. */
	sz = (int)plot_dtype_bytes(p.dtype);
	s = (double)N * N * sz;
	kv = 2.0 * N * p.d * sz;
	snprintf(title, sizeof(title), "DRAM traffic vs cache size at N = %u (%s)", N,
		 pick_words(&p, words, sizeof(words)));
	rc = plot_begin(&o, set, name, title,
			"DRAM bytes moved vs the last cache level's size (log-log) at the largest "
			"N of the exactness sweep, per kernel, with the sizes of naive's score "
			"matrix S and of K and V marked.",
			inputs, 1, err, errlen);
	if (rc) {
		table_finish(&t);
		return rc;
	}
	fprintf(o.dat,
		"# DRAM bytes (read + written, final flush included) per run at N = %u, by the "
		"size of the cache's last level\n# (%s). NaN: no run.\n"
		"# Working sets per head: S = N^2 x %d B = %.0f B, K + V = 2 N d x %d B = %.0f B.\n"
		"# %-12s %14s %14s %14s\n",
		N, pattern, sz, s, sz, kv, "cache_bytes", "naive", "flash1", "flash2");
	for (size_t r = 0; r < t.nrows; r++) {
		fprintf(o.dat, "%-14.10g", t.x[r]);
		for (int c = 0; c < 3; c++)
			fprintf(o.dat, " %14.10g", t.v[r][c]);
		fputc('\n', o.dat);
	}

	fprintf(o.gp,
		"\nmib = 1048576.0\n"
		"set logscale x 2\n"
		"set logscale y 10\n"
		"set xrange [%g:%g]\n"
		"set yrange [%g:%g]\n"
		"set format y \"%%g\"\n"
		"set xtics (",
		fmin(t.x[0], kv) / 1.5, fmax(t.x[t.nrows - 1], s) * 1.5, ymin / 1048576 / 4,
		ymax / 1048576 * 12);
	for (size_t r = 0; r < t.nrows; r++) {
		char lbl[32];

		plot_bytes_label(t.x[r], lbl, sizeof(lbl));
		/* Every other size when there are many, so the labels do not touch. */
		fprintf(o.gp, "%s\"%s\" %.10g%s", r ? ", " : "", t.nrows > 8 && r % 2 ? "" : lbl,
			t.x[r], t.nrows > 8 && r % 2 ? " 1" : "");
	}
	fprintf(o.gp,
		")\n"
		"set xlabel \"size of the last cache level (%s)\"\n"
		"set ylabel \"DRAM bytes moved (MiB, read + written)\"\n"
		"set key bottom left\n",
		plot_quote(pattern, q, sizeof(q)));
	write_textbox_style(o.gp);
	fprintf(o.gp, "\n# Working sets per head: K and V (flash reads them once when they fit), "
		      "S = Q K^T (naive's passes share it when it fits).\n");
	working_set_marks(o.gp, &t, kv, s, sz);
	for (int k = 0; k < 3; k++)
		fprintf(o.gp, "set style line %d lc rgb \"%s\" lw 2 pt %d ps 1.3\n", k + 1,
			exact_colors[k], exact_points[k]);
	plot_draw(&o);
	fprintf(o.gp, "\tplot ");
	for (int k = 0, first = 1; k < 3; k++) {
		if (!have[k])
			continue;
		fprintf(o.gp, "%sdata using 1:($%d/mib) with linespoints ls %d title \"%s\"",
			first ? "" : ", \\\n\t\t", k + 2, k + 1, exact_kernels[k]);
		first = 0;
	}
	fputc('\n', o.gp);
	table_finish(&t);
	return plot_end(&o, err, errlen);
}

/* Of caches (n), those whose picked naive or flash2 runs span two N or more, kept in order:
 * a sweep's single N is no curve. Returns how many are left. */
static size_t
caches_over_n(const struct plot_input *in, const struct pick *p, const char **caches, size_t n)
{
	size_t k = 0;

	for (size_t c = 0; c < n; c++) {
		unsigned first = 0;
		bool two = false;

		for (size_t i = 0; i < in->nlab && !two; i++) {
			const struct plot_run *r = &in->lab[i];

			if (!picked(p, r) || strcmp(r->cache, caches[c]) ||
			    !strcmp(r->kernel, "flash1"))
				continue;
			two = first && r->N != first;
			first = r->N;
		}
		if (two)
			caches[k++] = caches[c];
	}
	return k;
}

int
plot_study_write(struct plot_set *set, const struct plot_input *in, char *err, size_t errlen)
{
	const enum plot_source lab = plot_input_source(in, PLOT_SOURCE_LAB),
			       exact = plot_input_source(in, PLOT_SOURCE_EXACT);
	const char *caches[MAX_COLUMNS / 2];
	size_t ncaches = 0;
	struct pick p = { 0 };
	int rc;

	if (in->usable[lab]) {
		p = pick_config(in->lab, in->nlab);
		ncaches = list_caches(in->lab, in->nlab, &p, caches, MAX_COLUMNS / 2);
		if (in->sweep)
			ncaches = caches_over_n(in, &p, caches, ncaches);
	}
	if (in->sweep && in->usable[lab] && ncaches == 0) {
		plot_skip(set, "bytes_vs_n", false, PLOT_SWEEP_LACKS, in->dir,
			  plot_source_path(lab), PLOT_NEEDS_BYTES_VS_N);
		plot_skip(set, "intensity_ratio", false, PLOT_SWEEP_LACKS, in->dir,
			  plot_source_path(lab), PLOT_NEEDS_INTENSITY_RATIO);
	} else if (!in->usable[lab] || ncaches == 0) {
		plot_skip_source(set, "bytes_vs_n", in, lab, "memsim study writes it",
				 "no naive or flash2 run");
		plot_skip_source(set, "intensity_ratio", in, lab, "memsim study writes it",
				 "no naive or flash2 run");
	} else {
		for (size_t c = 0; c < ncaches; c++) {
			rc = write_bytes_vs_n(set, in, &p, caches[c], err, errlen);
			if (rc)
				return rc;
		}
		rc = write_intensity_ratio(set, in, &p, caches, ncaches, err, errlen);
		if (rc)
			return rc;
	}
	if (in->usable[exact])
		return write_dram_vs_cache_size(set, in, err, errlen);
	plot_skip_source(set, "dram_vs_cache_size", in, exact, "memsim study writes it", "no run");
	return 0;
}
