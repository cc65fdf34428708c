/*
 * memsim bench --threads: see bench/bench_threads.h.
 *
 * A computing run on T threads keeps one more busy: the caller's, which simulates its
 * trace-only form while T threads compute its values. A trace-only run hands its accesses to
 * the T slices of the sets; with tiles in scratch the caller simulates one of them itself (T
 * busy), without it only hands out (T + 1). The speedup per core divides by the cores the busy
 * threads can use (sim_result.busy, the cores online at most); one thread is one core.
 *
 * Cores that share caches, memory bandwidth or a clock give less to each when more of them
 * run, whatever runs: on the lent GPU machines' hosts, independent one-thread runs at once
 * each took 10 to 50% longer than one alone. So each row also runs that many copies of the
 * one-thread run at once, each in a process of its own, and gives the speedup per core next
 * to what the copies got a core: the most any split of the run could.
 */

#include "bench/bench_threads.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/report.h"
#include "base/util.h"
#include "bench/replay_bench.h"
#include "cli/commands.h"
#include "run/simulate.h"
#include "sim/spec.h"

#define TARGET_PER_CORE 0.7 /* issue 24: naive and flash2 at H100 size */

#define ROWS_MAX (4 * BENCH_THREADS_MAX)

/* One run's figures on one thread and on T. */
struct threads_row {
	const char *kernel;
	bool trace_only;
	unsigned threads;              /* T */
	double wall1, cpu1, wall, cpu; /* best of the repeats, seconds */
	unsigned used;                 /* threads the run on T took */
	unsigned busy;                 /* threads busy at once in it, the caller's included */
	bool same;                     /* its counters are one thread's */
	unsigned copies;               /* one-thread runs at once: its cores */
	double copies_wall;            /* the slowest copy's wall seconds, best of the repeats */
};

/* Best wall and processor seconds of `repeat` runs of cfg on `threads` threads; *keep the
 * first run's result (the caller finishes it). -1 with a message in err when a run fails. */
static int
time_runs(const struct attn_config *cfg, const struct spec *spec, bool trace_only,
	  unsigned threads, uint64_t repeat, double *wall, double *cpu, struct sim_result *keep,
	  char *err, size_t errlen)
{
	*wall = *cpu = -1;
	for (uint64_t r = 0; r < repeat; r++) {
		struct sim_result res;
		double w0 = now_seconds(), c0 = cpu_seconds(), w, c;

		if (sim_kernel_split(cfg, spec, true, 1, trace_only, threads, &res, err, errlen))
			return -1;
		w = now_seconds() - w0;
		c = cpu_seconds() - c0;
		if (*wall < 0 || w < *wall)
			*wall = w;
		if (*cpu < 0 || c < *cpu)
			*cpu = c;
		if (r == 0)
			*keep = res;
		else
			sim_result_finish(&res);
	}
	return 0;
}

/* A copy's process: 0 when its counters are one's, 3 when they differ, 1 when it fails. */
static int
copy_main(const struct attn_config *cfg, const struct spec *spec, bool trace_only,
	  const struct sim_result *one)
{
	struct sim_result res;
	char err[512];

	if (sim_kernel_split(cfg, spec, true, 1, trace_only, 1, &res, err, sizeof(err)))
		return 1;
	return replay_bench_same_counters(one->cache, res.cache) ? 0 : 3;
}

/* The wall seconds of `copies` one-thread runs of cfg at once, each forked (this process has
 * no other threads here), until the slowest ends; the best of `repeat`. -1 with a message in
 * err when a copy cannot start, fails, or counts other than one. */
static int
time_copies(const struct attn_config *cfg, const struct spec *spec, bool trace_only,
	    unsigned copies, uint64_t repeat, const struct sim_result *one, double *wall, char *err,
	    size_t errlen)
{
	pid_t pid[BENCH_THREADS_COPIES_MAX];

	*wall = -1;
	fflush(NULL); /* what the copies inherit unwritten they would write again */
	for (uint64_t r = 0; r < repeat; r++) {
		double w0 = now_seconds(), w;
		unsigned started = 0;
		bool bad = false;

		for (; started < copies; started++) {
			pid_t p = fork();

			if (p == 0)
				_exit(copy_main(cfg, spec, trace_only, one));
			if (p < 0) {
				snprintf(err, errlen, "cannot start copy %u of %u: %s", started + 1,
					 copies, strerror(errno));
				bad = true;
				break;
			}
			pid[started] = p;
		}
		for (unsigned i = 0; i < started; i++) {
			int st = 0;

			if (waitpid(pid[i], &st, 0) == pid[i] && WIFEXITED(st) && !WEXITSTATUS(st))
				continue;
			if (!bad)
				snprintf(err, errlen, "copy %u of %u of the one-thread run %s",
					 i + 1, copies,
					 WIFEXITED(st) && WEXITSTATUS(st) == 3
						 ? "counted other than the first"
						 : "failed");
			bad = true;
		}
		w = now_seconds() - w0;
		if (bad)
			return -1;
		if (*wall < 0 || w < *wall)
			*wall = w;
	}
	return 0;
}

