/*
 * `memsim bench`: replay speed on a synthetic trace shaped like the inner loops of attention.
 *
 * The trace is the S = Q K^T loop nest of an attention kernel: for a query row i and a key row
 * j, a dot product over k that interleaves two row streams (Q[i][k], K[j][k], 4-byte elements)
 * with a strided column stream (V^T read down a column every 8th step, stride one padded row of
 * N + pad elements), then one store of S[i][j]. N = 4096, d = 64: K and V^T are 1 MiB each.
 *  - blocked (default): the loop order of the blocked kernels memsim traces: key rows in
 *    blocks of 64 (16 KiB, kept in L1) swept by every query row; L1 misses are rare.
 *  - unblocked: j runs over all 4096 key rows for each i, so K streams through L1 with a miss
 *    per line (about 3% of accesses miss L1, half of those miss L2 too).
 * With pad = 0 the column's lines all fall in one L1 set (a 16 KiB stride) and thrash it.
 *  - naive: a whole naive attention head, a query row at a time (bench/replay_bench.c), a
 *    quarter of its accesses missing L1; bench also reads the binary file without the model,
 *    the floor a replay cannot beat, and prints the replay's time over it.
 */

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "base/util.h"
#include "bench/bench_modes.h"
#include "bench/bench_onepass.h"
#include "bench/bench_threads.h"
#include "bench/child_run.h"
#include "bench/replay_bench.h"
#include "cli/commands.h"
#include "cli/optparse.h"
#include "kernels/attn.h"
#include "measure/spawn.h"
#include "sim/spec.h"
#include "traces/mtrace.h"

/* Targets of the issue "Simulation at model scale", printed next to the ratios they bound. */
#define TARGET_TRACED_OVER_NATIVE 10.0    /* computing traced run: at most 10x the native one */
#define TARGET_TRACE_ONLY_OVER_NATIVE 1.0 /* trace-only run: faster than the native kernel */
#define TARGET_CG_OVER_TRACED 5.0         /* Cachegrind on the native run: 5x the traced run */

/* One measurement of a kernel, all whole processes (allocation and fill included in each). */
struct kernel_bench {
	const char *kernel;
	double native;                       /* seconds */
	struct child_run_figures traced;     /* the computing traced run; seconds < 0: not run */
	struct child_run_figures trace_only; /* memsim run --trace-only */
	double cachegrind;                   /* seconds, or -1 without valgrind */
	double instructions_per_miss;        /* in cache_fast_miss(), or -1 when not measured */
	double array_bytes;
};

static double
ratio(double a, double b)
{
	return a >= 0 && b > 0 ? a / b : -1;
}

/* The figures bench --kernels prints per kernel, one table row each, in this order. */
enum figure {
	FIG_NATIVE,
	FIG_TRACED,
	FIG_TRACED_RATIO,
	FIG_TRACE_ONLY,
	FIG_TRACE_ONLY_RATIO,
	FIG_CACHEGRIND,
	FIG_CACHEGRIND_RATIO,
	FIG_ACCESSES,
	FIG_TRACED_RATE,
	FIG_TRACE_ONLY_RATE,
	FIG_IPM,
	FIG_TRACED_RSS,
	FIG_TRACE_ONLY_RSS,
	FIG_ARRAYS,
	FIG_COUNT,
};

static const struct figure_def {
	const char *label; /* table row */
	const char *key;   /* JSON name, in the unit of the figure */
	double scale;      /* the table shows figure / scale */
	int precision;     /* digits after the point, or significant digits with exp */
	bool exp;
	double target;     /* 0: none */
	bool below;        /* the target is an upper bound (else a lower one) */
	const char *where; /* where the target applies, or NULL: everywhere */
} figure_defs[FIG_COUNT] = {
	[FIG_NATIVE] = { "native s", "native_seconds", 1, 3, false, 0, false },
	[FIG_TRACED] = { "traced s", "traced_seconds", 1, 3, false, 0, false },
	[FIG_TRACED_RATIO] = { "traced/native", "traced_over_native", 1, 2, false,
			       TARGET_TRACED_OVER_NATIVE, true },
	[FIG_TRACE_ONLY] = { "trace-only s", "trace_only_seconds", 1, 3, false, 0, false },
	[FIG_TRACE_ONLY_RATIO] = { "trace-only/native", "trace_only_over_native", 1, 2, false,
				   TARGET_TRACE_ONLY_OVER_NATIVE, true, "tiles in scratch" },
	[FIG_CACHEGRIND] = { "cachegrind s", "cachegrind_seconds", 1, 3, false, 0, false },
	[FIG_CACHEGRIND_RATIO] = { "cachegrind/traced", "cachegrind_over_traced", 1, 2, false,
				   TARGET_CG_OVER_TRACED, false },
	[FIG_ACCESSES] = { "accesses", "accesses", 1, 4, true, 0, false },
	[FIG_TRACED_RATE] = { "accesses/s, traced (model)", "traced_accesses_per_second", 1, 3,
			      true, 0, false },
	[FIG_TRACE_ONLY_RATE] = { "accesses/s, trace-only (model)",
				  "trace_only_accesses_per_second", 1, 3, true, 0, false },
	[FIG_IPM] = { "instructions per L1 miss", "instructions_per_l1_miss", 1, 0, false, 0,
		      false },
	[FIG_TRACED_RSS] = { "traced peak RSS MiB", "traced_peak_rss_bytes", 1048576, 1, false, 0,
			     false },
	[FIG_TRACE_ONLY_RSS] = { "trace-only peak RSS MiB", "trace_only_peak_rss_bytes", 1048576, 1,
				 false, 0, false },
	[FIG_ARRAYS] = { "arrays MiB", "array_bytes", 1048576, 1, false, 0, false },
};

