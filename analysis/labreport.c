#include "analysis/labreport.h"

#include <cJSON.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/doc.h"
#include "analysis/lookup.h"
#include "analysis/report.h"
#include "analysis/report_decode.h"
#include "analysis/results.h"
#include "base/util.h"

#define MIB (1.0 / (1024.0 * 1024.0))
#define LAB "lab/results.json"
#define EXACT "exact/results.json"
#define FORMULAS "formulas/results.json"
#define PROFILE "profile/results.json"
#define CEILINGS "ceilings.json"

struct rep {
	const char *dir;
	struct lookup *l;
	struct doc *d;
	cJSON *summary; /* the manifest's results_summary */
};

/* The text of one number at file/row/path, scaled and formatted; NULL when absent. */
static const char *
rep_num(struct rep *r, const char *file, const char *row, const char *path, double scale,
	const char *fmt)
{
	struct lookup_src s;

	if (!lookup_get(r->l, file, row, path, &s))
		return NULL;
	return lookup_num(r->l, LOOKUP_VALUE, &s, 1, scale, fmt);
}

/* Two sources combined by op; NULL when either is absent. */
static const char *
rep_num2(struct rep *r, enum lookup_op op, const char *f1, const char *r1, const char *p1,
	 const char *f2, const char *r2, const char *p2, double scale, const char *fmt)
{
	struct lookup_src s[2];

	if (!lookup_get(r->l, f1, r1, p1, &s[0]) || !lookup_get(r->l, f2, r2, p2, &s[1]))
		return NULL;
	return lookup_num(r->l, op, s, 2, scale, fmt);
}

/* A raw value for decisions (not printed); NAN when absent. */
static double
rep_val(struct rep *r, const char *file, const char *row, const char *path)
{
	struct lookup_src s;

	return lookup_get(r->l, file, row, path, &s) ? s.value : NAN;
}

static bool
rep_exists(struct rep *r, const char *rel)
{
	char path[1200];

	snprintf(path, sizeof(path), "%s/%s", r->dir, rel);
	return access(path, R_OK) == 0;
}

static void
rep_image(struct rep *r, const char *name, const char *caption)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "plots/%s.png", name);
	if (rep_exists(r, rel))
		doc_image(r->d, rel, name, caption);
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The distinct values of a number field over rows matching a selector, sorted. */
static size_t
rep_distinct(struct rep *r, const char *file, const char *select, const char *path, double *out,
	     size_t max)
{
	size_t n = 0, rows, k = 0;
	const cJSON *const *all = lookup_rows(r->l, file, &rows);

	for (size_t i = 0; all && i < rows; i++) {
		const cJSON *v;
		bool seen = false;

		if (!results_matches(all[i], select))
			continue;
		v = results_get(all[i], path);
		if (!cJSON_IsNumber(v))
			continue;
		for (k = 0; k < n; k++)
			seen |= out[k] == v->valuedouble;
		if (!seen && n < max)
			out[n++] = v->valuedouble;
	}
	qsort(out, n, sizeof(*out), dcmp);
	return n;
}

/* The distinct strings at path over every row of file, in first-seen order. */
static size_t
rep_distinct_str(struct rep *r, const char *file, const char *path, char out[][32], size_t max)
{
	size_t n = 0, rows;
	const cJSON *const *all = lookup_rows(r->l, file, &rows);

	for (size_t i = 0; all && i < rows; i++) {
		const char *s = cJSON_GetStringValue(results_get(all[i], path));
		bool seen = false;

		if (!s)
			continue;
		for (size_t k = 0; k < n; k++)
			seen |= strcmp(out[k], s) == 0;
		if (!seen && n < max)
			snprintf(out[n++], 32, "%s", s);
	}
	return n;
}

static void
rep_summary_number(struct rep *r, const char *key, const char *text)
{
	if (text)
		cJSON_AddNumberToObject(r->summary, key, strtod(text, NULL));
	else
		cJSON_AddNullToObject(r->summary, key);
}

/* ---- where flash starts to win ---- */

