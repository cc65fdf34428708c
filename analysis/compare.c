#include "analysis/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double
ratio(double measured, double predicted)
{
	if (predicted == 0)
		return measured == 0 ? 1.0 : INFINITY;
	return measured / predicted;
}

/* The ratio measured / predicted inside [1 - tol, 1 + tol], as the lab's "within 30%" means
 * it; nothing predicted is matched only by nothing measured. */
bool
compare_within(double measured, double predicted, double tol)
{
	if (predicted == 0)
		return measured == 0;
	return measured >= (1 - tol) * predicted && measured <= (1 + tol) * predicted;
}

/* measured inside [low (1 - tol), high (1 + tol)]: the interval widened as a point is */
bool
compare_within_interval(double measured, double low, double high, double tol)
{
	if (high == 0)
		return measured == 0;
	return measured >= (1 - tol) * low && measured <= (1 + tol) * high;
}

/* Why the exact formula misses: outside its scope, the scope's reason; inside, the claim
 * failed, which is a bug to report. */
static void
exact_why_not(char *buf, size_t n, const struct cache *c, const struct formula_result *f)
{
	const struct cache_config *cfg = cache_get_config(c);

	switch (f->scope) {
	case FORMULA_SCOPE_ESTIMATE:
		snprintf(buf, n, "outside the exact formula's scope: %s", f->scope_why);
		break;
	case FORMULA_SCOPE_INTERVAL:
		snprintf(
			buf, n,
			"outside the bound of a %u-way LRU level, the formula at C +- %u lines per "
			"set, which should bracket the run (please report the configuration)",
			cfg->levels ? cfg->level[cfg->levels - 1].assoc : 0, f->interval_runs);
		break;
	default:
		snprintf(buf, n,
			 "%s, where the formula should be exact (please report the "
			 "configuration)",
			 cfg->levels ? "a single fully associative LRU level: a reuse distance at "
				       "the cache size it counts wrong"
				     : "no cache: an access count it gets wrong");
		break;
	}
}

/* Per array: the formula's bytes against the run's, each within 5% (or inside the bound) or
 * off but negligible; returns O's bytes written with their reads for ownership (the lab leaves
 * them out). */
static double
compare_arrays(struct cache *c, const struct formula_result *f, double negligible,
	       struct comparison *out)
{
	double o_write = 0;

	/* Every array either side names: the formula's, then any the run has that it lacks. */
	for (unsigned i = 0; i < f->narrays; i++) {
		struct compare_array *a = &out->arrays[out->narrays++];

		snprintf(a->name, sizeof(a->name), "%s", f->arrays[i].name);
		a->exact_read = f->arrays[i].read_bytes;
		a->exact_write = f->arrays[i].write_bytes;
		a->exact_low = f->arrays[i].low_bytes;
		a->exact_high = f->arrays[i].high_bytes;
	}
	for (unsigned i = 0; i < cache_array_count(c); i++) {
		const struct cache_traffic *t = cache_array_traffic(c, i);
		const char *name = cache_array_name(c, i);
		struct compare_array *a = NULL;

		for (unsigned k = 0; k < out->narrays; k++)
			if (strcmp(out->arrays[k].name, name) == 0)
				a = &out->arrays[k];
		if (!a) {
			if (t->read_bytes == 0 && t->write_bytes == 0)
				continue;
			if (out->narrays == sizeof(out->arrays) / sizeof(out->arrays[0]))
				continue;
			a = &out->arrays[out->narrays++];
			snprintf(a->name, sizeof(a->name), "%s", name);
		}
		a->measured_read += (double)t->read_bytes;
		a->measured_write += (double)t->write_bytes;
		if (strcmp(name, "O") == 0)
			o_write = (double)(t->write_bytes + t->rfo_bytes);
	}
	for (unsigned k = 0; k < out->narrays; k++) {
		struct compare_array *a = &out->arrays[k];
		double m = a->measured_read + a->measured_write, p = a->exact_read + a->exact_write;

		a->ratio = ratio(m, p);
		if (f->interval)
			a->within = compare_within_interval(m, fmin(p, a->exact_low),
							    fmax(p, a->exact_high), 0);
		else
			a->within = compare_within(m, p, COMPARE_EXACT_TOLERANCE) &&
				    compare_within(a->measured_read, a->exact_read,
						   COMPARE_EXACT_TOLERANCE) &&
				    compare_within(a->measured_write, a->exact_write,
						   COMPARE_EXACT_TOLERANCE);
		a->negligible = fmax(m, p) < negligible;
		out->arrays_within &= a->within;
		if (!a->within && !a->negligible)
			out->arrays_within_but_negligible = false;
		if (!a->within && a->negligible)
			snprintf(out->off_negligible + strlen(out->off_negligible),
				 sizeof(out->off_negligible) - strlen(out->off_negligible), "%s%s",
				 out->off_negligible[0] ? ", " : "", a->name);
	}
	return o_write;
}

