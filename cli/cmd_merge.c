/*
 * `memsim merge`: joins the results of a sweep's shards into one directory.
 */

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/report.h"
#include "analysis/results.h"
#include "cli/commands.h"
#include "measure/ceilings.h"
#include "sim/util.h"

void
usage_merge(FILE *f)
{
	fprintf(f,
		"Usage: memsim merge --out DIR SHARD_DIR...\n"
		"\n"
		"Joins the results.json of several sweep shards into DIR/results.json (one object\n"
		"per line, each configuration once), writes DIR/results.csv and a manifest.json\n"
		"naming the shards.\n");
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
	char *identity; /* sweep_identity() of its sweep_command */
	uint64_t i, n;  /* shard i of n; 0 of 1 for a whole sweep */
};

/* Reads dir/manifest.json into sh. Returns 0 or -1 with the problem in err. */
static int
read_shard(const char *dir, struct shard *sh, char *err, size_t errlen)
{
	char path[4200];
	const char *cmd, *at;
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
		if (i && (strcmp(sh[i].identity, sh[0].identity) || sh[i].n != sh[0].n))
			return usage_error("merge",
					   "%s and %s are shards of different sweeps (their "
					   "manifests' sweep_command differ)",
					   dirs[0], dirs[i]);
	}
	snprintf(path, sizeof(path), "%s/results.json", out);
	if (access(path, F_OK) == 0)
		return usage_error("merge", "%s exists: merge into a new directory", path);
	return 0;
}

/* The merged output and the keys seen so far. */
struct merge {
	FILE *results, *csv;
	char **keys;
	size_t nkeys;
	long runs, dups;
};

static int
merge_row(const cJSON *r, unsigned long line, void *ctx)
{
	struct merge *m = ctx;
	const char *key = results_string(r, "key");
	char *text;
	int rc;

	(void)line;
	for (size_t k = 0; k < m->nkeys; k++)
		if (strcmp(m->keys[k], key) == 0) {
			m->dups++;
			return 0;
		}
	m->keys = xrealloc(m->keys, (m->nkeys + 1) * sizeof(*m->keys));
	m->keys[m->nkeys++] = xstrdup(key);
	text = cJSON_PrintUnformatted(r);
	rc = fprintf(m->results, "%s\n", text) < 0 || results_csv_row(m->csv, r) ? -EIO : 0;
	cJSON_free(text);
	m->runs += rc == 0;
	return rc;
}