/* One preset's table of naive and flash2 DRAM bytes by N, where flash2 starts to win. */
static void
crossover_preset(struct rep *r, const char *preset)
{
	char row_n[192], row_f[192];
	double ns[32];
	size_t nn;
	const char *win = NULL, *twice = NULL, *win_ratio = NULL;
	char sel[192];

	snprintf(sel, sizeof(sel), "config.preset=%s,config.dtype=fp32,config.kernel=naive",
		 preset);
	nn = rep_distinct(r, LAB, sel, "config.N", ns, 32);
	doc_heading(r->d, 3, "Cache preset `%s`", preset);
	doc_table(r->d, "N|naive MiB|flash2 MiB|naive / flash2");
	for (size_t i = 0; i < nn; i++) {
		const char *n_txt, *a, *b, *q;
		double vn, vf;

		snprintf(
			row_n, sizeof(row_n),
			"config.preset=%s,config.dtype=fp32,config.kernel=naive,config.N=%.0f",
			preset, ns[i]);
		snprintf(
			row_f, sizeof(row_f),
			"config.preset=%s,config.dtype=fp32,config.kernel=flash2,config.N=%.0f",
			preset, ns[i]);
		vn = rep_val(r, LAB, row_n, "dram.total_bytes");
		vf = rep_val(r, LAB, row_f, "dram.total_bytes");
		if (isnan(vn) || isnan(vf))
			continue;
		n_txt = rep_num(r, LAB, row_n, "config.N", 1, "%.0f");
		a = rep_num(r, LAB, row_n, "dram.total_bytes", MIB, "%.3f");
		b = rep_num(r, LAB, row_f, "dram.total_bytes", MIB, "%.3f");
		q = rep_num2(r, LOOKUP_RATIO, LAB, row_n, "dram.total_bytes", LAB, row_f,
			     "dram.total_bytes", 1, "%.2f");
		doc_row(r->d, "%s|%s|%s|%s", n_txt, a, b, q);
		if (!win && vf < vn) {
			win = rep_num(r, LAB, row_n, "config.N", 1, "%.0f");
			win_ratio = q;
		}
		if (!twice && vn >= 2 * vf)
			twice = rep_num(r, LAB, row_n, "config.N", 1, "%.0f");
	}
	doc_table_end(r->d);
	if (win)
		doc_para(
			r->d,
			"flash2 moves fewer DRAM bytes than naive from N = %s (naive / flash2 "
			"= %s there)%s%s%s.",
			win, win_ratio,
			twice ? "; it moves at most half of naive's from N = " : "",
			twice ? twice : "",
			twice ? "" : "; it never reaches half in this sweep");
	else
		doc_para(r->d, "flash2 never moves fewer bytes than naive in this sweep.");
	if (strcmp(preset, "lab") == 0)
		rep_summary_number(r, "flash_fewer_bytes_from_N_lab_fp32", win);
	{
		char name[64];

		snprintf(name, sizeof(name), "bytes_vs_n_%s", preset);
		rep_image(r, name,
			  "DRAM bytes vs N, simulated (points) with the lab and exact formulas "
			  "(lines); the crossover is marked.");
	}
}

/* The lab's short sequence: the formulas at N = 64. */
static void
crossover_short_sequence(struct rep *r)
{
	const char *sel_n = "config.kernel=naive,config.N=64,config.d=64,config.dtype=fp32,"
			    "config.preset=lab";
	const char *sel_f =
		"config.kernel=flash2,config.N=64,config.d=64,config.dtype=fp32,"
		"config.preset=lab";
	const char *cpu_n = "config.kernel=naive,config.N=64,config.d=64,config.dtype=fp32,"
			    "config.preset=i5-8250u";
	const char *cpu_f =
		"config.kernel=flash2,config.N=64,config.d=64,config.dtype=fp32,"
		"config.preset=i5-8250u";
	const char *bn = rep_num(r, FORMULAS, sel_n, "formulas.lab.bytes", 1, "%.0f");
	const char *bf = rep_num(r, FORMULAS, sel_f, "formulas.lab.bytes", 1, "%.0f");
	const char *xn = rep_num(r, FORMULAS, cpu_n, "formulas.exact.bytes", 1, "%.0f");
	const char *xf = rep_num(r, FORMULAS, cpu_f, "formulas.exact.bytes", 1, "%.0f");

	if (bn && bf)
		doc_para(r->d,
			 "At the lab's short sequence, N = %s and d = %s (`%s`), the lab "
			 "formulas, which assume no cache, give %s bytes for naive and %s for "
			 "flash (naive / flash = %s).",
			 rep_num(r, FORMULAS, sel_n, "config.N", 1, "%.0f"),
			 rep_num(r, FORMULAS, sel_n, "config.d", 1, "%.0f"), FORMULAS, bn, bf,
			 rep_num2(r, LOOKUP_RATIO, FORMULAS, sel_n, "formulas.lab.bytes", FORMULAS,
				  sel_f, "formulas.lab.bytes", 1, "%.2f"));
	if (xn && xf)
		doc_para(r->d,
			 "With the i5-8250u's caches the exact formulas give %s bytes for naive "
			 "and %s for flash2 (naive / flash2 = %s): the score matrix stays in the "
			 "caches between the passes, so only the compulsory traffic reaches DRAM "
			 "and flash has next to nothing left to win.",
			 xn, xf,
			 rep_num2(r, LOOKUP_RATIO, FORMULAS, cpu_n, "formulas.exact.bytes",
				  FORMULAS, cpu_f, "formulas.exact.bytes", 1, "%.2f"));
}

static void
section_crossover(struct rep *r)
{
	char presets[8][32];
	size_t np = rep_distinct_str(r, LAB, "config.preset", presets, 8);

	doc_heading(r->d, 2, "Where FlashAttention starts to win in DRAM bytes");
	if (np == 0) {
		doc_para(r->d, "No bytes-moved sweep in this directory (`lab/results.json`): run "
			       "`memsim study`.");
		return;
	}
	doc_para(r->d,
		 "Simulated DRAM bytes (reads and writes, the final flush included) of the naive "
		 "three-pass kernel and flash2 (FlashAttention's second loop order), fp32, from "
		 "`%s`.",
		 LAB);
	for (size_t p = 0; p < np; p++)
		crossover_preset(r, presets[p]);
	crossover_short_sequence(r);
}

