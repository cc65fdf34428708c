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

/* Adds what one row says to t. */
static void
tally_row(struct sweep_tally *t, const cJSON *r)
{
	const cJSON *lab = results_get(r, "compare[formula=lab]");

	t->rows++;
	t->errors += cJSON_GetObjectItem(r, "error") != NULL;
	t->sample_too_small += results_true(r, "estimate.sample_too_small");
	t->exact_within += results_true(r, "compare[formula=exact].within");
	if (lab && results_true(r, "regime.within_lab_assumptions")) {
		t->lab_in_regime++;
		t->lab_in_regime_within += results_true(lab, "within");
	}
}

/* What opening collects: the failed rows' line numbers, to drop them. */
struct opening {
	struct sweep_writer *w;
	const char *mode; /* every key must end in " " mode */
	char other[128];  /* the mode of a row that does not: another plan's */
	unsigned long *failed;
	size_t nfailed;
};

/* Does key end with " " mode? */
static bool
key_has_mode(const char *key, const char *mode)
{
	size_t k = strlen(key), m = strlen(mode);

	return k > m && key[k - m - 1] == ' ' && strcmp(key + k - m, mode) == 0;
}

/* Collects the keys of the runs already written, and their CSV rows; a failed run is left
 * out, to run again. */
static int
take_run(const cJSON *r, unsigned long line, void *ctx)
{
	struct opening *o = ctx;
	struct sweep_writer *w = o->w;
	const char *key = results_string(r, "key"), *flush = strstr(key, " flush=");

	if (!key_has_mode(key, o->mode)) {
		snprintf(o->other, sizeof(o->other), "%s", flush ? flush + 1 : key);
		return 1;
	}
	if (cJSON_GetObjectItem(r, "error")) {
		o->failed = xrealloc(o->failed, (o->nfailed + 1) * sizeof(*o->failed));
		o->failed[o->nfailed++] = line;
		return 0;
	}
	w->done_keys = xrealloc(w->done_keys, (w->ndone + 1) * sizeof(*w->done_keys));
	w->done_keys[w->ndone++] = xstrdup(key);
	tally_row(&w->all, r);
	return results_csv_row(w->csv, r);
}

/* Rewrites the results file at path without the lines listed (ascending, from 1) and
 * without a torn last line: into a temporary beside it, renamed over it, so that a crash
 * leaves one whole file or the other. Returns 0 or -1 with err. */
