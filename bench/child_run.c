/*
 * Whole-process measurements of child runs (bench/child_run.h).
 */

#include "bench/child_run.h"

#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/utf8.h"
#include "base/util.h"
#include "measure/spawn.h"

/* Runs argv (argv[0] a path, or a name on $PATH) with stdout and stderr to /dev/null; returns
 * its wall time, or a negative value if it could not run, failed or was interrupted. */
double
child_run_time(char *const argv[])
{
	char path[4096], why[512], *args[32];
	double t0;
	int n = 0;

	if (!spawn_find(argv[0], path, sizeof(path)))
		return -1;
	args[n++] = path;
	while (argv[n] && n < 31) {
		args[n] = argv[n];
		n++;
	}
	args[n] = NULL;
	t0 = now_seconds();
	if (spawn_wait(args, NULL, NULL, why, sizeof(why)) != 0)
		return -1;
	return now_seconds() - t0;
}

/* Reads a whole small text file; NULL if it cannot. Caller frees. */
static char *
slurp_text(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, len = 0;
	char *text;

	if (!f)
		return NULL;
	text = xzalloc(cap);
	for (;;) {
		len += fread(text + len, 1, cap - 1 - len, f);
		if (len < cap - 1)
			break;
		cap *= 2;
		text = xrealloc(text, cap);
	}
	text[len] = '\0';
	fclose(f);
	return text;
}

static double
json_number(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* Fills f's report figures from the run report at path and removes the file. */
void
child_run_report(const char *path, struct child_run_figures *f)
{
	char *text = slurp_text(path);
	cJSON *j = NULL, *lv;
	const cJSON *cpu;

	if (text) {
		utf8_json_unescape(text, strlen(text)); /* memsim's escapes (base/utf8.h) */
		j = cJSON_Parse(text);
	}
	cpu = cJSON_GetObjectItemCaseSensitive(j, "cpu");
	f->model_seconds = json_number(j, "traced_seconds");
	f->peak_rss = json_number(j, "peak_rss_bytes");
	f->accesses = -1;
	f->l1_misses = -1;
	if (cpu)
		f->accesses = json_number(cpu, "loads") + json_number(cpu, "stores") +
			      json_number(cpu, "ifetches");
	cJSON_ArrayForEach (lv, cJSON_GetObjectItemCaseSensitive(j, "levels")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(lv, "name");

		if (cJSON_IsString(name) && strcmp(name->valuestring, "L1") == 0)
			f->l1_misses =
				json_number(lv, "read_misses") + json_number(lv, "write_misses");
	}
	cJSON_Delete(j);
	free(text);
	unlink(path);
}

/* The instructions callgrind counted, from the "totals:" line of its output file at path
 * (removed after); -1 if there is none. */
double
child_run_callgrind_totals(const char *path)
{
	char *text = slurp_text(path);
	const char *t = text ? strstr(text, "\ntotals: ") : NULL;
	uint64_t v;
	char digits[32];
	double r = -1;

	if (t && sscanf(t + 9, "%31[0-9]", digits) == 1 && parse_u64(digits, &v))
		r = (double)v;
	free(text);
	unlink(path);
	return r;
}
