/*
 * `memsim merge`: joins the results of a sweep's shards into one directory.
 */

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/json_text.h"
#include "analysis/report.h"
#include "analysis/results.h"
#include "base/name_index.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/optparse.h"
#include "measure/ceilings.h"

void
usage_merge(FILE *f)
{
	fprintf(f,
		"Usage: memsim merge --out DIR [--allow-partial] SHARD_DIR...\n"
		"\n"
		"Joins the results.json of several sweep shards into DIR/results.json (one object\n"
		"per line, each configuration once: a successful row before a failed one), writes\n"
		"DIR/results.csv and a manifest.json naming the shards. Each file is written under a\n"
		"temporary name and renamed into place at the end, manifest.json last: an\n"
		"interrupted merge leaves no results.json, and running it again completes it.\n"
		"\n"
		"The merge is partial when a shard i of n is missing, when one holds fewer rows than\n"
		"its share of the plan (configurations i, i + n, ... of its manifest's\n"
		"config.configurations), or when a configuration has only failed rows (\"error\"):\n"
		"the manifest then says \"complete\": false and why (\"partial_reason\"), records\n"
		"no sweep_command, and merge says so and exits 1.\n"
		"\n"
		"Rows of two model revisions (each row's model_revision: memsim's version and model,\n"
		"whose numbers may differ) are not merged, nor a plugin's rows of two builds of it\n"
		"(each row's plugin_hash: its file's hash): exit 2, naming both. The manifest records\n"
		"the rows' model_revision and plugin_hash.\n"
		"\n"
		"  --allow-partial  exit 0 for a partial merge (labelled partial all the same)\n");
}

/* A sweep's command without its --out and --shard words: what every shard of one sweep
 * shares. Words are split as the shell would (the command is written shell-quoted). Caller
 * frees with free(). */
static char *
sweep_identity(const char *cmd)
{
	char *out = xzalloc(strlen(cmd) + 1), *o = out;
	const char *p = cmd;
	int skip = 0;

	while (*p) {
		const char *start;
		bool quoted = false;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		start = p;
		for (; *p && (quoted || *p != ' '); p++)
			if (*p == '\'')
				quoted = !quoted;
		if (skip) {
			skip--;
			continue;
		}
		if ((size_t)(p - start) == 5 && strncmp(start, "--out", 5) == 0) {
			skip = 1;
			continue;
		}
		if ((size_t)(p - start) == 7 && strncmp(start, "--shard", 7) == 0) {
			skip = 1;
			continue;
		}
		if (o != out)
			*o++ = ' ';
		memcpy(o, start, (size_t)(p - start));
		o += p - start;
	}
	*o = '\0';
	return out;
}

/* What a shard directory's manifest says of its sweep. */
struct shard {
	char *identity;   /* sweep_identity() of its sweep_command */
	uint64_t i, n;    /* shard i of n; 0 of 1 for a whole sweep */
	uint64_t total;   /* the whole plan's configurations (config.configurations) */
	bool has_total;   /* false when the manifest does not give it */
	uint64_t ok_rows; /* configurations of this shard first seen here with a good row */
	const char *dir;  /* as given */
};

/* Reads dir/manifest.json into sh. Returns 0 or -1 with the problem in err. */
static int
read_shard(const char *dir, struct shard *sh, char *err, size_t errlen)
{
	char path[4200];
	const char *cmd, *at;
	double total;
	cJSON *m;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = report_read_json(path, err, errlen);
	if (!m)
		return -1;
	cmd = results_string(m, "sweep_command");
	if (!*cmd) {
		snprintf(err, errlen, "%.500s has no sweep_command: not a sweep's manifest", path);
		cJSON_Delete(m);
		return -1;
	}
	sh->identity = sweep_identity(cmd);
	sh->i = 0;
	sh->n = 1;
	total = results_number(m, "config.configurations", -1);
	sh->has_total = total >= 0 && total < 9007199254740992.0 && floor(total) == total;
	sh->total = sh->has_total ? (uint64_t)total : 0;
	at = strstr(cmd, " --shard ");
	if (at) {
		char word[64];

		at += strlen(" --shard ");
		snprintf(word, sizeof(word), "%.*s", (int)strcspn(at, " "), at);
		if (!parse_shard(word, &sh->i, &sh->n)) {
			snprintf(err, errlen, "%.500s: bad --shard in its sweep_command", path);
			cJSON_Delete(m);
			free(sh->identity);
			sh->identity = NULL;
			return -1;
		}
	}
	cJSON_Delete(m);
	return 0;
}

