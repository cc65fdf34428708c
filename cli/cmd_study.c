/*
 * `memsim study`: the default study, every step called as a function in this process.
 *
 * The study is the bytes-moved lab's sweep (the course's lab 01): naive vs flash2, d = 64,
 * B_r = B_c = 64, fp32 and fp16, N from 256 doubling to --max-N, on the lab preset and the
 * lab machine's preset (i5-8250u); then the exactness sweep: every kernel at N = 256 .. 2048
 * on a fully associative LRU cache from 32 KiB to 64 MiB with tiles in scratch; the formulas
 * at the labs' sizes; a decode step over a KV cache (MHA, GQA, MQA); the machine's ceilings;
 * the layer profile; the Valgrind cross-checks; the plots and the report.
 */

#include <cJSON.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/plot.h"
#include "analysis/report.h"
#include "analysis/tables.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/steps.h"
#include "measure/spawn.h"
#include "run/sweep.h"

void
usage_study(FILE *f)
{
	fprintf(f,
		"Usage: memsim study [--out DIR] [--max-N N] [--resume [--rerun-other-revisions]]\n"
		"                    [--small]\n"
		"\n"
		"The default study, every step into DIR [out/study]:\n"
		"  lab/       the bytes-moved lab's sweep: naive vs flash2, d = 64, B_r = B_c = 64,\n"
		"             fp32 and fp16, N = 256 doubling to --max-N [8192], on the lab and\n"
		"             i5-8250u presets\n"
		"  exact/     the exactness sweep: every kernel, N = 256 to 2048, fully associative\n"
		"             LRU caches of 32 KiB to 64 MiB, tiles in scratch\n"
		"  formulas/  the formulas alone for the labs' sizes (N = 64 .. 32768, d = 64, 128)\n"
		"  decode/    one decode step: flashdecode (FlashAttention's split-KV decode, S\n"
		"             from its heuristic, grouped heads packed), N = 1 over N_kv = 1024\n"
		"             doubling to 131072, d = 128, 32 query heads with 32, 8 and 1 KV\n"
		"             heads (MHA, GQA, MQA), fp16, on the h100 preset, trace-only: bytes\n"
		"             and tokens/s per token\n"
		"  ceilings.json  memory bandwidth and peak FLOP/s of this machine (memsim ceilings)\n"
		"  profile/   the attention layer timed natively per operation (memsim profile)\n"
		"  xcheck/    memsim against Cachegrind and Callgrind (when valgrind is installed)\n"
		"  plots/     every plot (memsim plot), then report.md and report.html (memsim report)\n"
		"--resume continues an interrupted study (its sweeps refuse rows another memsim's model\n"
		"revision made; --rerun-other-revisions runs them again, as memsim sweep does; its\n"
		"cross-checks and profile of another revision are made again);\n"
		"--small runs a reduced study (N up to 512,\n"
		"one exact size, N_kv up to 8192, quick ceilings, T = 64 and 128) for tests.\n");
}

static void
step(const char *title)
{
	printf("== %s\n", title);
	fflush(stdout);
}