/* ---- intensity ratio at N = 8192, d = 128 ---- */

static void
section_intensity(struct rep *r)
{
	char presets[8][32];
	size_t np = rep_distinct_str(r, FORMULAS, "config.preset", presets, 8);
	const char *sn = "config.kernel=naive,config.N=8192,config.d=128,config.dtype=fp32,"
			 "config.preset=lab";
	const char *sf = "config.kernel=flash2,config.N=8192,config.d=128,config.dtype=fp32,"
			 "config.preset=lab";
	const char *flops = rep_num(r, FORMULAS, sn, "flops", 1, "%.4g");
	const char *bn = rep_num(r, FORMULAS, sn, "formulas.lab.bytes", 1, "%.0f");
	const char *bf = rep_num(r, FORMULAS, sf, "formulas.lab.bytes", 1, "%.0f");
	const char *ratio;

	if (!flops || !bn || !bf) {
		doc_heading(r->d, 2, "The intensity ratio flash / naive");
		doc_para(r->d,
			 "No formula rows for the lab's long sequence in `%s`: run `memsim study`.",
			 FORMULAS);
		return;
	}
	doc_heading(r->d, 2, "The intensity ratio flash / naive at N = %s, d = %s",
		    rep_num(r, FORMULAS, sf, "config.N", 1, "%.0f"),
		    rep_num(r, FORMULAS, sf, "config.d", 1, "%.0f"));
	doc_para(r->d,
		 "From `%s` (B_r = B_c = %s, fp32, so `s/4 = 1`). Both kernels do the same work, "
		 "`FLOPs = 4 N^2 d` = %s, so the intensity ratio is the inverse ratio of bytes.",
		 FORMULAS, rep_num(r, FORMULAS, sf, "config.Br", 1, "%.0f"), flops);
	doc_bullet(r->d, "naive, lab formula `(12 N d + 16 N^2) s/4` = %s bytes: I = %s FLOP/byte",
		   bn,
		   rep_num2(r, LOOKUP_RATIO, FORMULAS, sn, "flops", FORMULAS, sn,
			    "formulas.lab.bytes", 1, "%.3f"));
	doc_bullet(r->d,
		   "flash, lab formula `8 N d (1 + N / B_r) s/4` = %s bytes: I = %s FLOP/byte", bf,
		   rep_num2(r, LOOKUP_RATIO, FORMULAS, sf, "flops", FORMULAS, sf,
			    "formulas.lab.bytes", 1, "%.3f"));
	ratio = rep_num2(r, LOOKUP_RATIO, FORMULAS, sn, "formulas.lab.bytes", FORMULAS, sf,
			 "formulas.lab.bytes", 1, "%.3f");
	doc_bullet(r->d, "ratio I_flash / I_naive = naive bytes / flash bytes = **%s**", ratio);
	rep_summary_number(r, "intensity_ratio_flash_over_naive_N8192_d128_lab_formula", ratio);
	doc_para(
		r->d,
		"By the lab's formula the ratio is close to one here: flash re-reads K and V once per "
		"query block, `8 N d x N / B_r`, and with d = %s and B_r = %s that grows like "
		"`N^2` just as naive's score traffic `16 N^2` does. The formula charges flash for "
		"K and V again at every one of the N / B_r query blocks, with no cache between the "
		"tiles and memory.",
		rep_num(r, FORMULAS, sf, "config.d", 1, "%.0f"),
		rep_num(r, FORMULAS, sf, "config.Br", 1, "%.0f"));
	for (size_t p = 0; p < np; p++) {
		char en[192], ef[192];
		const char *xn, *xf;

		snprintf(en, sizeof(en),
			 "config.kernel=naive,config.N=8192,config.d=128,config.dtype=fp32,"
			 "config.preset=%s",
			 presets[p]);
		snprintf(ef, sizeof(ef),
			 "config.kernel=flash2,config.N=8192,config.d=128,config.dtype=fp32,"
			 "config.preset=%s",
			 presets[p]);
		xn = rep_num(r, FORMULAS, en, "formulas.exact.bytes", 1, "%.0f");
		xf = rep_num(r, FORMULAS, ef, "formulas.exact.bytes", 1, "%.0f");
		if (!xn || !xf)
			continue;
		doc_bullet(
			r->d,
			"exact formulas on `%s` (the kernels as written, counting O, the logsumexp, "
			"the reads for ownership): naive %s bytes, flash2 %s bytes, ratio %s",
			presets[p], xn, xf,
			rep_num2(r, LOOKUP_RATIO, FORMULAS, en, "formulas.exact.bytes", FORMULAS,
				 ef, "formulas.exact.bytes", 1, "%.3f"));
	}
	rep_image(
		r, "intensity_ratio",
		"flash2 / naive arithmetic intensity vs N, simulated on each preset and by the lab "
		"formula.");
	rep_image(
		r, "dram_vs_cache_size",
		"DRAM bytes vs last-level cache size at fixed N; the curves bend where the working "
		"sets (S, K + V) fit.");
}

/* ---- formulas against measured bytes ---- */