int
cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = { { "out", required_argument, NULL, 'o' },
					      { "help", no_argument, NULL, 'h' },
					      { NULL, 0, NULL, 0 } };
	const char *out = NULL;
	char path[4200], err[4600];
	struct merge m;
	struct shard *sh = NULL;
	int opt, rc = EXIT_RUNTIME, lock = -1, dirfd = -1, rfd, cfd;
	cJSON *man = NULL, *shards;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:h", opts, NULL)) != -1) {
		if (opt == 'h') {
			usage_merge(stdout);
			return EXIT_OK;
		}
		if (opt == 'o')
			out = optarg;
		else
			return option_error("merge", opt, argv);
	}
	if (!out)
		return usage_error("merge", "merge needs --out DIR");
	if (optind == argc)
		return usage_error("merge", "merge needs at least one shard directory");
	if (strlen(out) > 4000)
		return usage_error("merge", "--out: the path is too long");
	for (int i = optind; i < argc; i++)
		if (strlen(argv[i]) > 4000)
			return usage_error("merge", "%.100s...: the path is too long", argv[i]);
	memset(&m, 0, sizeof(m));
	sh = xzalloc((size_t)(argc - optind) * sizeof(*sh));
	if ((rc = check_shards(out, argv + optind, argc - optind, sh)))
		goto out;
	rc = EXIT_RUNTIME;
	dirfd = outdir_open(out, err, sizeof(err));
	if (dirfd < 0 || (lock = lock_dir(dirfd, out, err, sizeof(err))) < 0) {
		fprintf(stderr, "memsim: merge: %s\n", err);
		goto out;
	}
	rfd = outdir_file_open(dirfd, out, "results.json", O_WRONLY | O_CREAT | O_TRUNC, err,
			       sizeof(err));
	m.results = rfd >= 0 ? fdopen(rfd, "w") : NULL;
	cfd = m.results ? outdir_file_open(dirfd, out, "results.csv", O_WRONLY | O_CREAT | O_TRUNC,
					   err, sizeof(err))
			: -1;
	m.csv = cfd >= 0 ? fdopen(cfd, "w") : NULL;
	if (!m.results || !m.csv) {
		if (rfd >= 0 && cfd >= 0)
			snprintf(err, sizeof(err), "cannot write in %s: %s", out, strerror(errno));
		fprintf(stderr, "memsim: merge: %s\n", err);
		goto out;
	}
	fputs(results_csv_header, m.csv);
	man = report_manifest_create("memsim merge", argc, argv);
	shards = cJSON_AddArrayToObject(man, "shards");
	for (int i = optind; i < argc; i++) {
		struct results_info info;
		int r;

		snprintf(path, sizeof(path), "%s/results.json", argv[i]);
		r = results_read(path, merge_row, &m, &info, err, sizeof(err));
		if (r == -EIO && !err[0])
			snprintf(err, sizeof(err), "cannot write in %s", out);
		if (r) {
			fprintf(stderr, "memsim: merge: %s\n", err);
			goto out;
		}
		if (info.torn)
			fprintf(stderr, "memsim: merge: %s:%lu: torn last line left out\n", path,
				info.lines);
		cJSON_AddItemToArray(shards, cJSON_CreateString(argv[i]));
	}
	{
		/* The whole sweep, as one command, when every shard is here. */
		uint64_t have = 0;

		for (int i = 0; i < argc - optind; i++)
			if (sh[i].n <= 64)
				have |= UINT64_C(1) << sh[i].i;
		if (sh[0].n <= 64 &&
		    have == (sh[0].n == 64 ? UINT64_MAX : (UINT64_C(1) << sh[0].n) - 1)) {
			char *whole = xzalloc(strlen(sh[0].identity) + strlen(out) + 16);

			sprintf(whole, "%.*s --out %s%s", (int)strlen("memsim sweep"),
				sh[0].identity, out, sh[0].identity + strlen("memsim sweep"));
			cJSON_AddStringToObject(man, "sweep_command", whole);
			free(whole);
		} else {
			fprintf(stderr,
				"memsim: merge: not every shard of %llu is here: the merged "
				"sweep is partial\n",
				(unsigned long long)sh[0].n);
		}
	}
	cJSON_AddNumberToObject(man, "runs", (double)m.runs);
	cJSON_AddNumberToObject(man, "duplicates_dropped", (double)m.dups);
	ceilings_add_hardware(man);
	if (report_write_json_at(dirfd, out, "manifest.json", man, err, sizeof(err))) {
		fprintf(stderr, "memsim: merge: %s\n", err);
		goto out;
	}
	rc = EXIT_OK;
out:
	if (m.results && fclose(m.results) && rc == EXIT_OK) {
		fprintf(stderr, "memsim: merge: cannot write %s/results.json: %s\n", out,
			strerror(errno));
		rc = EXIT_RUNTIME;
	}
	if (m.csv && fclose(m.csv) && rc == EXIT_OK) {
		fprintf(stderr, "memsim: merge: cannot write %s/results.csv: %s\n", out,
			strerror(errno));
		rc = EXIT_RUNTIME;
	}
	cJSON_Delete(man);
	if (lock >= 0)
		close(lock);
	if (dirfd >= 0)
		close(dirfd);
	for (int i = 0; sh && i < argc - optind; i++)
		free(sh[i].identity);
	free(sh);
	for (size_t k = 0; k < m.nkeys; k++)
		free(m.keys[k]);
	free(m.keys);
	if (rc == EXIT_OK)
		printf("merged %ld runs (%ld duplicates dropped) into %s\n", m.runs, m.dups, out);
	return rc;
}
