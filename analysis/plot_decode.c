/*
 * The plots of the decode step (DIR/decode): bytes per generated token and the tokens/s
 * bound vs the KV cache's length N_kv, one series per head layout (kv_heads: MHA where it
 * equals heads, MQA where it is 1, GQA between). Notes:
 * - One configuration: the first row's kernel-independent settings (N, d, heads, batch,
 *   dtype, cache); other rows are left out and the data file's header says how many.
 * - Layouts in decreasing kv_heads, at most DECODE_LAYOUTS; the first run of a (layout,
 *   N_kv) wins.
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/plot_impl.h"
#include "base/util.h"

#define DECODE_LAYOUTS 6

static const char *const layout_colors[DECODE_LAYOUTS] = { "#D55E00", "#0072B2", "#009E73",
							   "#CC79A7", "#E69F00", "#000000" };

/* The rows of the picked configuration as a grid: N_kv x layouts. */
struct grid {
	enum plot_source source; /* where the rows come from */
	const struct plot_decode *pick;
	unsigned kv[DECODE_LAYOUTS];
	size_t nkv, nx, left_out;
	double *x;
	/* per cell [x][layout]: bytes per token, exact bytes per token, tokens/s; NaN: none */
	double (*bytes)[DECODE_LAYOUTS], (*exact)[DECODE_LAYOUTS], (*tps)[DECODE_LAYOUTS];
};

static bool
same_config(const struct plot_decode *a, const struct plot_decode *b)
{
	return a->N == b->N && a->d == b->d && a->heads == b->heads && a->batch == b->batch &&
	       !strcmp(a->dtype, b->dtype) && !strcmp(a->cache, b->cache);
}

static int
ucmp_desc(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x < y) - (x > y);
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t
index_of_x(const struct grid *g, double x)
{
	size_t i = 0;

	while (i < g->nx && g->x[i] != x)
		i++;
	return i;
}

static size_t
index_of_kv(const struct grid *g, unsigned kv)
{
	size_t i = 0;

	while (i < g->nkv && g->kv[i] != kv)
		i++;
	return i;
}

static void
grid_build(struct grid *g, const struct plot_input *in)
{
	memset(g, 0, sizeof(*g));
	g->source = plot_input_source(in, PLOT_SOURCE_DECODE);
	g->pick = &in->decode[0];
	g->x = xrealloc(NULL, in->ndecode * sizeof(*g->x));
	for (size_t i = 0; i < in->ndecode; i++) {
		const struct plot_decode *r = &in->decode[i];

		if (!same_config(g->pick, r)) {
			g->left_out++;
			continue;
		}
		if (index_of_x(g, r->N_kv) == g->nx)
			g->x[g->nx++] = r->N_kv;
		if (index_of_kv(g, r->kv_heads) == g->nkv && g->nkv < DECODE_LAYOUTS)
			g->kv[g->nkv++] = r->kv_heads;
	}
	qsort(g->x, g->nx, sizeof(*g->x), dcmp);
	qsort(g->kv, g->nkv, sizeof(*g->kv), ucmp_desc);
	g->bytes = xrealloc(NULL, g->nx * sizeof(*g->bytes));
	g->exact = xrealloc(NULL, g->nx * sizeof(*g->exact));
	g->tps = xrealloc(NULL, g->nx * sizeof(*g->tps));
	for (size_t i = 0; i < g->nx; i++)
		for (size_t k = 0; k < DECODE_LAYOUTS; k++)
			g->bytes[i][k] = g->exact[i][k] = g->tps[i][k] = NAN;
	for (size_t i = 0; i < in->ndecode; i++) {
		const struct plot_decode *r = &in->decode[i];
		size_t xi = index_of_x(g, r->N_kv), k = index_of_kv(g, r->kv_heads);

		if (!same_config(g->pick, r) || k == g->nkv) {
			g->left_out += same_config(g->pick, r);
			continue;
		}
		if (!isnan(g->bytes[xi][k]))
			continue;
		g->bytes[xi][k] = r->bytes_per_token;
		if (r->exact_per_token >= 0)
			g->exact[xi][k] = r->exact_per_token;
		if (r->tokens_per_s >= 0)
			g->tps[xi][k] = r->tokens_per_s;
	}
}

static void
grid_finish(struct grid *g)
{
	free(g->x);
	free(g->bytes);
	free(g->exact);
	free(g->tps);
}

