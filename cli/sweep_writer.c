#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/report.h"
#include "analysis/results.h"
#include "cli/sweep_writer.h"
#include "measure/ceilings.h"
#include "sim/spec.h"
#include "sim/util.h"

/* Counts row r against its --cache-sweep group when it did not run in one pass with all its
 * task's sizes. */
static void
count_apart(struct sweep_writer *w, const cJSON *r)
{
	double g = results_number(r, "onepass.group", -1);
	const char *why = results_string(r, "onepass.why");

	if (!why[0] || g < 0 || g >= SWEEP_CACHES_MAX)
		return;
	if (w->onepass_apart[(int)g]++ == 0)
		snprintf(w->onepass_why[(int)g], sizeof(w->onepass_why[0]), "%s", why);
}

/* Collects the keys of the runs already written, and their CSV rows. */
static int
take_run(const cJSON *r, unsigned long line, void *ctx)
{
	struct sweep_writer *w = ctx;

	(void)line;
	w->done_keys = xrealloc(w->done_keys, (w->ndone + 1) * sizeof(*w->done_keys));
	w->done_keys[w->ndone++] = xstrdup(results_string(r, "key"));
	count_apart(w, r);
	w->sample_too_small_all += results_true(r, "estimate.sample_too_small");
	return results_csv_row(w->csv, r);
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
sweep_writer_open(struct sweep_writer *w, const char *dir, char *err, size_t errlen)
{
	char path[4200], cpath[4200];
	struct results_info info;
	int rc;

	memset(w, 0, sizeof(*w));
	w->results = w->lock = -1;
	if (strlen(dir) >= 4000) {
		snprintf(err, errlen, "--out: the path is too long");
		return -1;
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	if ((rc = mkdir_p(dir))) {
		snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-rc));
		return -1;
	}
	/* Before anything is read: two sweeps appending to one results.json would interleave. */
	w->lock = lock_dir(dir, err, errlen);
	if (w->lock < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/results.json", dir);
	snprintf(cpath, sizeof(cpath), "%s/results.csv", dir);
	/* results.csv is rewritten from the runs kept, so the two files agree. */
	w->csv = fopen(cpath, "w");
	if (!w->csv) {
		snprintf(err, errlen, "cannot write %s: %s", cpath, strerror(errno));
		return -1;
	}
	fputs(results_csv_header, w->csv);
	rc = results_read(path, take_run, w, &info, err, errlen);
	if (rc == -EIO && !err[0])
		snprintf(err, errlen, "cannot write %s", cpath);
	if (rc && rc != -ENOENT)
		goto fail;
	if (rc == 0 && info.torn && truncate(path, info.good_bytes) != 0) {
		snprintf(err, errlen, "cannot repair %s: %s", path, strerror(errno));
		goto fail;
	}
	if (fflush(w->csv)) {
		snprintf(err, errlen, "cannot write %s: %s", cpath, strerror(errno));
		goto fail;
	}
	if (w->ndone)
		qsort(w->done_keys, w->ndone, sizeof(*w->done_keys), key_cmp);
	w->results = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (w->results < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	w->results_bytes = info.good_bytes;
	return 0;
fail:
	sweep_writer_close(w, NULL, 0);
	return -1;
}

bool
sweep_writer_has(const struct sweep_writer *w, const char *key)
{
	return w->ndone && bsearch(&key, w->done_keys, w->ndone, sizeof(*w->done_keys), key_cmp);
}

int
sweep_writer_row(struct sweep_writer *w, const char *line, char *err, size_t errlen)
{
	cJSON *r = cJSON_Parse(line);
	const char *bad = NULL;

	size_t len = strlen(line);
	char *row = xzalloc(len + 2);
	int rc;

	memcpy(row, line, len);
	row[len] = '\n';
	rc = write_fd_all(w->results, row, len + 1);
	free(row);
	if (rc) {
		bad = "results.json";
		/* No torn row: what is kept is whole rows. */
		if (ftruncate(w->results, (off_t)w->results_bytes))
			rc = -errno;
	} else if (r && (results_csv_row(w->csv, r) || fflush(w->csv))) {
		bad = "results.csv";
		rc = -errno;
	}
	if (bad) {
		snprintf(err, errlen, "cannot write %s/%s: %s", w->dir, bad, strerror(-rc));
		cJSON_Delete(r);
		return -1;
	}
	w->results_bytes += (long long)len + 1;
	w->written++;
	if (r) {
		const cJSON *lab = results_get(r, "compare[formula=lab]");

		w->errors += cJSON_GetObjectItem(r, "error") != NULL;
		count_apart(w, r);
		w->sample_too_small += results_true(r, "estimate.sample_too_small");
		w->sample_too_small_all += results_true(r, "estimate.sample_too_small");
		w->exact_within += results_true(r, "compare[formula=exact].within");
		if (lab && results_true(r, "regime.within_lab_assumptions")) {
			w->lab_in_regime++;
			w->lab_in_regime_within += results_true(lab, "within");
		}
	}
	cJSON_Delete(r);
	return 0;
}

/* The first line a command prints, or "" (valgrind --version). */
static void
version_of(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");

	buf[0] = '\0';
	if (p) {
		if (!fgets(buf, (int)len, p))
			buf[0] = '\0';
		pclose(p);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* How each --cache-sweep ran: "onepass": [{ caches, level, method, why }], and where rows ran
 * in smaller passes or alone (memory, an L1 of one set), how many and why. */
static void
add_onepass(cJSON *cfg, const struct sweep_writer *w, const struct sweep_plan *p)
{
	cJSON *list = cJSON_AddArrayToObject(cfg, "onepass");

	for (unsigned g = 0; g < p->ngroups; g++) {
		const struct sweep_cache_group *gr = &p->groups[g];
		enum cache_onepass m = !p->simulate || p->separate_runs || p->sample_sets > 1
					       ? CACHE_ONEPASS_SEPARATE
					       : gr->method;
		cJSON *o = cJSON_CreateObject();
		char level[8];

		snprintf(level, sizeof(level), "L%u", gr->level + 1);
		cJSON_AddNumberToObject(o, "first_cache", gr->first);
		cJSON_AddNumberToObject(o, "sizes", gr->n);
		cJSON_AddStringToObject(o, "level", level);
		cJSON_AddStringToObject(o, "method", cache_onepass_str(m));
		cJSON_AddStringToObject(o, "why",
					!p->simulate	   ? "formulas only: nothing simulated"
					: p->separate_runs ? "--separate-runs"
					: p->sample_sets > 1 ? "set sampling runs each size on its own"
					: gr->why	   ? gr->why
							   : "the fastest pass applies");
		if (w->onepass_apart[g]) {
			cJSON_AddNumberToObject(o, "rows_apart", (double)w->onepass_apart[g]);
			cJSON_AddStringToObject(o, "apart_why", w->onepass_why[g]);
		}
		cJSON_AddItemToArray(list, o);
	}
}

int
sweep_writer_manifest(const struct sweep_writer *w, const struct sweep_plan *p, uint64_t shard_i,
		      uint64_t shard_n, size_t total, int argc, char **argv, char *err,
		      size_t errlen)
{
	cJSON *m = report_manifest_create("memsim sweep", argc, argv), *v, *cfg, *sum, *caches;
	char path[4200], vg[256];
	char *sweep_cmd = sweep_plan_command(p, w->dir);
	int rc;

	if (shard_n > 1) {
		char *c = xzalloc(strlen(sweep_cmd) + 64);

		sprintf(c, "%s --shard %llu/%llu", sweep_cmd, (unsigned long long)shard_i,
			(unsigned long long)shard_n);
		free(sweep_cmd);
		sweep_cmd = c;
	}
	cJSON_AddStringToObject(m, "sweep_command", sweep_cmd);
	free(sweep_cmd);
	cJSON_AddNumberToObject(m, "seed", (double)p->seed);
	v = cJSON_GetObjectItem(m, "versions");
	version_of("valgrind --version 2>/dev/null", vg, sizeof(vg));
	cJSON_AddStringToObject(v, "valgrind", vg[0] ? vg : "not installed");
#if defined(HAVE_PAPI) && HAVE_PAPI
	cJSON_AddStringToObject(v, "papi", MEMSIM_PAPI_VERSION);
#else
	cJSON_AddStringToObject(v, "papi", "not built in");
#endif
	ceilings_add_hardware(m);
	cfg = cJSON_AddObjectToObject(m, "config");
	cJSON_AddNumberToObject(cfg, "configurations", (double)total);
	cJSON_AddBoolToObject(cfg, "flush", p->flush);
	cJSON_AddStringToObject(cfg, "mode", p->simulate ? "simulated" : "formula");
	cJSON_AddBoolToObject(cfg, "trace_only", p->trace_only);
	cJSON_AddNumberToObject(cfg, "sample_sets", p->sample_sets > 1 ? p->sample_sets : 1);
	cJSON_AddBoolToObject(cfg, "estimate", p->sample_sets > 1);
	caches = cJSON_AddArrayToObject(cfg, "caches");
	for (unsigned i = 0; i < p->ncaches; i++)
		cJSON_AddItemToArray(caches, cJSON_CreateString(p->caches[i]));
	add_onepass(cfg, w, p);
	sum = cJSON_AddObjectToObject(m, "results_summary");
	cJSON_AddNumberToObject(sum, "runs_done", (double)(w->ndone + (size_t)w->written));
	cJSON_AddNumberToObject(sum, "runs_failed", (double)w->errors);
	cJSON_AddNumberToObject(sum, "exact_within_5pct", (double)w->exact_within);
	cJSON_AddNumberToObject(sum, "lab_runs_in_regime", (double)w->lab_in_regime);
	cJSON_AddNumberToObject(sum, "lab_in_regime_within_30pct", (double)w->lab_in_regime_within);
	if (p->sample_sets > 1)
		cJSON_AddNumberToObject(sum, "sample_too_small", (double)w->sample_too_small_all);
	snprintf(path, sizeof(path), "%s/manifest.json", w->dir);
	rc = report_write_json(path, m, err, errlen);
	cJSON_Delete(m);
	return rc ? -1 : 0;
}

int
sweep_writer_close(struct sweep_writer *w, char *err, size_t errlen)
{
	int rc = 0;

	if (w->results >= 0 && close(w->results) && err && !rc) {
		snprintf(err, errlen, "cannot write %s/results.json: %s", w->dir, strerror(errno));
		rc = -1;
	}
	if (w->csv && fclose(w->csv) && err && !rc) {
		snprintf(err, errlen, "cannot write %s/results.csv: %s", w->dir, strerror(errno));
		rc = -1;
	}
	w->results = -1;
	w->csv = NULL;
	if (w->lock >= 0)
		close(w->lock);
	w->lock = -1;
	for (size_t i = 0; i < w->ndone; i++)
		free(w->done_keys[i]);
	free(w->done_keys);
	w->done_keys = NULL;
	w->ndone = 0;
	return rc;
}
