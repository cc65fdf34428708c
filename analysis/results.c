#include "analysis/results.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "analysis/json_text.h"
#include "base/utf8.h"
#include "base/util.h"

int
results_read(const char *path, int (*row)(const cJSON *r, unsigned long line, void *ctx), void *ctx,
	     struct results_info *info, char *err, size_t errlen)
{
	int fd = open_regular_read(path, err, errlen), rc;
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		rc = fd < 0 ? fd : -errno;
		if (fd >= 0) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			close(fd);
		}
		if (info)
			memset(info, 0, sizeof(*info));
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
		r = json_text_parse(line, (size_t)len, false);
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

/* s as a CSV field: quoted where quote says or where it holds a comma, a quote or a line
 * break; each byte that is not UTF-8 as U+FFFD (the text a spreadsheet reads is UTF-8; the
 * JSON row keeps the bytes). */
static void
csv_text(FILE *f, const char *s, bool quote)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t n = strlen(s), k;

	quote = quote || strpbrk(s, ",\"\r\n");
	if (quote)
		fputc('"', f);
	for (size_t i = 0; i < n; i += k) {
		k = utf8_sequence(c + i, n - i);
		if (k == 0) {
			fputs("\xef\xbf\xbd", f);
			k = 1;
		} else if (c[i] == '"') {
			fputs("\"\"", f);
		} else {
			fwrite(c + i, 1, k, f);
		}
	}
	if (quote)
		fputc('"', f);
}

/* What a column holds: a count ("%.0f"), a real ("%.6g"), a truth (1 or 0), a word (as it
 * is), a text (quoted), or one of set sampling's three columns. */
enum csv_kind {
	CSV_COUNT,
	CSV_REAL,
	CSV_TRUTH,
	CSV_WORD,
	CSV_TEXT,
	CSV_ESTIMATE,
	CSV_ESTIMATED_ERROR,
	CSV_SAMPLE_TOO_SMALL,
};

/* A column of results_csv_header: the value at path, else at alt (rows written before path
 * existed, or a plugin's row, which keeps it elsewhere); none where the truth at unless is
 * false (the lab formula's bytes where it has none). */
struct csv_column {
	const char *path, *alt;
	enum csv_kind kind;
	const char *unless;
};

/* In results_csv_header's order. */
static const struct csv_column csv_columns[] = {
	{ "index", NULL, CSV_COUNT, NULL },
	{ "config.kernel", NULL, CSV_WORD, NULL },
	{ "config.N", NULL, CSV_COUNT, NULL },
	{ "config.N_kv", "config.N", CSV_COUNT, NULL }, /* rows from before N_kv: N */
	{ "config.d", NULL, CSV_COUNT, NULL },
	{ "config.heads", NULL, CSV_COUNT, NULL },
	{ "config.kv_heads", NULL, CSV_COUNT, NULL },
	{ "config.batch", NULL, CSV_COUNT, NULL },
	{ "config.dtype", NULL, CSV_WORD, NULL },
	{ "config.Br", NULL, CSV_COUNT, NULL },
	{ "config.Bc", NULL, CSV_COUNT, NULL },
	{ "config.causal", NULL, CSV_TRUTH, NULL },
	{ "config.cache", NULL, CSV_TEXT, NULL },
	{ "config.flush", NULL, CSV_TRUTH, NULL },
	{ "mode", NULL, CSV_WORD, NULL },
	{ "dram.read_bytes", NULL, CSV_COUNT, NULL },
	{ "dram.write_bytes", NULL, CSV_COUNT, NULL },
	{ "dram.rfo_bytes", NULL, CSV_COUNT, NULL },
	{ "dram.flush_write_bytes", NULL, CSV_COUNT, NULL },
	{ "formulas.exact.bytes", "formulas.exact.predicted_bytes", CSV_COUNT, NULL },
	{ "compare[formula=exact].ratio", "formulas.exact.ratio", CSV_REAL, NULL },
	{ "compare[formula=exact].within", "formulas.exact.within", CSV_TRUTH, NULL },
	{ "formulas.exact.arrays_within", NULL, CSV_TRUTH, NULL },
	{ "formulas.lab.bytes", NULL, CSV_COUNT, "formulas.lab.applicable" },
	{ "compare[formula=lab].measured_bytes", NULL, CSV_COUNT, NULL },
	{ "compare[formula=lab].ratio", NULL, CSV_REAL, NULL },
	{ "compare[formula=lab].within", NULL, CSV_TRUTH, NULL },
	{ "regime.within_lab_assumptions", NULL, CSV_TRUTH, NULL },
	{ "regime.text", NULL, CSV_TEXT, NULL },
	{ "flops", NULL, CSV_REAL, NULL },
	{ "intensity", NULL, CSV_REAL, NULL },
	{ "traced_seconds", "timing.traced_seconds", CSV_REAL, NULL },
	{ "error", NULL, CSV_TEXT, NULL },
	{ "estimate", NULL, CSV_ESTIMATE, NULL },
	{ "estimate.estimated_error", NULL, CSV_ESTIMATED_ERROR, NULL },
	{ "estimate.sample_too_small", NULL, CSV_SAMPLE_TOO_SMALL, NULL },
	{ "config.splits", NULL, CSV_COUNT, NULL },  /* flashdecode's S */
	{ "config.kv_page", NULL, CSV_COUNT, NULL }, /* a paged run's P */
};

