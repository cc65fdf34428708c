#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/json_text.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "base/name_index.h"
#include "base/util.h"
#include "measure/ceilings.h"
#include "run/sweep_writer.h"
#include "sim/spec.h"

/* Adds what one row says to t. */
static void
tally_row(struct sweep_tally *t, const cJSON *r)
{
	const cJSON *lab = results_get(r, "compare[formula=lab]");

	t->rows++;
	t->errors += cJSON_GetObjectItem(r, "error") != NULL;
	t->sample_too_small += results_true(r, "estimate.sample_too_small");
	/* a plugin's row keeps its verdict with its formula */
	t->exact_within += results_true(r, "compare[formula=exact].within") ||
			   results_true(r, "formulas.exact.within");
	if (lab && results_true(r, "regime.within_lab_assumptions")) {
		t->lab_in_regime++;
		t->lab_in_regime_within += results_true(lab, "within");
	}
}

/* What opening collects: the line numbers of the rows to drop (failed ones, and with
 * rerun_other those of another model revision), ascending, and which of them to keep aside. */
struct opening {
	struct sweep_writer *w;
	const struct sweep_plan *plan;
	const char *mode; /* every key must end in " " mode */
	bool resume;      /* rows already there are welcome */
	bool rerun_other; /* good rows of another model revision run again */
	char other[128];  /* the mode of a row that does not: another plan's */
	unsigned long *drop;
	bool *superseded; /* drop[i] is a good row of another revision: to superseded.json */
	size_t ndrop, nfailed;
	long nother;         /* good rows of another model revision */
	char other_rev[160]; /* the first one's revision */
	bool other_revs;     /* and a third revision besides */
	long nplugin;        /* good rows of the plan's plugin made by another build of it */
	char plugin_was[40]; /* the first one's plugin_hash, or "" where it records none */
	struct name_index kept; /* over w->done_keys: a configuration's second good row */
	long nduplicate;        /* good rows of a configuration kept already: dropped */
};

/* Does key end with " " mode? */
static bool
key_has_mode(const char *key, const char *mode)
{
	size_t k = strlen(key), m = strlen(mode);

	return k > m && key[k - m - 1] == ' ' && strcmp(key + k - m, mode) == 0;
}

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

/* Marks line to be dropped from results.json; superseded: kept in superseded.json. */
static void
drop_line(struct opening *o, unsigned long line, bool superseded)
{
	o->drop = xrealloc(o->drop, (o->ndrop + 1) * sizeof(*o->drop));
	o->superseded = xrealloc(o->superseded, (o->ndrop + 1) * sizeof(*o->superseded));
	o->drop[o->ndrop] = line;
	o->superseded[o->ndrop++] = superseded;
}

/* Whether good row r is of this memsim's model revision; counts it where not. */
static bool
same_revision(struct opening *o, const cJSON *r)
{
	char rev[160];

	report_row_revision(r, rev, sizeof(rev));
	if (strcmp(rev, report_model_revision()) == 0)
		return true;
	if (!o->nother++)
		snprintf(o->other_rev, sizeof(o->other_rev), "%s", rev);
	else if (strcmp(rev, o->other_rev) != 0)
		o->other_revs = true;
	return false;
}

/* Whether good row r, where it is of the plan's plugin (its path), was made by the build of
 * it at that path now (the hash every row records); counts it where not. */
static bool
same_plugin(struct opening *o, const cJSON *r)
{
	const struct sweep_plan *p = o->plan;
	const char *hash = results_string(r, "plugin_hash");

	if (!p->plugin.p || strcmp(results_string(r, "config.plugin"), p->plugin.path) != 0 ||
	    strcmp(hash, p->plugin_hash) == 0)
		return true;
	if (!o->nplugin++)
		snprintf(o->plugin_was, sizeof(o->plugin_was), "%s", hash);
	return false;
}