/* The figures of one kernel's measurement; -1 for those not measured. */
static void
figures_of(const struct kernel_bench *b, double fig[FIG_COUNT])
{
	fig[FIG_NATIVE] = b->native;
	fig[FIG_TRACED] = b->traced.seconds;
	fig[FIG_TRACED_RATIO] = ratio(b->traced.seconds, b->native);
	fig[FIG_TRACE_ONLY] = b->trace_only.seconds;
	fig[FIG_TRACE_ONLY_RATIO] = ratio(b->trace_only.seconds, b->native);
	fig[FIG_CACHEGRIND] = b->cachegrind;
	fig[FIG_CACHEGRIND_RATIO] = ratio(b->cachegrind, b->traced.seconds);
	fig[FIG_ACCESSES] = b->trace_only.accesses;
	fig[FIG_TRACED_RATE] = ratio(b->traced.accesses, b->traced.model_seconds);
	fig[FIG_TRACE_ONLY_RATE] = ratio(b->trace_only.accesses, b->trace_only.model_seconds);
	fig[FIG_IPM] = b->instructions_per_miss;
	fig[FIG_TRACED_RSS] = b->traced.peak_rss;
	fig[FIG_TRACE_ONLY_RSS] = b->trace_only.peak_rss;
	fig[FIG_ARRAYS] = b->array_bytes;
}

/* One row of the table: the figure per kernel, then its target and whether every kernel that
 * was measured met it. */
static void
print_row(FILE *out, const struct figure_def *d, const double *v, int nk)
{
	bool met = true, any = false;

	fprintf(out, "%-32s", d->label);
	for (int k = 0; k < nk; k++) {
		char buf[64];

		if (v[k] < 0)
			snprintf(buf, sizeof(buf), "-");
		else if (d->exp)
			snprintf(buf, sizeof(buf), "%.*g", d->precision, v[k] / d->scale);
		else
			snprintf(buf, sizeof(buf), "%.*f", d->precision, v[k] / d->scale);
		fprintf(out, " %12s", buf);
		if (v[k] >= 0) {
			any = true;
			met &= d->below ? v[k] < d->target : v[k] >= d->target;
		}
	}
	if (d->target > 0)
		fprintf(out, "   %s %g%s%s%s: %s", d->below ? "<" : ">=", d->target,
			d->where ? " (" : "", d->where ? d->where : "", d->where ? ")" : "",
			!any  ? "not measured"
			: met ? "met"
			      : "MISSED");
	fprintf(out, "\n");
}

/* What every child run of bench --kernels shares: memsim's path, the files in its private
 * directory, the options. */
struct kernels_ctx {
	uint64_t N;
	const char *cache;
	bool skip_traced, instructions, have_valgrind;
	char self[4096], nstr[32];
	char work[4200], json[4300], cgout[4300], cgarg[4400];
};

/* Cachegrind on kernel's native run and, with --instructions, callgrind's count inside
 * cache_fast_miss() on its trace-only run, over that run's L1 misses. */
static void
bench_kernel_valgrind(struct kernels_ctx *c, const char *kernel, struct kernel_bench *b)
{
	char *cg[] = { "valgrind",
		       "--tool=cachegrind",
		       "--cache-sim=yes",
		       "--I1=32768,8,64",
		       "--D1=32768,8,64",
		       "--LL=1048576,16,64",
		       "--cachegrind-out-file=/dev/null",
		       c->self,
		       "native",
		       "--kernel",
		       (char *)kernel,
		       "--N",
		       c->nstr,
		       NULL };
	/* Callgrind counts only inside cache_fast_miss(), where a traced run's L1 misses go: the
	 * trace-only run takes the same path at a fraction of the time. */
	char *ir[] = { "valgrind",
		       "--tool=callgrind",
		       "--collect-atstart=no",
		       "--toggle-collect=cache_fast_miss",
		       c->cgarg,
		       c->self,
		       "run",
		       "--kernel",
		       (char *)kernel,
		       "--N",
		       c->nstr,
		       "--cache",
		       (char *)c->cache,
		       "--json",
		       c->json,
		       "--trace-only",
		       NULL };

	if (!c->have_valgrind)
		return;
	b->cachegrind = child_run_time(cg);
	if (c->instructions && child_run_time(ir) >= 0) {
		struct child_run_figures f;
		double ir_total = child_run_callgrind_totals(c->cgout);

		child_run_report(c->json, &f);
		/* Nothing collected: this cache's L1 misses take another path. */
		if (ir_total > 0 && f.l1_misses > 0)
			b->instructions_per_miss = ir_total / f.l1_misses;
	}
}

