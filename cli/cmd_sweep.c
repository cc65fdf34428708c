/*
 * `memsim sweep` (the options; the work is cli/sweep.h's) and `memsim merge`.
 */

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/report.h"
#include "analysis/results.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/sweep.h"
#include "measure/ceilings.h"
#include "sim/util.h"

void
usage_sweep(FILE *f)
{
	fprintf(f,
		"Usage: memsim sweep --out DIR [--kernel LIST] [--N LIST] [--d LIST] [--heads LIST]\n"
		"                    [--kv-heads LIST] [--batch LIST] [--dtype LIST] [--Br LIST]\n"
		"                    [--Bc LIST] [--causal[=no,yes]] [--softmax-separate]\n"
		"                    [--cache SPEC]... [--cache-sweep LEVEL=lo:hi:xF] [--no-flush]\n"
		"                    [--seed N] [--jobs J] [--resume] [--shard i/n] [--formula-only]\n"
		"                    [--trace-only] [--separate-runs] [--sample-sets K]\n"
		"\n"
		"Runs every combination of the lists (memsim run for each) on all cores and streams the\n"
		"reports to DIR/results.json (one object per line), DIR/results.csv and\n"
		"DIR/manifest.json. A LIST is values separated by commas, or a range lo:hi:xF\n"
		"(geometric) or lo:hi:+S: --N 256:16384:x2, --kernel naive,flash2, --Br 32,64,128;\n"
		"each value once (a repeat would run one configuration twice). At most %d\n"
		"configurations (the product of the lists' lengths); a plan the kernels take none\n"
		"of is refused.\n"
		"--cache may be given several times (a spec or preset each); --cache-sweep\n"
		"L2=32K:64M:x2 replaces that level's size in each --cache. Defaults: as memsim run,\n"
		"--causal no, --cache lab, --jobs = cores.\n"
		"\n"
		"A --cache-sweep runs each configuration once for all its sizes where the level's\n"
		"input does not depend on its size (levels above simulated once; an LRU last level\n"
		"by one stack pass): the same counters as separate runs. The manifest and each row's\n"
		"\"onepass\" say which pass ran, and why a faster one did not apply.\n"
		"\n"
		"  --resume        skip configurations already in DIR/results.json\n"
		"  --shard i/n     run only configurations i, i + n, i + 2n, ... (0 <= i < n)\n"
		"  --formula-only  evaluate the formulas without simulating (instant, any size)\n"
		"  --trace-only    simulate the kernels' accesses without computing values: the\n"
		"                  same counters, faster, arrays limited by address space only\n"
		"  --separate-runs run every size of a --cache-sweep on its own (no one pass)\n"
		"  --sample-sets K estimates: simulate 1 cache set in K (a power of two), counts\n"
		"                  multiplied by K; rows say \"estimate\" (JSON) and sampled 1/K (CSV),\n"
		"                  and sample_too_small where the sample is too small for 10%%\n"
		"\n"
		"Interrupting keeps every finished run; --resume continues. memsim merge joins shards.\n",
		SWEEP_PLAN_MAX);
}

/* "i/n" with 0 <= i < n, both whole numbers, nothing after them. */
static bool
parse_shard(const char *text, uint64_t *i, uint64_t *n)
{
	const char *slash = strchr(text, '/');
	char head[32];

	if (!slash || (size_t)(slash - text) >= sizeof(head))
		return false;
	memcpy(head, text, (size_t)(slash - text));
	head[slash - text] = '\0';
	return parse_u64(head, i) && parse_u64(slash + 1, n) && *n > 0 && *i < *n;
}

