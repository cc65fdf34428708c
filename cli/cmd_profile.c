/*
 * `memsim profile`: the per-operation profile of an attention layer (run/profile.h), one JSON
 * line per row in DIR/results.json, written and flushed as each row is measured, a
 * DIR/manifest.json, and a table.
 */

#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/json_text.h"
#include "analysis/report.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/steps.h"
#include "run/profile.h"

void
usage_profile(FILE *f)
{
	fprintf(f,
		"Usage: memsim profile [--T LIST] [--d-model D] [--heads H] [--kernel LIST]\n"
		"                      [--cache SPEC|PRESET] [--min-time SECONDS] [--reps R]\n"
		"                      [--seed N] [--out DIR] [--json FILE]\n"
		"\n"
		"Times each operation of an attention layer natively, for each sequence length T:\n"
		"qkv_proj and out_proj (the proj kernel), the naive kernel's scores, softmax and av\n"
		"one phase at a time, each flash kernel whole (op \"attention\"), and the whole\n"
		"layer (op \"layer\": qkv_proj + the attention ops + out_proj, per attention\n"
		"kernel). Each op: a warm-up call, calls per repetition calibrated once so that a\n"
		"repetition takes at least --min-time, then R repetitions; p50, p95, p99 and mean\n"
		"of the time per call. Next to it: FLOPs, the DRAM bytes of that phase in one\n"
		"traced run under --cache (from cold, the final flush in no phase), intensity =\n"
		"FLOPs / bytes, GFLOP/s = FLOPs / p50, tokens/s = T / p50.\n"
		"\n"
		"  --T LIST           sequence lengths, comma-separated [64,128,256,512]\n"
		"  --d-model D        model width [64]; d_head = D / heads\n"
		"  --heads H          heads, dividing D [4]\n"
		"  --kernel LIST      attention kernels: naive, flash1, flash2 [naive,flash2]\n"
		"  --cache SPEC       cache of the traced runs, a spec or preset [host]; a level\n"
		"                     L1=32K:8:64 is Cachegrind's --D1=32768,8,64\n"
		"  --min-time SECONDS work per repetition [0.05]\n"
		"  --reps R           repetitions per op [30]\n"
		"  --seed N           inputs [1]\n"
		"  --out DIR          DIR/results.json (one row per line; a profile's own\n"
		"                     replaced, anyone else's refused) and DIR/manifest.json\n"
		"                     [out/profile]\n"
		"  --json FILE        also {\"manifest\": ..., \"rows\": [...]} to FILE ('-': stdout)\n");
}

/* --T "64,128" into the profile_config at dest; returns 0 or EXIT_USAGE after a message. */
static int
T_value(const char *cmd, const struct optparse_option *opt, const char *text)
{
	struct profile_config *c = opt->dest;
	char *copy = xstrdup(text), *save = NULL;
	int rc = 0;

	c->nT = 0;
	if (!text[0] || text[strlen(text) - 1] == ',')
		rc = usage_error(cmd, "--T: '%s' is not a list of whole numbers", text);
	for (char *item = strtok_r(copy, ",", &save); item && !rc;
	     item = strtok_r(NULL, ",", &save)) {
		if (c->nT == PROFILE_MAX_T)
			rc = usage_error(cmd, "--T: more than %d values", PROFILE_MAX_T);
		else if (!parse_u64(item, &c->T[c->nT++]))
			rc = usage_error(cmd, "--T: '%s' is not a whole number", item);
	}
	free(copy);
	return rc;
}

/* --kernel "naive,flash2" into the profile_config at dest, without repeats; returns 0 or
 * EXIT_USAGE. */
static int
kernels_value(const char *cmd, const struct optparse_option *opt, const char *text)
{
	struct profile_config *c = opt->dest;
	char *copy = xstrdup(text), *save = NULL;
	int rc = 0;

	c->nkernels = 0;
	for (char *item = strtok_r(copy, ",", &save); item && !rc;
	     item = strtok_r(NULL, ",", &save)) {
		enum attn_kernel k;
		bool seen = false;

		if (!attn_kernel_parse(item, &k)) {
			rc = usage_error(
				cmd, "--kernel: unknown kernel '%s' (naive, flash1, flash2)", item);
			break;
		}
		for (unsigned i = 0; i < c->nkernels; i++)
			seen |= c->kernels[i] == k;
		if (!seen && c->nkernels < ATTN_KERNEL_COUNT)
			c->kernels[c->nkernels++] = k;
	}
	free(copy);
	return rc;
}

struct sink {
	const struct profile_config *cfg;
	FILE *text; /* the table */
	FILE *results;
	const char *results_path;
	cJSON *rows; /* for --json; NULL without it */
	unsigned written;
	char err[600];
};