/* Refuses a merge that would overwrite a shard or mix sweeps; 0 or EXIT_USAGE after a
 * message. */
static int
check_shards(const char *out, char **dirs, int n, struct shard *sh)
{
	struct stat so, sd;
	bool out_exists = stat(out, &so) == 0;
	char err[700], path[4200];

	for (int i = 0; i < n; i++) {
		if (stat(dirs[i], &sd) != 0 || !S_ISDIR(sd.st_mode))
			return usage_error("merge", "%s is not a directory", dirs[i]);
		if (out_exists && sd.st_dev == so.st_dev && sd.st_ino == so.st_ino)
			return usage_error("merge",
					   "--out %s is also a shard: merge into another directory",
					   out);
		if (read_shard(dirs[i], &sh[i], err, sizeof(err)))
			return usage_error("merge", "%s", err);
		if (i && (strcmp(sh[i].identity, sh[0].identity) || sh[i].n != sh[0].n ||
			  sh[i].has_total != sh[0].has_total || sh[i].total != sh[0].total))
			return usage_error("merge",
					   "%s and %s are shards of different sweeps (their "
					   "manifests' sweep_command differ)",
					   dirs[0], dirs[i]);
	}
	/* lstat: a link there, dangling or not, is something this merge did not write. */
	snprintf(path, sizeof(path), "%s/results.json", out);
	if (lstat(path, &sd) == 0)
		return usage_error("merge", "%s exists: merge into a new directory", path);
	return 0;
}

#define MERGE_KEYS_MAX (UINT32_C(1) << 30)
#define MERGE_PARAMS_MAX 32 /* as PLUGIN_MAX_PARAMS */

/* What is known of a configuration's key. */
enum key_state {
	KEY_WRITTEN, /* a good row is in the output */
	KEY_FAILED,  /* only failed rows so far: the first is held, written at the end */
};

/* The merged output, the keys seen so far (a hash index over them: O(1) a row), and the
 * shard being read. */
struct merge {
	FILE *results, *csv; /* temporaries, renamed into place at the end */
	char **keys;
	unsigned char *state; /* enum key_state of each key */
	cJSON **held;         /* each KEY_FAILED key's first row */
	size_t nkeys, cap;
	struct name_index index;
	long runs, dups, failed;
	long estimates, sample_too_small; /* rows of --sample-sets, and those over its bound */
	struct shard *shard;
	/* A plugin sweep's --param keys (the first plugin row's config.params), a column each in
	 * results.csv as the sweep writes it; owned. */
	char *param_keys[MERGE_PARAMS_MAX];
	unsigned nparams;
	/* The model revision of the good rows (report_row_revision()), and the first shard with
	 * one; a row of another stops the merge, saying so in mixed. */
	char revision[160];
	const char *revision_dir;
	/* The same for a plugin's rows: the build that made them (plugin_hash, "" where they
	 * record none). */
	char plugin_hash[40];
	const char *plugin_dir;
	char mixed[2048];
	/* The first write that failed: the file (as named in --out) and errno. */
	const char *write_failed;
	int write_errno;
};

static const char *
key_at(const void *owner, uint32_t i)
{
	return ((const struct merge *)owner)->keys[i];
}

/* Writes row r to the merged results.json and results.csv. Returns 0 or -EIO. */
static int
write_row(struct merge *m, const cJSON *r)
{
	char *text = json_text_print(r, false);
	int rc = 0;

	errno = 0;
	if (!text || fprintf(m->results, "%s\n", text) < 0)
		m->write_failed = "results.json";
	else if (results_csv_row_params(m->csv, r, (const char *const *)m->param_keys, m->nparams))
		m->write_failed = "results.csv";
	if (m->write_failed) {
		m->write_errno = errno ? errno : EIO;
		rc = -EIO;
	}
	free(text);
	m->runs += rc == 0;
	if (rc == 0 && cJSON_GetObjectItemCaseSensitive(r, "estimate")) {
		m->estimates++;
		m->sample_too_small += results_true(r, "estimate.sample_too_small");
	}
	return rc;
}

/* Is row r's configuration index one of its shard's, i, i + n, ... below the plan's count? */
static bool
index_of_shard(const cJSON *r, const struct shard *sh)
{
	double idx = results_number(r, "index", -1);

	return sh->has_total && idx >= 0 && floor(idx) == idx && idx < (double)sh->total &&
	       (uint64_t)idx % sh->n == sh->i;
}

