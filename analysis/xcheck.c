#include "analysis/xcheck.h"

#include <math.h>
#include <string.h>

static const char *const quantity_names[XCHECK_QUANTITIES] = {
	"d1_misses",
	"ll_misses",
	"writebacks",
	"dram_bytes",
};

static const char *const quantity_titles[XCHECK_QUANTITIES] = {
	"D1 misses",
	"LL misses",
	"LL write-backs",
	"DRAM MiB",
};

void
xcheck_init(struct xcheck *x)
{
	memset(x, 0, sizeof(*x));
	for (int r = 0; r < XCHECK_SOURCES; r++) {
		x->rows[r].ref = -1;
		x->rows[r].seconds = -1;
		for (int q = 0; q < XCHECK_QUANTITIES; q++) {
			x->rows[r].q[q] = -1;
			x->rows[r].basis[q] = -1;
		}
	}
}

double
xcheck_tolerance(enum xcheck_quantity q)
{
	switch (q) {
	case XCHECK_D1_MISSES:
		return XCHECK_D1_TOLERANCE;
	case XCHECK_LL_MISSES:
		return XCHECK_LL_TOLERANCE;
	case XCHECK_WRITEBACKS:
		return XCHECK_WB_TOLERANCE;
	default:
		return XCHECK_BYTES_TOLERANCE;
	}
}

bool
xcheck_ratio(const struct xcheck *x, enum xcheck_source r, enum xcheck_quantity q,
	     struct xcheck_ratio *out)
{
	const struct xcheck_row *row = &x->rows[r];
	double ref;

	if (!row->shown || row->ref < 0 || row->q[q] < 0)
		return false;
	ref = row->basis[q] >= 0 ? row->basis[q] : x->rows[row->ref].q[q];
	if (ref < 0 || !x->rows[row->ref].shown)
		return false;
	out->tolerance = row->tolerance > 0 ? row->tolerance : xcheck_tolerance(q);
	if (ref == 0) {
		/* Nothing to compare with: equal only if the row counts nothing either. */
		out->ratio = row->q[q] == 0 ? 1 : INFINITY;
	} else {
		out->ratio = row->q[q] / ref;
	}
	out->within = fabs(out->ratio - 1) <= out->tolerance;
	return true;
}

static void
print_value(FILE *out, enum xcheck_quantity q, double v)
{
	if (v < 0)
		fprintf(out, " %14s", "-");
	else if (q == XCHECK_DRAM_BYTES)
		fprintf(out, " %14.3f", v / (1024.0 * 1024.0));
	else
		fprintf(out, " %14.0f", v);
}

void
xcheck_print(FILE *out, const struct xcheck *x)
{
	fprintf(out, "memsim xcheck: %s\n", x->config);
	if (x->geometry[0])
		fprintf(out, "geometry: %s\nvalgrind: %s\n", x->geometry, x->valgrind_args);
	fprintf(out, "\n%-26s %-22s", "source", "model");
	for (int q = 0; q < XCHECK_QUANTITIES; q++)
		fprintf(out, " %14s", quantity_titles[q]);
	fprintf(out, "\n");
	for (int r = 0; r < XCHECK_SOURCES; r++) {
		const struct xcheck_row *row = &x->rows[r];
		bool any_ratio = false;

		if (!row->shown)
			continue;
		fprintf(out, "%-26s %-22s", row->source, row->model);
		for (int q = 0; q < XCHECK_QUANTITIES; q++)
			print_value(out, (enum xcheck_quantity)q, row->q[q]);
		fprintf(out, "\n");
		for (int q = 0; q < XCHECK_QUANTITIES; q++) {
			struct xcheck_ratio rt;

			if (xcheck_ratio(x, (enum xcheck_source)r, (enum xcheck_quantity)q, &rt))
				any_ratio = true;
		}
		if (!any_ratio)
			continue;
		fprintf(out, "%-26s %-22s", "", "  ratio to memsim");
		for (int q = 0; q < XCHECK_QUANTITIES; q++) {
			struct xcheck_ratio rt;
			char cell[32];

			if (!xcheck_ratio(x, (enum xcheck_source)r, (enum xcheck_quantity)q, &rt)) {
				fprintf(out, " %14s", "");
				continue;
			}
			snprintf(cell, sizeof(cell), "%.3f %s", rt.ratio, rt.within ? "ok" : "OUT");
			fprintf(out, " %14s", cell);
		}
		fprintf(out, "\n");
	}
	fprintf(out, "\n");
	for (int r = 0; r < XCHECK_SOURCES; r++)
		if (x->rows[r].shown && x->rows[r].note[0])
			fprintf(out, "%s (%s): %s\n", x->rows[r].source, x->rows[r].model,
				x->rows[r].note);
	for (unsigned i = 0; i < x->nnotes; i++)
		fprintf(out, "note: %s\n", x->notes[i]);
	fprintf(out,
		"tolerances: D1 misses %.0f%%, LL misses %.0f%%, write-backs %.0f%% between a tool "
		"and memsim under the tool's model; DRAM bytes %.0f%% (lab formula, a plugin's "
		"formula, PAPI), %.0f%% (exact formula)\n",
		XCHECK_D1_TOLERANCE * 100, XCHECK_LL_TOLERANCE * 100, XCHECK_WB_TOLERANCE * 100,
		XCHECK_BYTES_TOLERANCE * 100, 5.0);
}