static int
emit_row(const struct profile_row *r, void *ctx)
{
	struct sink *s = ctx;
	cJSON *o = profile_row_json(s->cfg, r);
	char *line = json_text_print(o, false);
	int rc = 0;

	if (!line || fprintf(s->results, "%s\n", line) < 0 || fflush(s->results) != 0) {
		snprintf(s->err, sizeof(s->err), "cannot write %.500s: %s", s->results_path,
			 strerror(errno));
		rc = -EIO;
	} else {
		s->written++;
	}
	free(line);
	fprintf(s->text, "%5llu  %-7s %-10s %10.4f %10.4f %9llu %9.3f %12.1f %8.2f %12.0f\n",
		(unsigned long long)r->T, attn_kernel_name(r->kernel), r->op, r->time.p50 * 1e3,
		r->time.p95 * 1e3, (unsigned long long)r->time.calls, r->flops / r->time.p50 / 1e9,
		(double)r->dram_bytes / 1024.0,
		r->dram_bytes ? r->flops / (double)r->dram_bytes : 0.0, (double)r->T / r->time.p50);
	fflush(s->text);
	if (s->rows)
		cJSON_AddItemToArray(s->rows, o);
	else
		cJSON_Delete(o);
	return rc;
}

int
cmd_profile(int argc, char **argv)
{
	struct profile_config c;
	const char *out = "out/profile", *json = NULL, *cache = NULL;
	uint64_t reps;
	const struct optparse_option opts[] = {
		{ "T", 0, OPTPARSE_CALL, .dest = &c, .call = T_value },
		{ "d-model", 0, OPTPARSE_U64, .dest = &c.d_model },
		{ "heads", 0, OPTPARSE_U64, .dest = &c.heads },
		{ "kernel", 0, OPTPARSE_CALL, .dest = &c, .call = kernels_value },
		{ "cache", 0, OPTPARSE_STRING, .dest = &cache },
		{ "min-time", 0, OPTPARSE_DOUBLE, .dest = &c.min_time,
		  .expect = "a number of seconds" },
		{ "reps", 0, OPTPARSE_U64, .dest = &reps, .min = 1, .max = 100000,
		  .expect = "1 to 100000" },
		{ "seed", 0, OPTPARSE_U64, .dest = &c.seed },
		{ "out", 0, OPTPARSE_STRING, .dest = &out },
		{ "json", 0, OPTPARSE_STRING, .dest = &json },
		{ .name = "help", .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "profile",
					      .usage = usage_profile,
					      .options = opts };
	char err[512];
	bool cache_given;
	int rc;

	profile_config_init(&c);
	reps = c.reps;
	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	c.reps = (unsigned)reps;
	if (optind != argc)
		return usage_error("profile", "unexpected argument '%s'", argv[optind]);
	cache_given = cache != NULL;
	if (!cache)
		cache = "host";
	if (!out[0])
		return usage_error("profile", "--out: empty directory name");
	if (profile_config_check(&c, err, sizeof(err)))
		return usage_error("profile", "%s", err);
	if (spec_parse(cache, &c.spec, err, sizeof(err))) {
		if (cache_given)
			return usage_error("profile", "--cache: %s", err);
		return usage_error("profile",
				   "the default --cache: %s; give --cache with another "
				   "preset (memsim presets) or a spec",
				   err);
	}
	c.spec.cache.seed = c.seed;
	return profile_into(&c, out, json, argc, argv);
}

/* Refuses an --out whose results.json holds rows another command wrote (a sweep's): profile
 * replaces only its own. Its own are those of a directory whose manifest.json is a profile's
 * (written before the first row). Returns 0, or -1 with the reason in err. */
static int
check_own_results(int dirfd, const char *out, char *err, size_t errlen)
{
	struct stat st;
	bool missing;
	cJSON *m;
	const char *who;
	int fd = outdir_file_open(dirfd, out, "results.json", O_RDONLY, err, errlen), rc;

	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return -1;
	rc = fstat(fd, &st);
	close(fd);
	if (rc == 0 && st.st_size == 0)
		return 0;
	m = report_read_json_at(dirfd, out, "manifest.json", &missing, err, errlen);
	who = m ? cJSON_GetStringValue(cJSON_GetObjectItem(m, "experiment")) : NULL;
	if (who && strcmp(who, "memsim profile") == 0) {
		cJSON_Delete(m);
		return 0;
	}
	if (who)
		snprintf(err, errlen,
			 "%s/results.json holds rows memsim profile did not write (the "
			 "directory's manifest.json is %s's): profile into another --out",
			 out, who);
	else if (m || missing)
		snprintf(err, errlen,
			 "%s/results.json holds rows memsim profile did not write (no profile "
			 "manifest.json beside it): profile into another --out",
			 out);
	cJSON_Delete(m);
	return -1;
}

/* The manifest ("complete": false) and an empty results.json in out (dirfd): s->results
 * open on it, *manifest the manifest to complete. */
static int
profile_start(int dirfd, const char *out, const char *path, const struct profile_config *c,
	      struct sink *s, cJSON **manifest, int argc, char **argv)
{
	char err[4600];
	int fd;

	/* The manifest first: whoever finds rows here knows they are a profile's. */
	*manifest = report_manifest_create("memsim profile", argc, argv);
	profile_add_manifest(*manifest, c);
	/* true only once every row is written: `study --resume` redoes a profile cut short. */
	cJSON_AddBoolToObject(*manifest, "complete", false);
	if (report_write_json_at(dirfd, out, "manifest.json", *manifest, err, sizeof(err)))
		return print_error("%s", err);
	fd = outdir_file_open(dirfd, out, "results.json", O_WRONLY | O_CREAT | O_TRUNC, err,
			      sizeof(err));
	s->results = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!s->results) {
		if (fd >= 0) {
			snprintf(err, sizeof(err), "cannot write %s: %s", path, strerror(errno));
			close(fd);
		}
		return print_error("profile: %s", err);
	}
	return EXIT_OK;
}

