#pragma once

/*
 * Numbers read from a results directory, with where each came from, so that a report can
 * print only numbers it read (or computed from numbers it read) and a test can check every one.
 *
 * A source names one number: a file relative to the directory; for a file of JSON lines, the
 * row whose fields match a selector "config.kernel=flash2,config.N=8192" (every field must
 * match; "" for a single JSON document); and a path inside it, "formulas.lab.bytes", where a
 * step "rows[source=Cachegrind]" picks the array element whose field matches. A number printed
 * in a report is an operation over up to four sources (value, ratio a/b, product, sum,
 * difference a - b, slope (a - b) / (c - d)), times a scale (1/2^20 for MiB), formatted
 * with a printf format; the directory's report-numbers.json lists them all.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define LOOKUP_FILE_MAX 96
#define LOOKUP_ROW_MAX 192
#define LOOKUP_PATH_MAX 128

struct lookup_src {
	char file[LOOKUP_FILE_MAX];
	char row[LOOKUP_ROW_MAX];
	char path[LOOKUP_PATH_MAX];
	double value;
};

enum lookup_op {
	LOOKUP_VALUE = 0, /* src[0] */
	LOOKUP_RATIO,     /* src[0] / src[1] */
	LOOKUP_PRODUCT,   /* src[0] x src[1] x ... */
	LOOKUP_SUM,       /* src[0] + src[1] + ... */
	LOOKUP_DIFF,      /* src[0] - src[1] */
	LOOKUP_QUOTIENT,  /* src[0] / (src[1] x src[2] x ...) */
	LOOKUP_SLOPE,     /* (src[0] - src[1]) / (src[2] - src[3]) */
};

#define LOOKUP_SRC_MAX 4

struct lookup_num {
	enum lookup_op op;
	unsigned nsrc;
	struct lookup_src src[LOOKUP_SRC_MAX];
	double scale;
	char fmt[16];
	char text[48];
	double value;
};

/* The files of one results directory, each parsed once; numbers printed so far. */
struct lookup;

/* Returns a lookup of dir (its files are read when first needed). Free with lookup_destroy(). */
struct lookup *lookup_create(const char *dir);
void lookup_destroy(struct lookup *l);

/* The JSON document (or the JSON-lines row matching row) in file; NULL when the file is
 * missing or unreadable or no row matches. Borrowed: valid until lookup_destroy(). */
const cJSON *lookup_row(struct lookup *l, const char *file, const char *row);

/* Every row of a JSON-lines file (or the one document), in file order; *n rows. NULL when
 * missing. Borrowed. */
const cJSON *const *lookup_rows(struct lookup *l, const char *file, size_t *n);

/* The first results file that exists but could not be read ("path:line: what"), or NULL. */
const char *lookup_error(const struct lookup *l);

/* A source: the number at path in the row of file. Returns false (and leaves *out's value 0)
 * when there is none. */
bool lookup_get(struct lookup *l, const char *file, const char *row, const char *path,
		struct lookup_src *out);

/* The number an operation gives (before formatting), from its sources' values. */
double lookup_eval(const struct lookup_num *n);

/* Formats op(src...) x scale with fmt (one %...f/%...e/%...g conversion), records it among the
 * printed numbers and returns its text (borrowed, valid until lookup_destroy()). */
const char *lookup_num(struct lookup *l, enum lookup_op op, const struct lookup_src *src,
		       unsigned nsrc, double scale, const char *fmt);

/* A text read from the results (a verdict's reason, a CPU name), recorded like a number: the
 * numbers inside it were read too. Returns it (borrowed), or NULL when there is none. */
const char *lookup_text(struct lookup *l, const char *file, const char *row, const char *path);

/* The numbers printed so far, as a JSON array (caller frees with cJSON_Delete()); texts as
 * objects with "text" and "sources" and op "text". */
cJSON *lookup_numbers_json(const struct lookup *l);
