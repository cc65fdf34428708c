/*
 * `memsim sweep`: the options; the work is run/sweep.h's.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "run/sweep.h"
#include "run/sweep_slurm.h"
#include "sim/cache.h"

void
usage_sweep(FILE *f)
{
	fprintf(f,
		"Usage: memsim sweep --out DIR [--kernel LIST] [--N LIST] [--N-kv LIST] [--d LIST]\n"
		"                    [--splits LIST] [--kv-page LIST] [--heads LIST] [--kv-heads LIST] [--batch LIST] [--dtype LIST]\n"
		"                    [--Br LIST] [--Bc LIST] [--causal[=no,yes]] [--softmax-separate]\n"
		"                    [--cache SPEC]... [--cache-sweep LEVEL=lo:hi:xF] [--no-flush]\n"
		"                    [--seed N] [--jobs J] [--threads T]\n"
		"                    [--resume [--rerun-other-revisions]]\n"
		"                    [--shard i/n] [--formula-only]\n"
		"                    [--trace-only] [--separate-runs] [--sample-sets K]\n"
		"                    [--kernel PATH [--param KEY=LIST]...]\n"
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
		"--kernel PATH sweeps a kernel plugin (docs/plugins.md) instead, with its own\n"
		"--param KEY=LIST (repeatable): LIST is values separated by commas, each value\n"
		"once (--param window=64,128,256), every combination of the lists a configuration;\n"
		"a value cannot hold a comma (memsim run refuses one too). The rows' keys name the\n"
		"path and each param's value, results.csv has a column param_KEY per key. A plugin\n"
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
		"                  and so is a DIR whose manifest.json records another mode;\n"
		"                  rows of another model revision (each row's model_revision:\n"
		"                  another memsim's, whose numbers may differ) are refused, and\n"
		"                  a plugin's rows of another build of it (each row's\n"
		"                  plugin_hash: the hash of the .so file that made it)\n"
		"  --rerun-other-revisions  with --resume or --slurm: run those rows again with\n"
		"                  this memsim and plugin, the old ones moved to\n"
		"                  DIR/superseded.json\n"
		"  --shard i/n     run only configurations i, i + n, i + 2n, ... (0 <= i < n)\n"
		"  --formula-only  evaluate the formulas without simulating (instant, any size)\n"
		"  --trace-only    simulate the kernels' accesses without computing values: the\n"
		"                  same counters, faster, arrays limited by address space only\n"
		"  --separate-runs run every size of a --cache-sweep on its own (no one pass)\n"
		"  --threads T     each simulation on T threads (up to 64) as memsim run\n"
		"                  --threads: the same counters (a computing run's values on\n"
		"                  the T; a trace-only run's sets split between them, a power of\n"
		"                  two); a one-pass run simulates the levels above the swept one\n"
		"                  on its own thread and each size's sets on the T; rows say in\n"
		"                  \"threads\" how many ran, and why not more (a swept L1, too\n"
		"                  few sets). --jobs then defaults to cores / (T + 1)\n"
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
		"                  to %d; past the cluster's MaxArraySize (scontrol show config)\n"
		"                  the shards go as several arrays, the merge after all. A DIR\n"
		"                  moved since is resubmitted from where it is, once the jobs\n"
		"                  submitted from the old place have ended.\n"
		"                  Each task: --jobs workers [1 with --slurm],\n"
		"                  --cpus-per-task = --jobs (x (T + 1) with --threads T), --mem\n"
		"                  from the largest\n"
		"                  configuration's\n"
		"                  arrays and cache models. No --shard or --resume with it.\n"
		"  --slurm-args S  more sbatch options for both jobs (-p PART --time=1:00:00 -A ACCT\n"
		"                  --mem=8G: these win), split as a shell splits words\n"
		"  --dry-run       write the scripts and print the sbatch commands; submit nothing\n"
		"  --status DIR    each shard's rows done/total and its task's state (squeue, sacct,\n"
		"                  else the files alone), and the merge job's\n"
		"MEMSIM_SBATCH, MEMSIM_SQUEUE, MEMSIM_SACCT, MEMSIM_SCANCEL, MEMSIM_SCONTROL name\n"
		"other programs [sbatch, squeue, sacct, scancel, scontrol on PATH].\n",
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

/* The build of the plugin at path, as rows record it: "fnv1a64:" and its file's hash. Returns
 * 0, or -1 with a message in err. */
