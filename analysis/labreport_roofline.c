/*
 * The lab report's section on memory-bound operations and the roofline
 * (analysis/labreport_internal.h): the profile's per-operation times against the roofline.
 */

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis/labreport_internal.h"
#include "analysis/results.h"

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

void
labreport_section_roofline(struct rep *r)
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