/* Whether good row r is of the revision of the good rows before it (the first sets it); where
 * not, m->mixed says which shards hold which. */
static bool
same_revision(struct merge *m, const cJSON *r, unsigned long line)
{
	char rev[160];

	report_row_revision(r, rev, sizeof(rev));
	if (!m->revision_dir) {
		snprintf(m->revision, sizeof(m->revision), "%s", rev);
		m->revision_dir = m->shard->dir;
		return true;
	}
	if (strcmp(rev, m->revision) == 0)
		return true;
	snprintf(m->mixed, sizeof(m->mixed),
		 "%.300s holds rows of model revision (%s) and %.300s/results.json:%lu of another "
		 "(%s): rows of two revisions of memsim's model are not merged; run the shards of "
		 "one again with the other's memsim (memsim sweep ... --resume "
		 "--rerun-other-revisions)",
		 m->revision_dir, m->revision, m->shard->dir, line, rev);
	return false;
}

/* Whether good row r, where it is a plugin's, was made by the build of the plugin the good
 * plugin rows before it record (the first sets it); where not, m->mixed says which shards hold
 * which. */
static bool
same_plugin(struct merge *m, const cJSON *r, unsigned long line)
{
	const char *plugin = results_string(r, "config.plugin");
	const char *hash = results_string(r, "plugin_hash");

	if (!plugin[0])
		return true;
	if (!m->plugin_dir) {
		snprintf(m->plugin_hash, sizeof(m->plugin_hash), "%s", hash);
		m->plugin_dir = m->shard->dir;
		return true;
	}
	if (strcmp(hash, m->plugin_hash) == 0)
		return true;
	snprintf(m->mixed, sizeof(m->mixed),
		 "%.300s holds rows of plugin %.300s as one build of it made them (%s) and "
		 "%.300s/results.json:%lu as another (%s): the plugin changed between them, and "
		 "rows of two builds are not merged; run the shards of one again with the other "
		 "build (memsim sweep ... --resume --rerun-other-revisions)",
		 m->plugin_dir, plugin, m->plugin_hash[0] ? m->plugin_hash : "none recorded",
		 m->shard->dir, line, hash[0] ? hash : "none recorded");
	return false;
}

static int
merge_row(const cJSON *r, unsigned long line, void *ctx)
{
	struct merge *m = ctx;
	const char *key = results_string(r, "key");
	bool failed = cJSON_GetObjectItem(r, "error") != NULL;
	int64_t k;

	/* A failed row has no numbers to mix. */
	if (!failed && (!same_revision(m, r, line) || !same_plugin(m, r, line)))
		return 1;
	k = name_index_find(&m->index, key);
	if (k >= 0 && (m->state[k] == KEY_WRITTEN || failed)) {
		m->dups++;
		return 0;
	}
	if (k < 0) {
		/* name_index holds up to 2^31 slots, at most half full. */
		if (m->nkeys == MERGE_KEYS_MAX)
			return -EOVERFLOW;
		if (m->nkeys == m->cap) {
			m->cap = m->cap ? 2 * m->cap : 1024;
			m->keys = xrealloc(m->keys, m->cap * sizeof(*m->keys));
			m->state = xrealloc(m->state, m->cap * sizeof(*m->state));
			m->held = xrealloc(m->held, m->cap * sizeof(*m->held));
		}
		k = (int64_t)m->nkeys++;
		m->keys[k] = xstrdup(key);
		m->held[k] = NULL;
		name_index_add(&m->index, m->keys[k], (uint32_t)k);
	} else {
		/* A good row after a failed one (a run retried): the good one is kept. */
		cJSON_Delete(m->held[k]);
		m->held[k] = NULL;
		m->dups++;
	}
	if (failed) {
		m->state[k] = KEY_FAILED;
		m->held[k] = cJSON_Duplicate(r, true);
		return 0;
	}
	m->state[k] = KEY_WRITTEN;
	m->shard->ok_rows += index_of_shard(r, m->shard);
	return write_row(m, r);
}

/* Writes the rows of the configurations that only failed, after every good row. */
static int
write_held(struct merge *m)
{
	for (size_t k = 0; k < m->nkeys; k++) {
		if (m->state[k] != KEY_FAILED)
			continue;
		m->failed++;
		if (write_row(m, m->held[k]))
			return -EIO;
	}
	return 0;
}

