/*
 * Reading the inputs of `memsim plot`. Notes:
 * - Every number a plot needs is checked here (present, finite, in range), so the plot code
 *   trusts the tables.
 * - Keys are looked up by dotted paths ("config.N", "seconds.p50"), the report's nesting.
 * - Bytes stay doubles: cJSON keeps every number as one, exact up to 2^53.
 */

#include "analysis/plot_input.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analysis/report.h"
#include "analysis/results.h"
#include "base/util.h"

static const char *const source_paths[PLOT_SOURCES] = {
	[PLOT_SOURCE_LAB] = "lab/results.json",
	[PLOT_SOURCE_EXACT] = "exact/results.json",
	[PLOT_SOURCE_PROFILE] = "profile/results.json",
	[PLOT_SOURCE_CEILINGS] = "ceilings.json",
	[PLOT_SOURCE_DECODE] = "decode/results.json",
	[PLOT_SOURCE_SWEEP] = "results.json",
};

const char *
plot_source_path(enum plot_source s)
{
	return s < PLOT_SOURCES ? source_paths[s] : "";
}

unsigned
plot_dtype_bytes(const char *dtype)
{
	if (strcmp(dtype, "fp32") == 0)
		return 4;
	if (strcmp(dtype, "fp16") == 0 || strcmp(dtype, "bf16") == 0)
		return 2;
	return 0;
}

/* Where a row is read from, and the first problem found in it. */
struct ctx {
	const char *path;
	unsigned long line; /* 0: a whole-file document */
	char *err;
	size_t errlen;
	bool bad;
};

static void
problem(struct ctx *c, const char *key, const char *what)
{
	if (c->bad)
		return;
	c->bad = true;
	if (c->line)
		snprintf(c->err, c->errlen, "%s:%lu: %s %s", c->path, c->line, key, what);
	else
		snprintf(c->err, c->errlen, "%s: %s %s", c->path, key, what);
}

/* A finite number >= min; sets the problem and returns min when it is not one. */
static double
number(struct ctx *c, const cJSON *obj, const char *key, double min)
{
	const cJSON *v = results_get(obj, key);

	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min) {
		problem(c, key,
			!v        ? "is missing"
			: min > 0 ? "is not a positive number"
				  : "is not a number >= 0");
		return min;
	}
	return v->valuedouble;
}

/* A whole number in [1, 2^31). */
static unsigned
count(struct ctx *c, const cJSON *obj, const char *key)
{
	double v = number(c, obj, key, 1);

	if (!c->bad && (v != floor(v) || v >= 2147483648.0)) {
		problem(c, key, "is not a whole number below 2^31");
		return 1;
	}
	return (unsigned)v;
}

/* A number that may be absent: def then. */
static double
optional_number(struct ctx *c, const cJSON *obj, const char *key, double def)
{
	return results_get(obj, key) ? number(c, obj, key, 0) : def;
}

/* A non-empty string copied into out (empty when allow_empty and it is ""). */
static void
string(struct ctx *c, const cJSON *obj, const char *key, char *out, size_t len, bool allow_empty)
{
	const char *s = cJSON_GetStringValue(results_get(obj, key));

	out[0] = '\0';
	if (!s || (!allow_empty && !*s)) {
		problem(c, key, s ? "is empty" : "is missing or not a string");
		return;
	}
	if (strlen(s) >= len) {
		problem(c, key, "is too long");
		return;
	}
	snprintf(out, len, "%s", s);
}