/* The lab formula against the simulated bytes, fp32, per preset, kernel and N. */
static void
formulas_lab_table(struct rep *r, char presets[][32], size_t np)
{
	doc_para(
		r->d,
		"Lab formula against simulated DRAM bytes, fp32 (`%s`; the basis leaves out "
		"what the lab formula leaves out, and the verdict says which assumption "
		"fails where it fails):",
		LAB);
	doc_table(r->d,
		  "preset|kernel|N|simulated MiB (the lab's basis)|lab formula MiB|ratio|"
		  "verdict");
	for (size_t p = 0; p < np; p++) {
		static const char *const kernels[] = { "naive", "flash2" };

		for (int k = 0; k < 2; k++) {
			double ns[32];
			char sel[192];
			size_t nn;

			snprintf(sel, sizeof(sel),
				 "config.preset=%s,config.dtype=fp32,config.kernel=%s",
				 presets[p], kernels[k]);
			nn = rep_distinct(r, LAB, sel, "config.N", ns, 32);
			for (size_t i = 0; i < nn; i++) {
				char row[224];
				const char *why, *reg;
				bool ok;

				snprintf(row, sizeof(row), "%s,config.N=%.0f", sel, ns[i]);
				if (!lookup_row(r->l, LAB, row))
					continue;
				ok = cJSON_IsTrue(
					results_get(lookup_row(r->l, LAB, row),
						    "compare[formula=lab].within"));
				why = lookup_text(r->l, LAB, row,
						  "compare[formula=lab].why_not");
				reg = cJSON_IsTrue(
					      results_get(lookup_row(r->l, LAB, row),
							  "regime.within_lab_assumptions"))
					      ? "in regime"
					      : "out of regime";
				doc_row(r->d, "%s|%s|%s|%s|%s|%s|%s%s%s", presets[p], kernels[k],
					rep_num(r, LAB, row, "config.N", 1, "%.0f"),
					rep_num(r, LAB, row, "compare[formula=lab].measured_bytes",
						MIB, "%.3f"),
					rep_num(r, LAB, row, "compare[formula=lab].predicted_bytes",
						MIB, "%.3f"),
					rep_num(r, LAB, row, "compare[formula=lab].ratio", 1,
						"%.3f"),
					ok ? "within, " : "outside: ", ok ? reg : "",
					ok ? "" : (why ? why : ""));
			}
		}
	}
	doc_table_end(r->d);
}

/* The cross-checks of the native build, when the study ran them (DIR/xcheck/). */
static void
formulas_xcheck(struct rep *r)
{
	char path[1200], names[32][128];
	DIR *dd;
	struct dirent *e;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/xcheck", r->dir);
	dd = opendir(path);
	while (dd && (e = readdir(dd)) && n < 32) {
		size_t len = strlen(e->d_name);

		if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0)
			snprintf(names[n++], sizeof(names[0]), "xcheck/%s", e->d_name);
	}
	if (dd)
		closedir(dd);
	qsort(names, n, sizeof(names[0]), name_cmp);
	if (n == 0)
		return;
	doc_para(
		r->d,
		"Cross-checks of the native build (`memsim xcheck`, `xcheck/`): each tool's "
		"count over memsim's under the tool's cache model.");
	doc_table(r->d,
		  "file|kernel|N|B_c|Cachegrind D1|Cachegrind LL|Callgrind LL|Callgrind "
		  "write-backs|exact formula");
	for (size_t i = 0; i < n; i++) {
		static const char *const cols[] = {
			"rows[source=Cachegrind].ratios.d1_misses.ratio",
			"rows[source=Cachegrind].ratios.ll_misses.ratio",
			"rows[source=Callgrind].ratios.ll_misses.ratio",
			"rows[source=Callgrind].ratios.writebacks.ratio",
			"rows[source=exact formula].ratios.dram_bytes.ratio",
		};
		const char *cell[5];
		const char *kern = cJSON_GetStringValue(
			results_get(lookup_row(r->l, names[i], ""), "config.kernel"));

		for (int c = 0; c < 5; c++) {
			cell[c] = rep_num(r, names[i], "", cols[c], 1, "%.3f");
			if (!cell[c])
				cell[c] = "-";
		}
		doc_row(r->d, "`%s`|%s|%s|%s|%s|%s|%s|%s|%s", names[i] + 7, kern ? kern : "?",
			rep_num(r, names[i], "", "config.N", 1, "%.0f"),
			rep_num(r, names[i], "", "config.Bc", 1, "%.0f"), cell[0], cell[1], cell[2],
			cell[3], cell[4]);
	}
	doc_table_end(r->d);
	for (size_t i = 0; i < n; i++) {
		const char *note = lookup_text(r->l, names[i], "", "notes[0]");

		if (note)
			doc_bullet(r->d, "`%s`: %s", names[i] + 7, note);
	}
}

