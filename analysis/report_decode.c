/*
 * The report's decode section. Notes:
 * - Layouts are the rows' kv_heads, largest first: MHA where kv_heads = heads, MQA where it
 *   is 1, GQA between. Only simulated rows count (a failed run has none of the numbers).
 * - "K read R times" is K's DRAM read bytes over the K array's size (kv_heads N_kv d s, batch
 *   1): 1 where K and V are read once per generated token.
 * - flashdecode rows (config.splits) say S and the split-KV partial arrays' DRAM bytes
 *   (O_accum, lse_accum: absent at S = 1, counted 0), and whether grouped heads were packed
 *   (config.gqa_packed).
 * - Decisions (which wording) use the rows' values; every number printed goes through the
 *   lookup, so report-numbers.json and tests/test-report.c see it.
 */

#include "analysis/report_decode.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/plot_input.h"
#include "analysis/results.h"

#define DECODE "decode/results.json"
#define MIB (1.0 / (1024.0 * 1024.0))
#define MAX_NKV 32
#define MAX_LAYOUTS 6

struct dec {
	struct lookup *l;
	struct doc *d;
	double nkv[MAX_NKV], kv[MAX_LAYOUTS], heads;
	size_t nnkv, nkv_layouts;
	unsigned s;    /* bytes of one element */
	bool split_kv; /* flashdecode rows: splits and partial arrays */
	char last_level[32];
};

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The distinct values at path over the simulated rows, sorted increasing. */
static size_t
distinct(struct lookup *l, const char *path, double *out, size_t max)
{
	size_t rows, n = 0;
	const cJSON *const *all = lookup_rows(l, DECODE, &rows);

	for (size_t i = 0; all && i < rows; i++) {
		const cJSON *v = results_get(all[i], path);
		bool seen = false;

		if (!results_matches(all[i], "mode=simulated") || !cJSON_IsNumber(v))
			continue;
		for (size_t k = 0; k < n; k++)
			seen |= out[k] == v->valuedouble;
		if (!seen && n < max)
			out[n++] = v->valuedouble;
	}
	qsort(out, n, sizeof(*out), dcmp);
	return n;
}

static char *
sel(char *buf, size_t len, double kv, double nkv)
{
	snprintf(buf, len, "mode=simulated,config.kv_heads=%.0f,config.N_kv=%.0f", kv, nkv);
	return buf;
}

/* The number at path of the row (kv, nkv), formatted; "-" when absent. */
static const char *
num(struct dec *x, double kv, double nkv, const char *path, double scale, const char *fmt)
{
	struct lookup_src s;
	char row[160];

	if (!lookup_get(x->l, DECODE, sel(row, sizeof(row), kv, nkv), path, &s))
		return "-";
	return lookup_num(x->l, LOOKUP_VALUE, &s, 1, scale, fmt);
}

static double
val(struct dec *x, double kv, double nkv, const char *path)
{
	struct lookup_src s;
	char row[160];

	return lookup_get(x->l, DECODE, sel(row, sizeof(row), kv, nkv), path, &s) ? s.value : NAN;
}

/* op over paths of rows (kv[i], nkv[i]); "-" when one is absent. */
static const char *
op(struct dec *x, enum lookup_op o, unsigned n, const double *kv, const double *nkv,
   const char *const *paths, double scale, const char *fmt)
{
	struct lookup_src s[LOOKUP_SRC_MAX];
	char row[160];

	for (unsigned i = 0; i < n; i++)
		if (!lookup_get(x->l, DECODE, sel(row, sizeof(row), kv[i], nkv[i]), paths[i],
				&s[i]))
			return "-";
	return lookup_num(x->l, o, s, n, scale, fmt);
}

