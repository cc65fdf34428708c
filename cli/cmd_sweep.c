/*
 * `memsim sweep`: the options; the work is cli/sweep.h's.
 */

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/sweep.h"
#include "cli/sweep_slurm.h"
#include "sim/util.h"

void
usage_sweep(FILE *f)
{
	fprintf(f,
		"Usage: memsim sweep --out DIR [--kernel LIST] [--N LIST] [--N-kv LIST] [--d LIST]\n"
		"                    [--splits LIST] [--kv-page LIST] [--heads LIST] [--kv-heads LIST] [--batch LIST] [--dtype LIST]\n"
		"                    [--Br LIST] [--Bc LIST] [--causal[=no,yes]] [--softmax-separate]\n"
		"                    [--cache SPEC]... [--cache-sweep LEVEL=lo:hi:xF] [--no-flush]\n"
		"                    [--seed N] [--jobs J] [--resume] [--shard i/n] [--formula-only]\n"
		"                    [--trace-only] [--separate-runs] [--sample-sets K]\n"
		"                    [--kernel PATH [--param KEY=VALUE]...]\n"
		"                    [--slurm N [--slurm-args \"...\"] [--dry-run]]\n"
		"       memsim sweep --status DIR\n"
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
		"--causal no, --cache lab, --jobs = cores; --N-kv = N (a list: each N against each\n"
		"N_kv; flash1 and proj take N_kv = N, --causal N <= N_kv: the rest are left out);\n"
		"--splits (flashdecode's S, a list; other kernels run once) = as memsim run: the\n"
		"heuristic on an h100 cache, else 1; S past the key blocks is clamped to them;\n"
		"--kv-page (flash2's and flashdecode's page of P tokens, a list; other kernels run\n"
		"once, unpaged) = unpaged.\n"
		"--kernel PATH sweeps a kernel plugin (docs/library.md) instead, with its own\n"
		"--param KEY=VALUE (repeatable); its keys name the path and the params. A plugin\n"
		"that crashes fails that row (the signal in its \"error\"), never the others.\n"
		"\n"
		"A --cache-sweep runs each configuration once for all its sizes where the level's\n"
		"input does not depend on its size (levels above simulated once; an LRU last level\n"
		"by one stack pass): the same counters as separate runs. The manifest and each row's\n"
		"\"onepass\" say which pass ran, and why a faster one did not apply. Every size\n"
		"keeps the ways --cache gives that level (N, or full), also where N makes one set.\n"
		"Where the models of all sizes would not fit in the memory left (RLIMIT_AS,\n"
		"RLIMIT_DATA, MemAvailable; MEMSIM_MEMORY=16G replaces them; the --jobs workers\n"
		"share MemAvailable or MEMSIM_MEMORY, each gets its part), the sizes run in\n"
		"passes that fit, down to one at a time; a size whose model cannot be allocated is\n"
		"its row's error.\n"
		"\n"
		"  --resume        skip configurations already in DIR/results.json; failed ones\n"
		"                  run again; rows of another mode (--no-flush, --seed,\n"
		"                  --trace-only, --formula-only, --sample-sets) are refused,\n"
		"                  and so is a DIR whose manifest.json records another mode\n"
		"  --shard i/n     run only configurations i, i + n, i + 2n, ... (0 <= i < n)\n"
		"  --formula-only  evaluate the formulas without simulating (instant, any size)\n"
		"  --trace-only    simulate the kernels' accesses without computing values: the\n"
		"                  same counters, faster, arrays limited by address space only\n"
		"  --separate-runs run every size of a --cache-sweep on its own (no one pass)\n"
		"  --sample-sets K estimates: simulate 1 cache set in K (a power of two), counts\n"
		"                  multiplied by K; rows say \"estimate\" (JSON) and sampled 1/K (CSV),\n"
		"                  and sample_too_small where the sample is too small for 10%%\n"
		"\n"
		"Interrupting keeps every finished run; --resume continues. memsim merge joins shards.\n"
		"\n"
		"On a Slurm cluster (docs/cluster.md; DIR on a filesystem the nodes share):\n"
		"  --slurm N       write DIR/slurm/sweep.sbatch, a job array of N tasks (task i runs\n"
		"                  this sweep's shard i/N into DIR/shards/i with --resume), and\n"
		"                  merge.sbatch (memsim merge of the shards into DIR); submit both\n"
		"                  with sbatch, the merge afterok on the array; record the job ids\n"
		"                  in DIR/slurm/jobs.json. The same command again submits only the\n"
		"                  shards whose manifest is not complete, and a new merge (the\n"
		"                  merge alone once all are); another plan or N is refused. N is 1\n"
		"                  to %d. Each task: --jobs workers [1 with --slurm],\n"
		"                  --cpus-per-task = --jobs, --mem from the largest configuration's\n"
		"                  arrays and cache models. No --shard or --resume with it.\n"
		"  --slurm-args S  more sbatch options for both jobs (-p PART --time=1:00:00 -A ACCT\n"
		"                  --mem=8G: these win), split as a shell splits words\n"
		"  --dry-run       write the scripts and print the sbatch commands; submit nothing\n"
		"  --status DIR    each shard's rows done/total and its task's state (squeue, sacct,\n"
		"                  else the files alone), and the merge job's\n"
		"MEMSIM_SBATCH, MEMSIM_SQUEUE, MEMSIM_SACCT, MEMSIM_SCANCEL name other programs\n"
		"[sbatch, squeue, sacct, scancel on PATH].\n",
		SWEEP_PLAN_MAX, SWEEP_SLURM_MAX_TASKS);
}