/* The exact formula against the run's total, with why it is off when it is. */
static void
compare_exact(struct cache *c, const struct formula_result *f, double total,
	      struct comparison *out)
{
	const struct cache_traffic *d = cache_dram(c);

	out->exact.formula = "exact";
	out->exact.applicable = true;
	out->exact.predicted = f->read_bytes + f->write_bytes;
	out->exact.measured = total;
	out->exact.ratio = ratio(total, out->exact.predicted);
	out->exact.tolerance = f->interval ? 0 : COMPARE_EXACT_TOLERANCE;
	out->exact.interval = f->interval;
	out->exact.runs = f->interval_runs;
	out->exact.low = f->low_bytes;
	out->exact.high = f->high_bytes;
	out->exact.within =
		f->interval ? compare_within_interval(total, f->low_bytes, f->high_bytes, 0)
			    : compare_within(total, out->exact.predicted, COMPARE_EXACT_TOLERANCE);
	out->exact.scope = f->scope;
	if (f->interval)
		snprintf(out->exact.basis, sizeof(out->exact.basis),
			 "all DRAM bytes, read and written%s; within: measured in [low, high], "
			 "the formula at C + %u and C - %u lines per set (a bound, no tolerance)",
			 d->flush_write_bytes ? ", the final flush included" : "", f->interval_runs,
			 f->interval_runs);
	else
		snprintf(out->exact.basis, sizeof(out->exact.basis),
			 "all DRAM bytes, read and written%s; within: measured / formula in "
			 "[0.95, 1.05]",
			 d->flush_write_bytes ? ", the final flush included" : "");
	if (!out->exact.within)
		exact_why_not(out->exact.why_not, sizeof(out->exact.why_not), c, f);
	else if (!out->arrays_within_but_negligible)
		snprintf(out->exact.why_not, sizeof(out->exact.why_not),
			 "the total agrees but not every array does");
	else if (!out->arrays_within)
		snprintf(out->exact.why_not, sizeof(out->exact.why_not),
			 "the total agrees; %s (under %.1f%% of the bytes) %s %s",
			 out->off_negligible, 100 * COMPARE_NEGLIGIBLE,
			 strchr(out->off_negligible, ',') ? "are" : "is",
			 f->interval ? "outside its bound" : "off by more than 5%");
}

/* The lab formula against the run's total (naive: less O's write, which the lab leaves out). */
static void
compare_lab(const struct attn_config *cfg, const struct formula_result *f, double total,
	    double o_write, struct comparison *out)
{
	out->lab.formula = "lab";
	out->lab.applicable = f->lab_bytes > 0;
	out->lab.tolerance = COMPARE_LAB_TOLERANCE;
	snprintf(out->regime, sizeof(out->regime), "%s", f->regime.text);
	out->in_regime = f->regime.within_assumptions;
	if (out->lab.applicable) {
		bool naive = cfg->kernel == ATTN_NAIVE;

		out->lab.predicted = f->lab_bytes;
		out->lab.measured = naive ? total - o_write : total;
		out->lab.ratio = ratio(out->lab.measured, out->lab.predicted);
		out->lab.within = compare_within(out->lab.measured, out->lab.predicted,
						 COMPARE_LAB_TOLERANCE);
		snprintf(out->lab.basis, sizeof(out->lab.basis),
			 "%s; within: measured / formula in "
			 "[0.70, 1.30]",
			 naive ? "all DRAM bytes except O's write and its read for ownership, "
				 "which the lab formula leaves out"
			       : "all DRAM bytes (Q read, K and V reads, O and logsumexp written)");
		if (!out->lab.within)
			snprintf(out->lab.why_not, sizeof(out->lab.why_not), "%s",
				 f->regime.within_assumptions
					 ? "inside the lab's assumptions, yet outside the tolerance"
					 : f->regime.text);
	}
}