static void
merge_finish(struct merge *m)
{
	for (size_t k = 0; k < m->nkeys; k++) {
		free(m->keys[k]);
		cJSON_Delete(m->held[k]);
	}
	free(m->keys);
	free(m->state);
	free(m->held);
	for (unsigned i = 0; i < m->nparams; i++)
		free(m->param_keys[i]);
	name_index_finish(&m->index);
}

/* Appends "; " and the formatted text to buf (of size len), as far as it fits. */
__attribute__((format(printf, 3, 4))) static void
add_reason(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used && used + 2 < len) {
		strcpy(buf + used, "; ");
		used += 2;
	}
	va_start(ap, fmt);
	if (used < len)
		vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* Why the merged sweep is partial, into why ("" when complete): shards missing, shards short
 * of their share of the plan, configurations that only failed. */
static void
partial_reason(const struct shard *sh, int nsh, long failed, char *why, size_t len)
{
	uint64_t n = sh[0].n, present = 0, missing_listed = 0, short_listed = 0;

	why[0] = '\0';
	if (!sh[0].has_total)
		add_reason(why, len,
			   "the shards' manifests give no config.configurations: "
			   "completeness unknown");
	/* Each shard index once, with the good rows of every directory holding it. */
	for (int a = 0; a < nsh; a++) {
		uint64_t ok = 0, want;
		bool first = true;

		for (int b = 0; b < nsh; b++) {
			if (sh[b].i != sh[a].i)
				continue;
			first &= b >= a;
			ok += sh[b].ok_rows;
		}
		if (!first)
			continue;
		present++;
		want = sh[a].i < sh[a].total ? (sh[a].total - 1 - sh[a].i) / n + 1 : 0;
		if (sh[a].has_total && ok < want && short_listed++ < 4)
			add_reason(why, len,
				   "shard %llu/%llu holds %llu of its %llu configurations",
				   (unsigned long long)sh[a].i, (unsigned long long)n,
				   (unsigned long long)ok, (unsigned long long)want);
	}
	if (short_listed > 4)
		add_reason(why, len, "%llu more shards short",
			   (unsigned long long)(short_listed - 4));
	if (present < n) {
		add_reason(why, len, "%llu of %llu shards missing (",
			   (unsigned long long)(n - present), (unsigned long long)n);
		for (uint64_t i = 0; i < n && missing_listed < 8; i++) {
			bool here = false;

			for (int a = 0; a < nsh && !here; a++)
				here = sh[a].i == i;
			if (!here) {
				size_t used = strlen(why);

				snprintf(why + used, len - used, "%s%llu",
					 missing_listed ? ", " : "", (unsigned long long)i);
				missing_listed++;
			}
		}
		if (n - present > missing_listed)
			strncat(why, ", ...", len - strlen(why) - 1);
		strncat(why, ")", len - strlen(why) - 1);
	}
	if (failed)
		add_reason(why, len, "%ld configuration%s only failed (rows with \"error\")",
			   failed, failed == 1 ? "" : "s");
}

/* Takes the keys of row r's config.params, where it has them, into m; 1 then (stops). */
static int
take_params(const cJSON *r, unsigned long line, void *ctx)
{
	struct merge *m = ctx;
	const cJSON *params = results_get(r, "config.params"), *p;

	if (!cJSON_IsObject(params))
		return 0;
	cJSON_ArrayForEach (p, params)
		if (m->nparams < MERGE_PARAMS_MAX)
			m->param_keys[m->nparams++] = xstrdup(p->string);
	return 1;
}

/* The --param keys of the shards' plugin sweep into m (none for built-in kernels), from the
 * first shard with a plugin row: every shard is of one sweep (check_shards()). A shard that
 * cannot be read is said by read_shards(). */
static void
find_params(struct merge *m, char **dirs, int n)
{
	char path[4200], err[700];

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/results.json", dirs[i]);
		if (results_read(path, take_params, m, NULL, err, sizeof(err)) == 1)
			return;
	}
}

/* Reads every shard's rows into the temporaries of m. Returns 0, or -1 (EXIT_USAGE for rows of
 * two model revisions) after a message. */