bool
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

/* --kernel: a list of built-in kernels, or one plugin's path (loaded now: a file that is not
 * a plugin is a usage error before any run, and the workers inherit it). */
static int
sweep_kernel(struct sweep_plan *p, const char *arg)
{
	char err[1024];

	if (!plugin_path_like(arg)) {
		if (p->plugin.p)
			return usage_error("sweep", "--kernel: a plugin or built-in kernels, not both");
		return sweep_plan_kernels(p, arg);
	}
	if (p->plugin.p || p->nkernels)
		return usage_error("sweep", "--kernel %s: one plugin a sweep, without built-in "
					    "kernels",
				   arg);
	if (plugin_load(&p->plugin, arg, false, err, sizeof(err)))
		return usage_error("sweep", "%s", err);
	p->kernels[0] = ATTN_FLASH2; /* unused: the plugin runs */
	p->nkernels = 1;
	return 0;
}

/* What a plugin's sweep cannot have. */
static int
sweep_plugin_check(const struct sweep_plan *p)
{
	char err[1024];

	if (!p->plugin.p)
		return p->params.n ? usage_error("sweep", "--param is for plugins (--kernel PATH)")
				   : 0;
	if (plugin_params_check(&p->plugin, &p->params, err, sizeof(err)))
		return usage_error("sweep", "%s", err);
	if (!p->simulate || p->trace_only)
		return usage_error("sweep", "a plugin is simulated: no --formula-only or "
					    "--trace-only");
	if (p->softmax_separate)
		return usage_error("sweep", "--softmax-separate is for naive");
	if (p->nkv_given)
		return usage_error("sweep", "--N-kv: a kernel plugin takes N_kv = N only");
	if (p->splits_given)
		return usage_error("sweep", "--splits is for --kernel flashdecode");
	if (p->kv_page_given)
		return usage_error("sweep",
				   "--kv-page is for --kernel flash2 or flashdecode, not a plugin");
	return 0;
}

/* --slurm's options together: it makes the shards, and each task runs one worker unless
 * --jobs says otherwise. */