static int
plugin_hash(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	char why[4200];
	uint64_t h;

	if (file_fnv1a64(path, &h, why, sizeof(why))) {
		snprintf(err, errlen, "--kernel: cannot read %.900s", why);
		return -1;
	}
	snprintf(buf, len, "fnv1a64:%016" PRIx64, h);
	return 0;
}

/* --kernel: a list of built-in kernels, or one plugin's path (loaded now: a file that is not
 * a plugin is a usage error before any run, and the workers inherit it; the hash of its file
 * taken at once, the build every row records). */
static int
kernel_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	struct sweep_plan *p = opt->dest;
	char err[1024];

	if (plugin_in_list(arg))
		return usage_error(cmd,
				   "--kernel %s: a plugin cannot be listed with other kernels (one "
				   "plugin a sweep, without built-in kernels)",
				   arg);
	if (!plugin_path_like(arg)) {
		if (p->plugin.p)
			return usage_error(cmd, "--kernel: a plugin or built-in kernels, not both");
		return sweep_plan_kernels(p, arg, err, sizeof(err)) ? usage_error(cmd, "%s", err)
								    : 0;
	}
	if (p->plugin.p || p->nkernels)
		return usage_error(cmd,
				   "--kernel %s: one plugin a sweep, without built-in "
				   "kernels",
				   arg);
	if (plugin_load(&p->plugin, arg, false, err, sizeof(err)) ||
	    plugin_hash(arg, p->plugin_hash, sizeof(p->plugin_hash), err, sizeof(err)))
		return usage_error(cmd, "%s", err);
	p->kernels[0] = ATTN_FLASH2; /* unused: the plugin runs */
	p->nkernels = 1;
	return 0;
}

/* What a plugin's sweep cannot have; cuts its --param lists. */
static int
sweep_plugin_check(struct sweep_plan *p)
{
	char err[1024];

	if (!p->plugin.p)
		return p->params.n ? usage_error("sweep", "--param is for plugins (--kernel PATH)")
				   : 0;
	if (plugin_params_check(&p->plugin, &p->params, err, sizeof(err)) ||
	    sweep_plan_params(p, err, sizeof(err)))
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
	if (!sl->tasks && ro->rerun_other && !ro->resume)
		return usage_error("sweep", "--rerun-other-revisions goes with --resume (or "
					    "--slurm N): it reruns rows already in DIR");
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

/* Everything the command line gives a sweep. */
struct sweep_args {
	struct sweep_plan p;
	struct sweep_run_options ro;
	struct sweep_slurm sl;
	const char *cache_sweep, *caches[SWEEP_CACHES_MAX];
	unsigned ncache_args;
	const char *status;
	uint64_t jobs, sample_sets, threads;
	bool jobs_given, threads_given;
	int others; /* options other than --status */
};

/* Each option given: counted for --status, and the plan's handed on to each --slurm task
 * (all but the run's own). */
static int
sweep_each(void *ctx, const struct optparse_option *opt, const char *value)
{
	static const char *const own[] = { "json",  "out",        "jobs",    "resume", "shard",
					   "slurm", "slurm-args", "dry-run", "status" };
	struct sweep_args *a = ctx;
	bool forward = true;

	a->others += strcmp(opt->name, "status") != 0;
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		forward &= strcmp(opt->name, own[i]) != 0;
	if (forward)
		sweep_slurm_forward(&a->sl, opt->name, value);
	return 0;
}

/* A LIST option into the u64_list at opt->dest; counts (opt->min 1) are at least 1, as 0 in
 * a config means "the default". */
static int
list_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	struct u64_list *list = opt->dest;
	char name[32], err[1024];
	int rc;

	snprintf(name, sizeof(name), "--%s", opt->name);
	if (sweep_list_parse(name, arg, list, false, err, sizeof(err)))
		return usage_error(cmd, "%s", err);
	rc = 0;
	for (unsigned i = 0; !rc && opt->min && i < list->n; i++)
		if (list->v[i] == 0)
			rc = usage_error(cmd, "%s must be at least 1", name);
	return rc;
}