/* Fills r from one sweep row; false (and skipped) for rows without DRAM bytes. */
static bool
read_run(struct ctx *c, const cJSON *row, struct plot_run *r)
{
	const char *mode = cJSON_GetStringValue(results_get(row, "mode"));
	const cJSON *levels = results_get(row, "levels"), *last;
	char preset[160], spec[512];

	if (results_get(row, "error") || (mode && strcmp(mode, "simulated") != 0))
		return false;
	memset(r, 0, sizeof(*r));
	string(c, row, "config.kernel", r->kernel, sizeof(r->kernel), false);
	string(c, row, "config.dtype", r->dtype, sizeof(r->dtype), false);
	r->N = count(c, row, "config.N");
	r->d = count(c, row, "config.d");
	r->Br = count(c, row, "config.Br");
	r->Bc = count(c, row, "config.Bc");
	r->causal = cJSON_IsTrue(results_get(row, "config.causal"));
	string(c, row, "config.cache", spec, sizeof(spec), false);
	if (results_get(row, "config.preset"))
		string(c, row, "config.preset", preset, sizeof(preset), true);
	else
		preset[0] = '\0';
	/* A label only: a long spec may be cut, but never the mark of an estimate, which keeps
	 * its own series. */
	r->sample_sets = (unsigned)results_number(row, "estimate.sample_sets", 0);
	if (r->sample_sets > 1)
		snprintf(r->cache, sizeof(r->cache), "%.*s (sampled 1/%u)",
			 (int)sizeof(r->cache) - 32, preset[0] ? preset : spec, r->sample_sets);
	else
		snprintf(r->cache, sizeof(r->cache), "%.*s", (int)sizeof(r->cache) - 1,
			 preset[0] ? preset : spec);
	r->dtype_bytes = plot_dtype_bytes(r->dtype);
	if (!c->bad && !r->dtype_bytes)
		problem(c, "config.dtype", "is not fp32, fp16 or bf16");
	if (results_get(row, "dram.total_bytes"))
		r->dram_bytes = number(c, row, "dram.total_bytes", 0);
	else
		r->dram_bytes = number(c, row, "dram.read_bytes", 0) +
				number(c, row, "dram.write_bytes", 0);
	r->flops = number(c, row, "flops", 0);
	r->intensity = optional_number(c, row, "intensity",
				       r->dram_bytes > 0 ? r->flops / r->dram_bytes : 0);
	r->lab_bytes = -1;
	if (results_get(row, "formulas.lab.bytes") &&
	    !cJSON_IsFalse(results_get(row, "formulas.lab.applicable")))
		r->lab_bytes = number(c, row, "formulas.lab.bytes", 0);
	r->exact_bytes = optional_number(c, row, "formulas.exact.bytes", -1);
	if (levels && !cJSON_IsArray(levels))
		problem(c, "levels", "is not an array");
	last = cJSON_GetArrayItem(levels, cJSON_GetArraySize(levels) - 1);
	if (last)
		r->ll_size_bytes = number(c, last, "size_bytes", 1);
	return true;
}

/* Fills r from one decode sweep row; false (and skipped) for rows without DRAM bytes. */
static bool
read_decode(struct ctx *c, const cJSON *row, struct plot_decode *r)
{
	const char *mode = cJSON_GetStringValue(results_get(row, "mode"));
	char preset[160];
	double tokens;

	if (results_get(row, "error") || (mode && strcmp(mode, "simulated") != 0))
		return false;
	memset(r, 0, sizeof(*r));
	string(c, row, "config.dtype", r->dtype, sizeof(r->dtype), false);
	string(c, row, "config.cache", r->cache, sizeof(r->cache), false);
	if (results_get(row, "config.preset")) {
		string(c, row, "config.preset", preset, sizeof(preset), true);
		if (preset[0])
			snprintf(r->cache, sizeof(r->cache), "%s", preset);
	}
	r->N = count(c, row, "config.N");
	r->N_kv = count(c, row, "config.N_kv");
	r->d = count(c, row, "config.d");
	r->heads = count(c, row, "config.heads");
	r->kv_heads = count(c, row, "config.kv_heads");
	r->batch = count(c, row, "config.batch");
	r->bytes_per_token = number(c, row, "per_token.bytes", 0);
	tokens = (double)r->batch * r->N;
	r->exact_per_token = optional_number(c, row, "formulas.exact.bytes", -tokens) / tokens;
	/* Without a bandwidth the bound is null: no line for it. */
	r->tokens_per_s = cJSON_IsNull(results_get(row, "per_token.tokens_per_s_bound"))
				  ? -1
				  : number(c, row, "per_token.tokens_per_s_bound", 0);
	r->gbps = cJSON_IsNull(results_get(row, "per_token.bandwidth_gbps"))
			  ? 0
			  : number(c, row, "per_token.bandwidth_gbps", 0);
	if (!c->bad && r->kv_heads > r->heads)
		problem(c, "config.kv_heads", "is more than config.heads");
	return true;
}

