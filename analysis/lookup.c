#include "analysis/lookup.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "analysis/results.h"
#include "base/util.h"

struct lookup_file {
	char name[LOOKUP_FILE_MAX];
	cJSON **rows; /* NULL: missing or unreadable */
	size_t n;
};

struct lookup_text {
	struct lookup_src src;
	char *text;
};

struct lookup {
	char dir[1024];
	struct lookup_file *files;
	size_t nfiles;
	struct lookup_num **nums;
	size_t nnums, cap;
	struct lookup_text *texts;
	size_t ntexts;
	char error[600]; /* the first file that could not be read */
};

struct lookup *
lookup_create(const char *dir)
{
	struct lookup *l = xzalloc(sizeof(*l));

	snprintf(l->dir, sizeof(l->dir), "%s", dir);
	return l;
}

void
lookup_destroy(struct lookup *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->nfiles; i++) {
		for (size_t k = 0; k < l->files[i].n; k++)
			cJSON_Delete(l->files[i].rows[k]);
		free(l->files[i].rows);
	}
	free(l->files);
	for (size_t i = 0; i < l->nnums; i++)
		free(l->nums[i]);
	free(l->nums);
	for (size_t i = 0; i < l->ntexts; i++)
		free(l->texts[i].text);
	free(l->texts);
	free(l);
}

static int
keep_row(const cJSON *r, unsigned long line, void *ctx)
{
	struct lookup_file *f = ctx;

	(void)line;
	f->rows = xrealloc(f->rows, (f->n + 1) * sizeof(*f->rows));
	f->rows[f->n++] = cJSON_Duplicate(r, true);
	return 0;
}

/* Reads file once: a JSON document, or JSON lines (analysis/results.h: a torn last line is
 * left out, any other bad line makes the file unreadable, said by lookup_error()). */
