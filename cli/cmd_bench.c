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
 */

#include <cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/report.h"
#include "cli/commands.h"
#include "kernels/attn.h"
#include "sim/spec.h"
#include "sim/util.h"
#include "traces/mtrace.h"
#include "traces/replay.h"

#define BENCH_N 4096u
#define BENCH_D 64u
#define Q_BASE UINT64_C(0x10000000)
#define K_BASE UINT64_C(0x20000000)
#define VT_BASE UINT64_C(0x30000000)
#define S_BASE UINT64_C(0x40000000)

struct sink {
	struct cache *cache;
	struct mtrace_writer *mt;
	FILE *din;
};

static inline void
emit(struct sink *s, enum trace_event_kind kind, uint64_t addr)
{
	if (s->cache)
		cache_access(s->cache, addr, 4, (enum cache_op)kind, 1);
	if (s->mt)
		mtrace_writer_access(s->mt, kind, addr, 4, 1);
	if (s->din)
		fprintf(s->din, "%d %" PRIx64 "\n", kind == TRACE_EV_STORE ? 1 : 0, addr);
}

/* One (i, j) step: the dot product with its column reads, then the store of S[i][j]. */
static uint64_t
step(struct sink *s, uint64_t i, uint64_t j, uint64_t pad)
{
	uint64_t qrow = Q_BASE + i * BENCH_D * 4, krow = K_BASE + j * BENCH_D * 4;

	for (uint64_t k = 0; k < BENCH_D; k++) {
		emit(s, TRACE_EV_LOAD, qrow + k * 4);
		emit(s, TRACE_EV_LOAD, krow + k * 4);
		if (k % 8 == 0)
			emit(s, TRACE_EV_LOAD, VT_BASE + (k * (BENCH_N + pad) + j) * 4);
	}
	emit(s, TRACE_EV_STORE, S_BASE + (i * BENCH_N + j) * 4);
	return 2 * BENCH_D + BENCH_D / 8 + 1;
}

/* Generates at least `target` accesses, whole rows of j at a time; returns how many. */
static uint64_t
generate(struct sink *s, uint64_t target, uint64_t pad, bool blocked)
{
	uint64_t n = 0;

	if (!blocked) {
		for (uint64_t i = 0; n < target; i++)
			for (uint64_t j = 0; j < BENCH_N; j++)
				n += step(s, i % BENCH_N, j, pad);
		return n;
	}
	for (uint64_t jb = 0; n < target; jb = (jb + 64) % BENCH_N)
		for (uint64_t i = 0; i < BENCH_N && n < target; i++)
			for (uint64_t j = jb; j < jb + 64; j++)
				n += step(s, i, j, pad);
	return n;
}

/* Runs argv (argv[0] a path) with stdout and stderr to /dev/null; returns its wall time, or a
 * negative value if it could not run or failed. */
static double
timed_child(char *const argv[])
{
	double t0;
	pid_t pid;
	int status;

	fflush(NULL); /* or the child's stdio would write our buffered output again */
	t0 = now_seconds();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		FILE *devnull = freopen("/dev/null", "w", stdout);

		(void)devnull;
		if (!freopen("/dev/null", "w", stderr))
			_exit(127);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	return now_seconds() - t0;
}

/* The kernel part of the benchmark: traced run (on cache, trace-only if asked) vs native run,
 * and Cachegrind on the native run vs the traced run, each a whole process (allocation and
 * fill included in all three). */