/* Set sampling's columns: "sampled 1/K", its estimated error, whether the sample is too small
 * for the bound (sim/drive/sample.h); "exact", 0, 0 for counts not sampled; empty for a row without
 * counts (a failed run, a formula). */
static void
csv_estimate(FILE *f, const cJSON *r, enum csv_kind kind)
{
	double sets = results_number(r, "estimate.sample_sets", 0);

	if (sets > 1 && kind == CSV_ESTIMATE)
		fprintf(f, "sampled 1/%.0f", sets);
	else if (sets > 1 && kind == CSV_ESTIMATED_ERROR)
		fprintf(f, "%.4g", results_number(r, "estimate.estimated_error", 0));
	else if (sets > 1)
		fprintf(f, "%d", results_true(r, "estimate.sample_too_small"));
	else if (cJSON_IsObject(results_get(r, "dram")))
		fputs(kind == CSV_ESTIMATE ? "exact" : "0", f);
}

/* One field: the value the row holds, or nothing where it holds none (text: ""). Never a 0
 * for a number the row does not have: a failed run has no bytes, a formula no measurement. */
static void
csv_field(FILE *f, const cJSON *r, const struct csv_column *c)
{
	const cJSON *v = results_get(r, c->path);

	if (!v && c->alt)
		v = results_get(r, c->alt);
	if (c->unless && cJSON_IsFalse(results_get(r, c->unless)))
		v = NULL;
	switch (c->kind) {
	case CSV_COUNT:
	case CSV_REAL:
		if (cJSON_IsNumber(v))
			fprintf(f, c->kind == CSV_COUNT ? "%.0f" : "%.6g", v->valuedouble);
		break;
	case CSV_TRUTH:
		if (cJSON_IsBool(v))
			fputc(cJSON_IsTrue(v) ? '1' : '0', f);
		break;
	case CSV_WORD:
		if (cJSON_IsString(v))
			csv_text(f, v->valuestring, false);
		break;
	case CSV_TEXT:
		csv_text(f, cJSON_IsString(v) ? v->valuestring : "", true);
		break;
	default:
		csv_estimate(f, r, c->kind);
		break;
	}
}

int
results_csv_row(FILE *f, const cJSON *r)
{
	return results_csv_row_params(f, r, NULL, 0);
}

int
results_csv_header_params(FILE *f, const char *const *keys, unsigned n)
{
	fwrite(results_csv_header, 1, strlen(results_csv_header) - 1, f);
	for (unsigned i = 0; i < n; i++) {
		char *name = xzalloc(strlen(keys[i]) + 8);

		sprintf(name, "param_%s", keys[i]);
		fputc(',', f);
		csv_text(f, name, false);
		free(name);
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

int
results_csv_row_params(FILE *f, const cJSON *r, const char *const *keys, unsigned n)
{
	const cJSON *params = results_get(r, "config.params");

	for (size_t i = 0; i < sizeof(csv_columns) / sizeof(csv_columns[0]); i++) {
		if (i)
			fputc(',', f);
		csv_field(f, r, &csv_columns[i]);
	}
	/* by name, not results_get(): a key may hold a dot or a bracket */
	for (unsigned i = 0; i < n; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, keys[i]);

		fputc(',', f);
		if (cJSON_IsString(v))
			csv_text(f, v->valuestring, false);
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}