/* The cores a run keeps busy: its busy threads, at most the cores online. */
static double
cores_of(const struct threads_row *r)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	double n = r->busy ? r->busy : 1;

	return online > 0 && n > (double)online ? (double)online : n;
}

static double
per_core(const struct threads_row *r)
{
	return r->wall1 / r->wall / cores_of(r);
}

/* What the copies got a core: one alone's wall over the slowest copy's. */
static double
copies_per_core(const struct threads_row *r)
{
	return r->wall1 / r->copies_wall;
}

int
bench_threads_parse(const char *text, struct bench_threads_args *a, char *err, size_t errlen)
{
	const char *p = text;

	a->nthreads = 0;
	while (*p) {
		char *end;
		unsigned long v = strtoul(p, &end, 10);

		if (end == p || v < 2 || v > 64 || (*end && *end != ',') ||
		    (*end == ',' && !end[1]) || a->nthreads == BENCH_THREADS_MAX) {
			snprintf(
				err, errlen,
				"--threads: '%s' is not a list of up to %d thread counts from 2 to 64 "
				"(2,4,8)",
				text, BENCH_THREADS_MAX);
			return -1;
		}
		a->threads[a->nthreads++] = (unsigned)v;
		p = *end ? end + 1 : end;
	}
	if (!a->nthreads) {
		snprintf(err, errlen, "--threads: '' is not a list of thread counts (2,4,8)");
		return -1;
	}
	return 0;
}

/* Every row: for naive and flash2, computing (unless a->trace_only) and trace-only, one thread
 * once, then each T. Returns the rows, or -1 with a message in err. */
static int
measure(const struct bench_threads_args *a, const struct spec *spec, struct threads_row *rows,
	char *err, size_t errlen)
{
	static const char *const kernels[] = { "naive", "flash2" };
	int n = 0;

	for (int i = 0; i < 4; i++) {
		struct attn_config cfg = { ATTN_NAIVE, a->N,  64,    a->heads, a->heads, 1,
					   ATTN_FP32,  64,    64,    false,    false,    0,
					   0,          0,     0,     0 };
		bool trace_only = i % 2;
		struct sim_result one;
		double wall1, cpu1;

		if (a->trace_only && !trace_only)
			continue;
		attn_kernel_parse(kernels[i / 2], &cfg.kernel);
		if (time_runs(&cfg, spec, trace_only, 1, a->repeat, &wall1, &cpu1, &one, err,
			      errlen))
			return -1;
		for (unsigned t = 0; t < a->nthreads; t++) {
			struct threads_row *r = &rows[n++];
			struct sim_result many;

			memset(r, 0, sizeof(*r));
			r->kernel = kernels[i / 2];
			r->trace_only = trace_only;
			r->threads = a->threads[t];
			r->wall1 = wall1;
			r->cpu1 = cpu1;
			if (time_runs(&cfg, spec, trace_only, r->threads, a->repeat, &r->wall,
				      &r->cpu, &many, err, errlen)) {
				sim_result_finish(&one);
				return -1;
			}
			r->used = many.threads;
			r->busy = many.busy;
			r->same = replay_bench_same_counters(one.cache, many.cache);
			sim_result_finish(&many);
			r->copies = (unsigned)cores_of(r);
			if (time_copies(&cfg, spec, trace_only, r->copies, a->repeat, &one,
					&r->copies_wall, err, errlen)) {
				sim_result_finish(&one);
				return -1;
			}
		}
		sim_result_finish(&one);
	}
	return n;
}