static int
slurm_check(const struct sweep_slurm *sl, struct sweep_run_options *ro, bool jobs_given)
{
	if (!sl->tasks)
		return sl->args || sl->dry_run
			       ? usage_error("sweep",
					     "--slurm-args and --dry-run go with --slurm N")
			       : 0;
	if (ro->resume || ro->shard_n > 1)
		return usage_error("sweep", "--slurm makes the shards and resumes them: no --shard "
					    "or --resume (run the same command again to resume)");
	if (!jobs_given)
		ro->jobs = 1;
	return 0;
}

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
	OPT_SLURM,
	OPT_SLURM_ARGS,
	OPT_DRY_RUN,
	OPT_STATUS,
};

/* The shared options as lists, but --causal takes an optional list (--causal=no,yes). */
static const struct option sweep_opts[] = {
	{ "kernel", required_argument, NULL, OPT_KERNEL },
	{ "N", required_argument, NULL, OPT_N },
	{ "N-kv", required_argument, NULL, OPT_N_KV },
	{ "splits", required_argument, NULL, OPT_SPLITS },
	{ "kv-page", required_argument, NULL, OPT_KV_PAGE },
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
	{ "param", required_argument, NULL, OPT_PARAM },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "cache-sweep", required_argument, NULL, OPT_CACHE_SWEEP },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "resume", no_argument, NULL, OPT_RESUME },
	{ "shard", required_argument, NULL, OPT_SHARD },
	{ "formula-only", no_argument, NULL, OPT_FORMULA_ONLY },
	{ "trace-only", no_argument, NULL, OPT_TRACE_ONLY },
	{ "separate-runs", no_argument, NULL, OPT_SEPARATE_RUNS },
	{ "sample-sets", required_argument, NULL, OPT_SAMPLE_SETS },
	{ "slurm", required_argument, NULL, OPT_SLURM },
	{ "slurm-args", required_argument, NULL, OPT_SLURM_ARGS },
	{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
	{ "status", required_argument, NULL, OPT_STATUS },
	{ NULL, 0, NULL, 0 }
};

/* What an option function returns for an option it does not take (no exit status). */
#define NOT_MINE (-1)

/* Everything the command line gives a sweep. */
struct sweep_args {
	struct sweep_plan p;
	struct sweep_run_options ro;
	struct sweep_slurm sl;
	const char *cache_sweep, *caches[SWEEP_CACHES_MAX];
	unsigned ncache_args;
	const char *status;
	bool jobs_given, help;
	int others; /* options other than --status */
};

/* The plan's options, as each --slurm task gets them: all but the run's own. */
static void
sweep_forward(struct sweep_slurm *sl, int opt, int longindex, const char *arg)
{
	switch (opt) {
	case OPT_HELP:
	case OPT_JSON:
	case OPT_OUT:
	case OPT_JOBS:
	case OPT_RESUME:
	case OPT_SHARD:
	case OPT_SLURM:
	case OPT_SLURM_ARGS:
	case OPT_DRY_RUN:
	case OPT_STATUS:
	case '?':
	case ':':
		break;
	default:
		sweep_slurm_forward(sl, sweep_opts[longindex].name, arg);
		break;
	}
}

/* A list whose values are counts (0 in a config means "the default": a 0 given must not read
 * as that). */
static int
sweep_counts(const char *name, const char *arg, struct u64_list *list, bool *given)
{
	int rc = sweep_list_parse(name, arg, list, false);

	*given = true;
	for (unsigned i = 0; !rc && i < list->n; i++)
		if (list->v[i] == 0)
			rc = usage_error("sweep", "%s must be at least 1", name);
	return rc;
}