/* Bytes per context token between N_kv values a and b (indices). */
static const char *
slope(struct dec *x, double kv, size_t a, size_t b)
{
	const double kvs[] = { kv, kv, kv, kv },
		     n[] = { x->nkv[b], x->nkv[a], x->nkv[b], x->nkv[a] };
	static const char *const p[] = { "per_token.bytes", "per_token.bytes", "config.N_kv",
					 "config.N_kv" };

	return op(x, LOOKUP_SLOPE, 4, kvs, n, p, 1, "%.0f");
}

/* `2 x kv_heads x d x s`: the bytes of K and V per context token, each read once. */
static const char *
once(struct dec *x, double kv, double nkv)
{
	const double kvs[] = { kv, kv }, n[] = { nkv, nkv };
	static const char *const p[] = { "config.kv_heads", "config.d" };

	return op(x, LOOKUP_PRODUCT, 2, kvs, n, p, 2.0 * x->s, "%.0f");
}

/* How many times K was read from DRAM at (kv, nkv): K's read bytes / its size. */
static const char *
k_reads(struct dec *x, double kv, double nkv)
{
	const double kvs[] = { kv, kv, kv, kv }, n[] = { nkv, nkv, nkv, nkv };
	static const char *const p[] = { "arrays.K.read_bytes", "config.kv_heads", "config.N_kv",
					 "config.d" };

	/* Four sources at most: the batch is left out, so only batch 1 says it. */
	if (val(x, kv, nkv, "config.batch") != 1)
		return "-";
	return op(x, LOOKUP_QUOTIENT, 4, kvs, n, p, 1.0 / x->s, "%.3g");
}

static double
k_reads_val(struct dec *x, double kv, double nkv)
{
	return val(x, kv, nkv, "arrays.K.read_bytes") /
	       (kv * nkv * val(x, kv, nkv, "config.d") * x->s * val(x, kv, nkv, "config.batch"));
}

/* The same for V: the sentences that say "K and V read once" need both. */
static double
v_reads_val(struct dec *x, double kv, double nkv)
{
	return val(x, kv, nkv, "arrays.V.read_bytes") /
	       (kv * nkv * val(x, kv, nkv, "config.d") * x->s * val(x, kv, nkv, "config.batch"));
}

static const char *
layout(const struct dec *x, double kv)
{
	return kv == x->heads ? "MHA" : kv == 1 ? "MQA" : "GQA";
}

/* The split-KV partial arrays' DRAM bytes at (kv, nkv): O_accum's and lse_accum's, each 0
 * where the run has none (S = 1). */
static double
partial_val(struct dec *x, double kv, double nkv)
{
	double o = val(x, kv, nkv, "arrays.O_accum.total_bytes");
	double l = val(x, kv, nkv, "arrays.lse_accum.total_bytes");

	return (isnan(o) ? 0 : o) + (isnan(l) ? 0 : l);
}

static const char *
partial(struct dec *x, double kv, double nkv)
{
	const double kvs[] = { kv, kv }, n[] = { nkv, nkv };
	static const char *const p[] = { "arrays.O_accum.total_bytes",
					 "arrays.lse_accum.total_bytes" };

	if (!x->split_kv)
		return "-";
	if (partial_val(x, kv, nkv) == 0)
		return "0";
	return op(x, LOOKUP_SUM, 2, kvs, n, p, 1, "%.0f");
}