static int
bench_kernels(uint64_t N, const char *cache, bool trace_only, const char *json_path, int argc,
	      char **argv)
{
	static const char *kernels[] = { "naive", "flash2" };
	char self[4096], nstr[32], err[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	bool have_valgrind = system("valgrind --version >/dev/null 2>&1") == 0;
	cJSON *root = cJSON_CreateObject(), *rows = NULL;
	FILE *out = text_stream(json_path);
	char work[4200], json[4300];
	int rc = EXIT_OK;

	if (n <= 0) {
		fprintf(stderr, "memsim: cannot find the memsim executable (/proc/self/exe)\n");
		cJSON_Delete(root);
		return EXIT_RUNTIME;
	}
	self[n] = '\0';
	/* The traced runs' reports go to a directory of our own: no name another user can
	 * predict, no link to follow. */
	if (make_private_dir(getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			     "memsim-bench", work, sizeof(work), err, sizeof(err))) {
		fprintf(stderr, "memsim: bench: %s\n", err);
		cJSON_Delete(root);
		return EXIT_RUNTIME;
	}
	snprintf(json, sizeof(json), "%s/run.json", work);
	snprintf(nstr, sizeof(nstr), "%llu", (unsigned long long)N);
	report_add_header(root, argc, argv);
	rows = cJSON_AddArrayToObject(root, "kernels");
	fprintf(out,
		"memsim bench --kernels: N=%s d=64 fp32, B_r = B_c = 64, cache %s for the traced "
		"run%s\n",
		nstr, cache, trace_only ? " (trace-only)" : "");
	if (!have_valgrind)
		fprintf(out, "valgrind not found: the Cachegrind column is not measured\n");
	fprintf(out, "\n%-8s %10s %10s %10s %12s %10s %14s %12s\n", "kernel", "native s",
		"traced s", "traced/nat", "cachegrind s", "cg/traced", "traced RSS MiB",
		"arrays MiB");
	for (int k = 0; k < 2; k++) {
		char *nat[] = { self, "native", "--kernel", (char *)kernels[k], "--N", nstr, NULL };
		char *tr[] = { self,
			       "run",
			       "--kernel",
			       (char *)kernels[k],
			       "--N",
			       nstr,
			       "--cache",
			       (char *)cache,
			       "--json",
			       json,
			       trace_only ? "--trace-only" : NULL,
			       NULL };
		char cgout[600];
		char *cg[] = { "valgrind",
			       "--tool=cachegrind",
			       "--cache-sim=yes",
			       "--I1=32768,8,64",
			       "--D1=32768,8,64",
			       "--LL=1048576,16,64",
			       cgout,
			       self,
			       "native",
			       "--kernel",
			       (char *)kernels[k],
			       "--N",
			       nstr,
			       NULL };
		double tn, tt, tc = -1, rss = -1;
		struct attn_config cfg = { ATTN_NAIVE, N,  64, 1,     1,    1,
					   ATTN_FP32,  64, 64, false, false };
		cJSON *o;

		attn_kernel_parse(kernels[k], &cfg.kernel);
		snprintf(cgout, sizeof(cgout), "--cachegrind-out-file=/dev/null");
		/* All three are whole processes: allocate, fill, run once. */
		tn = timed_child(nat);
		tt = timed_child(tr);
		if (have_valgrind)
			tc = timed_child(cg);
		{
			/* The traced run reports its own peak memory. */
			FILE *jf = fopen(json, "r");

			if (jf) {
				char *text = xzalloc(1 << 22);
				size_t got = fread(text, 1, (1 << 22) - 1, jf);
				cJSON *j;

				text[got] = '\0';
				j = cJSON_Parse(text);
				if (cJSON_GetObjectItem(j, "peak_rss_bytes"))
					rss = cJSON_GetObjectItem(j, "peak_rss_bytes")->valuedouble;
				cJSON_Delete(j);
				free(text);
				fclose(jf);
			}
			unlink(json);
		}
		if (tn < 0 || tt < 0) {
			fprintf(stderr, "memsim: bench: a %s run failed\n", kernels[k]);
			rc = EXIT_RUNTIME;
			break;
		}
		fprintf(out, "%-8s %10.3f %10.3f %10.2f %12s %10s %14.1f %12.1f\n", kernels[k], tn,
			tt, tt / tn, tc >= 0 ? (snprintf(err, 20, "%.3f", tc), err) : "-",
			tc >= 0 ? (snprintf(err + 32, 20, "%.2f", tc / tt), err + 32) : "-",
			rss / 1048576, (double)attn_array_bytes(&cfg) / 1048576);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "kernel", kernels[k]);
		cJSON_AddNumberToObject(o, "N", (double)N);
		cJSON_AddNumberToObject(o, "native_seconds", tn);
		cJSON_AddStringToObject(o, "cache", cache);
		cJSON_AddBoolToObject(o, "trace_only", trace_only);
		cJSON_AddNumberToObject(o, "traced_seconds", tt);
		cJSON_AddNumberToObject(o, "traced_over_native", tt / tn);
		if (tc >= 0) {
			cJSON_AddNumberToObject(o, "cachegrind_seconds", tc);
			cJSON_AddNumberToObject(o, "cachegrind_over_traced", tc / tt);
		}
		cJSON_AddNumberToObject(o, "traced_peak_rss_bytes", rss);
		cJSON_AddNumberToObject(o, "array_bytes", (double)attn_array_bytes(&cfg));
		cJSON_AddItemToArray(rows, o);
	}
	fprintf(out,
		"\nTargets: traced/native <= 10 (trace-only: < 1 with tiles in scratch),\n"
		"cachegrind/traced >= 5. Each time is a whole process that allocates, fills and runs\n"
		"the kernel once. The traced run's memory is the arrays (none trace-only) plus the\n"
		"fixed-size cache model: it does not grow with the access count.\n");
	if (rc == EXIT_OK && json_path && report_write_json(json_path, root, err, sizeof(err))) {
		fprintf(stderr, "memsim: %s\n", err);
		rc = EXIT_RUNTIME;
	}
	cJSON_Delete(root);
	rmdir(work);
	return rc;
}