/* One kernel's runs into b: native, traced (unless skipped), trace-only, then Valgrind's.
 * EXIT_RUNTIME after a message when a run failed, or (no message) when interrupted. */
static int
bench_kernel(struct kernels_ctx *c, const char *kernel, struct kernel_bench *b)
{
	char *nat[] = { c->self, "native", "--kernel", (char *)kernel, "--N", c->nstr, NULL };
	char *tr[] = { c->self,  "run",   "--kernel", (char *)kernel,
		       "--N",    c->nstr, "--cache",  (char *)c->cache,
		       "--json", c->json, NULL,       NULL };
	struct attn_config cfg = { ATTN_NAIVE, c->N,  64,    1, 1, 1, ATTN_FP32, 64,
				   64,         false, false, 0, 0, 0, 0,         0 };

	memset(b, 0, sizeof(*b));
	b->kernel = kernel;
	b->traced = (struct child_run_figures){ -1, -1, -1, -1, -1 };
	b->cachegrind = b->instructions_per_miss = -1;
	attn_kernel_parse(kernel, &cfg.kernel);
	b->array_bytes = (double)attn_array_bytes(&cfg);
	b->native = child_run_time(nat);
	if (!c->skip_traced) {
		b->traced.seconds = child_run_time(tr);
		child_run_report(c->json, &b->traced);
	}
	tr[10] = "--trace-only";
	b->trace_only.seconds = child_run_time(tr);
	child_run_report(c->json, &b->trace_only);
	if (spawn_guard_signal())
		return EXIT_RUNTIME;
	if (b->native < 0 || b->trace_only.seconds < 0 ||
	    (!c->skip_traced && b->traced.seconds < 0))
		return print_error("bench: a %s run failed", kernel);
	bench_kernel_valgrind(c, kernel, b);
	return spawn_guard_signal() ? EXIT_RUNTIME : EXIT_OK;
}

enum { NK = 2 }; /* the kernels bench --kernels measures: naive, flash2 */

/* The table: a column per kernel, a row per figure with its target, then what it means. */
static void
bench_kernels_table(FILE *out, const struct kernel_bench kb[NK], double fig[NK][FIG_COUNT])
{
	fprintf(out, "\n%-32s", "");
	for (int k = 0; k < NK; k++) {
		fprintf(out, " %12s", kb[k].kernel);
		figures_of(&kb[k], fig[k]);
	}
	fprintf(out, "   target\n");
	for (int f = 0; f < FIG_COUNT; f++) {
		double v[NK];

		for (int k = 0; k < NK; k++)
			v[k] = fig[k][f];
		print_row(out, &figure_defs[f], v, NK);
	}
	fprintf(out,
		"\nEach time is a whole process that allocates, fills and runs the kernel once. The\n"
		"trace-only target holds where tiles are in scratch (h100, lab): on other caches\n"
		"every access still goes through the model. accesses/s is over the model's own time\n"
		"for the run (its report's traced_seconds). Instructions per L1 miss (--instructions):\n"
		"callgrind inside cache_fast_miss() on the trace-only run, over its L1 misses. The\n"
		"traced run's memory is the arrays plus the fixed-size cache model: it does not grow\n"
		"with the access count.\n");
}

/* The figures as JSON, written to json_path when given. */
static int
bench_kernels_json(const struct kernels_ctx *c, const struct kernel_bench kb[NK],
		   double fig[NK][FIG_COUNT], const char *json_path, int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject(), *rows;
	char err[512];
	int rc = EXIT_OK;

	report_add_header(root, argc, argv);
	rows = cJSON_AddArrayToObject(root, "kernels");
	for (int k = 0; k < NK; k++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kernel", kb[k].kernel);
		cJSON_AddNumberToObject(o, "N", (double)c->N);
		cJSON_AddStringToObject(o, "cache", c->cache);
		cJSON_AddBoolToObject(o, "trace_only", c->skip_traced);
		for (int f = 0; f < FIG_COUNT; f++) {
			const struct figure_def *d = &figure_defs[f];
			char key[96];

			if (fig[k][f] < 0)
				continue;
			cJSON_AddNumberToObject(o, d->key, fig[k][f]);
			if (d->target > 0) {
				snprintf(key, sizeof(key), "%s_target", d->key);
				cJSON_AddNumberToObject(o, key, d->target);
			}
		}
		cJSON_AddItemToArray(rows, o);
	}
	if (json_path && report_write_json(json_path, root, err, sizeof(err)))
		rc = print_error("%s", err);
	cJSON_Delete(root);
	return rc;
}

/* The kernel part of the benchmark, in one run: for naive and flash2, the native run, the
 * computing traced run and the trace-only run through the model (cache `cache`), Cachegrind on
 * the native run, the ratios next to their targets, the model's accesses per second and, with
 * `instructions`, the instructions per L1 miss in cache_fast_miss() (callgrind on the
 * trace-only run). skip_traced (--trace-only) leaves the computing traced run out. */