/* One layout's growth: K and V read once at every N_kv, or where they stop fitting. */
static void
growth(struct dec *x, double kv)
{
	size_t n = x->nnkv, first_more = n;
	double top = x->nkv[n - 1];

	for (size_t i = 0; i < n; i++)
		if (first_more == n &&
		    !(k_reads_val(x, kv, x->nkv[i]) <= 1 && v_reads_val(x, kv, x->nkv[i]) <= 1))
			first_more = i;
	if (first_more == n) {
		char rest[400] = "";

		if (x->split_kv && partial_val(x, kv, top) > 0)
			snprintf(rest, sizeof(rest),
				 " Besides K and V (and Q, O and lse) the step moves the split-KV "
				 "partial O and logsumexp (`O_accum`, `lse_accum`): %s bytes at "
				 "N_kv = %s, S = %s.",
				 partial(x, kv, top), num(x, kv, top, "config.N_kv", 1, "%.0f"),
				 num(x, kv, top, "config.splits", 1, "%.0f"));
		doc_bullet(x->d,
			   "%s (%s KV head%s): %s bytes per context token from N_kv = %s to %s; "
			   "`2 × kv_heads × d × s` = %s: K and V are each read once per generated "
			   "token at every N_kv.%s",
			   layout(x, kv), num(x, kv, top, "config.kv_heads", 1, "%.0f"),
			   kv == 1 ? "" : "s", slope(x, kv, 0, n - 1),
			   num(x, kv, x->nkv[0], "config.N_kv", 1, "%.0f"),
			   num(x, kv, top, "config.N_kv", 1, "%.0f"), once(x, kv, top), rest);
		return;
	}
	{
		double at = x->nkv[first_more], lvl;
		char path[96];
		const double kvs[] = { kv, kv }, nn[] = { at, at };
		static const char *const p[] = { "config.N_kv", "config.d" };
		const double hk[] = { kv, kv }, hn[] = { top, top };
		static const char *const hp[] = { "config.heads", "config.kv_heads" };

		snprintf(path, sizeof(path), "levels[name=%s].size_bytes", x->last_level);
		lvl = val(x, kv, at, path);
		doc_bullet(
			x->d,
			"%s (%s KV head%s): %s bytes per context token up to N_kv = %s "
			"(`2 × kv_heads × d × s` = %s: K and V read once), %s from N_kv = %s to "
			"%s. From N_kv = %s one KV head's K and V (%s MiB) %s the preset's %s MiB "
			"last level, and the model runs the %s query heads that share them one "
			"after another, each reading them again from DRAM: K is read %s times at "
			"N_kv = %s.",
			layout(x, kv), num(x, kv, top, "config.kv_heads", 1, "%.0f"),
			kv == 1 ? "" : "s", first_more > 1 ? slope(x, kv, 0, first_more - 1) : "-",
			first_more > 0
				? num(x, kv, x->nkv[first_more - 1], "config.N_kv", 1, "%.0f")
				: "-",
			once(x, kv, top), n > 1 ? slope(x, kv, n - 2, n - 1) : "-",
			n > 1 ? num(x, kv, x->nkv[n - 2], "config.N_kv", 1, "%.0f") : "-",
			num(x, kv, top, "config.N_kv", 1, "%.0f"),
			num(x, kv, at, "config.N_kv", 1, "%.0f"),
			op(x, LOOKUP_PRODUCT, 2, kvs, nn, p, 2.0 * x->s * MIB, "%.0f"),
			2.0 * at * val(x, kv, at, "config.d") * x->s > lvl ? "exceed"
									   : "no longer fit",
			num(x, kv, at, path, MIB, "%.0f"),
			op(x, LOOKUP_RATIO, 2, hk, hn, hp, 1, "%.0f"), k_reads(x, kv, top),
			num(x, kv, top, "config.N_kv", 1, "%.0f"));
	}
}

/* Bytes per token of MHA over each other layout at N_kv index i. */
static void
savings(struct dec *x, size_t i, cJSON *summary)
{
	static const char *const pb[] = { "per_token.bytes", "per_token.bytes" };
	static const char *const ph[] = { "config.heads", "config.kv_heads" };
	double mha = x->kv[x->nkv_layouts - 1], at = x->nkv[i];
	char key[96];

	for (size_t k = x->nkv_layouts - 1; k-- > 0;) {
		const double kvs[] = { mha, x->kv[k] }, n[] = { at, at };
		const char *r = op(x, LOOKUP_RATIO, 2, kvs, n, pb, 1, "%.3g");

		doc_bullet(x->d,
			   "at N_kv = %s: MHA / %s bytes per token = **%s** (%s, %s KV head%s: %s "
			   "query heads share each)",
			   num(x, mha, at, "config.N_kv", 1, "%.0f"), layout(x, x->kv[k]), r,
			   layout(x, x->kv[k]), num(x, x->kv[k], at, "config.kv_heads", 1, "%.0f"),
			   x->kv[k] == 1 ? "" : "s",
			   op(x, LOOKUP_RATIO, 2, (const double[]){ x->kv[k], x->kv[k] }, n, ph, 1,
			      "%.0f"));
		if (i == x->nnkv - 1 && strcmp(r, "-") != 0) {
			snprintf(key, sizeof(key), "decode_mha_over_kv%.0f_bytes_at_max_N_kv",
				 x->kv[k]);
			cJSON_AddNumberToObject(summary, key, strtod(r, NULL));
		}
	}
}