void
usage_bench(FILE *f)
{
	fprintf(f,
		"Usage: memsim bench [--accesses N] [--cache SPEC] [--dir DIR] [--repeat R]\n"
		"                    [--keep] [--json FILE]\n"
		"\n"
		"Builds a synthetic attention-shaped trace (two interleaved row streams and a strided\n"
		"column stream, the S = QK^T loop of a naive kernel), writes it in memsim's binary\n"
		"format and in din, replays both through the cache model and prints accesses per\n"
		"second, with the rate of feeding the generator straight into the model for scale.\n"
		"All three must give identical counters; bench fails if they do not.\n"
		"\n"
		"  -n, --accesses N   at least this many accesses [50000000]\n"
		"  -c, --cache SPEC   cache spec or preset [L1=32K:8:64,L2=1M:16:64]\n"
		"  -d, --dir DIR      where the trace files go [$TMPDIR or /tmp]\n"
		"  -r, --repeat R     replays of each file; the best time is reported [3]\n"
		"  -s, --shape S      blocked: key rows in blocks of 64 as blocked kernels sweep them;\n"
		"                     unblocked: every key row per query row, K streaming through L1\n"
		"                     [blocked]\n"
		"  -p, --pad P        elements of padding per V^T row; 0 puts the column stream in\n"
		"                     one L1 set, the conflict worst case [16]\n"
		"      --keep         keep the trace files\n"
		"  -j, --json FILE    also write the figures as JSON\n"
		"      --kernels      instead: time the traced run of naive and flash2 against\n"
		"                     their native run and against Cachegrind on the native run\n"
		"      --N N          --kernels: sequence length [2048]\n"
		"      --trace-only   --kernels: the traced run trace-only (memsim run --trace-only)\n"
		"                     --kernels takes --cache for the traced run [cachegrind]\n");
}

static bool
same_counters(struct cache *a, struct cache *b)
{
	const struct cache_traffic *da = cache_dram(a), *db = cache_dram(b);

	for (unsigned i = 0; i < cache_level_count(a); i++)
		if (memcmp(cache_level_stats(a, i), cache_level_stats(b, i),
			   sizeof(struct cache_level_stats)))
			return false;
	return memcmp(da, db, sizeof(*da)) == 0;
}

struct timing {
	const char *name;
	double best, worst;
	uint64_t accesses;
	uint64_t file_bytes;
};

static int
time_replay(const char *path, enum trace_format fmt, const struct spec *spec, int repeat,
	    struct timing *t, struct cache **keep, char *err, size_t errlen)
{
	for (int r = 0; r < repeat; r++) {
		struct replay_result res;

		if (replay_file(path, fmt, spec, true, &res, err, errlen))
			return -1;
		if (r == 0 || res.seconds < t->best)
			t->best = res.seconds;
		if (r == 0 || res.seconds > t->worst)
			t->worst = res.seconds;
		t->accesses = res.accesses;
		if (r == repeat - 1) {
			*keep = res.cache;
			res.cache = NULL;
		}
		replay_result_finish(&res);
	}
	return 0;
}

static uint64_t
file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return 0;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	return n > 0 ? (uint64_t)n : 0;
}