static int
bench_kernels(uint64_t N, const char *cache, bool skip_traced, bool instructions,
	      const char *json_path, int argc, char **argv)
{
	static const char *names[NK] = { "naive", "flash2" };
	struct kernels_ctx c = { 0 };
	struct kernel_bench kb[NK];
	char err[512];
	ssize_t n = readlink("/proc/self/exe", c.self, sizeof(c.self) - 1);
	FILE *out;
	double fig[NK][FIG_COUNT];
	int rc = EXIT_OK;

	c.N = N;
	c.cache = cache;
	c.skip_traced = skip_traced;
	c.instructions = instructions;
	c.have_valgrind = system("valgrind --version >/dev/null 2>&1") == 0;
	out = text_stream(json_path);
	if (n <= 0)
		return print_error("cannot find the memsim executable (/proc/self/exe)");
	c.self[n] = '\0';
	/* The runs' reports and callgrind's output go to a directory of our own: no name another
	 * user can predict, no link to follow. An interrupt stops the run under way and removes
	 * the directory. */
	spawn_guard_begin();
	if (make_private_dir(getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			     "memsim-bench", c.work, sizeof(c.work), err, sizeof(err))) {
		spawn_guard_end();
		return print_error("bench: %s", err);
	}
	snprintf(c.json, sizeof(c.json), "%s/run.json", c.work);
	snprintf(c.cgout, sizeof(c.cgout), "%s/callgrind.out", c.work);
	snprintf(c.cgarg, sizeof(c.cgarg), "--callgrind-out-file=%s", c.cgout);
	snprintf(c.nstr, sizeof(c.nstr), "%llu", (unsigned long long)N);
	fprintf(out,
		"memsim bench --kernels: N=%s d=64 fp32, B_r = B_c = 64; model runs on cache %s;\n"
		"Cachegrind (--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64) on the native run\n",
		c.nstr, cache);
	if (!c.have_valgrind)
		fprintf(out, "valgrind not found: Cachegrind and the instruction count are not "
			     "measured\n");
	for (int k = 0; k < NK && !rc; k++)
		rc = bench_kernel(&c, names[k], &kb[k]);
	if (!rc) {
		bench_kernels_table(out, kb, fig);
		rc = bench_kernels_json(&c, kb, fig, json_path, argc, argv);
	}
	unlink(c.json);
	unlink(c.cgout);
	rmdir(c.work);
	spawn_guard_end();
	if (spawn_guard_signal())
		rc = print_error("bench: interrupted by signal %d: removed %s",
				 spawn_guard_signal(), c.work);
	return rc;
}