static void
table(struct dec *x)
{
	double lo = x->nkv[0], top = x->nkv[x->nnkv - 1];
	char head[500];

	snprintf(head, sizeof(head),
		 "layout|KV heads|bytes per token, smallest N_kv|bytes per token, largest N_kv|"
		 "bytes per context token (last two N_kv)|`2 × kv_heads × d × s`|K read, "
		 "times (largest N_kv)|%stokens/s bound (largest N_kv)",
		 x->split_kv ? "splits S (largest N_kv)|`O_accum` + `lse_accum` bytes (largest "
			       "N_kv)|"
			     : "");
	doc_table(x->d, head);
	for (size_t k = x->nkv_layouts; k-- > 0;) {
		double kv = x->kv[k];
		char split[200] = "";

		if (x->split_kv)
			snprintf(split, sizeof(split), "%s|%s|",
				 num(x, kv, top, "config.splits", 1, "%.0f"), partial(x, kv, top));
		doc_row(x->d, "%s|%s|%s|%s|%s|%s|%s|%s%s", layout(x, kv),
			num(x, kv, top, "config.kv_heads", 1, "%.0f"),
			num(x, kv, lo, "per_token.bytes", 1, "%.0f"),
			num(x, kv, top, "per_token.bytes", 1, "%.0f"),
			x->nnkv > 1 ? slope(x, kv, x->nnkv - 2, x->nnkv - 1) : "-",
			once(x, kv, top), k_reads(x, kv, top), split,
			num(x, kv, top, "per_token.tokens_per_s_bound", 1, "%.0f"));
	}
	doc_table_end(x->d);
}

/* The first simulated row, for the settings every row shares. */
static const cJSON *
first_row(struct lookup *l)
{
	size_t rows;
	const cJSON *const *all = lookup_rows(l, DECODE, &rows);

	for (size_t i = 0; all && i < rows; i++)
		if (results_matches(all[i], "mode=simulated"))
			return all[i];
	return NULL;
}

/* "32, 8 and 1": the layouts' KV heads, largest first. */
static void
kv_list(struct dec *x, char *buf, size_t len)
{
	double top = x->nkv[x->nnkv - 1];

	buf[0] = '\0';
	for (size_t k = x->nkv_layouts; k-- > 0;)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 k == x->nkv_layouts - 1 ? ""
			 : k == 0                ? " and "
						 : ", ",
			 num(x, x->kv[k], top, "config.kv_heads", 1, "%.0f"));
}

/* "MHA 1560, GQA 1560, MQA 1560": the tokens/s bound of each layout at N_kv index i. */
static void
bounds(struct dec *x, size_t i, char *buf, size_t len, cJSON *summary)
{
	char key[96];

	buf[0] = '\0';
	for (size_t k = x->nkv_layouts; k-- > 0;) {
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s (%s KV head%s) %s",
			 k == x->nkv_layouts - 1 ? "" : ", ", layout(x, x->kv[k]),
			 num(x, x->kv[k], x->nkv[i], "config.kv_heads", 1, "%.0f"),
			 x->kv[k] == 1 ? "" : "s",
			 num(x, x->kv[k], x->nkv[i], "per_token.tokens_per_s_bound", 1, "%.0f"));
		snprintf(key, sizeof(key), "decode_tokens_per_s_bound_at_max_N_kv_kv%.0f",
			 x->kv[k]);
		if (i == x->nnkv - 1)
			cJSON_AddNumberToObject(
				summary, key,
				val(x, x->kv[k], x->nkv[i], "per_token.tokens_per_s_bound"));
	}
}