static void
print_table(FILE *out, const struct bench_threads_args *a, const struct threads_row *rows, int n)
{
	fprintf(out,
		"memsim bench --threads: N=%llu d=64 heads=%llu fp32, B_r = B_c = 64, cache %s; "
		"best of %llu; %ld cores online\n\n",
		(unsigned long long)a->N, (unsigned long long)a->heads, a->cache,
		(unsigned long long)a->repeat, sysconf(_SC_NPROCESSORS_ONLN));
	fprintf(out, "%-20s %9s %9s %3s %9s %9s %5s %8s %6s %9s %7s %6s %9s   target\n", "run",
		"1: wall s", "CPU s", "T", "T: wall s", "CPU s", "used", "speedup", "cores",
		"per core", "copies", "of it", "counters");
	for (int i = 0; i < n; i++) {
		const struct threads_row *r = &rows[i];
		char name[32];
		double pc = per_core(r);

		snprintf(name, sizeof(name), "%s%s", r->kernel,
			 r->trace_only ? " --trace-only" : "");
		fprintf(out,
			"%-20s %9.3f %9.3f %3u %9.3f %9.3f %5u %8.2f %6.0f %9.2f %7.2f %6.2f %9s   "
			">= %.1f: %s\n",
			name, r->wall1, r->cpu1, r->threads, r->wall, r->cpu, r->used,
			r->wall1 / r->wall, cores_of(r), pc, copies_per_core(r),
			pc / copies_per_core(r), r->same ? "same" : "DIFFER", TARGET_PER_CORE,
			pc >= TARGET_PER_CORE ? "met" : "MISSED");
	}
	fprintf(out,
		"\nspeedup: one thread's wall time over T threads'. cores: the threads busy at once,\n"
		"or the cores online if fewer: T + 1 for a computing run (the values on T, the\n"
		"trace-only form's simulation on the caller's); T for --trace-only with tiles in\n"
		"scratch (the caller hands out runs of rows and simulates the slices' batches too),\n"
		"T + 1 without (the caller hands out the accesses, and simulates only where a\n"
		"slice's ring is full). per core: speedup /\n"
		"cores. copies: as many one-thread runs as cores, at once, each in a process of its\n"
		"own: one alone's wall time over the slowest's, what these cores give independent\n"
		"work a core, and so the most a split can reach. of it: per core / copies.\n"
		"counters: every level's and DRAM's against one thread's.\n");
}

static int
write_json(const struct bench_threads_args *a, const struct threads_row *rows, int n, int argc,
	   char **argv)
{
	cJSON *root = cJSON_CreateObject(), *list;
	char err[512];
	int rc = EXIT_OK;

	report_add_header(root, argc, argv);
	cJSON_AddNumberToObject(root, "N", (double)a->N);
	cJSON_AddNumberToObject(root, "heads", (double)a->heads);
	cJSON_AddStringToObject(root, "cache", a->cache);
	cJSON_AddNumberToObject(root, "cores_online", (double)sysconf(_SC_NPROCESSORS_ONLN));
	list = cJSON_AddArrayToObject(root, "runs");
	for (int i = 0; i < n; i++) {
		const struct threads_row *r = &rows[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "kernel", r->kernel);
		cJSON_AddBoolToObject(o, "trace_only", r->trace_only);
		cJSON_AddNumberToObject(o, "threads", r->threads);
		cJSON_AddNumberToObject(o, "one_thread_wall_seconds", r->wall1);
		cJSON_AddNumberToObject(o, "one_thread_cpu_seconds", r->cpu1);
		cJSON_AddNumberToObject(o, "wall_seconds", r->wall);
		cJSON_AddNumberToObject(o, "cpu_seconds", r->cpu);
		cJSON_AddNumberToObject(o, "threads_used", r->used);
		cJSON_AddNumberToObject(o, "speedup", r->wall1 / r->wall);
		cJSON_AddNumberToObject(o, "busy_threads", r->busy);
		cJSON_AddNumberToObject(o, "cores", cores_of(r));
		cJSON_AddNumberToObject(o, "speedup_per_core", per_core(r));
		cJSON_AddNumberToObject(o, "speedup_per_core_target", TARGET_PER_CORE);
		cJSON_AddNumberToObject(o, "copies", r->copies);
		cJSON_AddNumberToObject(o, "copies_wall_seconds", r->copies_wall);
		cJSON_AddNumberToObject(o, "copies_speedup_per_core", copies_per_core(r));
		cJSON_AddNumberToObject(o, "per_core_of_copies", per_core(r) / copies_per_core(r));
		cJSON_AddBoolToObject(o, "counters_equal", r->same);
		cJSON_AddItemToArray(list, o);
	}
	if (report_write_json(a->json_path, root, err, sizeof(err)))
		rc = print_error("%s", err);
	cJSON_Delete(root);
	return rc;
}

int
bench_threads(const struct bench_threads_args *a, int argc, char **argv)
{
	struct threads_row rows[ROWS_MAX];
	struct attn_config cfg = { ATTN_NAIVE, a->N,  64, a->heads, a->heads, 1, ATTN_FP32, 64,
				   64,         false, false, 0,     0,     0, 0,        0 };
	struct spec spec;
	char err[512];
	FILE *out = text_stream(a->json_path);
	int n, rc;

	if (spec_parse(a->cache, &spec, err, sizeof(err)))
		return usage_error("bench", "--cache: %s", err);
	if (attn_config_check(&cfg, err, sizeof(err)))
		return usage_error("bench", "%s", err);
	if ((n = measure(a, &spec, rows, err, sizeof(err))) < 0)
		return print_error("bench: %s", err);
	print_table(out, a, rows, n);
	rc = a->json_path ? write_json(a, rows, n, argc, argv) : EXIT_OK;
	for (int i = 0; i < n; i++)
		if (!rows[i].same && !rc)
			rc = print_error("bench: %s%s on %u threads: counters differ from one "
					 "thread's",
					 rows[i].kernel, rows[i].trace_only ? " --trace-only" : "",
					 rows[i].used);
	return rc;
}