/* "MHA (32 KV heads)", "GQA (8 KV heads)", "MQA (1 KV head)". */
static char *
layout_name(unsigned kv, unsigned heads, char *buf, size_t len)
{
	snprintf(buf, len, "%s (%u KV head%s)",
		 kv == heads ? "MHA"
		 : kv == 1   ? "MQA"
			     : "GQA",
		 kv, kv == 1 ? "" : "s");
	return buf;
}

/* The data file's header and rows: N_kv, then per layout the values of cols. */
static void
write_grid(FILE *f, const struct grid *g, double (*const *cols)[DECODE_LAYOUTS],
	   const char *const *names, size_t ncols)
{
	if (g->left_out)
		fprintf(f, "# %zu runs of other sizes, dtypes or caches left out.\n", g->left_out);
	fprintf(f, "# %-6s", "N_kv");
	for (size_t c = 0; c < ncols; c++)
		for (size_t k = 0; k < g->nkv; k++) {
			char col[48];

			snprintf(col, sizeof(col), "%s_kv%u", names[c], g->kv[k]);
			fprintf(f, " %16s", col);
		}
	fputc('\n', f);
	for (size_t i = 0; i < g->nx; i++) {
		fprintf(f, "%-8.15g", g->x[i]);
		for (size_t c = 0; c < ncols; c++)
			for (size_t k = 0; k < g->nkv; k++)
				fprintf(f, " %16.15g", cols[c][i][k]);
		fputc('\n', f);
	}
}

static void
write_axes(FILE *gp, const struct grid *g, const char *ylabel)
{
	fprintf(gp,
		"\nset logscale x 2\n"
		"set logscale y 10\n"
		"set xrange [%g:%g]\n"
		"set format y \"%%g\"\n"
		"set xtics (",
		g->x[0] / 1.4, g->x[g->nx - 1] * 1.4);
	for (size_t i = 0; i < g->nx; i++)
		fprintf(gp, "%s\"%.0fK\" %.10g", i ? ", " : "", g->x[i] / 1024, g->x[i]);
	fprintf(gp,
		")\n"
		"set xlabel \"context length N_kv (tokens in the KV cache)\"\n"
		"set ylabel \"%s\"\n",
		ylabel);
	for (size_t k = 0; k < g->nkv; k++)
		fprintf(gp,
			"set style line %zu lc rgb \"%s\" lw 2 pt 7 ps 1.3\n"
			"set style line %zu lc rgb \"%s\" lw 1.5 dt (8,5)\n",
			k + 1, layout_colors[k], k + 11, layout_colors[k]);
}

static int
write_per_token(struct plot_set *set, const struct grid *g, char *err, size_t errlen)
{
	const enum plot_source inputs[] = { g->source };
	double(*const cols[])[DECODE_LAYOUTS] = { g->bytes, g->exact };
	static const char *const names[] = { "bytes", "exact" };
	const struct plot_decode *p = g->pick;
	char title[300], desc[400], lbl[64];
	struct plot_out o;
	int rc;

	snprintf(title, sizeof(title),
		 "Decode: bytes per generated token vs context (%s, N = %u, d = %u, %u query "
		 "heads, %s)",
		 p->cache, p->N, p->d, p->heads, p->dtype);
	snprintf(desc, sizeof(desc),
		 "DRAM bytes per generated token of one decode step of one layer's attention vs "
		 "the KV cache's length N_kv (log-log), one series per head layout (MHA, GQA, "
		 "MQA), the exact formula's bytes as dashed lines.");
	rc = plot_begin(&o, set, "decode_per_token", title, desc, inputs, 1, err, errlen);
	if (rc)
		return rc;
	fprintf(o.dat, "# DRAM bytes per generated token (per_token.bytes) and the exact "
		       "formula's bytes / (batch N), per layout (kvK: K KV heads); NaN: none.\n");
	write_grid(o.dat, g, cols, names, 2);
	write_axes(o.gp, g, "DRAM bytes per generated token");
	fprintf(o.gp, "set key top left\n");
	plot_draw(&o);
	fprintf(o.gp, "\tplot ");
	for (size_t k = 0; k < g->nkv; k++)
		fprintf(o.gp,
			"%sdata using 1:%zu with linespoints ls %zu title \"%s, simulated\", \\\n"
			"\t\t'' using 1:%zu with lines ls %zu title \"%s, exact formula\"",
			k ? ", \\\n\t\t" : "", k + 2, k + 1,
			layout_name(g->kv[k], p->heads, lbl, sizeof(lbl)), g->nkv + k + 2, k + 11,
			lbl);
	fprintf(o.gp, "\n");
	return plot_end(&o, err, errlen);
}