void
compare_build(struct cache *c, const struct attn_config *cfg, const struct formula_result *f,
	      struct comparison *out)
{
	const struct cache_traffic *d = cache_dram(c);
	double total = (double)(d->read_bytes + d->write_bytes);
	double negligible = COMPARE_NEGLIGIBLE * total;
	double o_write;

	memset(out, 0, sizeof(*out));
	out->arrays_within = out->arrays_within_but_negligible = true;
	o_write = compare_arrays(c, f, negligible, out);
	compare_exact(c, f, total, out);
	compare_lab(cfg, f, total, o_write, out);
}

static cJSON *
total_json(const struct compare_total *t)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "formula", t->formula);
	cJSON_AddNumberToObject(o, "predicted_bytes", t->predicted);
	cJSON_AddNumberToObject(o, "measured_bytes", t->measured);
	cJSON_AddNumberToObject(o, "ratio", isfinite(t->ratio) ? t->ratio : -1);
	cJSON_AddNumberToObject(o, "tolerance", t->tolerance);
	cJSON_AddBoolToObject(o, "within", t->within);
	if (t->interval) {
		cJSON_AddNumberToObject(o, "low_bytes", t->low);
		cJSON_AddNumberToObject(o, "high_bytes", t->high);
		cJSON_AddNumberToObject(o, "interval_width", t->low > 0 ? t->high / t->low : -1);
		cJSON_AddNumberToObject(o, "interval_lines_per_set", t->runs);
	}
	if (t->formula && strcmp(t->formula, "exact") == 0)
		cJSON_AddStringToObject(o, "scope", formula_scope_name(t->scope));
	cJSON_AddStringToObject(o, "basis", t->basis);
	cJSON_AddStringToObject(o, "why_not", t->why_not);
	return o;
}