static void
read_op(struct ctx *c, const cJSON *row, struct plot_op *o)
{
	memset(o, 0, sizeof(*o));
	o->T = count(c, row, "T");
	o->d_model = count(c, row, "d_model");
	o->heads = count(c, row, "heads");
	o->d_head = count(c, row, "d_head");
	string(c, row, "dtype", o->dtype, sizeof(o->dtype), false);
	string(c, row, "kernel", o->kernel, sizeof(o->kernel), false);
	string(c, row, "op", o->op, sizeof(o->op), false);
	o->p50_seconds = number(c, row, "seconds.p50", 1e-300);
	o->flops = number(c, row, "flops", 0);
	o->dram_bytes = number(c, row, "dram_bytes", 0);
	o->intensity = optional_number(c, row, "intensity",
				       o->dram_bytes > 0 ? o->flops / o->dram_bytes : 0);
	o->gflops = optional_number(c, row, "gflops", o->flops / o->p50_seconds / 1e9);
}

/* Rows of one file as read: the table, its element size and filler, and the problem. */
struct lines {
	struct ctx c;
	size_t elem, n, cap;
	char *out;
	bool (*fill)(struct ctx *c, const cJSON *row, void *out);
};

static int
take_line(const cJSON *row, unsigned long line, void *ctx)
{
	struct lines *l = ctx;

	l->c.line = line;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->out = xrealloc(l->out, l->cap * l->elem);
	}
	if (l->fill(&l->c, row, l->out + l->n * l->elem))
		l->n++;
	return l->c.bad ? -EINVAL : 0;
}

/* Reads a results file (analysis/results.h) row by row into *rows (elem bytes each) with
 * fill(); returns the number of rows kept, or -1 with the problem in err. */
static long
read_lines(const char *path, size_t elem, void **rows,
	   bool (*fill)(struct ctx *c, const cJSON *row, void *out), char *err, size_t errlen)
{
	struct lines l = { .c = { .path = path, .err = err, .errlen = errlen },
			   .elem = elem,
			   .fill = fill };
	char rerr[600];
	int rc = results_read(path, take_line, &l, NULL, rerr, sizeof(rerr));

	if (rc) {
		if (!l.c.bad)
			snprintf(err, errlen, "%s", rerr);
		free(l.out);
		return -1;
	}
	*rows = l.out;
	return (long)l.n;
}

static bool
fill_run(struct ctx *c, const cJSON *row, void *out)
{
	return read_run(c, row, out);
}

static bool
fill_decode(struct ctx *c, const cJSON *row, void *out)
{
	return read_decode(c, row, out);
}

/* A sweep's row with fewer queries than keys: a decode step. */
static bool
decode_row(const cJSON *row)
{
	const cJSON *n = results_get(row, "config.N"), *kv = results_get(row, "config.N_kv");

	return cJSON_IsNumber(n) && cJSON_IsNumber(kv) && n->valuedouble < kv->valuedouble;
}

static bool
fill_sweep_run(struct ctx *c, const cJSON *row, void *out)
{
	return !decode_row(row) && read_run(c, row, out);
}

static bool
fill_sweep_decode(struct ctx *c, const cJSON *row, void *out)
{
	return decode_row(row) && read_decode(c, row, out);
}

/* A sweep's DIR/results.json at path into in's lab, exact (the same rows) and decode. */
static long
read_sweep(struct plot_input *in, const char *path, char *err, size_t errlen)
{
	long n, m;

	n = read_lines(path, sizeof(*in->lab), (void **)&in->lab, fill_sweep_run, err, errlen);
	if (n < 0)
		return -1;
	m = read_lines(path, sizeof(*in->decode), (void **)&in->decode, fill_sweep_decode, err,
		       errlen);
	if (m < 0)
		return -1;
	in->nlab = in->nexact = (size_t)n;
	in->ndecode = (size_t)m;
	in->exact = xrealloc(NULL, (n ? (size_t)n : 1) * sizeof(*in->exact));
	if (n)
		memcpy(in->exact, in->lab, (size_t)n * sizeof(*in->exact));
	return n + m;
}

static bool
fill_op(struct ctx *c, const cJSON *row, void *out)
{
	read_op(c, row, out);
	return true;
}