static struct lookup_file *
file_of(struct lookup *l, const char *name)
{
	struct lookup_file *f;
	char path[1200], err[512];
	cJSON *doc;
	int rc;

	for (size_t i = 0; i < l->nfiles; i++)
		if (strcmp(l->files[i].name, name) == 0)
			return &l->files[i];
	l->files = xrealloc(l->files, (l->nfiles + 1) * sizeof(*l->files));
	f = &l->files[l->nfiles++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(path, sizeof(path), "%s/%s", l->dir, name);
	doc = report_read_json(path, err, sizeof(err));
	if (doc) {
		f->rows = xzalloc(sizeof(*f->rows));
		f->rows[0] = doc;
		f->n = 1;
		return f;
	}
	rc = results_read(path, keep_row, f, NULL, err, sizeof(err));
	if (rc && rc != -ENOENT) {
		for (size_t k = 0; k < f->n; k++)
			cJSON_Delete(f->rows[k]);
		free(f->rows);
		f->rows = NULL;
		f->n = 0;
		if (!l->error[0])
			snprintf(l->error, sizeof(l->error), "%s", err);
	}
	return f;
}

const char *
lookup_error(const struct lookup *l)
{
	return l->error[0] ? l->error : NULL;
}

const cJSON *
lookup_row(struct lookup *l, const char *file, const char *row)
{
	struct lookup_file *f = file_of(l, file);

	for (size_t i = 0; i < f->n; i++)
		if (!row || !*row || results_matches(f->rows[i], row))
			return f->rows[i];
	return NULL;
}

const cJSON *const *
lookup_rows(struct lookup *l, const char *file, size_t *n)
{
	struct lookup_file *f = file_of(l, file);

	*n = f->n;
	return f->n ? (const cJSON *const *)f->rows : NULL;
}

bool
lookup_get(struct lookup *l, const char *file, const char *row, const char *path,
	   struct lookup_src *out)
{
	const cJSON *r = lookup_row(l, file, row), *v;

	memset(out, 0, sizeof(*out));
	snprintf(out->file, sizeof(out->file), "%s", file);
	snprintf(out->row, sizeof(out->row), "%s", row ? row : "");
	snprintf(out->path, sizeof(out->path), "%s", path);
	v = r ? results_get(r, path) : NULL;
	if (!cJSON_IsNumber(v))
		return false;
	out->value = v->valuedouble;
	return true;
}

double
lookup_eval(const struct lookup_num *n)
{
	double v = n->nsrc ? n->src[0].value : 0;

	switch (n->op) {
	case LOOKUP_RATIO:
		v = n->nsrc > 1 && n->src[1].value != 0 ? v / n->src[1].value : NAN;
		break;
	case LOOKUP_PRODUCT:
		for (unsigned i = 1; i < n->nsrc; i++)
			v *= n->src[i].value;
		break;
	case LOOKUP_SUM:
		for (unsigned i = 1; i < n->nsrc; i++)
			v += n->src[i].value;
		break;
	case LOOKUP_DIFF:
		v = n->nsrc > 1 ? v - n->src[1].value : NAN;
		break;
	case LOOKUP_QUOTIENT:
		for (unsigned i = 1; i < n->nsrc; i++)
			v /= n->src[i].value;
		break;
	case LOOKUP_SLOPE:
		v = n->nsrc == 4 && n->src[2].value != n->src[3].value
			    ? (v - n->src[1].value) / (n->src[2].value - n->src[3].value)
			    : NAN;
		break;
	default:
		break;
	}
	return v * n->scale;
}

static void
format(struct lookup_num *n)
{
	/* fmt is one of the report's own formats, never user input. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(n->text, sizeof(n->text), n->fmt, n->value);
#pragma GCC diagnostic pop
	if (strcmp(n->text, "-0") == 0 || strcmp(n->text, "-0.0") == 0)
		memmove(n->text, n->text + 1, strlen(n->text));
}

const char *
lookup_num(struct lookup *l, enum lookup_op op, const struct lookup_src *src, unsigned nsrc,
	   double scale, const char *fmt)
{
	struct lookup_num *n = xzalloc(sizeof(*n));

	n->op = op;
	n->nsrc = nsrc > LOOKUP_SRC_MAX ? LOOKUP_SRC_MAX : nsrc;
	memcpy(n->src, src, n->nsrc * sizeof(*src));
	n->scale = scale;
	snprintf(n->fmt, sizeof(n->fmt), "%s", fmt);
	n->value = lookup_eval(n);
	format(n);
	if (l->nnums == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->nums = xrealloc(l->nums, l->cap * sizeof(*l->nums));
	}
	l->nums[l->nnums++] = n;
	return n->text;
}

static const char *const op_names[] = { "value", "ratio",    "product", "sum",
					"diff",  "quotient", "slope" };

const char *
lookup_text(struct lookup *l, const char *file, const char *row, const char *path)
{
	const cJSON *r = lookup_row(l, file, row), *v = r ? results_get(r, path) : NULL;
	struct lookup_text *t;

	if (!cJSON_IsString(v))
		return NULL;
	l->texts = xrealloc(l->texts, (l->ntexts + 1) * sizeof(*l->texts));
	t = &l->texts[l->ntexts++];
	memset(t, 0, sizeof(*t));
	snprintf(t->src.file, sizeof(t->src.file), "%s", file);
	snprintf(t->src.row, sizeof(t->src.row), "%s", row ? row : "");
	snprintf(t->src.path, sizeof(t->src.path), "%s", path);
	t->text = xstrdup(v->valuestring);
	return t->text;
}

cJSON *
lookup_numbers_json(const struct lookup *l)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < l->ntexts; i++) {
		cJSON *o = cJSON_CreateObject(), *s = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "text", l->texts[i].text);
		cJSON_AddStringToObject(o, "op", "text");
		cJSON_AddStringToObject(s, "file", l->texts[i].src.file);
		cJSON_AddStringToObject(s, "row", l->texts[i].src.row);
		cJSON_AddStringToObject(s, "path", l->texts[i].src.path);
		cJSON_AddItemToArray(cJSON_AddArrayToObject(o, "sources"), s);
		cJSON_AddItemToArray(arr, o);
	}

	for (size_t i = 0; i < l->nnums; i++) {
		const struct lookup_num *n = l->nums[i];
		cJSON *o = cJSON_CreateObject(), *srcs;

		cJSON_AddStringToObject(o, "text", n->text);
		cJSON_AddStringToObject(o, "op", op_names[n->op]);
		cJSON_AddNumberToObject(o, "scale", n->scale);
		cJSON_AddStringToObject(o, "format", n->fmt);
		srcs = cJSON_AddArrayToObject(o, "sources");
		for (unsigned k = 0; k < n->nsrc; k++) {
			cJSON *s = cJSON_CreateObject();

			cJSON_AddStringToObject(s, "file", n->src[k].file);
			cJSON_AddStringToObject(s, "row", n->src[k].row);
			cJSON_AddStringToObject(s, "path", n->src[k].path);
			cJSON_AddNumberToObject(s, "value", n->src[k].value);
			cJSON_AddItemToArray(srcs, s);
		}
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}