void
compare_add_json(cJSON *obj, const struct formula_result *f, const struct comparison *cmp)
{
	cJSON *formulas = cJSON_AddObjectToObject(obj, "formulas");
	cJSON *lab = cJSON_AddObjectToObject(formulas, "lab");
	cJSON *exact = cJSON_AddObjectToObject(formulas, "exact");
	cJSON *arrays = cJSON_AddObjectToObject(exact, "arrays");
	cJSON *per = cJSON_AddObjectToObject(exact, "per_array");
	cJSON *compare = cJSON_AddArrayToObject(obj, "compare");
	cJSON *reg;

	cJSON_AddNumberToObject(lab, "bytes", f->lab_bytes);
	cJSON_AddBoolToObject(lab, "applicable", f->lab_bytes > 0);
	cJSON_AddNumberToObject(exact, "bytes", f->read_bytes + f->write_bytes);
	cJSON_AddNumberToObject(exact, "read_bytes", f->read_bytes);
	cJSON_AddNumberToObject(exact, "write_bytes", f->write_bytes);
	cJSON_AddNumberToObject(exact, "rfo_bytes", f->rfo_bytes);
	cJSON_AddNumberToObject(exact, "flush_bytes", f->flush_bytes);
	cJSON_AddBoolToObject(exact, "tiles_approximate", f->tiles_approximate);
	cJSON_AddStringToObject(exact, "scope", formula_scope_name(f->scope));
	cJSON_AddStringToObject(exact, "scope_why", f->scope_why);
	if (f->interval) {
		cJSON_AddNumberToObject(exact, "low_bytes", f->low_bytes);
		cJSON_AddNumberToObject(exact, "high_bytes", f->high_bytes);
		cJSON_AddNumberToObject(exact, "interval_lines_per_set", f->interval_runs);
	}
	for (unsigned i = 0; i < cmp->narrays; i++) {
		const struct compare_array *a = &cmp->arrays[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddNumberToObject(arrays, a->name, a->exact_read + a->exact_write);
		cJSON_AddNumberToObject(o, "exact_read_bytes", a->exact_read);
		cJSON_AddNumberToObject(o, "exact_write_bytes", a->exact_write);
		cJSON_AddNumberToObject(o, "measured_read_bytes", a->measured_read);
		cJSON_AddNumberToObject(o, "measured_write_bytes", a->measured_write);
		if (f->interval) {
			cJSON_AddNumberToObject(o, "exact_low_bytes", a->exact_low);
			cJSON_AddNumberToObject(o, "exact_high_bytes", a->exact_high);
		}
		cJSON_AddNumberToObject(o, "ratio", isfinite(a->ratio) ? a->ratio : -1);
		cJSON_AddBoolToObject(o, "within", a->within);
		cJSON_AddBoolToObject(o, "negligible", a->negligible);
		cJSON_AddItemToObject(per, a->name, o);
	}
	cJSON_AddBoolToObject(exact, "arrays_within", cmp->arrays_within);
	cJSON_AddBoolToObject(exact, "arrays_within_but_negligible",
			      cmp->arrays_within_but_negligible);
	{
		cJSON *off = cJSON_AddArrayToObject(exact, "off_but_negligible");

		for (unsigned i = 0; i < cmp->narrays; i++)
			if (!cmp->arrays[i].within && cmp->arrays[i].negligible)
				cJSON_AddItemToArray(off, cJSON_CreateString(cmp->arrays[i].name));
	}
	if (cmp->lab.applicable)
		cJSON_AddItemToArray(compare, total_json(&cmp->lab));
	cJSON_AddItemToArray(compare, total_json(&cmp->exact));
	reg = cJSON_AddObjectToObject(obj, "regime");
	cJSON_AddBoolToObject(reg, "within_lab_assumptions", cmp->in_regime);
	cJSON_AddStringToObject(reg, "text", cmp->regime);
}

static void
print_total(FILE *out, const struct compare_total *t)
{
	if (t->interval)
		fprintf(out,
			"%-6s formula %16.0f  measured %16.0f  ratio %6.3f  %s the bound%s%s\n",
			t->formula, t->predicted, t->measured, t->ratio,
			t->within ? "within" : "OUTSIDE", t->why_not[0] ? ": " : "", t->why_not);
	else
		fprintf(out, "%-6s formula %16.0f  measured %16.0f  ratio %6.3f  %s %.0f%%%s%s\n",
			t->formula, t->predicted, t->measured, t->ratio,
			t->within ? "within" : "OUTSIDE", 100 * t->tolerance,
			t->why_not[0] ? ": " : "", t->why_not);
	if (t->interval)
		fprintf(out,
			"       set-associative bound %.0f .. %.0f (C +- %u lines per set; width "
			"%.3fx; measured/low %.3f, measured/high %.3f)\n",
			t->low, t->high, t->runs, t->low > 0 ? t->high / t->low : INFINITY,
			ratio(t->measured, t->low), ratio(t->measured, t->high));
	fprintf(out, "       basis: %s\n", t->basis);
}

void
compare_print(FILE *out, const struct formula_result *f, const struct comparison *cmp)
{
	fprintf(out, "\n%-10s %14s %14s %14s %14s %8s\n", "array", "read", "exact read", "write",
		"exact write", "ratio");
	for (unsigned i = 0; i < cmp->narrays; i++) {
		const struct compare_array *a = &cmp->arrays[i];
		const char *claim = f->interval ? "outside its bound" : "outside 5%";

		fprintf(out, "%-10s %14.0f %14.0f %14.0f %14.0f %8.3f%s%s%s\n", a->name,
			a->measured_read, a->exact_read, a->measured_write, a->exact_write,
			a->ratio, a->within ? "" : "  <- ", a->within ? "" : claim,
			a->within || !a->negligible ? "" : ", but under 0.1% of the bytes");
	}
	fprintf(out, "\n");
	if (cmp->lab.applicable)
		print_total(out, &cmp->lab);
	print_total(out, &cmp->exact);
	if (f->scope == FORMULA_SCOPE_ESTIMATE)
		fprintf(out, "       scope: estimate, nothing claimed: %s\n", f->scope_why);
	else
		fprintf(out, "       scope: %s\n",
			f->scope == FORMULA_SCOPE_EXACT
				? "exact, byte-equal claimed"
				: "interval, every array and the total claimed inside the bound");
	fprintf(out, "regime: %s%s\n", cmp->regime,
		cmp->lab.applicable ? (cmp->in_regime ? " (inside the lab's assumptions)"
						      : " (outside the lab's assumptions)")
				    : "");
	fprintf(out, "FLOPs %.4g, intensity %.3f FLOP/byte (measured bytes)\n", f->flops,
		cmp->exact.measured > 0 ? f->flops / cmp->exact.measured : 0.0);
}