static bool
read_ceilings(const char *path, struct plot_ceilings *k, char *err, size_t errlen)
{
	struct ctx c = { .path = path, .err = err, .errlen = errlen };
	cJSON *root = report_read_json(path, err, errlen);

	if (!root)
		return false;
	memset(k, 0, sizeof(*k));
	if (results_get(root, "cpu"))
		string(&c, root, "cpu", k->cpu, sizeof(k->cpu), true);
	if (results_get(root, "peak_flops.isa"))
		string(&c, root, "peak_flops.isa", k->isa, sizeof(k->isa), true);
	k->cores = results_get(root, "cores") ? count(&c, root, "cores") : 0;
	k->quick = cJSON_IsTrue(results_get(root, "quick"));
	k->inconsistent = cJSON_IsFalse(results_get(root, "consistency.consistent"));
	k->bw_one_bytes_per_s = number(&c, root, "bandwidth.one_core_bytes_per_s", 1);
	k->bw_all_bytes_per_s = number(&c, root, "bandwidth.all_cores_bytes_per_s", 1);
	k->flops_one_per_s = number(&c, root, "peak_flops.one_core_flops_per_s", 1);
	k->flops_all_per_s = number(&c, root, "peak_flops.all_cores_flops_per_s", 1);
	k->bw_threads =
		results_get(root, "bandwidth.threads") ? count(&c, root, "bandwidth.threads") : 0;
	k->flops_threads =
		results_get(root, "peak_flops.threads") ? count(&c, root, "peak_flops.threads") : 0;
	cJSON_Delete(root);
	return !c.bad;
}

enum plot_source
plot_input_source(const struct plot_input *in, enum plot_source s)
{
	if (in->sweep &&
	    (s == PLOT_SOURCE_LAB || s == PLOT_SOURCE_EXACT || s == PLOT_SOURCE_DECODE))
		return PLOT_SOURCE_SWEEP;
	return s;
}

int
plot_input_load(struct plot_input *in, const char *dir)
{
	char path[4200];
	struct stat st;

	memset(in, 0, sizeof(*in));
	if (stat(dir, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	snprintf(in->dir, sizeof(in->dir), "%s", dir);
	snprintf(path, sizeof(path), "%s/%s", dir, source_paths[PLOT_SOURCE_SWEEP]);
	in->sweep = stat(path, &st) == 0 || errno != ENOENT;
	for (int s = 0; s < PLOT_SOURCES; s++) {
		char *err = in->error[s];
		size_t errlen = sizeof(in->error[s]);
		long n = 0;

		if ((int)plot_input_source(in, (enum plot_source)s) != s)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, source_paths[s]);
		if (stat(path, &st) != 0 && errno == ENOENT)
			continue;
		in->present[s] = true;
		switch (s) {
		case PLOT_SOURCE_LAB:
			n = read_lines(path, sizeof(*in->lab), (void **)&in->lab, fill_run, err,
				       errlen);
			in->nlab = n > 0 ? (size_t)n : 0;
			break;
		case PLOT_SOURCE_EXACT:
			n = read_lines(path, sizeof(*in->exact), (void **)&in->exact, fill_run, err,
				       errlen);
			in->nexact = n > 0 ? (size_t)n : 0;
			break;
		case PLOT_SOURCE_PROFILE:
			n = read_lines(path, sizeof(*in->ops), (void **)&in->ops, fill_op, err,
				       errlen);
			in->nops = n > 0 ? (size_t)n : 0;
			break;
		case PLOT_SOURCE_CEILINGS:
			n = read_ceilings(path, &in->ceilings, err, errlen) ? 1 : -1;
			break;
		case PLOT_SOURCE_DECODE:
			n = read_lines(path, sizeof(*in->decode), (void **)&in->decode, fill_decode,
				       err, errlen);
			in->ndecode = n > 0 ? (size_t)n : 0;
			break;
		case PLOT_SOURCE_SWEEP:
			n = read_sweep(in, path, err, errlen);
			break;
		}
		in->usable[s] = n >= 0;
	}
	return 0;
}

void
plot_input_finish(struct plot_input *in)
{
	free(in->lab);
	free(in->exact);
	free(in->ops);
	free(in->decode);
	in->lab = in->exact = NULL;
	in->ops = NULL;
	in->decode = NULL;
	in->nlab = in->nexact = in->nops = in->ndecode = 0;
}