/* One option of the plan: what runs. NOT_MINE if opt is not one of them. */
static int
sweep_plan_option(struct sweep_args *a, int opt, const char *arg)
{
	struct sweep_plan *p = &a->p;
	char err[1024];

	switch (opt) {
	case OPT_KERNEL:
		return sweep_kernel(p, arg);
	case OPT_PARAM:
		return plugin_params_add(&p->params, arg, err, sizeof(err))
			       ? usage_error("sweep", "%s", err)
			       : 0;
	case OPT_DTYPE:
		return sweep_plan_dtypes(p, arg);
	case OPT_CAUSAL:
		return sweep_plan_causal(p, arg);
	case OPT_N:
		return sweep_list_parse("--N", arg, &p->N, false);
	case OPT_N_KV:
		return sweep_counts("--N-kv", arg, &p->N_kv, &p->nkv_given);
	case OPT_SPLITS:
		return sweep_counts("--splits", arg, &p->splits, &p->splits_given);
	case OPT_KV_PAGE:
		return sweep_counts("--kv-page", arg, &p->kv_page, &p->kv_page_given);
	case OPT_D:
		return sweep_list_parse("--d", arg, &p->d, false);
	case OPT_HEADS:
		return sweep_list_parse("--heads", arg, &p->heads, false);
	case OPT_KV_HEADS:
		p->kv_given = true;
		return sweep_list_parse("--kv-heads", arg, &p->kv_heads, false);
	case OPT_BATCH:
		return sweep_list_parse("--batch", arg, &p->batch, false);
	case OPT_BR:
		return sweep_list_parse("--Br", arg, &p->Br, false);
	case OPT_BC:
		return sweep_list_parse("--Bc", arg, &p->Bc, false);
	case OPT_SEPARATE:
		p->softmax_separate = true;
		return 0;
	case OPT_CACHE:
		if (a->ncache_args == SWEEP_CACHES_MAX)
			return usage_error("sweep", "more than %d --cache", SWEEP_CACHES_MAX);
		a->caches[a->ncache_args++] = arg;
		return 0;
	case OPT_CACHE_SWEEP:
		a->cache_sweep = arg;
		return 0;
	case OPT_NO_FLUSH:
		p->flush = false;
		return 0;
	case OPT_SEED:
		return parse_u64(arg, &p->seed)
			       ? 0
			       : usage_error("sweep", "--seed: '%s' is not a number", arg);
	default:
		return NOT_MINE;
	}
}

/* One option of how the plan runs: modes, workers, shards, Slurm; NOT_MINE if not one. */
static int
sweep_run_option(struct sweep_args *a, int opt, const char *arg)
{
	uint64_t v;

	switch (opt) {
	case OPT_OUT:
		a->ro.out = arg;
		return 0;
	case OPT_JSON:
		return usage_error("sweep", "sweep writes DIR/results.json; use --out DIR");
	case OPT_JOBS:
		a->jobs_given = true;
		if (!parse_u64(arg, &v) || v == 0 || v > 256)
			return usage_error("sweep", "--jobs: '%s' is not 1 to 256", arg);
		a->ro.jobs = (unsigned)v;
		return 0;
	case OPT_RESUME:
		a->ro.resume = true;
		return 0;
	case OPT_SHARD:
		return parse_shard(arg, &a->ro.shard_i, &a->ro.shard_n)
			       ? 0
			       : usage_error("sweep", "--shard: '%s' is not i/n with 0 <= i < n",
					     arg);
	case OPT_FORMULA_ONLY:
		a->p.simulate = false;
		return 0;
	case OPT_TRACE_ONLY:
		a->p.trace_only = true;
		return 0;
	case OPT_SEPARATE_RUNS:
		a->p.separate_runs = true;
		return 0;
	case OPT_SAMPLE_SETS:
		if (!parse_u64(arg, &v) || v < 2 || v > (UINT64_C(1) << 20) || !is_pow2(v))
			return usage_error(
				"sweep", "--sample-sets: '%s' is not a power of two from 2 to 2^20",
				arg);
		a->p.sample_sets = (uint32_t)v;
		return 0;
	case OPT_SLURM:
		if (!parse_u64(arg, &a->sl.tasks) || a->sl.tasks < 1 ||
		    a->sl.tasks > SWEEP_SLURM_MAX_TASKS)
			return usage_error("sweep", "--slurm: '%s' is not 1 to %d", arg,
					   SWEEP_SLURM_MAX_TASKS);
		return 0;
	case OPT_SLURM_ARGS:
		a->sl.args = arg;
		return 0;
	case OPT_DRY_RUN:
		a->sl.dry_run = true;
		return 0;
	case OPT_STATUS:
		a->status = arg;
		return 0;
	default:
		return NOT_MINE;
	}
}