/* Collects the keys of the runs already written, and their CSV rows; a failed run is left
 * out, to run again, and so is a good row of another model revision or plugin build with
 * rerun_other. */
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
		drop_line(o, line, false);
		o->nfailed++;
		return 0;
	}
	/* A good row of another model revision: its numbers may be what a bug since fixed
	 * gave, and are not mixed with this memsim's; nor those of another build of the
	 * plugin, rebuilt at the same path since. */
	if (!same_revision(o, r) || !same_plugin(o, r)) {
		if (o->rerun_other)
			drop_line(o, line, true);
		return 0;
	}
	/* A configuration keeps its first good row: a copy (a file joined by hand, a row
	 * appended twice) would count twice in the summary and list twice in a table. */
	if (name_index_find(&o->kept, key) >= 0) {
		drop_line(o, line, false);
		o->nduplicate++;
		return 0;
	}
	w->done_keys = xrealloc(w->done_keys, (w->ndone + 1) * sizeof(*w->done_keys));
	w->done_keys[w->ndone] = xstrdup(key);
	name_index_add(&o->kept, w->done_keys[w->ndone], (uint32_t)w->ndone);
	w->ndone++;
	tally_row(&w->all, r);
	count_apart(w, r);
	return results_csv_row_params(w->csv, r, w->param_keys, w->nparams);
}

static const char *
done_key_at(const void *owner, uint32_t i)
{
	return ((const struct sweep_writer *)owner)->done_keys[i];
}

static int
key_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines DIR/superseded.json holds already, sorted for bsearch() with key_cmp(), each
 * with its newline; none where it does not exist yet. Returns their count; caller frees. */
static size_t
superseded_lines(struct sweep_writer *w, char ***lines)
{
	char err[600];
	/* A FIFO there is refused by the append below, not waited on here. */
	int fd = outdir_file_open(w->dirfd, w->dir, "superseded.json", O_RDONLY, err, sizeof(err));
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	size_t n = 0, cap = 0;
	char *line = NULL;

	*lines = NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (getline(&line, &cap, f) > 0) {
		*lines = xrealloc(*lines, (n + 1) * sizeof(**lines));
		(*lines)[n++] = xstrdup(line);
	}
	free(line);
	fclose(f);
	qsort(*lines, n, sizeof(**lines), key_cmp);
	return n;
}

/* Appends the lines of results.json (in fin, from its start) that o marks superseded to
 * DIR/superseded.json, made where missing, synced: rows of another model revision are kept
 * there, never lost, before results.json is rewritten without them. A line it holds already
 * is not added again: a run stopped between this and the rewrite leaves them in both, and the
 * next run moves them once. Returns 0 or -1 with err; fin is rewound. */
static int
keep_superseded(struct sweep_writer *w, const struct opening *o, FILE *fin, char *err,
		size_t errlen)
{
	char *line = NULL, **old;
	size_t cap = 0, k = 0, nold;
	unsigned long at = 0;
	ssize_t len;
	bool any = false;
	int fd, rc = 0;

	for (size_t i = 0; i < o->ndrop; i++)
		any |= o->superseded[i];
	if (!any)
		return 0;
	nold = superseded_lines(w, &old);
	fd = outdir_file_open(w->dirfd, w->dir, "superseded.json", O_WRONLY | O_APPEND | O_CREAT,
			      err, errlen);
	if (fd < 0) {
		for (size_t i = 0; i < nold; i++)
			free(old[i]);
		free(old);
		return -1;
	}
	while (!rc && k < o->ndrop && (len = getline(&line, &cap, fin)) > 0) {
		if (++at != o->drop[k])
			continue;
		if (o->superseded[k++] && line[len - 1] == '\n' &&
		    !(nold && bsearch(&line, old, nold, sizeof(*old), key_cmp)) &&
		    write_fd_all(fd, line, (size_t)len))
			rc = -1;
	}
	for (size_t i = 0; i < nold; i++)
		free(old[i]);
	free(old);
	free(line);
	if (rc || ferror(fin) || fsync(fd)) {
		snprintf(err, errlen, "cannot write %s/superseded.json: %s", w->dir,
			 strerror(errno));
		rc = -1;
	}
	close(fd);
	rewind(fin);
	return rc;
}

/* Rewrites results.json without the lines o lists (ascending, from 1) and without a torn last
 * line: into a temporary in the directory put in place of it, so that a crash leaves one whole
 * file or the other; w->results is then the new file's. The rows of another model revision go
 * to superseded.json first. Returns 0 or -1 with err. */
