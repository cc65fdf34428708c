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
		OPT_SLURM,
		OPT_SLURM_ARGS,
		OPT_DRY_RUN,
		OPT_STATUS,
	};
	/* The shared options as lists, but --causal takes an optional list (--causal=no,yes). */
	static const struct option opts[] = {
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
	struct sweep_plan p;
	struct sweep_run_options ro;
	const char *cache_sweep = NULL, *caches[SWEEP_CACHES_MAX];
	unsigned ncache_args = 0;
	struct sweep_slurm sl;
	const char *status = NULL;
	bool jobs_given = false;
	uint64_t jobs;
	char err[1024];
	int opt, rc = 0, longindex, others = 0;

	sweep_plan_init(&p);
	sweep_slurm_init(&sl);
	sweep_run_options_init(&ro);
	ro.argc = argc;
	ro.argv = argv;
	optind = 1;
	opterr = 0;
	while (!rc && (opt = getopt_long(argc, argv, ":", opts, &longindex)) != -1) {
		others += opt != OPT_STATUS;
		/* The plan's options, as each --slurm task gets them: all but these. */
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
			sweep_slurm_forward(&sl, opts[longindex].name, optarg);
			break;
		}
		switch (opt) {
		case OPT_HELP:
			usage_sweep(stdout);
			return EXIT_OK;
		case OPT_OUT:
			ro.out = optarg;
			break;
		case OPT_KERNEL:
			rc = sweep_kernel(&p, optarg);
			break;
		case OPT_PARAM:
			if (plugin_params_add(&p.params, optarg, err, sizeof(err)))
				rc = usage_error("sweep", "%s", err);
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
		case OPT_N_KV:
			rc = sweep_list_parse("--N-kv", optarg, &p.N_kv, false);
			p.nkv_given = true;
			/* 0 in a config means N: a 0 given must not read as that */
			for (unsigned i = 0; !rc && i < p.N_kv.n; i++)
				if (p.N_kv.v[i] == 0)
					rc = usage_error("sweep", "--N-kv must be at least 1");
			break;
		case OPT_SPLITS:
			rc = sweep_list_parse("--splits", optarg, &p.splits, false);
			p.splits_given = true;
			for (unsigned i = 0; !rc && i < p.splits.n; i++)
				if (p.splits.v[i] == 0)
					rc = usage_error("sweep", "--splits must be at least 1");
			break;
		case OPT_KV_PAGE:
			rc = sweep_list_parse("--kv-page", optarg, &p.kv_page, false);
			p.kv_page_given = true;
			for (unsigned i = 0; !rc && i < p.kv_page.n; i++)
				if (p.kv_page.v[i] == 0)
					rc = usage_error("sweep", "--kv-page must be at least 1");
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
			jobs_given = true;
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
		case OPT_SLURM:
			if (!parse_u64(optarg, &sl.tasks) || sl.tasks < 1 ||
			    sl.tasks > SWEEP_SLURM_MAX_TASKS)
				rc = usage_error("sweep", "--slurm: '%s' is not 1 to %d", optarg,
						 SWEEP_SLURM_MAX_TASKS);
			break;
		case OPT_SLURM_ARGS:
			sl.args = optarg;
			break;
		case OPT_DRY_RUN:
			sl.dry_run = true;
			break;
		case OPT_STATUS:
			status = optarg;
			break;
		default:
			rc = option_error("sweep", opt, argv);
			break;
		}
	}
	if (!rc && status) {
		rc = others || optind != argc
			     ? usage_error("sweep", "--status DIR takes no other options")
			     : sweep_slurm_status(status);
		sweep_slurm_finish(&sl);
		sweep_plan_finish(&p);
		return rc;
	}
	if (!rc)
		rc = slurm_check(&sl, &ro, jobs_given);
	if (!rc && optind != argc)
		rc = usage_error("sweep", "unexpected argument '%s'", argv[optind]);
	if (!rc && !ro.out)
		rc = usage_error("sweep", "sweep needs --out DIR");
	if (!rc && p.nkernels == 0)
		rc = usage_error("sweep", "sweep needs --kernel LIST");
	if (!rc)
		rc = sweep_plugin_check(&p);
	if (!rc && p.splits_given && !p.plugin.p) {
		bool decode = false;

		for (unsigned i = 0; i < p.nkernels; i++)
			decode |= p.kernels[i] == ATTN_FLASHDECODE;
		if (!decode)
			rc = usage_error("sweep", "--splits is for --kernel flashdecode");
	}
	if (!rc && p.kv_page_given && !p.plugin.p) {
		bool paged = false;

		for (unsigned i = 0; i < p.nkernels; i++)
			paged |= p.kernels[i] == ATTN_FLASH2 || p.kernels[i] == ATTN_FLASHDECODE;
		if (!paged)
			rc = usage_error("sweep",
					 "--kv-page is for --kernel flash2 or flashdecode");
	}
	if (!rc && p.trace_only && !p.simulate)
		rc = usage_error("sweep", "--trace-only simulates; --formula-only does not");
	if (!rc && p.sample_sets > 1 && !p.simulate)
		rc = usage_error("sweep", "--sample-sets simulates; --formula-only does not");
	if (!rc && ncache_args == 0)
		caches[ncache_args++] = "lab";
	for (unsigned i = 0; i < ncache_args && !rc; i++)
		rc = sweep_plan_cache(&p, caches[i], cache_sweep);
	if (!rc)
		rc = sl.tasks ? sweep_slurm_submit(&sl, &p, &ro) : sweep_run(&p, &ro);
	sweep_slurm_finish(&sl);
	sweep_plan_finish(&p);
	return rc;
}