/* flashdecode's rows: S and where it came from, and the packing of grouped heads where the
 * rows say it happened. */
static void
split_kv_para(struct dec *x)
{
	double top = x->nkv[x->nnkv - 1];
	char sv[300] = "", packed[120] = "";
	const char *src;
	char row[160];
	size_t np = 0;

	for (size_t k = x->nkv_layouts; k-- > 0;)
		snprintf(sv + strlen(sv), sizeof(sv) - strlen(sv), "%s%s %s",
			 k == x->nkv_layouts - 1 ? "" : ", ", layout(x, x->kv[k]),
			 num(x, x->kv[k], top, "config.splits", 1, "%.0f"));
	for (size_t k = x->nkv_layouts; k-- > 0;) {
		const cJSON *r = lookup_row(x->l, DECODE, sel(row, sizeof(row), x->kv[k], top));

		if (r && cJSON_IsTrue(results_get(r, "config.gqa_packed")))
			snprintf(packed + strlen(packed), sizeof(packed) - strlen(packed), "%s%s",
				 np++ ? " and " : "", layout(x, x->kv[k]));
	}
	src = lookup_text(x->l, DECODE, sel(row, sizeof(row), x->kv[0], top),
			  "config.splits_source");
	doc_para(x->d,
		 "The kernel is FlashAttention's split-KV decode: the key blocks are cut into S "
		 "splits, each writing a partial O and logsumexp in fp32 (`O_accum`, `lse_accum`) "
		 "that a combine phase reduces. S is the rows' `splits` (source: %s; at N_kv = %s: "
		 "%s).%s%s%s",
		 src ? src : "-", num(x, x->kv[0], top, "config.N_kv", 1, "%.0f"), sv,
		 np ? " With one query token and grouped heads it packs the query heads of a KV "
		      "head into one head's query rows, as FlashAttention does "
		      "(`seqlenq_ngroups_swapped`; `gqa_packed` in the rows' config: "
		    : "",
		 packed, np ? "), so each K and V block is read once for the whole group." : "");
}

/* The plot's PNG, where `memsim plot` drew it. */
static void
image(const char *dir, struct doc *d, const char *name, const char *caption)
{
	char path[1200], rel[128];

	snprintf(rel, sizeof(rel), "plots/%s.png", name);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (access(path, R_OK) == 0)
		doc_image(d, rel, name, caption);
}