static int
drop_lines(struct sweep_writer *w, const struct opening *o, char *err, size_t errlen)
{
	char tmp[4200], *line = NULL;
	int in = dup(w->results), out = -1, fd;
	FILE *fin = NULL, *fout = NULL;
	size_t cap = 0, k = 0;
	unsigned long at = 0;
	ssize_t len;

	if (in >= 0 && lseek(in, 0, SEEK_SET) == 0)
		fin = fdopen(in, "r");
	if (!fin) {
		snprintf(err, errlen, "cannot read %s/results.json: %s", w->dir, strerror(errno));
		if (in >= 0)
			close(in);
		return -1;
	}
	if (keep_superseded(w, o, fin, err, errlen)) {
		fclose(fin);
		return -1;
	}
	out = outdir_temp_open(w->dirfd, w->dir, "results.json", tmp, sizeof(tmp), err, errlen);
	if (out < 0 || !(fout = fdopen(out, "w"))) {
		if (out >= 0) {
			snprintf(err, errlen, "cannot write %s/results.json: %s", w->dir,
				 strerror(errno));
			close(out);
			unlinkat(w->dirfd, tmp, 0);
		}
		fclose(fin);
		return -1;
	}
	while ((len = getline(&line, &cap, fin)) > 0) {
		at++;
		if (k < o->ndrop && o->drop[k] == at) {
			k++;
			continue;
		}
		if (line[len - 1] != '\n')
			break; /* the torn last line */
		if (fwrite(line, 1, (size_t)len, fout) != (size_t)len)
			break;
	}
	free(line);
	if (ferror(fin) | ferror(fout) | (fflush(fout) != 0) | (fsync(out) != 0)) {
		snprintf(err, errlen, "cannot rewrite %s/results.json: %s", w->dir, strerror(errno));
		fclose(fin);
		fclose(fout);
		unlinkat(w->dirfd, tmp, 0);
		return -1;
	}
	fclose(fin);
	fclose(fout);
	if (outdir_temp_commit(w->dirfd, w->dir, tmp, "results.json", err, errlen))
		return -1;
	fd = outdir_file_open(w->dirfd, w->dir, "results.json", O_RDWR | O_APPEND, err, errlen);
	if (fd < 0)
		return -1;
	close(w->results);
	w->results = fd;
	return 0;
}

/* On --resume, the plan the directory's manifest records must be this one: a sweep stopped
 * before its first row leaves no key to compare, and a --trace-only one into it after a
 * computing one would append. The manifest's config gives flush, mode, trace_only and
 * sample_sets (each compared where recorded); its seed is a double, compared where it holds
 * the seed exactly. No manifest, one that cannot be read or one without a plan: nothing to
 * compare (the sweep writes its own). Returns 0, or -2 with err. */
static int
check_manifest(struct sweep_writer *w, const struct opening *o, char *err, size_t errlen)
{
	struct sweep_plan was = *o->plan;
	char recorded[128], why[600];
	cJSON *m = report_read_json_at(w->dirfd, w->dir, "manifest.json", NULL, why, sizeof(why));
	const cJSON *cfg = cJSON_GetObjectItem(m, "config");
	const char *mode = results_string(cfg, "mode");
	double seed = results_number(m, "seed", -1);

	if (!o->resume || !mode[0]) {
		cJSON_Delete(m);
		return 0;
	}
	was.simulate = strcmp(mode, "simulated") == 0;
	if (cJSON_IsBool(cJSON_GetObjectItem(cfg, "flush")))
		was.flush = results_true(cfg, "flush");
	if (cJSON_IsBool(cJSON_GetObjectItem(cfg, "trace_only")))
		was.trace_only = results_true(cfg, "trace_only");
	was.sample_sets = (uint32_t)results_number(cfg, "sample_sets", was.sample_sets);
	if (seed >= 0 && seed <= 9007199254740992.0) /* 2^53 */
		was.seed = (uint64_t)seed;
	cJSON_Delete(m);
	sweep_plan_mode(&was, recorded, sizeof(recorded));
	if (strcmp(recorded, o->mode) == 0)
		return 0;
	snprintf(err, errlen,
		 "%s/manifest.json records another plan (%s) than this sweep's (%s): sweep into "
		 "another --out",
		 w->dir, recorded, o->mode);
	return -2;
}