static void
section_formulas(struct rep *r)
{
	char presets[8][32];
	size_t np = rep_distinct_str(r, LAB, "config.preset", presets, 8);
	const char *in_regime, *within, *exact_ok, *exact_runs;

	doc_heading(r->d, 2, "How far each formula is from the simulated and cross-checked bytes");
	if (np)
		formulas_lab_table(r, presets, np);
	in_regime = rep_num(r, "lab/manifest.json", "", "results_summary.lab_runs_in_regime", 1,
			    "%.0f");
	within = rep_num(r, "lab/manifest.json", "", "results_summary.lab_in_regime_within_30pct",
			 1, "%.0f");
	if (in_regime && within) {
		const char *tol =
			rep_num(r, LAB, "index=0", "compare[formula=lab].tolerance", 100, "%.0f");
		doc_para(r->d,
			 "Over the whole sweep (fp16 too), %s runs are inside the lab formulas' "
			 "assumptions and %s of them are within the tolerance%s%s%s.",
			 in_regime, within, tol ? " of " : "", tol ? tol : "", tol ? "%" : "");
	}
	exact_ok = rep_num(r, "exact/manifest.json", "", "results_summary.exact_within_5pct", 1,
			   "%.0f");
	exact_runs = rep_num(r, "exact/manifest.json", "", "results_summary.runs_done", 1, "%.0f");
	if (exact_ok && exact_runs)
		doc_para(
			r->d,
			"The exact per-array formulas (derived from the kernels as written, "
			"`docs/formulas.md`) agree with the simulator within %s%% in %s of the %s runs "
			"of the exactness sweep (`%s`: every kernel, fully associative LRU caches "
			"over the sweep's range of sizes).",
			rep_num(r, EXACT, "index=0", "compare[formula=exact].tolerance", 100,
				"%.0f"),
			exact_ok, exact_runs, EXACT);
	formulas_xcheck(r);
}

/* ---- memory-bound operations and the roofline ---- */

static const char *const layer_ops[] = { "qkv_proj", "scores", "softmax", "av", "out_proj" };

static void
profile_row_sel(char *buf, size_t len, double T, const char *op)
{
	snprintf(buf, len, "T=%.0f,op=%s,kernel=%s", T, op,
		 strcmp(op, "qkv_proj") == 0 || strcmp(op, "out_proj") == 0 ? "proj" : "naive");
}

/* Whether ceilings.json's numbers hold together, as `memsim ceilings` judged them. */
enum ceilings_trust {
	CEILINGS_CONSISTENT,
	CEILINGS_INCONSISTENT, /* a bound drawn from them is unconfirmed */
	CEILINGS_UNCHECKED,    /* an older memsim's document: not judged */
};

static enum ceilings_trust
ceilings_trust(struct rep *r)
{
	const cJSON *ok = results_get(lookup_row(r->l, CEILINGS, ""), "consistency.consistent");

	return cJSON_IsTrue(ok)    ? CEILINGS_CONSISTENT
	       : cJSON_IsFalse(ok) ? CEILINGS_INCONSISTENT
				   : CEILINGS_UNCHECKED;
}

/* Says, before the ridge point is used, where the ceilings cannot be trusted. */
static void
ceilings_warning(struct rep *r, enum ceilings_trust trust)
{
	if (trust == CEILINGS_INCONSISTENT)
		doc_para(
			r->d,
			"**Warning: these ceilings are inconsistent.** `memsim ceilings` measured "
			"them %s times, inconsistent each time; the last time: %s. Something else "
			"ran on the machine meanwhile, so the ridge point below may be far from the "
			"machine's, and every memory- or compute-bound label drawn from it is "
			"unconfirmed (marked so). Measure again on a quiet machine (`memsim ceilings "
			"--refresh`), then `memsim report`.",
			rep_num(r, CEILINGS, "", "consistency.rounds", 1, "%.0f"),
			lookup_text(r->l, CEILINGS, "", "consistency.why"));
	else if (trust == CEILINGS_UNCHECKED)
		doc_para(r->d,
			 "These ceilings were measured by a memsim that did not check their "
			 "consistency (all cores no slower than one, repetitions close together): "
			 "`memsim ceilings --refresh` measures them again, checked.");
}

/* The roofline table: each operation of the naive layer at each T, its bound and its share of
 * the one-core roofline (b1 bytes/s, p1 FLOP/s); unsure: the bound is unconfirmed. */