int
cmd_bench(int argc, char **argv)
{
	enum { OPT_KEEP = 256, OPT_KERNELS, OPT_KN, OPT_TRACE_ONLY };
	static const struct option opts[] = {
		{ "accesses", required_argument, NULL, 'n' },
		{ "cache", required_argument, NULL, 'c' },
		{ "dir", required_argument, NULL, 'd' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "pad", required_argument, NULL, 'p' },
		{ "shape", required_argument, NULL, 's' },
		{ "keep", no_argument, NULL, OPT_KEEP },
		{ "kernels", no_argument, NULL, OPT_KERNELS },
		{ "N", required_argument, NULL, OPT_KN },
		{ "trace-only", no_argument, NULL, OPT_TRACE_ONLY },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t target = 50000000, repeat = 3, pad = 16;
	const char *spec_text = "L1=32K:8:64,L2=1M:16:64", *json_path = NULL;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	bool keep = false, blocked = true, kernels = false, cache_given = false, trace_only = false;
	uint64_t kn = 2048;
	struct spec spec;
	char err[512], work[4096], mt_path[4200], din_path[4200];
	FILE *out;
	struct sink direct = { 0 }, files = { 0 };
	struct timing t[3] = { { "direct (generator -> model)", 0, 0, 0, 0 },
			       { "memsim binary trace", 0, 0, 0, 0 },
			       { "din text trace", 0, 0, 0, 0 } };
	struct cache *result[3] = { NULL, NULL, NULL };
	double t0;
	int opt, rc = EXIT_RUNTIME;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":n:c:d:r:p:s:j:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (!parse_u64(optarg, &target) || target == 0)
				return usage_error("bench",
						   "--accesses: '%s' is not a positive number",
						   optarg);
			break;
		case 'c':
			spec_text = optarg;
			cache_given = true;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'r':
			if (!parse_u64(optarg, &repeat) || repeat == 0 || repeat > 100)
				return usage_error("bench",
						   "--repeat: '%s' is not a number from 1 to 100",
						   optarg);
			break;
		case 'p':
			if (!parse_u64(optarg, &pad) || pad > 4096)
				return usage_error("bench",
						   "--pad: '%s' is not a number from 0 to 4096",
						   optarg);
			break;
		case 's':
			if (strcmp(optarg, "blocked") == 0)
				blocked = true;
			else if (strcmp(optarg, "unblocked") == 0)
				blocked = false;
			else
				return usage_error("bench",
						   "--shape: '%s' is not blocked or unblocked",
						   optarg);
			break;
		case OPT_KEEP:
			keep = true;
			break;
		case OPT_KERNELS:
			kernels = true;
			break;
		case OPT_TRACE_ONLY:
			trace_only = true;
			break;
		case OPT_KN:
			if (!parse_u64(optarg, &kn) || kn == 0)
				return usage_error("bench", "--N: '%s' is not a positive number",
						   optarg);
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'h':
			usage_bench(stdout);
			return EXIT_OK;
		default:
			return option_error("bench", opt, argv);
		}
	}
	if (optind != argc)
		return usage_error("bench", "bench takes no file arguments");
	if (trace_only && !kernels)
		return usage_error("bench", "--trace-only times the kernels: it needs --kernels");
	if (kernels)
		return bench_kernels(kn, cache_given ? spec_text : "cachegrind", trace_only,
				     json_path, argc, argv);
	if (spec_parse(spec_text, &spec, err, sizeof(err)))
		return usage_error("bench", "--cache: %s", err);
	out = text_stream(json_path);
	/* The trace files go to a directory of our own inside DIR: no name another user can
	 * predict, no link to follow. */
	if (make_private_dir(dir, "memsim-bench", work, sizeof(work), err, sizeof(err))) {
		fprintf(stderr, "memsim: bench: %s\n", err);
		return EXIT_RUNTIME;
	}
	snprintf(mt_path, sizeof(mt_path), "%s/trace.mtr", work);
	snprintf(din_path, sizeof(din_path), "%s/trace.din", work);

	/* 1. The generator straight into the model: the ceiling for any trace format. */
	direct.cache = cache_create(&spec.cache);
	t0 = now_seconds();
	t[0].accesses = generate(&direct, target, pad, blocked);
	t[0].best = t[0].worst = now_seconds() - t0;
	cache_flush(direct.cache);
	result[0] = direct.cache;

	/* 2. The same accesses written once to both files. */
	files.mt = mtrace_writer_open(mt_path, "memsim bench (synthetic attention trace)", err,
				      sizeof(err));
	if (!files.mt) {
		fprintf(stderr, "memsim: %s\n", err);
		goto out;
	}
	files.din = fopen(din_path, "wx");
	if (!files.din) {
		fprintf(stderr, "memsim: cannot create %s: %s\n", din_path, strerror(errno));
		mtrace_writer_close(files.mt, err, sizeof(err));
		goto out;
	}
	fprintf(stderr, "memsim: bench: writing %" PRIu64 " accesses to %s and %s\n", t[0].accesses,
		mt_path, din_path);
	generate(&files, target, pad, blocked);
	if (mtrace_writer_close(files.mt, err, sizeof(err))) {
		fprintf(stderr, "memsim: %s\n", err);
		fclose(files.din);
		goto out;
	}
	if (fclose(files.din)) {
		fprintf(stderr, "memsim: writing %s: %s\n", din_path, strerror(errno));
		goto out;
	}
	t[1].file_bytes = file_size(mt_path);
	t[2].file_bytes = file_size(din_path);

	/* 3. Replays, best of `repeat`. */
	if (time_replay(mt_path, TRACE_FORMAT_MEMSIM, &spec, (int)repeat, &t[1], &result[1], err,
			sizeof(err)) ||
	    time_replay(din_path, TRACE_FORMAT_DIN, &spec, (int)repeat, &t[2], &result[2], err,
			sizeof(err))) {
		fprintf(stderr, "memsim: %s\n", err);
		goto out;
	}
	if (!same_counters(result[0], result[1]) || !same_counters(result[0], result[2]) ||
	    t[1].accesses != t[0].accesses || t[2].accesses != t[0].accesses) {
		fprintf(stderr, "memsim: bench: the three replays disagree; this is a bug\n");
		goto out;
	}

	fprintf(out,
		"memsim bench: %" PRIu64 " accesses, %s trace, cache %s, V^T row pad %" PRIu64
		", best of %" PRIu64 "\n\n",
		t[0].accesses, blocked ? "blocked" : "unblocked", spec_text, pad, repeat);
	fprintf(out, "%-30s %10s %14s %12s %14s\n", "source", "seconds", "accesses/s", "file MiB",
		"bytes/access");
	for (int i = 0; i < 3; i++) {
		fprintf(out, "%-30s %10.3f %14.3e %12.1f %14.2f\n", t[i].name, t[i].best,
			(double)t[i].accesses / t[i].best, (double)t[i].file_bytes / 1048576.0,
			(double)t[i].file_bytes / (double)t[i].accesses);
	}
	fprintf(out, "\nbinary/din replay speed ratio: %.2f\n", t[2].best / t[1].best);
	fprintf(out,
		"counters identical across the three: yes (L1 miss rate %.2f%%, DRAM %.1f MiB)\n",
		100.0 *
			(double)(cache_level_stats(result[1], 0)->read_misses +
				 cache_level_stats(result[1], 0)->write_misses) /
			(double)t[0].accesses,
		(double)(cache_dram(result[1])->read_bytes + cache_dram(result[1])->write_bytes) /
			1048576.0);
	if (json_path) {
		cJSON *root = cJSON_CreateObject(), *runs;

		report_add_header(root, argc, argv);
		cJSON_AddStringToObject(root, "cache", spec_text);
		cJSON_AddStringToObject(root, "shape", blocked ? "blocked" : "unblocked");
		cJSON_AddNumberToObject(root, "pad", (double)pad);
		cJSON_AddNumberToObject(root, "accesses", (double)t[0].accesses);
		runs = cJSON_AddArrayToObject(root, "runs");
		for (int i = 0; i < 3; i++) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "source", t[i].name);
			cJSON_AddNumberToObject(o, "best_seconds", t[i].best);
			cJSON_AddNumberToObject(o, "worst_seconds", t[i].worst);
			cJSON_AddNumberToObject(o, "accesses_per_second",
						(double)t[i].accesses / t[i].best);
			cJSON_AddNumberToObject(o, "file_bytes", (double)t[i].file_bytes);
			cJSON_AddItemToArray(runs, o);
		}
		if (report_write_json(json_path, root, err, sizeof(err))) {
			fprintf(stderr, "memsim: %s\n", err);
			cJSON_Delete(root);
			goto out;
		}
		cJSON_Delete(root);
	}
	rc = EXIT_OK;
out:
	for (int i = 0; i < 3; i++)
		cache_destroy(result[i]);
	if (!keep) {
		unlink(mt_path);
		unlink(din_path);
		rmdir(work);
	} else {
		fprintf(stderr, "memsim: bench: the trace files are in %s\n", work);
	}
	return rc;
}