/* Reads the options into a; stops at the first bad one (its message printed) or --help. */
static int
sweep_parse(struct sweep_args *a, int argc, char **argv)
{
	int opt, rc = 0, longindex;

	optind = 1;
	opterr = 0;
	while (!rc && (opt = getopt_long(argc, argv, ":", sweep_opts, &longindex)) != -1) {
		a->others += opt != OPT_STATUS;
		sweep_forward(&a->sl, opt, longindex, optarg);
		if (opt == OPT_HELP) {
			a->help = true;
			return 0;
		}
		rc = sweep_plan_option(a, opt, optarg);
		if (rc == NOT_MINE)
			rc = sweep_run_option(a, opt, optarg);
		if (rc == NOT_MINE)
			rc = option_error("sweep", opt, argv);
	}
	return rc;
}

/* Whether one of the plan's built-in kernels is a or b. */
static bool
plan_has_kernel(const struct sweep_plan *p, enum attn_kernel a, enum attn_kernel b)
{
	bool any = false;

	for (unsigned i = 0; i < p->nkernels; i++)
		any |= p->kernels[i] == a || p->kernels[i] == b;
	return any;
}

/* The options together, after parsing: what a plan needs and what its options exclude. */
static int
sweep_check(struct sweep_args *a, int argc, char **argv)
{
	struct sweep_plan *p = &a->p;
	int rc = slurm_check(&a->sl, &a->ro, a->jobs_given);

	if (!rc && optind != argc)
		rc = usage_error("sweep", "unexpected argument '%s'", argv[optind]);
	if (!rc && !a->ro.out)
		rc = usage_error("sweep", "sweep needs --out DIR");
	if (!rc && p->nkernels == 0)
		rc = usage_error("sweep", "sweep needs --kernel LIST");
	if (!rc)
		rc = sweep_plugin_check(p);
	if (!rc && p->splits_given && !p->plugin.p &&
	    !plan_has_kernel(p, ATTN_FLASHDECODE, ATTN_FLASHDECODE))
		rc = usage_error("sweep", "--splits is for --kernel flashdecode");
	if (!rc && p->kv_page_given && !p->plugin.p &&
	    !plan_has_kernel(p, ATTN_FLASH2, ATTN_FLASHDECODE))
		rc = usage_error("sweep", "--kv-page is for --kernel flash2 or flashdecode");
	if (!rc && p->trace_only && !p->simulate)
		rc = usage_error("sweep", "--trace-only simulates; --formula-only does not");
	if (!rc && p->sample_sets > 1 && !p->simulate)
		rc = usage_error("sweep", "--sample-sets simulates; --formula-only does not");
	return rc;
}

int
cmd_sweep(int argc, char **argv)
{
	struct sweep_args a;
	int rc;

	memset(&a, 0, sizeof(a));
	sweep_plan_init(&a.p);
	sweep_slurm_init(&a.sl);
	sweep_run_options_init(&a.ro);
	a.ro.argc = argc;
	a.ro.argv = argv;
	rc = sweep_parse(&a, argc, argv);
	if (!rc && a.help)
		usage_sweep(stdout);
	else if (!rc && a.status)
		rc = a.others || optind != argc
			     ? usage_error("sweep", "--status DIR takes no other options")
			     : sweep_slurm_status(a.status);
	else if (!rc) {
		rc = sweep_check(&a, argc, argv);
		if (!rc && a.ncache_args == 0)
			a.caches[a.ncache_args++] = "lab";
		for (unsigned i = 0; i < a.ncache_args && !rc; i++)
			rc = sweep_plan_cache(&a.p, a.caches[i], a.cache_sweep);
		if (!rc)
			rc = a.sl.tasks ? sweep_slurm_submit(&a.sl, &a.p, &a.ro)
					: sweep_run(&a.p, &a.ro);
	}
	sweep_slurm_finish(&a.sl);
	sweep_plan_finish(&a.p);
	return rc;
}