void
usage_bench(FILE *f)
{
	fprintf(f,
		"Usage: memsim bench [--accesses N] [--cache SPEC] [--dir DIR] [--repeat R]\n"
		"                    [--keep] [--json FILE]\n"
		"       memsim bench --kernels [--N N] [--cache SPEC] [--trace-only]\n"
		"                    [--instructions] [--json FILE]\n"
		"       memsim bench --modes [--kernel K] [--N N] [--json FILE]\n"
		"       memsim bench --onepass [--kernel K] [--N N] [--repeat R] [--json FILE]\n"
		"       memsim bench --threads T[,T...] [--N N] [--heads H] [--cache SPEC]\n"
		"                    [--trace-only] [--repeat R] [--json FILE]\n"
		"\n"
		"Builds a synthetic attention-shaped trace (two interleaved row streams and a strided\n"
		"column stream, the S = QK^T loop of a naive kernel), writes it in memsim's binary\n"
		"format and in din, replays both through the cache model and prints accesses per\n"
		"second, with the rate of feeding the generator straight into the model for scale,\n"
		"and the rate of reading the binary file without the model (the floor) and the\n"
		"replay's time over the floor's, by wall and by user CPU time; likewise the din\n"
		"file parsed without the model and its time over reading its bytes alone. All\n"
		"three must give identical counters; bench fails if they do not.\n"
		"\n"
		"  -n, --accesses N   at least this many accesses [50000000]\n"
		"  -c, --cache SPEC   cache spec or preset [L1=32K:8:64,L2=1M:16:64]\n"
		"  -d, --dir DIR      where the trace files go [$TMPDIR or /tmp]\n"
		"  -r, --repeat R     replays of each file; the best time is reported [3]\n"
		"  -s, --shape S      blocked: key rows in blocks of 64 as blocked kernels sweep them;\n"
		"                     unblocked: every key row per query row, K streaming through L1;\n"
		"                     naive: whole naive attention (N 512, d 64, fp32, a query row at\n"
		"                     a time, P V down V's columns), a quarter of accesses missing L1,\n"
		"                     with arrays and phases [blocked]\n"
		"  -p, --pad P        elements of padding per V^T row; 0 puts the column stream in\n"
		"                     one L1 set, the conflict worst case; not naive [16]\n"
		"      --keep         keep the trace files (interrupted, bench removes them and\n"
		"                     exits 1, or with --keep says where they are)\n"
		"  -j, --json FILE    also write the figures as JSON\n"
		"      --kernels      instead, in one run for naive and flash2: the native run, the\n"
		"                     traced run and the trace-only run (memsim run --trace-only)\n"
		"                     through --cache [cachegrind], and Cachegrind on the native\n"
		"                     run; prints traced/native, trace-only/native and\n"
		"                     cachegrind/traced next to their targets (< 10, < 1, >= 5),\n"
		"                     and the model's accesses per second\n"
		"      --N N          --kernels: sequence length [2048]\n"
		"      --trace-only   --kernels, --threads: leave the computing runs out\n"
		"      --instructions --kernels: also count the instructions per L1 miss in\n"
		"                     cache_fast_miss() (callgrind on the trace-only run; slow)\n"
		"      --modes        instead, in one process: what each mode costs and its error\n"
		"                     (computing, trace-only, 12 L2 sizes separately and in one pass\n"
		"                     by fan-out and by the stack pass, sampling 1 set in 8,\n"
		"                     formulas); fails if a one pass's counters differ\n"
		"      --kernel K     --modes: the kernel [flash2]; --N: [1024]\n"
		"      --onepass      instead, in one process: 12 sizes of an 8-way L2 in one pass\n"
		"                     by the stack pass and by fan-out over one run of one size\n"
		"                     (the mean of the twelve run separately), --repeat times,\n"
		"                     each ratio and their median against the targets (<= 1.5,\n"
		"                     <= 2); fails if a one pass's counters differ; --kernel\n"
		"                     [naive], --N [2048], --repeat [3]\n"
		"      --threads T[,T...] instead, in one process: naive and flash2, computing\n"
		"                     and trace-only (--trace-only: that alone), on one thread and\n"
		"                     on each T (2 to 64; memsim run --threads): wall and CPU time,\n"
		"                     speedup, speedup per core (over the cores its threads keep\n"
		"                     busy) against its target (>= 0.7) and against as many one-\n"
		"                     thread runs at once (forked: what the cores give independent\n"
		"                     work), whether the counters are one thread's (exit 1 if not);\n"
		"                     d = 64, fp32; --N [2048],\n"
		"                     --heads H [16], --cache [h100], --repeat [1]\n");
}

/* Everything the command line gives bench. */
struct bench_args {
	uint64_t target, repeat, pad;
	const char *spec_text, *json_path, *dir;
	enum replay_shape shape;
	bool keep, kernels, cache_given, trace_only, instructions, modes, onepass;
	const char *mode_kernel;
	uint64_t kn; /* --N */
	bool kn_given, repeat_given, mode_kernel_given;
	const char *threads; /* --threads T[,T...]: NULL when not given */
	uint64_t heads;
};

/* Reads the options into a; stops at the first bad one (its message printed) or --help
 * (OPTPARSE_HELP_SHOWN). */
static int
bench_parse(struct bench_args *a, int argc, char **argv)
{
	/* in enum replay_shape's order */
	static const char *const shapes[] = { "blocked", "unblocked", "naive", NULL };
	unsigned shape = a->shape;
	const struct optparse_option opts[] = {
		{ "accesses", 'n', OPTPARSE_U64, .dest = &a->target, .min = 1,
		  .expect = "a positive number" },
		{ "cache", 'c', OPTPARSE_STRING, .dest = &a->spec_text, .given = &a->cache_given },
		{ "dir", 'd', OPTPARSE_STRING, .dest = &a->dir },
		{ "repeat", 'r', OPTPARSE_U64, .dest = &a->repeat, .min = 1, .max = 100,
		  .expect = "a number from 1 to 100", .given = &a->repeat_given },
		{ "threads", 0, OPTPARSE_STRING, .dest = &a->threads },
		{ "heads", 0, OPTPARSE_U64, .dest = &a->heads, .min = 1, .max = 4096,
		  .expect = "a number from 1 to 4096" },
		{ "pad", 'p', OPTPARSE_U64, .dest = &a->pad, .max = 4096,
		  .expect = "a number from 0 to 4096" },
		{ "shape", 's', OPTPARSE_CHOICE, .dest = &shape, .words = shapes },
		{ "keep", 0, OPTPARSE_FLAG, .dest = &a->keep },
		{ "kernels", 0, OPTPARSE_FLAG, .dest = &a->kernels },
		{ "N", 0, OPTPARSE_U64, .dest = &a->kn, .min = 1, .expect = "a positive number",
		  .given = &a->kn_given },
		{ "trace-only", 0, OPTPARSE_FLAG, .dest = &a->trace_only },
		{ "instructions", 0, OPTPARSE_FLAG, .dest = &a->instructions },
		{ "modes", 0, OPTPARSE_FLAG, .dest = &a->modes },
		{ "onepass", 0, OPTPARSE_FLAG, .dest = &a->onepass },
		{ "kernel", 0, OPTPARSE_STRING, .dest = &a->mode_kernel,
		  .given = &a->mode_kernel_given },
		{ "json", 'j', OPTPARSE_STRING, .dest = &a->json_path },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "bench",
					      .usage = usage_bench,
					      .options = opts };
	int rc;

	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc;
	a->shape = (enum replay_shape)shape;
	if (optind != argc)
		return usage_error("bench", "bench takes no file arguments");
	if (a->trace_only && !a->kernels && !a->threads)
		return usage_error("bench", "--trace-only times the kernels: it needs --kernels");
	if (a->instructions && !a->kernels)
		return usage_error(
			"bench", "--instructions counts in the kernels' runs: it needs --kernels");
	if (a->threads && (a->kernels || a->modes))
		return usage_error("bench", "--threads is a benchmark of its own: no --kernels or "
					    "--modes");
	if (a->heads && !a->threads)
		return usage_error("bench", "--heads sizes the --threads runs: it needs --threads");
	if (a->modes && (a->kernels || a->cache_given))
		return usage_error("bench", "--modes runs its own caches: no --kernels or --cache");
	if (a->onepass && (a->modes || a->kernels || a->threads || a->cache_given))
		return usage_error("bench", "--onepass runs its own caches: no --modes, --kernels, "
					    "--threads or --cache");
	return 0;
}