static int
dtypes_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	char err[1024];

	return sweep_plan_dtypes(opt->dest, arg, err, sizeof(err)) ? usage_error(cmd, "%s", err)
								   : 0;
}

static int
causal_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	char err[1024];

	return sweep_plan_causal(opt->dest, arg, err, sizeof(err)) ? usage_error(cmd, "%s", err)
								   : 0;
}

static int
cache_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	struct sweep_args *a = opt->dest;

	if (a->ncache_args == SWEEP_CACHES_MAX)
		return usage_error(cmd, "more than %d --cache", SWEEP_CACHES_MAX);
	a->caches[a->ncache_args++] = arg;
	return 0;
}

/* --param KEY=V1,V2,...: a list, cut by sweep_plan_params() once the plugin is known. */
static int
param_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	char err[256];

	return plugin_params_add(opt->dest, arg, err, sizeof(err)) ? usage_error(cmd, "%s", err)
								   : 0;
}

static int
json_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	return usage_error(cmd, "sweep writes DIR/results.json; use --out DIR");
}

static int
shard_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	struct sweep_run_options *ro = opt->dest;

	return parse_shard(arg, &ro->shard_i, &ro->shard_n)
		       ? 0
		       : usage_error(cmd, "--shard: '%s' is not i/n with 0 <= i < n", arg);
}

/* Reads the options into a; stops at the first bad one (its message printed) or --help. */
static int
sweep_parse(struct sweep_args *a, int argc, char **argv)
{
	struct sweep_plan *p = &a->p;
	/* the shared options as lists, but --causal takes an optional list (--causal=no,yes) */
	const struct optparse_option opts[] = {
		{ "kernel", 0, OPTPARSE_CALL, .dest = p, .call = kernel_value },
		{ "N", 0, OPTPARSE_CALL, .dest = &p->N, .call = list_value },
		{ "N-kv", 0, OPTPARSE_CALL, .dest = &p->N_kv, .call = list_value, .min = 1,
		  .given = &p->nkv_given },
		{ "splits", 0, OPTPARSE_CALL, .dest = &p->splits, .call = list_value, .min = 1,
		  .given = &p->splits_given },
		{ "kv-page", 0, OPTPARSE_CALL, .dest = &p->kv_page, .call = list_value, .min = 1,
		  .given = &p->kv_page_given },
		{ "d", 0, OPTPARSE_CALL, .dest = &p->d, .call = list_value },
		{ "heads", 0, OPTPARSE_CALL, .dest = &p->heads, .call = list_value },
		{ "kv-heads", 0, OPTPARSE_CALL, .dest = &p->kv_heads, .call = list_value,
		  .given = &p->kv_given },
		{ "batch", 0, OPTPARSE_CALL, .dest = &p->batch, .call = list_value },
		{ "dtype", 0, OPTPARSE_CALL, .dest = p, .call = dtypes_value },
		{ "Br", 0, OPTPARSE_CALL, .dest = &p->Br, .call = list_value },
		{ "Bc", 0, OPTPARSE_CALL, .dest = &p->Bc, .call = list_value },
		{ "causal", 0, OPTPARSE_CALL, .dest = p, .call = causal_value,
		  .value_optional = true },
		{ "softmax-separate", 0, OPTPARSE_FLAG, .dest = &p->softmax_separate },
		{ "cache", 0, OPTPARSE_CALL, .dest = a, .call = cache_value },
		{ "no-flush", 0, OPTPARSE_CLEAR, .dest = &p->flush },
		{ "seed", 0, OPTPARSE_U64, .dest = &p->seed, .expect = "a number" },
		{ "json", 0, OPTPARSE_CALL, .call = json_value },
		{ .name = "help", .kind = OPTPARSE_HELP },
		{ "param", 0, OPTPARSE_CALL, .dest = &p->params, .call = param_value },
		{ "out", 0, OPTPARSE_STRING, .dest = &a->ro.out },
		{ "cache-sweep", 0, OPTPARSE_STRING, .dest = &a->cache_sweep },
		{ "jobs", 0, OPTPARSE_U64, .dest = &a->jobs, .min = 1, .max = 256,
		  .expect = "1 to 256", .given = &a->jobs_given },
		{ "threads", 0, OPTPARSE_U64, .dest = &a->threads, .min = 1,
		  .max = CACHE_MAX_SLICES, .expect = "1 to 64", .given = &a->threads_given },
		{ "resume", 0, OPTPARSE_FLAG, .dest = &a->ro.resume },
		{ "rerun-other-revisions", 0, OPTPARSE_FLAG, .dest = &a->ro.rerun_other },
		{ "shard", 0, OPTPARSE_CALL, .dest = &a->ro, .call = shard_value },
		{ "formula-only", 0, OPTPARSE_CLEAR, .dest = &p->simulate },
		{ "trace-only", 0, OPTPARSE_FLAG, .dest = &p->trace_only },
		{ "separate-runs", 0, OPTPARSE_FLAG, .dest = &p->separate_runs },
		{ "sample-sets", 0, OPTPARSE_POW2, .dest = &a->sample_sets, .min = 2,
		  .max = UINT64_C(1) << 20, .expect = "a power of two from 2 to 2^20" },
		{ "slurm", 0, OPTPARSE_U64, .dest = &a->sl.tasks, .min = 1,
		  .max = SWEEP_SLURM_MAX_TASKS,
		  .expect = "1 to " OPTPARSE_STR(SWEEP_SLURM_MAX_TASKS) },
		{ "slurm-args", 0, OPTPARSE_STRING, .dest = &a->sl.args },
		{ "dry-run", 0, OPTPARSE_FLAG, .dest = &a->sl.dry_run },
		{ "status", 0, OPTPARSE_STRING, .dest = &a->status },
		{ .name = NULL },
	};
	const struct optparse_command cmd = {
		.name = "sweep", .usage = usage_sweep, .options = opts, .each = sweep_each, .ctx = a
	};
	int rc;

	a->sample_sets = p->sample_sets;
	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc;
	if (a->threads_given)
		p->threads = (unsigned)a->threads;
	if (a->jobs_given)
		a->ro.jobs = (unsigned)a->jobs;
	else if (p->threads > 1) /* a worker runs T slice threads besides its own */
		a->ro.jobs = a->ro.jobs / (p->threads + 1) ? a->ro.jobs / (p->threads + 1) : 1;
	p->sample_sets = (uint32_t)a->sample_sets;
	return 0;
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
	if (!rc && p->threads > 1 && p->plugin.p)
		rc = usage_error("sweep", "--threads is for built-in kernels");
	if (!rc && p->threads > 1 && !p->simulate)
		rc = usage_error("sweep", "--threads simulates; --formula-only does not");
	return rc;
}

