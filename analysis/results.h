#pragma once

/*
 * Results files: the one reader that `memsim table`, `plot`, `report`, `sweep --resume` and
 * `merge` share, the CSV row of a run, and paths into a run's JSON object.
 *
 * A results file (DIR/results.json of `memsim sweep` and `memsim profile`) holds one JSON object
 * per line, each written whole and flushed. Reading it:
 * - blank lines are skipped;
 * - a last line without its newline is a run cut off by an interrupt: it is left out and
 *   said (results_info.torn), never passed off as a row;
 * - any other line that is not a JSON object is an error, "path:line: not a JSON object";
 * - a path that is not a regular file (a FIFO, a device) is refused, never waited on
 *   (open_regular_read(), base/util.h).
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct results_info {
	unsigned long rows;   /* rows handed to the callback */
	unsigned long lines;  /* lines read, the torn one included */
	bool torn;            /* the last line had no newline and was left out */
	long long good_bytes; /* bytes up to the end of the last complete row */
};

/* Calls row(r, line, ctx) for each row of the file at path, in order; r is borrowed for the
 * call. A nonzero return from row stops the read and is returned. Returns 0, row's value,
 * -ENOENT when the file does not exist, or another negative errno with "path:line: what" (or
 * "path: what") in err. info, which may be NULL, says what was read either way. */
int results_read(const char *path, int (*row)(const cJSON *r, unsigned long line, void *ctx),
		 void *ctx, struct results_info *info, char *err, size_t errlen);

/* results_read() of a stream already open, from where it stands, named path in messages; the
 * caller closes f. */
int results_read_stream(FILE *f, const char *path,
			int (*row)(const cJSON *r, unsigned long line, void *ctx), void *ctx,
			struct results_info *info, char *err, size_t errlen);

/*
 * The item at path under obj, or NULL. A path is steps separated by dots ("config.N"); a step
 * "name[i]" is element i of array name, "name[field=value,...]" the first element of array
 * name that results_matches() the selector inside the brackets.
 */
const cJSON *results_get(const cJSON *obj, const char *path);

/* Does obj match every field=value of the comma-separated selector ("" and NULL match all)?
 * A field is a path; a value matches a string equal to it, a number equal to it as a decimal,
 * a boolean spelled true or false. */
bool results_matches(const cJSON *obj, const char *selector);

/* The number, string or truth at path; missing or of another type: fallback, "", false. */
double results_number(const cJSON *obj, const char *path, double fallback);
const char *results_string(const cJSON *obj, const char *path);
bool results_true(const cJSON *obj, const char *path);

/* The header of results.csv, newline included, and the CSV row of one run of a sweep. */
extern const char results_csv_header[];
/* Returns 0, or -EIO when the write failed. */
int results_csv_row(FILE *f, const cJSON *run);

/* A plugin sweep's results.csv: the header and rows above with a column "param_KEY" for each
 * of the n keys after the others, the row's config.params.KEY (empty where it has none).
 * Return as results_csv_row(). */
int results_csv_header_params(FILE *f, const char *const *keys, unsigned n);
int results_csv_row_params(FILE *f, const cJSON *run, const char *const *keys, unsigned n);