static int
read_shards(struct merge *m, char **dirs, int n, struct shard *sh, cJSON *names, const char *out)
{
	char path[4200], err[700];

	for (int i = 0; i < n; i++) {
		struct results_info info;
		int r;

		snprintf(path, sizeof(path), "%s/results.json", dirs[i]);
		m->shard = &sh[i];
		sh[i].dir = dirs[i];
		err[0] = '\0';
		r = results_read(path, merge_row, m, &info, err, sizeof(err));
		if (r == 1)
			return usage_error("merge", "%s", m->mixed);
		if (r == -EIO && m->write_failed)
			snprintf(err, sizeof(err), "cannot write %s/%s: %s", out, m->write_failed,
				 strerror(m->write_errno));
		if (r == -EOVERFLOW)
			snprintf(err, sizeof(err), "more than %lu configurations",
				 (unsigned long)MERGE_KEYS_MAX);
		if (r) {
			print_error("merge: %s", err);
			return -1;
		}
		if (info.torn)
			print_error("merge: %s:%lu: torn last line left out", path,
				info.lines);
		cJSON_AddItemToArray(names, cJSON_CreateString(dirs[i]));
	}
	if (write_held(m)) {
		print_error("merge: cannot write %s/%s: %s", out, m->write_failed,
			    strerror(m->write_errno));
		return -1;
	}
	return 0;
}

/* The merge's manifest: the shards, the counts, and whether the sweep is whole: then its
 * command, as one sweep into out; else "complete": false and why. Caller frees. */
static cJSON *
merge_manifest(const struct merge *m, const struct shard *sh, const char *why, cJSON *names,
	       const char *out, int argc, char **argv)
{
	cJSON *man = report_manifest_create("memsim merge", argc, argv);

	cJSON_AddItemToObject(man, "shards", names);
	/* The revision the rows record, which may be an older memsim's than this merge's (none
	 * where the rows record none), in place of the header's. */
	if (m->revision_dir)
		cJSON_ReplaceItemInObjectCaseSensitive(man, "model_revision",
						       cJSON_CreateString(m->revision));
	else
		cJSON_DeleteItemFromObjectCaseSensitive(man, "model_revision");
	if (m->plugin_dir && m->plugin_hash[0])
		cJSON_AddStringToObject(man, "plugin_hash", m->plugin_hash);
	cJSON_AddBoolToObject(man, "complete", !why[0]);
	if (why[0]) {
		cJSON_AddStringToObject(man, "partial_reason", why);
	} else {
		char *whole = xzalloc(strlen(sh[0].identity) + strlen(out) + 16);

		sprintf(whole, "%.*s --out %s%s", (int)strlen("memsim sweep"), sh[0].identity, out,
			sh[0].identity + strlen("memsim sweep"));
		cJSON_AddStringToObject(man, "sweep_command", whole);
		free(whole);
	}
	if (sh[0].has_total)
		cJSON_AddNumberToObject(man, "configurations", (double)sh[0].total);
	cJSON_AddNumberToObject(man, "runs", (double)m->runs);
	cJSON_AddNumberToObject(man, "runs_failed", (double)m->failed);
	cJSON_AddNumberToObject(man, "duplicates_dropped", (double)m->dups);
	/* As a sweep's manifest says it: estimates, and those too small for their bound. */
	if (m->estimates) {
		cJSON_AddNumberToObject(man, "estimates", (double)m->estimates);
		cJSON_AddNumberToObject(man, "sample_too_small", (double)m->sample_too_small);
	}
	ceilings_add_hardware(man);
	return man;
}

/* Closes temporary f and renames it over name in dirfd. Returns 0, or -1 after
 * a message; the temporary is gone either way. */
static int
commit(FILE **f, int dirfd, const char *out, const char *tmp, const char *name)
{
	char err[4600];
	int rc = fclose(*f);

	*f = NULL;
	if (rc) {
		print_error("merge: cannot write %s/%s: %s", out, name,
			strerror(errno));
		unlinkat(dirfd, tmp, 0);
		return -1;
	}
	if (outdir_temp_commit(dirfd, out, tmp, name, err, sizeof(err))) {
		print_error("merge: %s", err);
		return -1;
	}
	return 0;
}

/* Opens a temporary for name in dirfd as a stream; NULL after a message. */
static FILE *
temp_stream(int dirfd, const char *out, const char *name, char *tmp, size_t tmplen)
{
	char err[4600];
	int fd = outdir_temp_open(dirfd, out, name, tmp, tmplen, err, sizeof(err));
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (fd < 0) {
		print_error("merge: %s", err);
	} else if (!f) {
		print_error("merge: cannot write %s/%s: %s", out, name,
			strerror(errno));
		close(fd);
		unlinkat(dirfd, tmp, 0);
	}
	return f;
}

/* merge's options: --out DIR, --allow-partial and the shard directories from optind on.
 * Returns 0, OPTPARSE_HELP_SHOWN after --help, or usage_error()'s code. */