static void
roofline_table(struct rep *r, const double *Ts, size_t nT, double b1, double p1, bool unsure)
{
	doc_table(r->d, "T|operation|FLOP/byte|bound|GFLOP/s|roofline GFLOP/s|% of roofline|"
			"p50 ms");
	for (size_t t = 0; t < nT; t++) {
		for (size_t o = 0; o < sizeof(layer_ops) / sizeof(layer_ops[0]); o++) {
			char sel[128];
			struct lookup_src s[3];
			const char *roof, *pct;
			double I;
			bool memory;

			profile_row_sel(sel, sizeof(sel), Ts[t], layer_ops[o]);
			if (!lookup_get(r->l, PROFILE, sel, "intensity", &s[0]) ||
			    !lookup_get(r->l, PROFILE, sel, "gflops", &s[1]))
				continue;
			I = s[0].value;
			memory = I * b1 < p1;
			if (memory) {
				struct lookup_src q[3];

				lookup_get(r->l, PROFILE, sel, "intensity", &q[0]);
				lookup_get(r->l, CEILINGS, "", "bandwidth.one_core_bytes_per_s",
					   &q[1]);
				roof = lookup_num(r->l, LOOKUP_PRODUCT, q, 2, 1e-9, "%.2f");
				lookup_get(r->l, PROFILE, sel, "gflops", &q[0]);
				lookup_get(r->l, PROFILE, sel, "intensity", &q[1]);
				lookup_get(r->l, CEILINGS, "", "bandwidth.one_core_bytes_per_s",
					   &q[2]);
				pct = lookup_num(r->l, LOOKUP_QUOTIENT, q, 3, 1e11, "%.1f");
			} else {
				roof = rep_num(r, CEILINGS, "", "peak_flops.one_core_flops_per_s",
					       1e-9, "%.2f");
				pct = rep_num2(r, LOOKUP_RATIO, PROFILE, sel, "gflops", CEILINGS,
					       "", "peak_flops.one_core_flops_per_s", 1e11, "%.1f");
			}
			doc_row(r->d, "%s|%s|%s|%s%s|%s|%s|%s|%s",
				rep_num(r, PROFILE, sel, "T", 1, "%.0f"), layer_ops[o],
				rep_num(r, PROFILE, sel, "intensity", 1, "%.3g"),
				memory ? "memory" : "compute", unsure ? " (unconfirmed)" : "",
				rep_num(r, PROFILE, sel, "gflops", 1, "%.3f"), roof, pct,
				rep_num(r, PROFILE, sel, "seconds.p50", 1e3, "%.4f"));
		}
	}
	doc_table_end(r->d);
}

/* In words: the memory-bound operations per T, the dominant one, its share; unsure: said to
 * hold only if the ceilings do. */
static void
roofline_words(struct rep *r, const double *Ts, size_t nT, double b1, double p1, bool unsure)
{
	for (size_t t = 0; t < nT; t++) {
		char list[256] = "", sel[128], lay[128];
		double best = -1;
		const char *dominant = NULL;

		for (size_t o = 0; o < sizeof(layer_ops) / sizeof(layer_ops[0]); o++) {
			double I, p50;

			profile_row_sel(sel, sizeof(sel), Ts[t], layer_ops[o]);
			I = rep_val(r, PROFILE, sel, "intensity");
			p50 = rep_val(r, PROFILE, sel, "seconds.p50");
			if (!isnan(I) && I * b1 < p1)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 list[0] ? ", " : "", layer_ops[o]);
			if (!isnan(p50) && p50 > best) {
				best = p50;
				dominant = layer_ops[o];
			}
		}
		snprintf(lay, sizeof(lay), "T=%.0f,op=layer,kernel=naive", Ts[t]);
		profile_row_sel(sel, sizeof(sel), Ts[t], dominant ? dominant : "softmax");
		doc_bullet(
			r->d,
			"T = %s: memory-bound%s: %s; the largest share of the layer's time is %s "
			"(%s%% of %s ms).",
			rep_num(r, PROFILE, lay, "T", 1, "%.0f"),
			unsure ? " if the ceilings held (they are inconsistent)" : "",
			list[0] ? list : "none", dominant ? dominant : "none",
			rep_num2(r, LOOKUP_RATIO, PROFILE, sel, "seconds.p50", PROFILE, lay,
				 "seconds.p50", 100, "%.1f"),
			rep_num(r, PROFILE, lay, "seconds.p50", 1e3, "%.4f"));
	}
}

/* The summary numbers at the largest T. */
static void
roofline_summary(struct rep *r, double Tmax)
{
	char ss[128], sc[128], lay[128];

	profile_row_sel(ss, sizeof(ss), Tmax, "softmax");
	profile_row_sel(sc, sizeof(sc), Tmax, "scores");
	snprintf(lay, sizeof(lay), "T=%.0f,op=layer,kernel=naive", Tmax);
	rep_summary_number(r, "softmax_GFLOPS_at_T_max",
			   rep_num(r, PROFILE, ss, "gflops", 1, "%.4g"));
	rep_summary_number(r, "softmax_pct_of_total_at_T_max",
			   rep_num2(r, LOOKUP_RATIO, PROFILE, ss, "seconds.p50", PROFILE, lay,
				    "seconds.p50", 100, "%.2f"));
	rep_summary_number(r, "scores_GFLOPS_at_T_max",
			   rep_num(r, PROFILE, sc, "gflops", 1, "%.4g"));
	rep_summary_number(r, "T_max", rep_num(r, PROFILE, lay, "T", 1, "%.0f"));
}

/* The fused kernels against the naive attention ops. */
static void
roofline_fused(struct rep *r, const double *Ts, size_t nT)
{
	for (size_t t = 0; t < nT; t++) {
		char fl[128], lay_n[128], lay_f[128];

		snprintf(fl, sizeof(fl), "T=%.0f,op=attention,kernel=flash2", Ts[t]);
		snprintf(lay_n, sizeof(lay_n), "T=%.0f,op=layer,kernel=naive", Ts[t]);
		snprintf(lay_f, sizeof(lay_f), "T=%.0f,op=layer,kernel=flash2", Ts[t]);
		if (!lookup_row(r->l, PROFILE, fl) || !lookup_row(r->l, PROFILE, lay_f))
			continue;
		doc_bullet(r->d,
			   "T = %s with flash2: attention %s ms at %s FLOP/byte; the layer %s ms "
			   "against %s ms with naive, %s tokens/s against %s.",
			   rep_num(r, PROFILE, fl, "T", 1, "%.0f"),
			   rep_num(r, PROFILE, fl, "seconds.p50", 1e3, "%.4f"),
			   rep_num(r, PROFILE, fl, "intensity", 1, "%.3g"),
			   rep_num(r, PROFILE, lay_f, "seconds.p50", 1e3, "%.4f"),
			   rep_num(r, PROFILE, lay_n, "seconds.p50", 1e3, "%.4f"),
			   rep_num(r, PROFILE, lay_f, "tokens_per_s", 1, "%.0f"),
			   rep_num(r, PROFILE, lay_n, "tokens_per_s", 1, "%.0f"));
	}
}