/* The lines above the table: the layer, the cache of the traced runs, the columns. */
static void
profile_header(FILE *text, const struct profile_config *c)
{
	char buf[1024];

	fprintf(text,
		"memsim profile: d_model=%llu heads=%llu d_head=%llu %s Br=%llu Bc=%llu, %g s x %u "
		"repetitions per op\n",
		(unsigned long long)c->d_model, (unsigned long long)c->heads,
		(unsigned long long)(c->d_model / c->heads), attn_dtype_name(c->dtype),
		(unsigned long long)c->Br, (unsigned long long)c->Bc, c->min_time, c->reps);
	fprintf(text, "DRAM bytes: one traced run from cold under %s%s%s\n",
		c->spec.preset[0] ? c->spec.preset : "the spec", c->spec.preset[0] ? " = " : " ",
		spec_format(&c->spec, buf, sizeof(buf)));
	if (c->spec.source[0])
		fprintf(text, "caches read from %s\n", c->spec.source);
	if (c->spec.note[0])
		fprintf(text, "note: %s\n", c->spec.note);
	fprintf(text, "\n%5s  %-7s %-10s %10s %10s %9s %9s %12s %8s %12s\n", "T", "kernel", "op",
		"p50 ms", "p95 ms", "calls", "GFLOP/s", "DRAM KiB", "FLOP/B", "tokens/s");
	fflush(text);
}

/* Every row written: the manifest says complete, and with json the manifest and the rows go
 * there too (taken from *manifest and s->rows). */
static int
profile_finish(int dirfd, const char *out, const char *json, struct sink *s, cJSON **manifest)
{
	char err[4600];
	int rc = EXIT_OK;

	cJSON_ReplaceItemInObject(*manifest, "complete", cJSON_CreateBool(true));
	if (report_write_json_at(dirfd, out, "manifest.json", *manifest, err, sizeof(err)))
		return print_error("%s", err);
	if (json) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddItemToObject(doc, "manifest", *manifest);
		cJSON_AddItemToObject(doc, "rows", s->rows);
		*manifest = NULL;
		s->rows = NULL;
		if (report_write_json(json, doc, err, sizeof(err)))
			rc = print_error("%s", err);
		cJSON_Delete(doc);
	}
	return rc;
}

int
profile_into(const struct profile_config *cp, const char *out, const char *json, int argc,
	     char **argv)
{
	const struct profile_config c = *cp;
	struct sink s = { 0 };
	char path[4096], mpath[4096], err[4600];
	cJSON *manifest = NULL;
	int rc = EXIT_RUNTIME, dirfd, lock = -1;

	snprintf(path, sizeof(path), "%s/results.json", out);
	snprintf(mpath, sizeof(mpath), "%s/manifest.json", out);
	dirfd = outdir_open(out, err, sizeof(err));
	if (dirfd < 0) {
		print_error("profile: %s", err);
		return EXIT_RUNTIME;
	}
	/* A sweep or profile writing there now would lose rows to this one, or this one's. */
	lock = lock_dir(dirfd, out, err, sizeof(err));
	if (lock < 0 || check_own_results(dirfd, out, err, sizeof(err))) {
		print_error("profile: %s", err);
		goto out;
	}
	s.cfg = &c;
	s.text = text_stream(json);
	s.results_path = path;
	if (profile_start(dirfd, out, path, &c, &s, &manifest, argc, argv))
		goto out;
	if (json)
		s.rows = cJSON_CreateArray();
	profile_header(s.text, &c);
	rc = profile_run(&c, emit_row, &s, err, sizeof(err));
	if (rc) {
		print_error("profile: %s", rc == -EIO ? s.err : err);
		rc = EXIT_RUNTIME;
		goto out;
	}
	if (fflush(s.results) != 0) {
		print_error("cannot write %s: %s", path, strerror(errno));
		rc = EXIT_RUNTIME;
		goto out;
	}
	rc = profile_finish(dirfd, out, json, &s, &manifest);
	if (!rc)
		fprintf(s.text, "\nwrote %u rows to %s; %s\n", s.written, path, mpath);
out:
	if (s.results && fclose(s.results) != 0 && rc == 0) {
		print_error("cannot write %s: %s", path, strerror(errno));
		rc = EXIT_RUNTIME;
	}
	cJSON_Delete(manifest);
	cJSON_Delete(s.rows);
	if (lock >= 0)
		close(lock);
	close(dirfd);
	return rc;
}