static int
merge_args(int argc, char **argv, const char **out, bool *allow_partial)
{
	const struct optparse_option opts[] = {
		{ "out", 'o', OPTPARSE_STRING, .dest = out },
		{ "allow-partial", 0, OPTPARSE_FLAG, .dest = allow_partial },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "merge",
					      .usage = usage_merge,
					      .options = opts };
	int rc;

	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc;
	if (!*out)
		return usage_error("merge", "merge needs --out DIR");
	if (optind == argc)
		return usage_error("merge", "merge needs at least one shard directory");
	if (strlen(*out) > 4000)
		return usage_error("merge", "--out: the path is too long");
	for (int i = optind; i < argc; i++)
		if (strlen(argv[i]) > 4000)
			return usage_error("merge", "%.100s...: the path is too long", argv[i]);
	return 0;
}

int
cmd_merge(int argc, char **argv)
{
	const char *out = NULL;
	char rtmp[4200], ctmp[4200], err[4600], why[1024];
	struct merge m;
	struct shard *sh = NULL;
	bool allow_partial = false;
	struct stat st;
	int rc, lock = -1, dirfd = -1, nsh;
	cJSON *man = NULL, *names = NULL;

	if ((rc = merge_args(argc, argv, &out, &allow_partial)))
		return rc < 0 ? EXIT_OK : rc;
	memset(&m, 0, sizeof(m));
	name_index_init(&m.index, &m, key_at);
	nsh = argc - optind;
	sh = xzalloc((size_t)nsh * sizeof(*sh));
	rtmp[0] = ctmp[0] = '\0';
	if ((rc = check_shards(out, argv + optind, nsh, sh)))
		goto out;
	rc = EXIT_RUNTIME;
	dirfd = outdir_open(out, err, sizeof(err));
	if (dirfd < 0 || (lock = lock_dir(dirfd, out, err, sizeof(err))) < 0) {
		print_error("merge: %s", err);
		goto out;
	}
	/* Again under the lock: another merge may have finished there meanwhile. */
	if (fstatat(dirfd, "results.json", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		rc = usage_error("merge", "%s/results.json exists: merge into a new directory",
				 out);
		goto out;
	}
	m.results = temp_stream(dirfd, out, "results.json", rtmp, sizeof(rtmp));
	m.csv = m.results ? temp_stream(dirfd, out, "results.csv", ctmp, sizeof(ctmp)) : NULL;
	if (!m.results || !m.csv)
		goto out;
	find_params(&m, argv + optind, nsh);
	results_csv_header_params(m.csv, (const char *const *)m.param_keys, m.nparams);
	names = cJSON_CreateArray();
	if ((rc = read_shards(&m, argv + optind, nsh, sh, names, out))) {
		rc = rc == EXIT_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
		goto out;
	}
	rc = EXIT_RUNTIME;
	partial_reason(sh, nsh, m.failed, why, sizeof(why));
	man = merge_manifest(&m, sh, why, names, out, argc, argv);
	names = NULL;
	/* The manifest last: a results.json in place means the rows are whole. */
	if (commit(&m.csv, dirfd, out, ctmp, "results.csv") ||
	    commit(&m.results, dirfd, out, rtmp, "results.json"))
		goto out;
	if (report_write_json_at(dirfd, out, "manifest.json", man, err, sizeof(err))) {
		print_error("merge: %s", err);
		goto out;
	}
	printf("merged %ld runs (%ld duplicates dropped) into %s%s\n", m.runs, m.dups, out,
	       why[0] ? ": partial" : "");
	if (m.sample_too_small)
		print_error("merge: warning: %ld of %ld estimates sampled too few chunks for their "
			    "10%% bound (estimate.sample_too_small in results.json)",
			    m.sample_too_small, m.estimates);
	if (why[0])
		print_error("merge: the merged sweep is partial: %s%s", why,
			allow_partial ? "" : " (--allow-partial accepts it)");
	rc = why[0] && !allow_partial ? EXIT_RUNTIME : EXIT_OK;
out:
	/* A merge that did not finish leaves no temporary behind. */
	if (m.results) {
		fclose(m.results);
		unlinkat(dirfd, rtmp, 0);
	}
	if (m.csv) {
		fclose(m.csv);
		unlinkat(dirfd, ctmp, 0);
	}
	cJSON_Delete(man);
	cJSON_Delete(names);
	if (lock >= 0)
		close(lock);
	if (dirfd >= 0)
		close(dirfd);
	for (int i = 0; sh && i < nsh; i++)
		free(sh[i].identity);
	free(sh);
	merge_finish(&m);
	return rc;
}