/* The refusal of rows of another build of the plan's plugin than the file there now. */
static void
refuse_plugin(const struct sweep_writer *w, const struct opening *o, const char *path, char *err,
	      size_t errlen)
{
	const struct sweep_plan *p = o->plan;

	if (o->plugin_was[0])
		snprintf(err, errlen,
			 "%s holds %ld rows of plugin %s made by another build of it (%s), not "
			 "the file there now (%s): the plugin changed; sweep into another --out, "
			 "or pass --rerun-other-revisions to run them again (the old rows kept in "
			 "%s/superseded.json)",
			 path, o->nplugin, p->plugin.path, o->plugin_was, p->plugin_hash, w->dir);
	else
		snprintf(err, errlen,
			 "%s holds %ld rows of plugin %s that record no build of it (no "
			 "plugin_hash: made before rows recorded one), and the file there now "
			 "(%s) may have changed since: sweep into another --out, or pass "
			 "--rerun-other-revisions to run them again (the old rows kept in "
			 "%s/superseded.json)",
			 path, o->nplugin, p->plugin.path, p->plugin_hash, w->dir);
}

/* Reads the runs results.json (open in w->results) holds into w and the CSV: a row of another
 * mode stops the read and is refused (-2); failed rows are dropped and a torn last line cut
 * off. Returns 0, -2 or -1 with err. */
