#include "analysis/results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

int
results_read(const char *path, int (*row)(const cJSON *r, unsigned long line, void *ctx), void *ctx,
	     struct results_info *info, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		rc = -errno;
		if (info)
			memset(info, 0, sizeof(*info));
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = results_read_stream(f, path, row, ctx, info, err, errlen);
	fclose(f);
	return rc;
}

int
results_read_stream(FILE *f, const char *path,
		    int (*row)(const cJSON *r, unsigned long line, void *ctx), void *ctx,
		    struct results_info *info, char *err, size_t errlen)
{
	struct results_info local;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;

	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	while ((len = getline(&line, &cap, f)) > 0) {
		cJSON *r;

		info->lines++;
		if (line[len - 1] != '\n') {
			info->torn = true; /* a run cut off mid-line: not a row */
			break;
		}
		if (strspn(line, " \t\r\n") == (size_t)len) {
			info->good_bytes += len;
			continue;
		}
		r = cJSON_ParseWithLength(line, (size_t)len);
		if (!r || !cJSON_IsObject(r)) {
			cJSON_Delete(r);
			snprintf(err, errlen, "%s:%lu: not a JSON object", path, info->lines);
			rc = -EINVAL;
			break;
		}
		info->rows++;
		rc = row(r, info->lines, ctx);
		cJSON_Delete(r);
		if (rc)
			break;
		info->good_bytes += len;
	}
	if (!rc && ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		rc = -EIO;
	}
	free(line);
	return rc;
}

/* Does obj's value at path equal the text want? */
static bool
field_matches(const cJSON *obj, const char *path, const char *want)
{
	const cJSON *v = results_get(obj, path);
	char *end;
	double d;

	if (!v)
		return false;
	if (cJSON_IsString(v))
		return strcmp(v->valuestring, want) == 0;
	if (cJSON_IsBool(v))
		return strcmp(want, cJSON_IsTrue(v) ? "true" : "false") == 0;
	if (cJSON_IsNumber(v)) {
		d = strtod(want, &end);
		return *want && !*end && d == v->valuedouble;
	}
	return false;
}

bool
results_matches(const cJSON *obj, const char *selector)
{
	char buf[512], *save = NULL;

	if (!selector || !*selector)
		return true;
	if (strlen(selector) >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s", selector);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');

		if (!eq)
			return false;
		*eq = '\0';
		if (!field_matches(obj, t, eq + 1))
			return false;
	}
	return true;
}

const cJSON *
results_get(const cJSON *obj, const char *path)
{
	char buf[512], *step, *rest;

	if (strlen(path) >= sizeof(buf))
		return NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (step = buf; step && obj; step = rest) {
		char *br;
		int depth = 0;

		/* The step ends at the first dot outside brackets. */
		for (rest = step; *rest && (*rest != '.' || depth); rest++)
			depth += (*rest == '[') - (*rest == ']');
		if (*rest)
			*rest++ = '\0';
		else
			rest = NULL;
		br = strchr(step, '[');
		if (!br) {
			obj = cJSON_GetObjectItemCaseSensitive(obj, step);
			continue;
		}
		/* name[field=value]: the element of array name whose field matches; name[i]: the
		 * i-th element */
		{
			char *close = strrchr(br, ']'), *end;
			const cJSON *arr, *e, *found = NULL;
			long idx;

			if (!close)
				return NULL;
			*br = '\0';
			*close = '\0';
			arr = cJSON_GetObjectItemCaseSensitive(obj, step);
			idx = strtol(br + 1, &end, 10);
			if (end != br + 1 && !*end) {
				obj = idx >= 0 ? cJSON_GetArrayItem(arr, (int)idx) : NULL;
				continue;
			}
			cJSON_ArrayForEach (e, arr) {
				if (results_matches(e, br + 1)) {
					found = e;
					break;
				}
			}
			obj = found;
		}
	}
	return obj;
}

double
results_number(const cJSON *obj, const char *path, double fallback)
{
	const cJSON *v = results_get(obj, path);

	return cJSON_IsNumber(v) ? v->valuedouble : fallback;
}