static bool
have_file(const char *dir, const char *name)
{
	char path[4400];

	if (strlen(dir) + strlen(name) + 2 > sizeof(path))
		return false;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* Whether JSON object j was made by this memsim's model revision; if not, says that what
 * (a path) is made again. Older files record no revision: made again too. */
static bool
this_revision(const cJSON *j, const char *what)
{
	const cJSON *rev = cJSON_GetObjectItemCaseSensitive(j, "model_revision");
	const char *mine = report_model_revision();

	if (cJSON_IsString(rev) && strcmp(rev->valuestring, mine) == 0)
		return true;
	printf("memsim: study: %s was made by %s; made again with %s\n", what,
	       cJSON_IsString(rev) ? rev->valuestring : "a memsim that recorded no model revision",
	       mine);
	return false;
}

/* Whether dir holds a profile that wrote every row (its manifest says complete) with this
 * model revision (its DRAM bytes are the simulator's). */
static bool
profile_complete(const char *dir)
{
	char path[4400], err[600];
	cJSON *m;
	bool done;

	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	m = have_file(dir, "results.json") ? report_read_json(path, err, sizeof(err)) : NULL;
	done = cJSON_IsTrue(cJSON_GetObjectItem(m, "complete")) && this_revision(m, dir);
	cJSON_Delete(m);
	return done;
}

/* Whether the cross-check report at path can be kept: it exists, reads, and this model
 * revision made it. */
static bool
xcheck_current(const char *path)
{
	char err[600];
	cJSON *j = access(path, F_OK) == 0 ? report_read_json(path, err, sizeof(err)) : NULL;
	bool keep = j && this_revision(j, path);

	cJSON_Delete(j);
	return keep;
}

/* The lists of one of the study's sweeps; NULL keeps the plan's default. */
struct study_sweep {
	const char *title, *dir;
	const char *kernels, *N, *d, *Br, *Bc, *dtypes, *caches[2], *cache_sweep;
	const char *N_kv, *heads, *kv_heads;
	bool formula_only, trace_only;
};

static int
run_sweep(const struct study_sweep *sw, const char *out, bool resume, bool rerun_other, int argc,
	  char **argv)
{
	struct sweep_plan p;
	struct sweep_run_options ro;
	char dir[4200], err[8192];
	int rc = 0;

	snprintf(dir, sizeof(dir), "%s/%s", out, sw->dir);
	step(sw->title);
	sweep_plan_init(&p);
	sweep_run_options_init(&ro);
	ro.out = dir;
	ro.resume = resume;
	ro.rerun_other = rerun_other;
	ro.argc = argc;
	ro.argv = argv;
	p.simulate = !sw->formula_only;
	p.trace_only = sw->trace_only;
	rc = sweep_plan_kernels(&p, sw->kernels, err, sizeof(err));
	if (!rc && sw->N)
		rc = sweep_list_parse("--N", sw->N, &p.N, false, err, sizeof(err));
	if (!rc && sw->d)
		rc = sweep_list_parse("--d", sw->d, &p.d, false, err, sizeof(err));
	if (!rc && sw->Br)
		rc = sweep_list_parse("--Br", sw->Br, &p.Br, false, err, sizeof(err));
	if (!rc && sw->Bc)
		rc = sweep_list_parse("--Bc", sw->Bc, &p.Bc, false, err, sizeof(err));
	if (!rc && sw->N_kv) {
		rc = sweep_list_parse("--N-kv", sw->N_kv, &p.N_kv, false, err, sizeof(err));
		p.nkv_given = true;
	}
	if (!rc && sw->heads)
		rc = sweep_list_parse("--heads", sw->heads, &p.heads, false, err, sizeof(err));
	if (!rc && sw->kv_heads) {
		rc = sweep_list_parse("--kv-heads", sw->kv_heads, &p.kv_heads, false, err,
				      sizeof(err));
		p.kv_given = true;
	}
	if (!rc && sw->dtypes)
		rc = sweep_plan_dtypes(&p, sw->dtypes, err, sizeof(err));
	for (int i = 0; i < 2 && sw->caches[i] && !rc; i++)
		rc = sweep_plan_cache(&p, sw->caches[i], sw->cache_sweep, err, sizeof(err));
	if (!rc)
		rc = sweep_run(&p, &ro, err, sizeof(err));
	rc = sweep_exit(rc, err);
	sweep_plan_finish(&p);
	return rc;
}

/* memsim xcheck for the study's configurations, when valgrind is installed; a report already
 * there is kept on --resume. */
static int
study_xcheck(const char *out, bool small, bool resume, int argc, char **argv)
{
	static const struct {
		enum attn_kernel kernel;
		uint64_t N, Bc;
	} cfgs[] = { { ATTN_NAIVE, 256, 64 },
		     { ATTN_FLASH2, 256, 32 },
		     { ATTN_FLASH2, 256, 64 },
		     { ATTN_NAIVE, 1024, 64 } };
	const char *env = getenv("MEMSIM_VALGRIND");
	char dir[4200], path[4400], vg[4096];
	size_t n = small ? 1 : sizeof(cfgs) / sizeof(cfgs[0]);
	int rc;

	if (!spawn_find(env && *env ? env : "valgrind", vg, sizeof(vg))) {
		printf("== cross-checks skipped: valgrind is not installed\n");
		return EXIT_OK;
	}
	snprintf(dir, sizeof(dir), "%s/xcheck", out);
	if ((rc = mkdir_p(dir))) {
		print_error("study: cannot create %s: %s", dir, strerror(-rc));
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < n; i++) {
		struct kernel_options o;
		struct spec spec;
		char name[128];

		snprintf(name, sizeof(name), "%s-N%llu-Bc%llu.json",
			 attn_kernel_name(cfgs[i].kernel), (unsigned long long)cfgs[i].N,
			 (unsigned long long)cfgs[i].Bc);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (resume && xcheck_current(path))
			continue;
		printf("== cross-check %s N=%llu B_c=%llu -> %s\n",
		       attn_kernel_name(cfgs[i].kernel), (unsigned long long)cfgs[i].N,
		       (unsigned long long)cfgs[i].Bc, path);
		fflush(stdout);
		kernel_options_init(&o);
		o.cfg.kernel = cfgs[i].kernel;
		o.kernel_given = true;
		o.cfg.N = cfgs[i].N;
		o.cfg.Bc = cfgs[i].Bc;
		o.cache_text = "cachegrind";
		o.json_path = path;
		if ((rc = kernel_options_finish(&o, &spec, "study")))
			return rc;
		/* The table goes to the JSON; the study's output keeps to its summary. */
		rc = xcheck_into(&o, &spec, WITH_CACHEGRIND | WITH_CALLGRIND, NULL, NULL, argc,
				 argv);
		if (rc != EXIT_OK)
			return rc;
	}
	return EXIT_OK;
}

static int
study_profile(const char *out, bool small, int argc, char **argv)
{
	struct profile_config c;
	char dir[4200], err[512];

	snprintf(dir, sizeof(dir), "%s/profile", out);
	step("the attention layer, timed per operation -> profile/");
	profile_config_init(&c);
	c.nT = small ? 2 : 4;
	for (unsigned i = 0; i < c.nT; i++)
		c.T[i] = 64u << i;
	c.kernels[0] = ATTN_NAIVE;
	c.kernels[1] = ATTN_FLASH2;
	c.nkernels = 2;
	c.min_time = small ? 0.005 : 0.05;
	c.reps = small ? 5 : 30;
	/* Bytes on the lab preset: each operation's operands to and from memory, the lab's own
	 * accounting for its roofline. */
	if (profile_config_check(&c, err, sizeof(err)) ||
	    spec_parse("lab", &c.spec, err, sizeof(err))) {
		print_error("study: profile: %s", err);
		return EXIT_RUNTIME;
	}
	c.spec.cache.seed = c.seed;
	return profile_into(&c, dir, NULL, argc, argv);
}

/* The lab table, the crossover and the exactness summary from the sweeps just run. */
static int
print_tables(const char *out)
{
	struct table_rows t;
	char dir[4200], err[700];
	int rc;

	snprintf(dir, sizeof(dir), "%s/lab", out);
	printf("\n== lab formulas vs memsim (%s)\n\n", dir);
	if (tables_read(dir, &t, err, sizeof(err))) {
		print_error("study: %s", err);
		return EXIT_RUNTIME;
	}
	tables_print_lab(stdout, &t);
	printf("\n");
	tables_print_crossover(stdout, &t);
	tables_finish(&t);
	snprintf(dir, sizeof(dir), "%s/exact", out);
	printf("\n== exact formulas vs memsim, every array, fully associative LRU caches (%s)\n\n",
	       dir);
	if (tables_read(dir, &t, err, sizeof(err))) {
		print_error("study: %s", err);
		return EXIT_RUNTIME;
	}
	rc = tables_print_exact(stdout, &t) ? EXIT_OK : EXIT_RUNTIME;
	tables_finish(&t);
	return rc;
}

/* Everything the command line gives study. */
struct study_args {
	const char *out;
	uint64_t maxn;
	bool resume, small;
	bool rerun_other; /* --rerun-other-revisions */
};

/* Reads the options into a; stops at the first bad one (its message printed) or --help. */
static int
study_parse(struct study_args *a, int argc, char **argv)
{
	bool maxn_given = false;
	const struct optparse_option opts[] = {
		{ "out", 'o', OPTPARSE_STRING, .dest = &a->out },
		{ "max-N", 'n', OPTPARSE_U64, .dest = &a->maxn, .min = 256,
		  .expect = "a number >= 256", .given = &maxn_given },
		{ "resume", 'r', OPTPARSE_FLAG, .dest = &a->resume },
		{ "small", 's', OPTPARSE_FLAG, .dest = &a->small },
		{ "rerun-other-revisions", 0, OPTPARSE_FLAG, .dest = &a->rerun_other },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "study",
					      .usage = usage_study,
					      .options = opts };
	int rc;

	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc;
	if (optind != argc)
		return usage_error("study", "unexpected argument '%s'", argv[optind]);
	if (strlen(a->out) > 3000)
		return usage_error("study", "--out: the path is too long");
	if (a->rerun_other && !a->resume)
		return usage_error("study", "--rerun-other-revisions goes with --resume");
	if (a->small && !maxn_given)
		a->maxn = 512;
	return 0;
}

/* The study's sweeps, one after the other: lab/, exact/, formulas/, decode/. */
static int
study_sweeps(const struct study_args *a, int argc, char **argv)
{
	char nrange[64];
	bool small = a->small;
	int rc;
	/* nrange is filled below: the plan holds its address */
	const struct study_sweep sweeps[] = {
		{ .title = "the bytes-moved lab's sweep -> lab/",
		  .dir = "lab",
		  .kernels = "naive,flash2",
		  .N = nrange,
		  .d = "64",
		  .Br = "64",
		  .Bc = "64",
		  .dtypes = "fp32,fp16",
		  .caches = { "lab", "i5-8250u" } },
		{ .title = "the exactness sweep -> exact/",
		  .dir = "exact",
		  .kernels = "naive,flash1,flash2,proj",
		  .N = small ? "256" : "256:2048:x2",
		  .caches = { "L1=32K:full:64,tiles=scratch" },
		  .cache_sweep = small ? "L1=32K:2M:x4" : "L1=32K:64M:x2" },
		{ .title = "the formulas at the labs' sizes -> formulas/",
		  .dir = "formulas",
		  .kernels = "naive,flash1,flash2",
		  .N = "64,256,1024,2048,4096,8192,16384,32768",
		  .d = "64,128",
		  .dtypes = "fp32,fp16",
		  .caches = { "lab", "i5-8250u" },
		  .formula_only = true },
		/* One decode step as FlashAttention runs it (split-KV, S from its
		 * heuristic on the h100 preset, grouped heads packed): the accesses alone
		 * (trace-only), about a second for 24 runs up to 2 GiB of K and V. */
		{ .title = "decode: one query token over a KV cache -> decode/",
		  .dir = "decode",
		  .kernels = "flashdecode",
		  .N = "1",
		  .N_kv = small ? "1024:8192:x2" : "1024:131072:x2",
		  .d = "128",
		  .heads = "32",
		  .kv_heads = "32,8,1",
		  .dtypes = "fp16",
		  .caches = { "h100" },
		  .trace_only = true },
	};

	snprintf(nrange, sizeof(nrange), "256:%llu:x2", (unsigned long long)a->maxn);
	for (size_t i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); i++)
		if ((rc = run_sweep(&sweeps[i], a->out, a->resume, a->rerun_other, argc, argv)) !=
		    EXIT_OK)
			return rc;
	return EXIT_OK;
}