static void
section_roofline(struct rep *r)
{
	double Ts[16], b1 = rep_val(r, CEILINGS, "", "bandwidth.one_core_bytes_per_s");
	double p1 = rep_val(r, CEILINGS, "", "peak_flops.one_core_flops_per_s");
	size_t nT = rep_distinct(r, PROFILE, "op=layer", "T", Ts, 16);
	enum ceilings_trust trust;
	const char *ridge;

	doc_heading(r->d, 2, "Which operations are memory-bound, and the gap to the roofline");
	if (nT == 0 || isnan(b1) || isnan(p1)) {
		doc_para(r->d,
			 "No profile (`%s`) or no ceilings (`%s`) in this directory: run "
			 "`memsim study` (or `memsim profile` and `memsim ceilings`).",
			 PROFILE, CEILINGS);
		return;
	}
	trust = ceilings_trust(r);
	ceilings_warning(r, trust);
	ridge = rep_num2(r, LOOKUP_RATIO, CEILINGS, "", "peak_flops.one_core_flops_per_s", CEILINGS,
			 "", "bandwidth.one_core_bytes_per_s", 1, "%.2f");
	doc_para(r->d,
		 "Ceilings measured by `memsim ceilings` (`%s`): memory bandwidth %s GB/s and peak "
		 "%s GFLOP/s on one core (%s GB/s and %s GFLOP/s on all cores). The profile runs "
		 "on one core, so its roofline is `min(peak, I x bandwidth)` with the one-core "
		 "ceilings: the ridge sits at %s FLOP/byte%s, and an operation of lower intensity "
		 "is memory-bound. Bytes are the simulated DRAM bytes of each operation on the "
		 "cache preset of `%s`; times are medians of the native build.",
		 CEILINGS, rep_num(r, CEILINGS, "", "bandwidth.one_core_bytes_per_s", 1e-9, "%.2f"),
		 rep_num(r, CEILINGS, "", "peak_flops.one_core_flops_per_s", 1e-9, "%.2f"),
		 rep_num(r, CEILINGS, "", "bandwidth.all_cores_bytes_per_s", 1e-9, "%.2f"),
		 rep_num(r, CEILINGS, "", "peak_flops.all_cores_flops_per_s", 1e-9, "%.2f"), ridge,
		 trust == CEILINGS_INCONSISTENT ? " (unreliable: the ceilings are inconsistent)"
						: "",
		 PROFILE);
	roofline_table(r, Ts, nT, b1, p1, trust == CEILINGS_INCONSISTENT);
	roofline_words(r, Ts, nT, b1, p1, trust == CEILINGS_INCONSISTENT);
	roofline_summary(r, Ts[nT - 1]);
	roofline_fused(r, Ts, nT);
	doc_para(r->d,
		 "FlashAttention changes none of the FLOPs; it removes the score matrix's round "
		 "trips through memory, which moves the `T^2` operations to the right on the "
		 "roofline (higher intensity), towards the compute ceiling.");
	rep_image(r, "perf",
		  "Time per operation for each T, stacked (median of the native build).");
	rep_image(r, "perf_bytes", "Simulated DRAM bytes per operation for each T, stacked.");
	rep_image(r, "roofline", "Each operation at each T on the measured roofline.");
}

/* ---- the lab's manifest ---- */

static cJSON *
copy_of(struct rep *r, const char *file, const char *path)
{
	const cJSON *row = lookup_row(r->l, file, "");
	const cJSON *v = row ? results_get(row, path) : NULL;

	return v ? cJSON_Duplicate(v, true) : cJSON_CreateNull();
}