/* The replay benchmark's state: its files, the timings (t[3], the binary file read without
 * the model, is the floor; t[4] the din file decoded without the model, t[5] its bytes only;
 * t[6] the binary file's bytes only; t[7] the binary replay on two threads) and the models
 * the first three and the two-thread replay left. */
enum { BENCH_TIMINGS = 8 };
struct trace_bench {
	struct spec spec;
	char work[4096], mt_path[4200], din_path[4200];
	struct replay_timing t[BENCH_TIMINGS];
	struct cache *result[4];
};

/* 2. The same accesses as the direct run written once to both files. */
static int
bench_write_files(struct trace_bench *tb, const struct bench_args *a)
{
	struct replay_sink files = { 0 };
	char err[512];

	files.mt = mtrace_writer_open(tb->mt_path, "memsim bench (synthetic attention trace)", err,
				      sizeof(err));
	if (!files.mt)
		return print_error("%s", err);
	files.din = fopen(tb->din_path, "wx");
	if (!files.din) {
		print_error("cannot create %s: %s", tb->din_path, strerror(errno));
		mtrace_writer_close(files.mt, err, sizeof(err));
		return EXIT_RUNTIME;
	}
	print_error("bench: writing %" PRIu64 " accesses to %s and %s", tb->t[0].accesses,
		    tb->mt_path, tb->din_path);
	replay_bench_generate(&files, a->target, a->pad, a->shape);
	if (mtrace_writer_close(files.mt, err, sizeof(err))) {
		print_error("%s", err);
		fclose(files.din);
		return EXIT_RUNTIME;
	}
	if (fclose(files.din))
		return print_error("writing %s: %s", tb->din_path, strerror(errno));
	return 0;
}

/* The three phases; EXIT_OK with every counter agreeing, else a message (none when
 * interrupted: the caller says so). */
static int
bench_trace_measure(struct trace_bench *tb, const struct bench_args *a)
{
	char err[512];

	if (replay_bench_direct(&tb->spec.cache, a->target, a->pad, a->shape, &tb->t[0],
				&tb->result[0])) {
		fprintf(stderr, "memsim: bench: cannot allocate the cache model (%.1f MiB)\n",
			(double)cache_model_bytes(&tb->spec.cache) / 1048576.0);
		return EXIT_RUNTIME;
	}
	if (spawn_guard_signal() || bench_write_files(tb, a) || spawn_guard_signal())
		return EXIT_RUNTIME;
	tb->t[1].file_bytes = tb->t[3].file_bytes = tb->t[6].file_bytes = tb->t[7].file_bytes =
		replay_bench_file_size(tb->mt_path);
	tb->t[2].file_bytes = tb->t[4].file_bytes = tb->t[5].file_bytes =
		replay_bench_file_size(tb->din_path);

	/* 3. Replays, best of `repeat`. */
	if (replay_bench_time(tb->mt_path, TRACE_FORMAT_MEMSIM, &tb->spec, (int)a->repeat,
			      &tb->t[1], &tb->result[1], err, sizeof(err)) ||
	    replay_bench_time(tb->din_path, TRACE_FORMAT_DIN, &tb->spec, (int)a->repeat, &tb->t[2],
			      &tb->result[2], err, sizeof(err)) ||
	    replay_bench_floor(tb->mt_path, TRACE_FORMAT_MEMSIM, (int)a->repeat, &tb->t[3], err,
			       sizeof(err)) ||
	    replay_bench_floor(tb->din_path, TRACE_FORMAT_DIN, (int)a->repeat, &tb->t[4], err,
			       sizeof(err)) ||
	    replay_bench_raw_read(tb->din_path, (int)a->repeat, &tb->t[5], err, sizeof(err)) ||
	    replay_bench_raw_read(tb->mt_path, (int)a->repeat, &tb->t[6], err, sizeof(err)) ||
	    replay_bench_time_threads(tb->mt_path, TRACE_FORMAT_MEMSIM, &tb->spec, (int)a->repeat,
				      2, &tb->t[7], &tb->result[3], err, sizeof(err)))
		return print_error("%s", err);
	/* A raw read decodes nothing: its rate is the file's accesses over its time. */
	tb->t[5].accesses = tb->t[4].accesses;
	tb->t[6].accesses = tb->t[3].accesses;
	if (spawn_guard_signal())
		return EXIT_RUNTIME;
	if (!replay_bench_same_counters(tb->result[0], tb->result[1]) ||
	    !replay_bench_same_counters(tb->result[0], tb->result[2]) ||
	    !replay_bench_same_counters(tb->result[0], tb->result[3]) ||
	    tb->t[7].accesses != tb->t[0].accesses ||
	    tb->t[1].accesses != tb->t[0].accesses || tb->t[2].accesses != tb->t[0].accesses ||
	    tb->t[3].accesses != tb->t[0].accesses || tb->t[4].accesses != tb->t[0].accesses)
		return print_error("bench: the three replays disagree; this is a bug");
	return EXIT_OK;
}

