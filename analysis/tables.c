/*
 * The tables `memsim table` and `memsim study` print from a results directory.
 */

#include "analysis/tables.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/results.h"
#include "analysis/xcheck.h"
#include "base/util.h"

static int
row_cmp(const void *a, const void *b)
{
	const struct table_row *x = a, *y = b;
	int c = strcmp(x->cache, y->cache);

	if (!c)
		c = strcmp(x->kernel, y->kernel);
	if (!c)
		c = strcmp(x->params, y->params);
	if (!c)
		c = strcmp(x->dtype, y->dtype);
	for (int i = 0; !c && i < TABLE_SETTINGS; i++)
		c = (x->setting[i] > y->setting[i]) - (x->setting[i] < y->setting[i]);
	if (!c)
		c = (x->sample_sets > y->sample_sets) - (x->sample_sets < y->sample_sets);
	if (!c)
		c = (x->N > y->N) - (x->N < y->N);
	return c;
}

static const char *const setting_path[TABLE_SETTINGS] = {
	"config.N_kv",     "config.d",      "config.heads",
	"config.kv_heads", "config.batch",  "config.Br",
	"config.Bc",       "config.causal", "config.softmax_separate",
	"config.flush",    "config.seed",   "config.trace_only",
	"config.kv_page",
};
static const char *const setting_name[TABLE_SETTINGS] = {
	"N_kv",   "d",        "heads", "kv_heads", "batch",      "Br",      "Bc",
	"causal", "separate", "flush", "seed",     "trace-only", "kv_page",
};