static int
write_tokens_per_s(struct plot_set *set, const struct grid *g, char *err, size_t errlen)
{
	const enum plot_source inputs[] = { g->source };
	double(*const cols[])[DECODE_LAYOUTS] = { g->tps };
	static const char *const names[] = { "tokens_per_s" };
	const struct plot_decode *p = g->pick;
	char title[300], desc[400], lbl[64];
	struct plot_out o;
	int rc;

	snprintf(title, sizeof(title),
		 "Decode: tokens/s bound of one layer's attention at %g GB/s (%s, %u query heads)",
		 p->gbps, p->cache, p->heads);
	snprintf(desc, sizeof(desc),
		 "The HBM-bandwidth bound on tokens/s of one decode step of one layer's "
		 "attention (the preset's bandwidth / bytes per token) vs the KV cache's length "
		 "N_kv (log-log), one series per head layout.");
	rc = plot_begin(&o, set, "decode_tokens_per_s", title, desc, inputs, 1, err, errlen);
	if (rc)
		return rc;
	fprintf(o.dat,
		"# per_token.tokens_per_s_bound at %g GB/s per layout (kvK: K KV heads); NaN: "
		"none.\n",
		p->gbps);
	write_grid(o.dat, g, cols, names, 1);
	write_axes(o.gp, g, "tokens/s bound (one layer's attention, HBM bandwidth)");
	fprintf(o.gp, "set key top right\n");
	plot_draw(&o);
	fprintf(o.gp, "\tplot ");
	for (size_t k = 0; k < g->nkv; k++)
		fprintf(o.gp, "%sdata using 1:%zu with linespoints ls %zu title \"%s\"",
			k ? ", \\\n\t\t" : "", k + 2, k + 1,
			layout_name(g->kv[k], p->heads, lbl, sizeof(lbl)));
	fprintf(o.gp, "\n");
	return plot_end(&o, err, errlen);
}

int
plot_decode_write(struct plot_set *set, const struct plot_input *in, char *err, size_t errlen)
{
	const enum plot_source src = plot_input_source(in, PLOT_SOURCE_DECODE);
	struct grid g;
	int rc;

	if (in->sweep && in->usable[src] && in->ndecode == 0) {
		plot_skip(set, "decode_per_token", false, PLOT_SWEEP_LACKS, in->dir,
			  plot_source_path(src), PLOT_NEEDS_DECODE);
		plot_skip(set, "decode_tokens_per_s", false, PLOT_SWEEP_LACKS, in->dir,
			  plot_source_path(src), PLOT_NEEDS_DECODE);
		return 0;
	}
	if (!in->usable[src] || in->ndecode == 0) {
		plot_skip_source(set, "decode_per_token", in, src, "memsim study writes it",
				 "no run");
		plot_skip_source(set, "decode_tokens_per_s", in, src, "memsim study writes it",
				 "no run");
		return 0;
	}
	grid_build(&g, in);
	/* a sweep's single N_kv is no curve */
	if (in->sweep && g.nx < 2) {
		plot_skip(set, "decode_per_token", false, PLOT_SWEEP_LACKS, in->dir,
			  plot_source_path(src), PLOT_NEEDS_DECODE);
		plot_skip(set, "decode_tokens_per_s", false, PLOT_SWEEP_LACKS, in->dir,
			  plot_source_path(src), PLOT_NEEDS_DECODE);
		grid_finish(&g);
		return 0;
	}
	rc = write_per_token(set, &g, err, errlen);
	if (!rc && g.pick->gbps > 0)
		rc = write_tokens_per_s(set, &g, err, errlen);
	else if (!rc)
		plot_skip(
			set, "decode_tokens_per_s", false,
			"the rows of %s/%s have no bandwidth (per_token.bandwidth_gbps is null%s)",
			in->dir, plot_source_path(src),
			in->sweep ? ": a preset with one, such as h100, gives it" : "");
	grid_finish(&g);
	return rc;
}