int
cmd_study(int argc, char **argv)
{
	struct study_args a = { .out = "out/study", .maxn = 8192 };
	const char *out;
	bool small, resume;
	int rc = study_parse(&a, argc, argv);

	if (rc)
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	out = a.out;
	small = a.small;
	resume = a.resume;
	if ((rc = mkdir_p(out))) {
		print_error("study: cannot create %s: %s", out, strerror(-rc));
		return EXIT_RUNTIME;
	}
	if ((rc = study_sweeps(&a, argc, argv)) != EXIT_OK)
		return rc;
	step("the machine's ceilings -> ceilings.json");
	if ((rc = ceilings_into(out, small, false, NULL)) != EXIT_OK)
		return rc;
	{
		char dir[4200];

		snprintf(dir, sizeof(dir), "%s/profile", out);
		if (!(resume && profile_complete(dir)) &&
		    (rc = study_profile(out, small, argc, argv)) != EXIT_OK)
			return rc;
	}
	if ((rc = study_xcheck(out, small, resume, argc, argv)) != EXIT_OK)
		return rc;
	rc = print_tables(out);
	/* Without gnuplot the plots' data and scripts are still written: go on. */
	printf("\n");
	step("plots -> plots/");
	if (plot_into(out, PLOT_FORMAT_PNG | PLOT_FORMAT_SVG) != EXIT_OK)
		printf("memsim: study: the plots were not drawn (see above); the report goes on "
		       "without them\n");
	step("the report -> report.md, report.html");
	{
		int rrc = report_into(out);

		if (rrc != EXIT_OK)
			return rrc;
	}
	printf("\nResults: %s/*/results.json, results.csv, manifest.json; the report: "
	       "%s/report.html; memsim table DIR prints a table again.\n",
	       out, out);
	return rc;
}