/* L1's misses over the accesses, in percent. */
static double
l1_miss_percent(const struct trace_bench *tb)
{
	const struct cache_level_stats *l1 = cache_level_stats(tb->result[1], 0);

	return 100.0 * (double)(l1->read_misses + l1->write_misses) / (double)tb->t[0].accesses;
}

static void
bench_trace_print(FILE *out, const struct trace_bench *tb, const struct bench_args *a)
{
	const struct replay_timing *t = tb->t;
	const struct cache_traffic *dram = cache_dram(tb->result[1]);

	fprintf(out, "memsim bench: %" PRIu64 " accesses, %s trace, cache %s", t[0].accesses,
		replay_shape_name(a->shape), a->spec_text);
	if (a->shape != REPLAY_SHAPE_NAIVE)
		fprintf(out, ", V^T row pad %" PRIu64, a->pad);
	fprintf(out, ", best of %" PRIu64 "\n\n", a->repeat);
	fprintf(out, "%-38s %9s %9s %12s %12s %9s %8s\n", "source", "seconds", "user s",
		"accesses/s", "by user s", "file MiB", "B/access");
	for (int i = 0; i < BENCH_TIMINGS; i++) {
		char by_user[32] = "-"; /* the raw read's time is the kernel's: no user time */

		if (t[i].best_user > 0)
			snprintf(by_user, sizeof(by_user), "%.3e",
				 (double)t[i].accesses / t[i].best_user);
		fprintf(out, "%-38s %9.3f %9.3f %12.3e %12s %9.1f %8.2f\n", t[i].name, t[i].best,
			t[i].best_user, (double)t[i].accesses / t[i].best, by_user,
			(double)t[i].file_bytes / 1048576.0,
			(double)t[i].file_bytes / (double)t[i].accesses);
	}
	fprintf(out, "\nbinary/din replay speed ratio: %.2f\n", t[2].best / t[1].best);
	fprintf(out, "binary replay/floor: %.2f (by user time %.2f)\n", t[1].best / t[3].best,
		t[1].best_user / t[3].best_user);
	fprintf(out, "binary floor/raw read: %.2f (decoding over reading the file's bytes)\n",
		t[3].best / t[6].best);
	fprintf(out, "binary replay, 2 threads/1 thread: %.2f (wall time)\n", t[7].best / t[1].best);
	fprintf(out, "din parse: %.3e accesses/s, %.0f MB/s, %.2f x the raw read's time\n",
		(double)t[4].accesses / t[4].best, (double)t[4].file_bytes / t[4].best / 1e6,
		t[4].best / t[5].best);
	fprintf(out,
		"counters identical across the four: yes (L1 miss rate %.2f%%, DRAM %.1f MiB)\n",
		l1_miss_percent(tb), (double)(dram->read_bytes + dram->write_bytes) / 1048576.0);
}