void
report_decode_section(const char *dir, struct lookup *l, struct doc *d, cJSON *summary)
{
	struct dec x = { .l = l, .d = d };
	const cJSON *row = first_row(l), *levels;
	double lo, top, mha;
	const char *src, *dtype, *preset;
	char kvs[160], tps[600];
	bool reread = false;
	const char *kernel;

	doc_heading(d, 2, "Decode: bytes per generated token and the tokens/s bound vs context");
	if (!row) {
		doc_para(d, "No decode rows in `%s`: run `memsim study`.", DECODE);
		return;
	}
	dtype = results_string(row, "config.dtype");
	x.s = plot_dtype_bytes(dtype);
	x.heads = results_number(row, "config.heads", 0);
	levels = results_get(row, "levels");
	snprintf(
		x.last_level, sizeof(x.last_level), "%s",
		results_string(cJSON_GetArrayItem(levels, cJSON_GetArraySize(levels) - 1), "name"));
	x.nnkv = distinct(l, "config.N_kv", x.nkv, MAX_NKV);
	x.nkv_layouts = distinct(l, "config.kv_heads", x.kv, MAX_LAYOUTS);
	x.split_kv = cJSON_IsNumber(results_get(row, "config.splits"));
	if (!x.s || !x.last_level[0] || !x.nnkv || !x.nkv_layouts) {
		doc_para(d, "The rows of `%s` have no dtype, no cache levels or no sizes.", DECODE);
		return;
	}
	lo = x.nkv[0];
	top = x.nkv[x.nnkv - 1];
	mha = x.kv[x.nkv_layouts - 1];
	kv_list(&x, kvs, sizeof(kvs));
	preset = lookup_text(l, DECODE, "mode=simulated", "config.preset");
	doc_para(
		d,
		"From `%s`: one decode step, %s with N = %s query token over a KV cache of N_kv = "
		"%s to %s tokens, d = %s, %s query heads sharing %s KV heads (MHA, GQA, MQA), "
		"%s (`s` bytes per element), batch %s, simulated on the `%s` preset (trace-only: "
		"the kernel's accesses without values). Bytes per token are the DRAM bytes of that "
		"step over the tokens it generates.",
		DECODE, (kernel = lookup_text(l, DECODE, "mode=simulated", "config.kernel")),
		num(&x, mha, lo, "config.N", 1, "%.0f"), num(&x, mha, lo, "config.N_kv", 1, "%.0f"),
		num(&x, mha, top, "config.N_kv", 1, "%.0f"),
		num(&x, mha, lo, "config.d", 1, "%.0f"),
		num(&x, mha, lo, "config.heads", 1, "%.0f"), kvs, dtype,
		num(&x, mha, lo, "config.batch", 1, "%.0f"),
		preset ? preset : lookup_text(l, DECODE, "mode=simulated", "config.cache"));
	src = lookup_text(l, DECODE, "mode=simulated", "per_token.bandwidth_source");
	doc_para(
		d,
		"**The tokens/s bound is the HBM-bandwidth bound of one decode step of one layer's "
		"attention**: the preset's %s GB/s (%s) over the bytes per token, nothing else "
		"counted. A model runs many layers, their weights and more per token, so its "
		"tokens/s is lower; this is what the KV cache of one layer allows at most.",
		num(&x, mha, lo, "per_token.bandwidth_gbps", 1, "%.0f"), src ? src : "no source");
	if (x.split_kv)
		split_kv_para(&x);
	table(&x);
	doc_para(d, "How the bytes per token grow with the context:");
	for (size_t k = x.nkv_layouts; k-- > 0;)
		growth(&x, x.kv[k]);
	if (x.nkv_layouts > 1 && mha == x.heads) {
		doc_para(d, "What grouped-query and multi-query attention save against MHA:");
		savings(&x, 0, summary);
		if (x.nnkv > 1)
			savings(&x, x.nnkv - 1, summary);
	}
	for (size_t k = 0; k < x.nkv_layouts; k++)
		reread |= k_reads_val(&x, x.kv[k], top) > 1;
	if (reread)
		doc_para(
			d,
			"Where K is read more than once, the lost saving is the sequential model's: "
			"it runs one query head after another through one cache. A GPU runs the "
			"query heads of a group at the same time, and decode kernels that pack them "
			"into one block (memsim's flashdecode with one query token, as "
			"FlashAttention) read each KV head's K and V once; these rows' `%s` ran "
			"them in turn, so read them as what a kernel that runs the heads in turn "
			"moves.",
			kernel ? kernel : "kernel");
	bounds(&x, x.nnkv - 1, tps, sizeof(tps), summary);
	doc_para(d, "The tokens/s bound at N_kv = %s: %s.",
		 num(&x, mha, top, "config.N_kv", 1, "%.0f"), tps);
	image(dir, d, "decode_per_token",
	      "DRAM bytes per generated token vs N_kv, per head layout; the exact formula dashed.");
	image(dir, d, "decode_tokens_per_s",
	      "The tokens/s bound of one decode step of one layer's attention at the preset's "
	      "bandwidth vs N_kv, per head layout.");
}