int
sweep_exit(int rc, const char *err)
{
	if (rc == 0)
		return EXIT_OK;
	if (rc == -EINVAL)
		return usage_error("sweep", "%s", err);
	if (err[0])
		print_error("%s", err);
	return rc == -EEXIST ? EXIT_USAGE : EXIT_RUNTIME;
}

int
cmd_sweep(int argc, char **argv)
{
	struct sweep_args a;
	char err[8192];
	int rc;

	memset(&a, 0, sizeof(a));
	sweep_plan_init(&a.p);
	sweep_slurm_init(&a.sl);
	sweep_run_options_init(&a.ro);
	a.ro.argc = argc;
	a.ro.argv = argv;
	rc = sweep_parse(&a, argc, argv);
	if (rc == OPTPARSE_HELP_SHOWN)
		rc = EXIT_OK;
	else if (!rc && a.status)
		rc = a.others || optind != argc
			     ? usage_error("sweep", "--status DIR takes no other options")
			     : sweep_exit(sweep_slurm_status(a.status, err, sizeof(err)), err);
	else if (!rc) {
		rc = sweep_check(&a, argc, argv);
		if (!rc && a.ncache_args == 0)
			a.caches[a.ncache_args++] = "lab";
		for (unsigned i = 0; i < a.ncache_args && !rc; i++)
			if (sweep_plan_cache(&a.p, a.caches[i], a.cache_sweep, err, sizeof(err)))
				rc = usage_error("sweep", "%s", err);
		if (!rc)
			rc = sweep_exit(a.sl.tasks ? sweep_slurm_submit(&a.sl, &a.p, &a.ro, err,
									sizeof(err))
						   : sweep_run(&a.p, &a.ro, err, sizeof(err)),
					err);
	}
	sweep_slurm_finish(&a.sl);
	sweep_plan_finish(&a.p);
	return rc;
}