static int
drop_lines(const char *path, const unsigned long *drop, size_t ndrop, char *err, size_t errlen)
{
	char tmp[4300];
	FILE *in = fopen(path, "r"), *out = NULL;
	char *line = NULL;
	size_t cap = 0, k = 0;
	unsigned long at = 0;
	ssize_t len;
	int fd = -1;

	snprintf(tmp, sizeof(tmp), "%s.resume-XXXXXX", path);
	if (in)
		fd = mkstemp(tmp);
	if (fd >= 0)
		out = fdopen(fd, "w");
	if (!in || !out) {
		snprintf(err, errlen, "cannot rewrite %s: %s", path, strerror(errno));
		goto fail;
	}
	while ((len = getline(&line, &cap, in)) > 0) {
		at++;
		if (k < ndrop && drop[k] == at) {
			k++;
			continue;
		}
		if (line[len - 1] != '\n')
			break; /* the torn last line */
		if (fwrite(line, 1, (size_t)len, out) != (size_t)len)
			break;
	}
	if (ferror(in) || ferror(out) || fflush(out) || fsync(fd) || fclose(out)) {
		out = NULL;
		snprintf(err, errlen, "cannot rewrite %s: %s", path, strerror(errno));
		goto fail;
	}
	out = NULL;
	if (rename(tmp, path)) {
		snprintf(err, errlen, "cannot rewrite %s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(in);
	free(line);
	return 0;
fail:
	if (out)
		fclose(out);
	else if (fd >= 0 && !in)
		close(fd);
	if (fd >= 0)
		unlink(tmp);
	if (in)
		fclose(in);
	free(line);
	return -1;
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
sweep_writer_open(struct sweep_writer *w, const char *dir, const char *mode, char *err,
		  size_t errlen)
{
	char path[4200], cpath[4200];
	struct results_info info;
	struct opening o = { .w = w, .mode = mode };
	char ctmp[4200];
	struct stat st;
	int rc, fd;

	memset(w, 0, sizeof(*w));
	w->results = w->lock = -1;
	w->missing = -1;
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
	snprintf(ctmp, sizeof(ctmp), "%s/.results.csv-XXXXXX", dir);
	/* results.csv is rewritten from the runs kept, so the two files agree; into a
	 * temporary renamed over it once the rows are read, so a refusal leaves it as it was. */
	fd = mkstemp(ctmp);
	if (fd < 0 || fchmod(fd, 0644) || !(w->csv = fdopen(fd, "w"))) {
		snprintf(err, errlen, "cannot write %s: %s", cpath, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(ctmp);
		}
		sweep_writer_close(w, NULL, 0);
		return -1;
	}
	fputs(results_csv_header, w->csv);
	rc = results_read(path, take_run, &o, &info, err, errlen);
	if (rc == 1) {
		snprintf(err, errlen,
			 "%s holds runs of another plan (%s) than this sweep's (%s): sweep into "
			 "another --out",
			 path, o.other, mode);
		free(o.failed);
		sweep_writer_close(w, NULL, 0);
		unlink(ctmp);
		return -2;
	}
	if (rc == -EIO && !err[0])
		snprintf(err, errlen, "cannot write %s", cpath);
	if (rc && rc != -ENOENT)
		goto fail;
	/* Failed runs run again: their rows go, with a torn last line. */
	if (rc == 0 && o.nfailed && drop_lines(path, o.failed, o.nfailed, err, errlen))
		goto fail;
	if (rc == 0 && !o.nfailed && info.torn && truncate(path, info.good_bytes) != 0) {
		snprintf(err, errlen, "cannot repair %s: %s", path, strerror(errno));
		goto fail;
	}
	w->retried = (long)o.nfailed;
	if (fflush(w->csv) || rename(ctmp, cpath)) {
		snprintf(err, errlen, "cannot write %s: %s", cpath, strerror(errno));
		goto fail;
	}
	ctmp[0] = '\0';
	if (w->ndone)
		qsort(w->done_keys, w->ndone, sizeof(*w->done_keys), key_cmp);
	w->results = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
	if (w->results < 0 || fstat(w->results, &st)) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		goto fail;
	}
	w->results_bytes = (long long)st.st_size;
	free(o.failed);
	return 0;
fail:
	free(o.failed);
	sweep_writer_close(w, NULL, 0);
	if (ctmp[0])
		unlink(ctmp);
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
	if (r) {
		if (!cJSON_GetObjectItem(r, "error") && w->missing > 0)
			w->missing--;
		tally_row(&w->now, r);
		tally_row(&w->all, r);
	} else {
		w->now.rows++;
		w->all.rows++;
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

/* How each --cache-sweep ran: "onepass": [{ caches, level, method, why }]. */
static void
add_onepass(cJSON *cfg, const struct sweep_plan *p)
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
	add_onepass(cfg, p);
	sum = cJSON_AddObjectToObject(m, "results_summary");
	cJSON_AddNumberToObject(sum, "runs_done", (double)w->all.rows);
	cJSON_AddNumberToObject(sum, "runs_failed", (double)w->all.errors);
	cJSON_AddNumberToObject(sum, "exact_within_5pct", (double)w->all.exact_within);
	cJSON_AddNumberToObject(sum, "lab_runs_in_regime", (double)w->all.lab_in_regime);
	cJSON_AddNumberToObject(sum, "lab_in_regime_within_30pct",
				(double)w->all.lab_in_regime_within);
	/* Whether every configuration of this shard has a good row. */
	cJSON_AddBoolToObject(sum, "complete", w->missing == 0);
	if (p->sample_sets > 1)
		cJSON_AddNumberToObject(sum, "sample_too_small", (double)w->all.sample_too_small);
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