int
cmd_sweep(int argc, char **argv)
{
	enum {
		OPT_OUT = OPT_FIRST_FREE,
		OPT_CACHE_SWEEP,
		OPT_JOBS,
		OPT_RESUME,
		OPT_SHARD,
		OPT_FORMULA_ONLY,
		OPT_TRACE_ONLY,
		OPT_SEPARATE_RUNS,
		OPT_SAMPLE_SETS,
	};
	/* The shared options as lists, but --causal takes an optional list (--causal=no,yes). */
	static const struct option opts[] = {
		{ "kernel", required_argument, NULL, OPT_KERNEL },
		{ "N", required_argument, NULL, OPT_N },
		{ "d", required_argument, NULL, OPT_D },
		{ "heads", required_argument, NULL, OPT_HEADS },
		{ "kv-heads", required_argument, NULL, OPT_KV_HEADS },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "Br", required_argument, NULL, OPT_BR },
		{ "Bc", required_argument, NULL, OPT_BC },
		{ "causal", optional_argument, NULL, OPT_CAUSAL },
		{ "softmax-separate", no_argument, NULL, OPT_SEPARATE },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "no-flush", no_argument, NULL, OPT_NO_FLUSH },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "help", no_argument, NULL, OPT_HELP },
		{ "out", required_argument, NULL, OPT_OUT },
		{ "cache-sweep", required_argument, NULL, OPT_CACHE_SWEEP },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "resume", no_argument, NULL, OPT_RESUME },
		{ "shard", required_argument, NULL, OPT_SHARD },
		{ "formula-only", no_argument, NULL, OPT_FORMULA_ONLY },
		{ "trace-only", no_argument, NULL, OPT_TRACE_ONLY },
		{ "separate-runs", no_argument, NULL, OPT_SEPARATE_RUNS },
		{ "sample-sets", required_argument, NULL, OPT_SAMPLE_SETS },
		{ NULL, 0, NULL, 0 }
	};
	struct sweep_plan p;
	struct sweep_run_options ro;
	const char *cache_sweep = NULL, *caches[SWEEP_CACHES_MAX];
	unsigned ncache_args = 0;
	uint64_t jobs;
	int opt, rc = 0;

	sweep_plan_init(&p);
	sweep_run_options_init(&ro);
	ro.argc = argc;
	ro.argv = argv;
	optind = 1;
	opterr = 0;
	while (!rc && (opt = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_HELP:
			usage_sweep(stdout);
			return EXIT_OK;
		case OPT_OUT:
			ro.out = optarg;
			break;
		case OPT_KERNEL:
			rc = sweep_plan_kernels(&p, optarg);
			break;
		case OPT_DTYPE:
			rc = sweep_plan_dtypes(&p, optarg);
			break;
		case OPT_CAUSAL:
			rc = sweep_plan_causal(&p, optarg);
			break;
		case OPT_N:
			rc = sweep_list_parse("--N", optarg, &p.N, false);
			break;
		case OPT_D:
			rc = sweep_list_parse("--d", optarg, &p.d, false);
			break;
		case OPT_HEADS:
			rc = sweep_list_parse("--heads", optarg, &p.heads, false);
			break;
		case OPT_KV_HEADS:
			rc = sweep_list_parse("--kv-heads", optarg, &p.kv_heads, false);
			p.kv_given = true;
			break;
		case OPT_BATCH:
			rc = sweep_list_parse("--batch", optarg, &p.batch, false);
			break;
		case OPT_BR:
			rc = sweep_list_parse("--Br", optarg, &p.Br, false);
			break;
		case OPT_BC:
			rc = sweep_list_parse("--Bc", optarg, &p.Bc, false);
			break;
		case OPT_SEPARATE:
			p.softmax_separate = true;
			break;
		case OPT_CACHE:
			if (ncache_args == SWEEP_CACHES_MAX)
				rc = usage_error("sweep", "more than %d --cache", SWEEP_CACHES_MAX);
			else
				caches[ncache_args++] = optarg;
			break;
		case OPT_CACHE_SWEEP:
			cache_sweep = optarg;
			break;
		case OPT_NO_FLUSH:
			p.flush = false;
			break;
		case OPT_SEED:
			if (!parse_u64(optarg, &p.seed))
				rc = usage_error("sweep", "--seed: '%s' is not a number", optarg);
			break;
		case OPT_JSON:
			rc = usage_error("sweep", "sweep writes DIR/results.json; use --out DIR");
			break;
		case OPT_JOBS:
			if (!parse_u64(optarg, &jobs) || jobs == 0 || jobs > 256)
				rc = usage_error("sweep", "--jobs: '%s' is not 1 to 256", optarg);
			else
				ro.jobs = (unsigned)jobs;
			break;
		case OPT_RESUME:
			ro.resume = true;
			break;
		case OPT_SHARD:
			if (!parse_shard(optarg, &ro.shard_i, &ro.shard_n))
				rc = usage_error("sweep",
						 "--shard: '%s' is not i/n with 0 <= i < n",
						 optarg);
			break;
		case OPT_FORMULA_ONLY:
			p.simulate = false;
			break;
		case OPT_TRACE_ONLY:
			p.trace_only = true;
			break;
		case OPT_SEPARATE_RUNS:
			p.separate_runs = true;
			break;
		case OPT_SAMPLE_SETS:
			if (!parse_u64(optarg, &jobs) || jobs < 2 || jobs > (UINT64_C(1) << 20) ||
			    !is_pow2(jobs))
				rc = usage_error("sweep",
						 "--sample-sets: '%s' is not a power of two from 2 "
						 "to 2^20",
						 optarg);
			else
				p.sample_sets = (uint32_t)jobs;
			break;
		default:
			rc = option_error("sweep", opt, argv);
			break;
		}
	}
	if (!rc && optind != argc)
		rc = usage_error("sweep", "unexpected argument '%s'", argv[optind]);
	if (!rc && !ro.out)
		rc = usage_error("sweep", "sweep needs --out DIR");
	if (!rc && p.nkernels == 0)
		rc = usage_error("sweep", "sweep needs --kernel LIST");
	if (!rc && p.trace_only && !p.simulate)
		rc = usage_error("sweep", "--trace-only simulates; --formula-only does not");
	if (!rc && p.sample_sets > 1 && !p.simulate)
		rc = usage_error("sweep", "--sample-sets simulates; --formula-only does not");
	if (!rc && ncache_args == 0)
		caches[ncache_args++] = "lab";
	for (unsigned i = 0; i < ncache_args && !rc; i++)
		rc = sweep_plan_cache(&p, caches[i], cache_sweep);
	if (!rc)
		rc = sweep_run(&p, &ro);
	sweep_plan_finish(&p);
	return rc;
}

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
	char path[4200], err[700];
	struct merge m;
	struct shard *sh = NULL;
	int opt, rc = EXIT_RUNTIME, lock = -1;
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
	if ((rc = mkdir_p(out))) {
		print_error("merge: cannot create %s: %s", out, strerror(-rc));
		rc = EXIT_RUNTIME;
		goto out;
	}
	rc = EXIT_RUNTIME;
	lock = lock_dir(out, err, sizeof(err));
	if (lock < 0) {
		print_error("merge: %s", err);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/results.json", out);
	m.results = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/results.csv", out);
	m.csv = fopen(path, "w");
	if (!m.results || !m.csv) {
		print_error("merge: cannot write in %s: %s", out, strerror(errno));
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
			print_error("merge: %s", err);
			goto out;
		}
		if (info.torn)
			print_error("merge: %s:%lu: torn last line left out", path, info.lines);
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
			print_error("merge: not every shard of %llu is here: the merged "
				    "sweep is partial",
				    (unsigned long long)sh[0].n);
		}
	}
	cJSON_AddNumberToObject(man, "runs", (double)m.runs);
	cJSON_AddNumberToObject(man, "duplicates_dropped", (double)m.dups);
	ceilings_add_hardware(man);
	snprintf(path, sizeof(path), "%s/manifest.json", out);
	if (report_write_json(path, man, err, sizeof(err))) {
		print_error("merge: %s", err);
		goto out;
	}
	rc = EXIT_OK;
out:
	if (m.results && fclose(m.results) && rc == EXIT_OK) {
		print_error("merge: cannot write %s/results.json: %s", out, strerror(errno));
		rc = EXIT_RUNTIME;
	}
	if (m.csv && fclose(m.csv) && rc == EXIT_OK) {
		print_error("merge: cannot write %s/results.csv: %s", out, strerror(errno));
		rc = EXIT_RUNTIME;
	}
	cJSON_Delete(man);
	if (lock >= 0)
		close(lock);
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