static int
write_manifest(struct rep *r, char *err, size_t errlen)
{
	cJSON *m = cJSON_CreateObject(), *cfg, *hw;
	char path[1200];
	int rc;

	cJSON_AddStringToObject(m, "experiment", "memsim-attention-study");
	cJSON_AddItemToObject(m, "date", copy_of(r, "lab/manifest.json", "date"));
	cJSON_AddItemToObject(m, "seed", copy_of(r, "lab/manifest.json", "seed"));
	cJSON_AddItemToObject(m, "versions", copy_of(r, "lab/manifest.json", "versions"));
	cJSON_AddStringToObject(m, "depends_on", "ceilings.json");
	cfg = cJSON_AddObjectToObject(m, "config");
	cJSON_AddItemToObject(cfg, "bytes_sweep", copy_of(r, "lab/manifest.json", "sweep_command"));
	cJSON_AddItemToObject(cfg, "exact_sweep",
			      copy_of(r, "exact/manifest.json", "sweep_command"));
	cJSON_AddItemToObject(cfg, "formulas",
			      copy_of(r, "formulas/manifest.json", "sweep_command"));
	cJSON_AddItemToObject(cfg, "profile", copy_of(r, "profile/manifest.json", "config"));
	hw = cJSON_AddObjectToObject(m, "hardware");
	cJSON_AddItemToObject(hw, "cpu_model",
			      copy_of(r, "lab/manifest.json", "hardware.cpu_model"));
	cJSON_AddItemToObject(hw, "cores", copy_of(r, "lab/manifest.json", "hardware.cores"));
	cJSON_AddItemToObject(hw, "caches", copy_of(r, "lab/manifest.json", "hardware.caches"));
	cJSON_AddItemToObject(hw, "cpu_governor_at_run",
			      copy_of(r, "lab/manifest.json", "hardware.cpu_governor_at_run"));
	cJSON_AddItemToObject(hw, "ceilings", copy_of(r, CEILINGS, "bandwidth"));
	cJSON_AddItemToObject(hw, "peak", copy_of(r, CEILINGS, "peak_flops"));
	cJSON_AddItemToObject(hw, "ceilings_consistency", copy_of(r, CEILINGS, "consistency"));
	cJSON_AddItemToObject(m, "results_summary", r->summary);
	r->summary = NULL;
	snprintf(path, sizeof(path), "%s/manifest.json", r->dir);
	rc = report_write_json(path, m, err, errlen);
	cJSON_Delete(m);
	return rc;
}

/* Says, before any number, which sweeps hold estimates by set sampling (--sample-sets). */
static void
note_estimates(struct rep *r)
{
	static const char *const files[] = { LAB, EXACT };

	for (int f = 0; f < 2; f++) {
		size_t rows, est = 0;
		const cJSON *const *all = lookup_rows(r->l, files[f], &rows);
		double k = 0;

		for (size_t i = 0; all && i < rows; i++)
			if (results_number(all[i], "estimate.sample_sets", 0) > 1) {
				est++;
				k = results_number(all[i], "estimate.sample_sets", 0);
			}
		if (est)
			doc_para(r->d,
				 "**Estimates:** %zu of the %zu runs in `%s` are estimates by set "
				 "sampling (1 cache set in %.0f simulated, its counts multiplied; "
				 "`estimate` in each row says how close): their bytes below are not "
				 "exact counts, and no byte-equality is claimed for them.",
				 est, rows, files[f], k);
	}
}

int
lab_report(const char *dir, char *err, size_t errlen)
{
	struct rep r = { dir, lookup_create(dir),
			 doc_create(dir, "memsim report: attention bytes, "
					 "intensity and time"),
			 cJSON_CreateObject() };
	char path[1200];
	cJSON *numbers;
	int rc = -1;
	size_t n;

	if (!lookup_rows(r.l, LAB, &n) && !lookup_rows(r.l, PROFILE, &n) &&
	    !lookup_rows(r.l, FORMULAS, &n) && !lookup_error(r.l)) {
		snprintf(
			err, errlen,
			"%s has no results to report (lab/, formulas/ or profile/ results.json): run "
			"memsim study --out %s",
			dir, dir);
		goto out;
	}
	doc_para(r.d,
		 "Generated by `memsim report` from the results in this directory. Every number "
		 "below is read from those results or computed from numbers read there; "
		 "`report-numbers.json` lists each one with its source. Formulas in `code` are the "
		 "labs' own.");
	{
		const char *date = lookup_text(r.l, "lab/manifest.json", "", "date");
		const char *cpu = lookup_text(r.l, "lab/manifest.json", "", "hardware.cpu_model");

		if (date && cpu)
			doc_para(r.d, "Runs of %s on %s.", date, cpu);
	}
	note_estimates(&r);
	section_crossover(&r);
	section_intensity(&r);
	section_roofline(&r);
	section_formulas(&r);
	report_decode_section(dir, r.l, r.d, r.summary);
	if (lookup_error(r.l)) {
		snprintf(err, errlen, "%s", lookup_error(r.l));
		goto out;
	}
	doc_heading(r.d, 2, "Files");
	doc_para(
		r.d,
		"`manifest.json` (this study, in the labs' format), `lab/`, `exact/`, `formulas/`, "
		"`decode/`, `profile/` (each with `results.json`, `results.csv` where a sweep wrote one, and "
		"`manifest.json`), `ceilings.json`, `xcheck/`, `plots/` (PNG, SVG, the data and "
		"the gnuplot scripts), `report-numbers.json`.");
	if (write_manifest(&r, err, errlen))
		goto out;
	if (doc_write(r.d, "report", err, errlen))
		goto out;
	numbers = lookup_numbers_json(r.l);
	snprintf(path, sizeof(path), "%s/report-numbers.json", dir);
	rc = report_write_json(path, numbers, err, errlen) ? -1 : 0;
	cJSON_Delete(numbers);
out:
	cJSON_Delete(r.summary);
	doc_destroy(r.d);
	lookup_destroy(r.l);
	return rc;
}