/* A setting's value: a number, or a truth as 0 or 1; -1 when absent. */
static double
setting_of(const cJSON *r, const char *path)
{
	const cJSON *v = results_get(r, path);

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Labels each row with the settings that differ between the rows (a plugin's params first),
 * and its estimate. */
static void
label_rows(struct table_rows *t)
{
	bool varies[TABLE_SETTINGS] = { false }, params_vary = false;

	for (size_t i = 1; i < t->n; i++)
		params_vary |= strcmp(t->rows[i].params, t->rows[0].params) != 0;
	for (size_t i = 1; i < t->n; i++)
		for (int k = 0; k < TABLE_SETTINGS; k++)
			varies[k] |= t->rows[i].setting[k] != t->rows[0].setting[k];
	/* N_kv follows N unless given: it tells rows apart only where it differs from N */
	varies[TABLE_N_KV] = false;
	for (size_t i = 0; i < t->n; i++)
		varies[TABLE_N_KV] |= t->rows[i].setting[TABLE_N_KV] != t->rows[i].N;
	for (size_t i = 0; i < t->n; i++) {
		struct table_row *w = &t->rows[i];
		size_t used = 0;

		w->config[0] = '\0';
		if (params_vary)
			used = (size_t)snprintf(w->config, sizeof(w->config), "%s", w->params);
		for (int k = 0; k < TABLE_SETTINGS; k++)
			if (varies[k] && used < sizeof(w->config))
				used += (size_t)snprintf(w->config + used, sizeof(w->config) - used,
							 "%s%s=%.0f", used ? " " : "",
							 setting_name[k], w->setting[k]);
		if (w->sample_sets > 1 && used < sizeof(w->config))
			snprintf(w->config + used, sizeof(w->config) - used, "%ssampled 1/%u",
				 used ? " " : "", w->sample_sets);
		t->labelled |= w->config[0] != '\0';
		t->estimates += w->sample_sets > 1;
	}
}

/* The bytes of row r: measured (a run's DRAM bytes, read and written; none for a
 * --formula-only row), by the exact formula (a built-in kernel's, or a plugin's own, which its
 * row keeps in formulas.exact.predicted_bytes) and by the lab formula (none where the lab has
 * no formula: proj, plugins), and measured/exact. */
static void
take_bytes(struct table_row *w, const cJSON *r)
{
	const cJSON *cmp = results_get(r, "compare[formula=exact]");
	const cJSON *dram = results_get(r, "dram");
	const cJSON *exact = results_get(r, "formulas.exact.bytes");

	if (!cJSON_IsNumber(exact))
		exact = results_get(r, "formulas.exact.predicted_bytes");
	w->has_measured = cJSON_IsObject(dram);
	w->has_exact = cJSON_IsNumber(exact);
	if (cmp) {
		w->has_exact = true;
		w->measured = results_number(cmp, "measured_bytes", 0);
		w->exact = results_number(cmp, "predicted_bytes", 0);
		w->exact_ratio = results_number(cmp, "ratio", 0);
	} else {
		w->measured = results_number(dram, "read_bytes", 0) +
			      results_number(dram, "write_bytes", 0);
		w->exact = w->has_exact ? exact->valuedouble : 0;
		w->exact_ratio = w->exact > 0 ? w->measured / w->exact : 0;
	}
	w->lab = results_number(r, "formulas.lab.bytes", 0);
	w->has_lab_formula =
		w->lab > 0 && !cJSON_IsFalse(results_get(r, "formulas.lab.applicable"));
}

static int
take_row(const cJSON *r, unsigned long line, void *ctx)
{
	struct table_rows *t = ctx;
	const cJSON *e, *per, *p;
	struct table_row *w;

	(void)line;
	if (cJSON_GetObjectItem(r, "error"))
		return 0;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->rows = xrealloc(t->rows, t->cap * sizeof(*t->rows));
	}
	w = &t->rows[t->n++];
	memset(w, 0, sizeof(*w));
	snprintf(w->kernel, sizeof(w->kernel), "%s", results_string(r, "config.kernel"));
	cJSON_ArrayForEach (p, results_get(r, "config.params"))
		if (cJSON_IsString(p))
			snprintf(w->params + strlen(w->params),
				 sizeof(w->params) - strlen(w->params), "%s%s=%s",
				 w->params[0] ? " " : "", p->string, p->valuestring);
	snprintf(w->dtype, sizeof(w->dtype), "%s", results_string(r, "config.dtype"));
	snprintf(w->cache, sizeof(w->cache), "%s",
		 results_string(r, "config.preset")[0] ? results_string(r, "config.preset")
						       : results_string(r, "config.cache"));
	w->N = results_number(r, "config.N", 0);
	for (int k = 0; k < TABLE_SETTINGS; k++)
		w->setting[k] = setting_of(r, setting_path[k]);
	/* results from before N_kv have N keys */
	if (w->setting[TABLE_N_KV] < 0)
		w->setting[TABLE_N_KV] = w->N;
	/* unpaged runs have no kv_page: 0 */
	if (w->setting[TABLE_KV_PAGE] < 0)
		w->setting[TABLE_KV_PAGE] = 0;
	w->sample_sets = (unsigned)results_number(r, "estimate.sample_sets", 0);
	w->intensity = results_number(r, "intensity", 0);
	w->in_regime = results_true(r, "regime.within_lab_assumptions");
	snprintf(w->regime, sizeof(w->regime), "%s", results_string(r, "regime.text"));
	w->arrays_within = results_true(r, "formulas.exact.arrays_within");
	take_bytes(w, r);
	e = results_get(r, "compare[formula=lab]");
	if (e) {
		w->has_lab = true;
		w->lab_measured = results_number(e, "measured_bytes", 0);
		w->lab_ratio = results_number(e, "ratio", 0);
		w->lab_within = results_true(e, "within");
		snprintf(w->why_not, sizeof(w->why_not), "%s", results_string(e, "why_not"));
	}
	w->exact_within = results_true(r, "compare[formula=exact].within") ||
			  results_true(r, "formulas.exact.within"); /* a plugin's */
	/* The array furthest from its formula. */
	per = results_get(r, "formulas.exact.per_array");
	w->worst_ratio = 1;
	/* An estimate is never byte-equal: its counts are a sample's, multiplied. */
	w->byte_equal = per != NULL && w->sample_sets <= 1 && w->has_measured;
	snprintf(w->worst_array, sizeof(w->worst_array), "-");
	cJSON_ArrayForEach (e, per) {
		double ratio = results_number(e, "ratio", 0);

		w->byte_equal &= results_number(e, "measured_read_bytes", 0) ==
					 results_number(e, "exact_read_bytes", -1) &&
				 results_number(e, "measured_write_bytes", 0) ==
					 results_number(e, "exact_write_bytes", -1);
		double m = results_number(e, "measured_read_bytes", 0) +
			   results_number(e, "measured_write_bytes", 0);

		if (m > 0 && ratio > 0 && fabs(log(ratio)) > fabs(log(w->worst_ratio))) {
			w->worst_ratio = ratio;
			snprintf(w->worst_array, sizeof(w->worst_array), "%s", e->string);
		}
	}
	return 0;
}

int
tables_read(const char *dir, struct table_rows *out, char *err, size_t errlen)
{
	char path[4200];
	int rc;

	memset(out, 0, sizeof(*out));
	if (strlen(dir) > 4000) {
		snprintf(err, errlen, "%.200s...: the path is too long", dir);
		return -ENAMETOOLONG;
	}
	snprintf(path, sizeof(path), "%s/results.json", dir);
	rc = results_read(path, take_row, out, NULL, err, errlen);
	if (rc) {
		tables_finish(out);
		return rc;
	}
	label_rows(out);
	if (out->n)
		qsort(out->rows, out->n, sizeof(*out->rows), row_cmp);
	return 0;
}

void
tables_finish(struct table_rows *t)
{
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* The width of the config column: 0 when no row has a label. */
static int
config_width(const struct table_rows *t)
{
	size_t w = strlen("config");

	if (!t->labelled)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		if (strlen(t->rows[i].config) > w)
			w = strlen(t->rows[i].config);
	return (int)w;
}

/* Under a table with estimates: what they are. */
static void
note_estimates(FILE *out, const struct table_rows *t)
{
	if (t->estimates)
		fprintf(out,
			"%zu of %zu runs are estimates (sampled 1/K: --sample-sets simulated 1 cache "
			"set in K and multiplied its counts by K), not exact counts\n",
			t->estimates, t->n);
}

/* v / scale to 3 decimals, right-aligned in width, or "-" where the row has no such value. */
static void
cell(FILE *out, int width, bool have, double v, double scale)
{
	char buf[64];

	if (have)
		snprintf(buf, sizeof(buf), "%.3f", v / scale);
	else
		snprintf(buf, sizeof(buf), "-");
	fprintf(out, " %*s", width, buf);
}

/* The lab verdict of a row, in words. */
static void
lab_verdict(FILE *out, const struct table_row *r)
{
	if (r->has_lab)
		fprintf(out, "%s%s",
			r->lab_within ? (r->in_regime ? "within 30%, in regime"
						      : "within 30%, out of regime")
				      : (r->in_regime ? "OUTSIDE 30% in regime" : "outside: "),
			!r->lab_within && !r->in_regime ? r->regime : "");
	else if (!r->has_measured)
		fputs("formula only: not simulated, nothing measured", out);
	else
		fputs("no lab formula", out);
}

/* The lab comparison: every run with its lab verdict and regime; "-" for what a row has not
 * (a --formula-only row measures nothing, the lab has no formula for proj or a plugin). */
void
tables_print_lab(FILE *out, const struct table_rows *t)
{
	const struct table_row *rows = t->rows;
	long n = (long)t->n;
	int cw = config_width(t);

	fprintf(out, "%-10s %-6s %-5s %6s%s%-*s %12s %12s %12s %8s %8s  %s\n", "cache", "kernel",
		"dtype", "N", cw ? " " : "", cw, cw ? "config" : "", "measured MiB", "lab MiB",
		"exact MiB", "meas/lab", "meas/ex", "lab verdict");
	for (long i = 0; i < n; i++) {
		const struct table_row *r = &rows[i];

		fprintf(out, "%-10.10s %-6s %-5s %6.0f%s%-*s", r->cache, r->kernel, r->dtype, r->N,
			cw ? " " : "", cw, r->config);
		cell(out, 12, r->has_measured, r->measured, 1048576);
		cell(out, 12, r->has_lab_formula, r->lab, 1048576);
		cell(out, 12, r->has_exact, r->exact, 1048576);
		cell(out, 8, r->has_lab, r->lab_ratio, 1);
		cell(out, 8, r->has_measured && r->exact > 0, r->exact_ratio, 1);
		fputs("  ", out);
		lab_verdict(out, r);
		fputc('\n', out);
	}
	note_estimates(out, t);
}

/* Do two rows differ only in kernel and N? */
static bool
same_series(const struct table_row *a, const struct table_row *b)
{
	return !strcmp(a->cache, b->cache) && !strcmp(a->dtype, b->dtype) &&
	       !strcmp(a->config, b->config);
}

/* The smallest N from which flash2 moves fewer bytes than naive, per cache, dtype and
 * config, among the runs measured (naive and flash2 at the same N). */
void
tables_print_crossover(FILE *out, const struct table_rows *t)
{
	const struct table_row *rows = t->rows;
	long n = (long)t->n;
	for (long i = 0; i < n; i++) {
		const struct table_row *f = &rows[i];
		double first = -1;
		bool compared = false;

		if (strcmp(f->kernel, "flash2") != 0 ||
		    (i > 0 && !strcmp(rows[i - 1].kernel, "flash2") &&
		     same_series(&rows[i - 1], f)))
			continue;
		for (long k = i;
		     k < n && !strcmp(rows[k].kernel, "flash2") && same_series(&rows[k], f); k++) {
			for (long j = 0; j < n; j++) {
				if (strcmp(rows[j].kernel, "naive") || !same_series(&rows[j], f) ||
				    rows[j].N != rows[k].N || !rows[j].has_measured ||
				    !rows[k].has_measured)
					continue;
				compared = true;
				if (rows[k].measured < rows[j].measured && first < 0)
					first = rows[k].N;
			}
		}
		/* formulas alone (--formula-only) measured nothing to cross */
		if (!compared)
			continue;
		if (first > 0)
			fprintf(out,
				"crossover: flash2 moves fewer DRAM bytes than naive from N = %.0f "
				"(%s, %s%s%s)\n",
				first, f->cache, f->dtype, f->config[0] ? ", " : "", f->config);
		else
			fprintf(out,
				"crossover: flash2 never moves fewer DRAM bytes than naive in this "
				"sweep (%s, %s%s%s)\n",
				f->cache, f->dtype, f->config[0] ? ", " : "", f->config);
	}
}

/* The exactness summary: per kernel, runs whose every array is within 5%, and the worst;
 * --formula-only rows, which measured nothing, left out and counted. */
bool
tables_print_exact(FILE *out, const struct table_rows *t)
{
	const struct table_row *rows = t->rows;
	long n = (long)t->n;
	static const char *kernels[] = { "naive", "flash1", "flash2", "proj", "flashdecode" };
	long unmeasured = 0;
	bool all;

	for (long i = 0; i < n; i++)
		unmeasured += !rows[i].has_measured;
	all = n > unmeasured;

	fprintf(out, "%-7s %6s %11s %22s %18s %s\n", "kernel", "runs", "byte-equal",
		"every array within 5%", "total within 5%",
		"worst array (ratio measured/exact, cache, N)");
	/* An estimate is never byte-equal: the column counts exact runs only. */
	for (int k = 0; k < (int)(sizeof(kernels) / sizeof(kernels[0])); k++) {
		long runs = 0, equal = 0, ok = 0, tot_ok = 0;
		const struct table_row *worst = NULL;

		for (long i = 0; i < n; i++) {
			if (strcmp(rows[i].kernel, kernels[k]) || !rows[i].has_measured)
				continue;
			runs++;
			equal += rows[i].byte_equal;
			ok += rows[i].arrays_within;
			tot_ok += rows[i].exact_within;
			if (!worst ||
			    fabs(log(rows[i].worst_ratio)) > fabs(log(worst->worst_ratio)))
				worst = &rows[i];
		}
		if (!runs)
			continue;
		all &= ok == runs;
		if (worst->worst_ratio == 1)
			fprintf(out, "%-7s %6ld %11ld %22ld %18ld every array equal to the byte\n",
				kernels[k], runs, equal, ok, tot_ok);
		else
			fprintf(out, "%-7s %6ld %11ld %22ld %18ld %s %.4f, %s, N=%.0f\n",
				kernels[k], runs, equal, ok, tot_ok, worst->worst_array,
				worst->worst_ratio, worst->cache, worst->N);
	}
	if (unmeasured)
		fprintf(out,
			"%ld of %ld rows are formulas alone (--formula-only): nothing measured to "
			"compare, left out\n",
			unmeasured, n);
	note_estimates(out, t);
	return all;
}

static const char *
kernel_of(const cJSON *config)
{
	const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(config, "kernel"));

	return k ? k : "";
}

/* xcheck reports by kernel, then B_r, B_c (larger first), N; unreadable ones (NULL) last. */
static int
report_cmp(const void *a, const void *b)
{
	const cJSON *x = *(cJSON *const *)a, *y = *(cJSON *const *)b;
	static const char *const keys[] = { "Br", "Bc", "N" };
	const cJSON *cx, *cy;
	int c;

	if (!x || !y)
		return (x == NULL) - (y == NULL);
	cx = cJSON_GetObjectItem(x, "config");
	cy = cJSON_GetObjectItem(y, "config");
	c = strcmp(kernel_of(cx), kernel_of(cy));
	if (c)
		return c;
	for (int i = 0; i < 3; i++) {
		double vx = cJSON_GetNumberValue(cJSON_GetObjectItem(cx, keys[i]));
		double vy = cJSON_GetNumberValue(cJSON_GetObjectItem(cy, keys[i]));

		if (vx != vy)
			return (i < 2 ? (vx < vy) - (vx > vy) : (vx > vy) - (vx < vy));
	}
	return 0;
}

/* The summary of DIR's xcheck reports, in file-name order. */
int
tables_print_xcheck(FILE *out, const char *dir, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, path[4200], why[512];
	cJSON **reports;
	size_t n = 0, cap = 0, bad = 0, good = 0;
	int rc = 0;

	if (!d) {
		snprintf(err, errlen, "cannot read %s: %s", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(e->d_name);
	}
	closedir(d);
	if (n == 0) {
		snprintf(err, errlen, "no xcheck report (*.json) in %s", dir);
		free(names);
		return -1;
	}
	reports = xzalloc(n * sizeof(*reports));
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		reports[i] = report_read_json(path, why, sizeof(why));
		if (!reports[i] || !cJSON_GetObjectItem(reports[i], "rows")) {
			/* The first unreadable report is named; the table shows the others. */
			if (!rc && reports[i])
				snprintf(err, errlen, "%s: not an xcheck report", path);
			else if (!rc)
				snprintf(err, errlen, "%s", why);
			cJSON_Delete(reports[i]);
			reports[i] = NULL;
			rc = -1;
		}
		free(names[i]);
	}
	free(names);
	qsort(reports, n, sizeof(*reports), report_cmp);
	xcheck_summary_header(out);
	for (size_t i = 0; i < n && reports[i]; i++) {
		good++;
		if (!xcheck_summary_line(out, reports[i]))
			bad++;
		cJSON_Delete(reports[i]);
	}
	free(reports);
	fprintf(out, "%zu of %zu configurations have every tool's ratio within its tolerance\n",
		good - bad, good);
	return rc;
}