static int
read_results(struct sweep_writer *w, struct opening *o, char *err, size_t errlen)
{
	char path[4200];
	struct results_info info = { 0 };
	int fd = dup(w->results), rc;
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	snprintf(path, sizeof(path), "%s/results.json", w->dir);
	if (!f) {
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	err[0] = '\0';
	rc = results_read_stream(f, path, take_run, o, &info, err, errlen);
	fclose(f);
	if (rc == 1) {
		snprintf(err, errlen,
			 "%s holds runs of another plan (%s) than this sweep's (%s): sweep into "
			 "another --out",
			 path, o->other, o->mode);
		return -2;
	}
	if (!rc && o->nother && !o->rerun_other) {
		char which[400];

		/* A directory of a memsim before rows recorded their revision says so. */
		if (strncmp(o->other_rev, "none recorded", 13) == 0)
			snprintf(which, sizeof(which),
				 "rows that record no model revision (%s%s: made before rows "
				 "recorded one), not this memsim's (%s)",
				 o->other_rev[13] ? o->other_rev + 15 : "an older memsim",
				 o->other_revs ? ", and others" : "", report_model_revision());
		else
			snprintf(which, sizeof(which),
				 "rows of another model revision (%s%s) than this memsim's (%s)",
				 o->other_rev, o->other_revs ? ", and others" : "",
				 report_model_revision());
		snprintf(err, errlen,
			 "%s holds %ld %s: sweep into another --out, or pass "
			 "--rerun-other-revisions to run them again (the old rows kept in "
			 "%s/superseded.json)",
			 path, o->nother, which, w->dir);
		return -2;
	}
	if (!rc && o->nplugin && !o->rerun_other) {
		refuse_plugin(w, o, path, err, errlen);
		return -2;
	}
	if (!rc && check_manifest(w, o, err, errlen))
		return -2;
	if (rc == -EIO && !err[0])
		snprintf(err, errlen, "cannot write %s/results.csv", w->dir);
	if (rc)
		return -1;
	/* Failed runs run again, and with rerun_other the rows of another revision: their rows
	 * go, with a torn last line. */
	if (o->ndrop)
		return drop_lines(w, o, err, errlen);
	if (info.torn && ftruncate(w->results, (off_t)info.good_bytes) != 0) {
		snprintf(err, errlen, "cannot repair %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Opens dir/results.json (w->results, for appending) and rewrites dir/results.csv (w->csv)
 * from the runs it holds, neither through a link. results.csv is written to a temporary put
 * in its place once the rows are read, so a refusal leaves both files as they were. Returns
 * 0, -2 (another plan's rows) or -1 with err. */
static int
open_results(struct sweep_writer *w, struct opening *o, char *err, size_t errlen)
{
	const char *dir = w->dir;
	char ctmp[4200];
	struct stat st;
	int fd, rc = 0;

	w->results =
		outdir_file_open(w->dirfd, dir, "results.json", O_RDWR | O_APPEND, err, errlen);
	if (w->results < 0 && w->results != -ENOENT)
		return -1;
	if (w->results >= 0 && !o->resume) {
		snprintf(err, errlen,
			 "%s/results.json exists: pass --resume to continue it, or another --out",
			 dir);
		return -2;
	}
	fd = outdir_temp_open(w->dirfd, dir, "results.csv", ctmp, sizeof(ctmp), err, errlen);
	if (fd < 0)
		return -1;
	w->csv = fdopen(fd, "w");
	if (!w->csv) {
		close(fd);
		unlinkat(w->dirfd, ctmp, 0);
		snprintf(err, errlen, "cannot write %s/results.csv: %s", dir, strerror(errno));
		return -1;
	}
	results_csv_header_params(w->csv, w->param_keys, w->nparams);
	if (w->results >= 0)
		rc = read_results(w, o, err, errlen);
	else if (!(rc = check_manifest(w, o, err, errlen)))
		w->results = outdir_file_open(w->dirfd, dir, "results.json",
					      O_WRONLY | O_APPEND | O_CREAT, err, errlen);
	if (!rc && w->results < 0)
		rc = -1;
	if (!rc && fflush(w->csv)) {
		snprintf(err, errlen, "cannot write %s/results.csv: %s", dir, strerror(errno));
		rc = -1;
	}
	if (rc) {
		unlinkat(w->dirfd, ctmp, 0);
		return rc;
	}
	if (outdir_temp_commit(w->dirfd, dir, ctmp, "results.csv", err, errlen))
		return -1;
	if (fstat(w->results, &st)) {
		snprintf(err, errlen, "cannot read %s/results.json: %s", dir, strerror(errno));
		return -1;
	}
	w->results_bytes = (long long)st.st_size;
	w->retried = (long)o->nfailed;
	w->superseded = o->rerun_other ? o->nother + o->nplugin : 0;
	w->superseded_builds = o->rerun_other ? o->nplugin : 0;
	w->duplicates = o->nduplicate;
	return 0;
}

int
sweep_writer_open(struct sweep_writer *w, const char *dir, const struct sweep_plan *p, bool resume,
		  bool rerun_other, char *err, size_t errlen)
{
	char mode[128];
	struct opening o = { .w = w,
			     .plan = p,
			     .mode = sweep_plan_mode(p, mode, sizeof(mode)),
			     .resume = resume,
			     .rerun_other = rerun_other };
	int rc = -1;

	memset(w, 0, sizeof(*w));
	w->results = w->lock = w->dirfd = -1;
	w->missing = -1;
	for (unsigned i = 0; i < p->params.n; i++)
		w->param_keys[w->nparams++] = p->params.keys[i];
	name_index_init(&o.kept, w, done_key_at);
	if (strlen(dir) >= 4000) {
		snprintf(err, errlen, "--out: the path is too long");
		return -1;
	}
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	w->dirfd = outdir_open(dir, err, errlen);
	if (w->dirfd < 0)
		goto fail;
	/* Before anything is read: two sweeps appending to one results.json would interleave. */
	w->lock = lock_dir(w->dirfd, dir, err, errlen);
	if (w->lock < 0 || (rc = open_results(w, &o, err, errlen)))
		goto fail;
	name_index_finish(&o.kept);
	if (w->ndone)
		qsort(w->done_keys, w->ndone, sizeof(*w->done_keys), key_cmp);
	free(o.drop);
	free(o.superseded);
	return 0;
fail:
	name_index_finish(&o.kept);
	free(o.drop);
	free(o.superseded);
	sweep_writer_close(w, NULL, 0);
	return rc == -2 ? -2 : -1;
}

bool
sweep_writer_has(const struct sweep_writer *w, const char *key)
{
	return w->ndone && bsearch(&key, w->done_keys, w->ndone, sizeof(*w->done_keys), key_cmp);
}

int
sweep_writer_row(struct sweep_writer *w, const char *line, char *err, size_t errlen)
{
	cJSON *r = json_text_parse(line, strlen(line), false);
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
	} else if (r && (results_csv_row_params(w->csv, r, w->param_keys, w->nparams) ||
			 fflush(w->csv))) {
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
		count_apart(w, r);
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
	char vg[256];
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
	/* As model_revision: every good row of the plugin is of this build of it. */
	if (p->plugin.p)
		cJSON_AddStringToObject(m, "plugin_hash", p->plugin_hash);
	cJSON_AddNumberToObject(m, "seed", (double)p->seed);
	/* The header's model_revision is this memsim's: every good row in the directory is of
	 * this revision (another's were refused or run again on opening). */
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
	rc = report_write_json_at(w->dirfd, w->dir, "manifest.json", m, err, errlen);
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
	if (w->dirfd >= 0)
		close(w->dirfd);
	w->lock = w->dirfd = -1;
	for (size_t i = 0; i < w->ndone; i++)
		free(w->done_keys[i]);
	free(w->done_keys);
	w->done_keys = NULL;
	w->ndone = 0;
	return rc;
}