static int
bench_trace_json(const struct trace_bench *tb, const struct bench_args *a, int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject(), *runs;
	char err[512];
	int rc = EXIT_OK;

	report_add_header(root, argc, argv);
	cJSON_AddStringToObject(root, "cache", a->spec_text);
	cJSON_AddStringToObject(root, "shape", replay_shape_name(a->shape));
	if (a->shape != REPLAY_SHAPE_NAIVE) /* the V^T rows' padding: no V^T in naive's trace */
		cJSON_AddNumberToObject(root, "pad", (double)a->pad);
	cJSON_AddNumberToObject(root, "accesses", (double)tb->t[0].accesses);
	cJSON_AddNumberToObject(root, "l1_miss_percent", l1_miss_percent(tb));
	cJSON_AddNumberToObject(root, "replay_over_floor", tb->t[1].best / tb->t[3].best);
	cJSON_AddNumberToObject(root, "replay_over_floor_user",
				tb->t[1].best_user / tb->t[3].best_user);
	cJSON_AddNumberToObject(root, "din_parse_over_raw_read", tb->t[4].best / tb->t[5].best);
	cJSON_AddNumberToObject(root, "floor_over_raw_read", tb->t[3].best / tb->t[6].best);
	cJSON_AddNumberToObject(root, "threads2_over_threads1", tb->t[7].best / tb->t[1].best);
	runs = cJSON_AddArrayToObject(root, "runs");
	for (int i = 0; i < BENCH_TIMINGS; i++) {
		const struct replay_timing *t = &tb->t[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "source", t->name);
		cJSON_AddNumberToObject(o, "best_seconds", t->best);
		cJSON_AddNumberToObject(o, "worst_seconds", t->worst);
		cJSON_AddNumberToObject(o, "best_user_seconds", t->best_user);
		cJSON_AddNumberToObject(o, "accesses_per_second", (double)t->accesses / t->best);
		cJSON_AddNumberToObject(o, "file_bytes", (double)t->file_bytes);
		cJSON_AddItemToArray(runs, o);
	}
	if (report_write_json(a->json_path, root, err, sizeof(err)))
		rc = print_error("%s", err);
	cJSON_Delete(root);
	return rc;
}

/* The replay benchmark: the generator into the model, the trace files written, both replayed;
 * the table, and the JSON with --json. */
static int
bench_trace(const struct bench_args *a, int argc, char **argv)
{
	struct trace_bench tb = { .t = { { .name = "direct (generator -> model)" },
					 { .name = "memsim binary trace" },
					 { .name = "din text trace" },
					 { .name = "memsim binary, read only (the floor)" },
					 { .name = "din text, parse only (no model)" },
					 { .name = "din text, raw read (bytes only)" },
					 { .name = "memsim binary, raw read (bytes only)" },
					 { .name = "memsim binary trace, 2 threads" } } };
	char err[512];
	FILE *out;
	int rc;

	if (spec_parse(a->spec_text, &tb.spec, err, sizeof(err)))
		return usage_error("bench", "--cache: %s", err);
	out = text_stream(a->json_path);
	/* The trace files go to a directory of our own inside DIR: no name another user can
	 * predict, no link to follow. An interrupt stops the work and removes it (not --keep). */
	spawn_guard_begin();
	if (make_private_dir(a->dir, "memsim-bench", tb.work, sizeof(tb.work), err,
			     sizeof(err))) {
		spawn_guard_end();
		return print_error("bench: %s", err);
	}
	snprintf(tb.mt_path, sizeof(tb.mt_path), "%s/trace.mtr", tb.work);
	snprintf(tb.din_path, sizeof(tb.din_path), "%s/trace.din", tb.work);
	rc = bench_trace_measure(&tb, a);
	if (!rc) {
		bench_trace_print(out, &tb, a);
		if (a->json_path)
			rc = bench_trace_json(&tb, a, argc, argv);
	}
	for (int i = 0; i < 4; i++)
		cache_destroy(tb.result[i]);
	if (!a->keep) {
		unlink(tb.mt_path);
		unlink(tb.din_path);
		rmdir(tb.work);
	}
	spawn_guard_end();
	if (spawn_guard_signal())
		print_error("bench: interrupted by signal %d: %s%s", spawn_guard_signal(),
			    a->keep ? "the trace files so far are in " : "removed ", tb.work);
	else if (a->keep)
		print_error("bench: the trace files are in %s", tb.work);
	return spawn_guard_signal() ? EXIT_RUNTIME : rc;
}

int
cmd_bench(int argc, char **argv)
{
	struct bench_args a = {
		.target = 50000000,
		.repeat = 3,
		.pad = 16,
		.spec_text = "L1=32K:8:64,L2=1M:16:64",
		.dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		.shape = REPLAY_SHAPE_BLOCKED,
		.mode_kernel = "flash2",
		.kn = 2048,
	};
	int rc = bench_parse(&a, argc, argv);

	if (rc)
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	if (a.threads) {
		struct bench_threads_args t = {
			.trace_only = a.trace_only,
			.N = a.kn_given ? a.kn : 2048,
			.heads = a.heads ? a.heads : 16,
			.repeat = a.repeat_given ? a.repeat : 1,
			.cache = a.cache_given ? a.spec_text : "h100",
			.json_path = a.json_path,
		};
		char err[256];

		if (bench_threads_parse(a.threads, &t, err, sizeof(err)))
			return usage_error("bench", "%s", err);
		return bench_threads(&t, argc, argv);
	}
	if (a.onepass)
		return bench_onepass(a.mode_kernel_given ? a.mode_kernel : "naive", a.kn,
				     a.repeat_given ? (unsigned)a.repeat : 3, a.json_path, argc,
				     argv);
	if (a.modes)
		return bench_modes(a.mode_kernel, a.kn_given ? a.kn : 1024, a.json_path, argc, argv);
	if (a.kernels)
		return bench_kernels(a.kn, a.cache_given ? a.spec_text : "cachegrind", a.trace_only,
				     a.instructions, a.json_path, argc, argv);
	return bench_trace(&a, argc, argv);
}