const char *
results_string(const cJSON *obj, const char *path)
{
	const cJSON *v = results_get(obj, path);

	return cJSON_IsString(v) ? v->valuestring : "";
}

bool
results_true(const cJSON *obj, const char *path)
{
	return cJSON_IsTrue(results_get(obj, path));
}

const char results_csv_header[] =
	"index,kernel,N,N_kv,d,heads,kv_heads,batch,dtype,Br,Bc,causal,cache,flush,mode,"
	"dram_read_bytes,dram_write_bytes,rfo_bytes,flush_write_bytes,exact_bytes,exact_ratio,"
	"exact_within,arrays_within,lab_bytes,lab_measured_bytes,lab_ratio,lab_within,"
	"in_lab_regime,regime,flops,intensity,traced_seconds,error,estimate,estimated_error,"
	"sample_too_small,splits,kv_page\n";

static void
csv_quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int
results_csv_row(FILE *f, const cJSON *r)
{
	const cJSON *lab = results_get(r, "compare[formula=lab]");
	const cJSON *exact = results_get(r, "compare[formula=exact]");

	/* N_kv: results written before it existed have N keys */
	fprintf(f, "%.0f,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%s,%.0f,%.0f,%d,",
		results_number(r, "index", 0), results_string(r, "config.kernel"),
		results_number(r, "config.N", 0),
		results_number(r, "config.N_kv", results_number(r, "config.N", 0)),
		results_number(r, "config.d", 0), results_number(r, "config.heads", 0),
		results_number(r, "config.kv_heads", 0), results_number(r, "config.batch", 0),
		results_string(r, "config.dtype"), results_number(r, "config.Br", 0),
		results_number(r, "config.Bc", 0), results_true(r, "config.causal"));
	csv_quoted(f, results_string(r, "config.cache"));
	fprintf(f, ",%d,%s,%.0f,%.0f,%.0f,%.0f,%.0f,%.6g,%d,%d,%.0f,%.0f,%.6g,%d,%d,",
		results_true(r, "config.flush"), results_string(r, "mode"),
		results_number(r, "dram.read_bytes", 0), results_number(r, "dram.write_bytes", 0),
		results_number(r, "dram.rfo_bytes", 0),
		results_number(r, "dram.flush_write_bytes", 0),
		results_number(r, "formulas.exact.bytes", 0), results_number(exact, "ratio", 0),
		results_true(exact, "within"), results_true(r, "formulas.exact.arrays_within"),
		results_number(r, "formulas.lab.bytes", 0),
		results_number(lab, "measured_bytes", 0), results_number(lab, "ratio", 0),
		results_true(lab, "within"), results_true(r, "regime.within_lab_assumptions"));
	csv_quoted(f, results_string(r, "regime.text"));
	fprintf(f, ",%.6g,%.6g,%.6g,", results_number(r, "flops", 0),
		results_number(r, "intensity", 0), results_number(r, "traced_seconds", 0));
	csv_quoted(f, results_string(r, "error"));
	/* "exact", or set sampling's estimate: "sampled 1/k", its estimated error of the DRAM
	 * bytes and whether the sample is too small for the bound (sim/sample.h) */
	if (results_number(r, "estimate.sample_sets", 0) > 1)
		fprintf(f, ",sampled 1/%.0f,%.4g,%d", results_number(r, "estimate.sample_sets", 0),
			results_number(r, "estimate.estimated_error", 0),
			results_true(r, "estimate.sample_too_small"));
	else
		fputs(",exact,0,0", f);
	/* flashdecode's splits, which tell its rows apart; empty for the other kernels */
	if (results_get(r, "config.splits"))
		fprintf(f, ",%.0f", results_number(r, "config.splits", 0));
	else
		fputs(",", f);
	/* a paged run's P; empty unpaged */
	if (results_get(r, "config.kv_page"))
		fprintf(f, ",%.0f\n", results_number(r, "config.kv_page", 0));
	else
		fputs(",\n", f);
	return ferror(f) ? -EIO : 0;
}