void
xcheck_add_json(cJSON *obj, const struct xcheck *x)
{
	cJSON *rows, *notes;

	cJSON_AddStringToObject(obj, "configuration", x->config);
	cJSON_AddStringToObject(obj, "geometry", x->geometry);
	cJSON_AddStringToObject(obj, "valgrind_args", x->valgrind_args);
	rows = cJSON_AddArrayToObject(obj, "rows");
	for (int r = 0; r < XCHECK_SOURCES; r++) {
		const struct xcheck_row *row = &x->rows[r];
		cJSON *o, *ratios;

		if (!row->shown)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "source", row->source);
		cJSON_AddStringToObject(o, "model", row->model);
		for (int q = 0; q < XCHECK_QUANTITIES; q++) {
			if (row->q[q] >= 0)
				cJSON_AddNumberToObject(o, quantity_names[q], row->q[q]);
			else
				cJSON_AddNullToObject(o, quantity_names[q]);
		}
		if (row->seconds >= 0)
			cJSON_AddNumberToObject(o, "seconds", row->seconds);
		if (row->ref >= 0)
			cJSON_AddStringToObject(o, "compared_with", x->rows[row->ref].source);
		ratios = cJSON_AddObjectToObject(o, "ratios");
		for (int q = 0; q < XCHECK_QUANTITIES; q++) {
			struct xcheck_ratio rt;
			cJSON *v;

			if (!xcheck_ratio(x, (enum xcheck_source)r, (enum xcheck_quantity)q, &rt))
				continue;
			v = cJSON_AddObjectToObject(ratios, quantity_names[q]);
			if (isfinite(rt.ratio))
				cJSON_AddNumberToObject(v, "ratio", rt.ratio);
			else
				cJSON_AddNullToObject(v, "ratio");
			cJSON_AddNumberToObject(v, "tolerance", rt.tolerance);
			cJSON_AddBoolToObject(v, "within", rt.within);
		}
		cJSON_AddStringToObject(o, "note", row->note);
		cJSON_AddItemToArray(rows, o);
	}
	notes = cJSON_AddArrayToObject(obj, "notes");
	for (unsigned i = 0; i < x->nnotes; i++)
		cJSON_AddItemToArray(notes, cJSON_CreateString(x->notes[i]));
}

static const struct {
	const char *source, *quantity, *title;
} summary_cols[] = {
	{ "Cachegrind", "d1_misses", "cg D1" },  { "Cachegrind", "ll_misses", "cg LL" },
	{ "Callgrind", "d1_misses", "clg D1" },  { "Callgrind", "ll_misses", "clg LL" },
	{ "Callgrind", "writebacks", "clg wb" }, { "exact formula", "dram_bytes", "exact" },
	{ "lab formula", "dram_bytes", "lab" },
};

void
xcheck_summary_header(FILE *out)
{
	fprintf(out, "%-7s %6s %4s %4s", "kernel", "N", "Br", "Bc");
	for (size_t i = 0; i < sizeof(summary_cols) / sizeof(summary_cols[0]); i++)
		fprintf(out, " %11s", summary_cols[i].title);
	fprintf(out, "\n");
}

static double
config_number(const cJSON *cfg, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(cfg, key);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

bool
xcheck_summary_line(FILE *out, const cJSON *report)
{
	const cJSON *cfg = cJSON_GetObjectItem(report, "config"), *rows, *r;
	bool all = true;

	fprintf(out, "%-7s %6.0f %4.0f %4.0f",
		cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "kernel"))
			? cJSON_GetStringValue(cJSON_GetObjectItem(cfg, "kernel"))
			: "?",
		config_number(cfg, "N"), config_number(cfg, "Br"), config_number(cfg, "Bc"));
	rows = cJSON_GetObjectItem(report, "rows");
	for (size_t i = 0; i < sizeof(summary_cols) / sizeof(summary_cols[0]); i++) {
		const cJSON *rt = NULL, *ratio, *within;
		char cell[32] = "-";

		cJSON_ArrayForEach (r, rows) {
			const char *src = cJSON_GetStringValue(cJSON_GetObjectItem(r, "source"));

			if (src && strcmp(src, summary_cols[i].source) == 0)
				rt = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "ratios"),
							 summary_cols[i].quantity);
		}
		ratio = cJSON_GetObjectItem(rt, "ratio");
		within = cJSON_GetObjectItem(rt, "within");
		if (rt && !cJSON_IsNumber(ratio)) {
			/* memsim counts none where the tool counts some */
			snprintf(cell, sizeof(cell), "inf OUT");
			all = false;
		} else if (cJSON_IsNumber(ratio)) {
			snprintf(cell, sizeof(cell), "%.3f%s", ratio->valuedouble,
				 cJSON_IsTrue(within) ? "" : " OUT");
			all &= cJSON_IsTrue(within) ||
			       strcmp(summary_cols[i].source, "lab formula") == 0;
		}
		fprintf(out, " %11s", cell);
	}
	fprintf(out, "\n");
	return all;
}
