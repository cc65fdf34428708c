/*
 * replay --threads N (issue 24 item 2): the sets split between N threads give the counts of
 * one thread, byte for byte, on random hierarchies (1 to 3 levels, 32- to 128-byte lines,
 * sets and 1 to 128 ways (hash-indexed), LRU, FIFO, tree-PLRU and random replacement, wb/wt,
 * wa/nwa/wv, nine, incl and excl, quietwb, an I1, flush and --no-flush) over random traces
 * in the three formats
 * (memsim's binary one with arrays, phases and scratch, din, lackey with straddling accesses
 * and instruction fetches); configurations that do not split run one thread and say why.
 */

#include "config.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit.h"

#define TMPDIR_NAME "cli-threads"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"
#include "traces/mtrace.h"

/* xorshift64*: the same traces and hierarchies on every machine. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static unsigned
pick(uint64_t *s, unsigned n)
{
	return (unsigned)(rnd(s) % n);
}

/* One access of a random trace: streams, a strided column walk and random lines over a
 * footprint of 768 KiB in three arrays, sizes 1 to 64 bytes at any alignment (some straddle
 * lines and chunks), a tenth of them stores. */
struct gen {
	uint64_t seed, row, col, arr[3];
};

static void
gen_next(struct gen *g, uint64_t *addr, uint32_t *size, int *kind)
{
	static const uint32_t sizes[] = { 1, 2, 4, 4, 8, 8, 8, 16, 32, 64 };
	unsigned a = pick(&g->seed, 3), how = pick(&g->seed, 10);

	*size = sizes[pick(&g->seed, 10)];
	if (how < 4)
		*addr = g->arr[a] + (g->row += *size) % 262144;
	else if (how < 6)
		*addr = g->arr[a] + (g->col += 1088) % 262144;
	else
		*addr = g->arr[a] + rnd(&g->seed) % 262144;
	*kind = pick(&g->seed, 10) == 0;
}

/* Writes n accesses in memsim's format to path: two arrays (a third, scratch, when scratch),
 * three phases, repeats, and instruction fetches. */
static void
write_mtrace(const char *path, uint64_t seed, unsigned n, bool scratch)
{
	struct gen g = { seed, 0, 0, { 0x100000, 0x200000, 0x300040 } };
	char err[256];
	struct mtrace_writer *w = mtrace_writer_open(path, "test-cli-threads", err, sizeof(err));
	int ph[3];

	assert_non_null(w);
	assert_true(mtrace_writer_array(w, "A", 0x100000, 262144, TRACE_SPACE_DRAM) >= 0);
	assert_true(mtrace_writer_array(w, "B", 0x200000, 262144, TRACE_SPACE_DRAM) >= 0);
	assert_true(mtrace_writer_array(w, "C", 0x300040, 262144,
					scratch ? TRACE_SPACE_SCRATCH : TRACE_SPACE_DRAM) >= 0);
	for (int i = 0; i < 3; i++) {
		char name[8];

		snprintf(name, sizeof(name), "p%d", i);
		ph[i] = mtrace_writer_phase(w, name);
		assert_true(ph[i] >= 0);
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t addr;
		uint32_t size;
		int kind;

		if (i % (n / 5) == 0)
			mtrace_writer_set_phase(w, ph[i / (n / 5) % 3]);
		gen_next(&g, &addr, &size, &kind);
		if (pick(&g.seed, 50) == 0)
			mtrace_writer_access(w, TRACE_EV_IFETCH, 0x400000 + addr % 16384, 4, 1);
		mtrace_writer_access(w, kind ? TRACE_EV_STORE : TRACE_EV_LOAD, addr, size,
				     pick(&g.seed, 20) == 0 ? 3 : 1);
	}
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
}

/* din (4-byte references, labels 0 1 2) or lackey (sizes 1 to 64, I, L, S and M). */
static void
write_text(const char *path, uint64_t seed, unsigned n, bool lackey)
{
	struct gen g = { seed, 0, 0, { 0x100000, 0x200000, 0x300040 } };
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	for (unsigned i = 0; i < n; i++) {
		uint64_t addr;
		uint32_t size;
		int kind;

		gen_next(&g, &addr, &size, &kind);
		if (pick(&g.seed, 50) == 0)
			fprintf(f, lackey ? "I  %llx,4\n" : "2 %llx\n",
				(unsigned long long)(0x400000 + addr % 16384));
		if (lackey)
			fprintf(f, " %c %llx,%u\n", kind ? (pick(&g.seed, 2) ? 'S' : 'M') : 'L',
				(unsigned long long)addr, size);
		else
			fprintf(f, "%d %llx\n", kind, (unsigned long long)addr);
	}
	fclose(f);
}

/* A random level spec of `bytes` bytes (0: a random size) into buf. */
static void
level_spec(uint64_t *s, char *buf, size_t len, const char *name, unsigned level, bool last)
{
	static const char *repl[] = { "lru", "lru", "fifo", "plru", "random" };
	static const char *write[] = { "wb", "wb", "wt" };
	static const char *alloc[] = { "wa", "wa", "nwa", "wv" };
	static const char *incl[] = { "nine", "nine", "incl", "excl" };
	static const unsigned ways[] = { 1, 2, 4, 8, 16, 128 };
	unsigned kib = (1u << pick(s, 4)) << (2 * level); /* 1-8K, 4-32K, 16-128K */
	unsigned line = 32u << pick(s, 3);

	(void)last;
	/* 128 ways (a hash-indexed level) for L3 only, where it leaves sets to split. */
	snprintf(buf, len, "%s=%uK:%u:%u:%s:%s:%s%s%s", name, kib,
		 ways[pick(s, level == 2 ? 6 : 5)], line, repl[pick(s, 5)], write[pick(s, 3)],
		 alloc[pick(s, 4)], level ? ":" : "", level ? incl[pick(s, 4)] : "");
	if (level && pick(s, 8) == 0)
		strcat(buf, ":quietwb");
}

/* A random hierarchy of 1 to 3 levels, an I1 one time in five. */
static void
random_spec(uint64_t *s, char *buf, size_t len)
{
	unsigned levels = 1 + pick(s, 3);
	char lv[128];

	buf[0] = 0;
	if (pick(s, 5) == 0) {
		level_spec(s, lv, sizeof(lv), "I1", 0, false);
		snprintf(buf, len, "%s,", lv);
	}
	for (unsigned i = 0; i < levels; i++) {
		char name[4];

		snprintf(name, sizeof(name), "L%u", i + 1);
		level_spec(s, lv, sizeof(lv), name, i, i + 1 == levels);
		strncat(buf, lv, len - strlen(buf) - 2);
		if (i + 1 < levels)
			strcat(buf, ",");
	}
}

/* The report at path without what differs by thread count: the command line and threads. */
static char *
counts_of(const char *name)
{
	char path[600];
	char *text, *out;
	cJSON *o;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp_text(path);
	assert_non_null(text);
	o = cJSON_Parse(text);
	assert_non_null(o);
	cJSON_DeleteItemFromObject(o, "command");
	cJSON_DeleteItemFromObject(o, "threads");
	cJSON_DeleteItemFromObject(o, "traced_seconds"); /* run's, and its memory */
	cJSON_DeleteItemFromObject(o, "peak_rss_bytes");
	out = cJSON_Print(o);
	cJSON_Delete(o);
	free(text);
	return out;
}

/* Reports a and b hold the same counts (counts_of()). */
static void
assert_same_counts(const char *a, const char *b)
{
	char *one = counts_of(a), *two = counts_of(b);

	assert_string_equal(one, two);
	free(one);
	free(two);
}

/* The threads a report used, and its why_not_more in why. */
static int
threads_used(const char *name, char *why, size_t len)
{
	char path[600];
	char *text;
	cJSON *o, *t;
	int used;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	text = slurp_text(path);
	o = cJSON_Parse(text);
	t = cJSON_GetObjectItem(o, "threads");
	assert_non_null(t);
	used = cJSON_GetObjectItem(t, "used")->valueint;
	snprintf(why, len, "%s", cJSON_GetObjectItem(t, "why_not_more")->valuestring);
	cJSON_Delete(o);
	free(text);
	return used;
}

struct tally {
	unsigned configs, split, random_policy;
};

/* One hierarchy on trace file: T = 1, 2, 4, 8 give the same report but for threads; a
 * random policy runs one thread and says why. */
static void
check_spec(const char *trace, const char *fmt, const char *spec, bool flush, struct tally *t)
{
	static const unsigned ts[] = { 2, 4, 8 };
	struct result r = memsim("replay %s %s --cache %s%s --threads 1 --json t1.json >t1.txt",
				 fmt, trace, spec, flush ? "" : " --no-flush");
	char *one, why[256];

	if (r.rc == 2) { /* a combination the model refuses */
		result_free(&r);
		return;
	}
	assert_int_equal(r.rc, 0);
	result_free(&r);
	t->configs++;
	one = counts_of("t1.json");
	for (unsigned i = 0; i < 3; i++) {
		char *many;
		int used;

		r = memsim("replay %s %s --cache %s%s --threads %u --json tn.json >tn.txt", fmt,
			   trace, spec, flush ? "" : " --no-flush", ts[i]);
		assert_int_equal(r.rc, 0);
		many = counts_of("tn.json");
		if (strcmp(one, many) != 0)
			fail_msg("--threads %u differs from 1 on %s, %s%s", ts[i], trace, spec,
				 flush ? "" : ", --no-flush");
		used = threads_used("tn.json", why, sizeof(why));
		assert_true(used >= 1 && (unsigned)used <= ts[i]);
		/* Fewer than asked: a reason on stderr and in the JSON. */
		assert_int_equal((unsigned)used < ts[i], why[0] != 0);
		assert_int_equal((unsigned)used < ts[i], strstr(r.err, "note: --threads") != NULL);
		if (strstr(spec, "random"))
			assert_int_equal(used, 1);
		t->split += used > 1;
		t->random_policy += used == 1 && strstr(why, "random") != NULL;
		free(many);
		result_free(&r);
		r = shell("cmp t1.txt tn.txt");
		assert_int_equal(r.rc, 0);
		result_free(&r);
	}
	free(one);
}

/* 30 hierarchies on each of five inputs (10 in a sanitized build, about four times slower:
 * there for the memory checks): the binary format with and without scratch, din, lackey, and
 * the one with scratch through a pipe. */
static void
test_random_hierarchies(void **state)
{
	/* The binary format from a file is decoded on every thread; text, and a pipe, by one
	 * reader that feeds the threads (traces/replay_split.c): "- <s.mtr" takes that path with
	 * arrays, phases and scratch. */
	static const char *const names[] = { "a.mtr", "s.mtr", "t.din", "t.lackey", "- <s.mtr" };
	static const char *const fmts[] = { "", "", "--format din", "--format lackey", "" };
	struct tally t = { 0 };
	uint64_t s = 0x9e3779b97f4a7c15;
	unsigned per = test_sanitized() ? 10 : 30;

	(void)state;
	for (unsigned f = 0; f < 5; f++) {
		char path[600];

		snprintf(path, sizeof(path), "%s/%s", tmpdir, names[f]);
		if (f < 2)
			write_mtrace(path, 11 + f, 60000, f == 1);
		else if (f < 4)
			write_text(path, 21 + f, 60000, f == 3);
		for (unsigned i = 0; i < per; i++) {
			char spec[512];

			random_spec(&s, spec, sizeof(spec));
			check_spec(names[f], fmts[f], spec, pick(&s, 3) != 0, &t);
		}
	}
	print_message("# %u hierarchies, %u runs split, %u refused for a random policy\n",
		      t.configs, t.split, t.random_policy);
	/* The test tests something: most hierarchies are valid and most runs split. */
	assert_true(t.configs >= 2 * per);
	assert_true(t.split >= t.configs);
	assert_true(t.random_policy > 0);
}

/* Writes P V's loop in memsim's format to path: for each column j of V, a row of P (4-byte
 * steps) against V's column (steps of stride bytes), and a store of O[j] after it; the writer
 * folds each column into a repeat record. A stride of whole rounds of the threads' chunks
 * keeps a column in one slice of a split run for all its periods, while P's row moves between
 * slices: the case a slice counts in bulk (traces/mtrace_fused.c, stays_in_other_slice()). */
static void
write_row_column(const char *path, uint64_t stride, unsigned rows, unsigned cols)
{
	char err[256];
	struct mtrace_writer *w = mtrace_writer_open(path, "test-cli-threads", err, sizeof(err));

	assert_non_null(w);
	for (unsigned j = 0; j < cols; j++) {
		for (unsigned k = 0; k < rows; k++) {
			mtrace_writer_access(w, TRACE_EV_LOAD, 0x1000000 + 4 * (uint64_t)k, 4, 1);
			mtrace_writer_access(w, TRACE_EV_LOAD,
					     0x4000000 + stride * k + 4 * (uint64_t)j, 4, 1);
		}
		mtrace_writer_access(w, TRACE_EV_STORE, 0x8000000 + 4 * (uint64_t)j, 4, 1);
	}
	assert_int_equal(mtrace_writer_close(w, err, sizeof(err)), 0);
}

/* P V's loop (write_row_column()) with column strides of 2 to 16 lines of 64 bytes, and 5
 * (odd: the column changes slice every row), on fixed and random hierarchies: --threads 2,
 * 4 and 8 give --threads 1's report. */
static void
test_row_column(void **state)
{
	static const uint64_t strides[] = { 128, 256, 1024, 320 };
	static const char *const fixed[] = { "L1=32K:8:64,L2=1M:16:64", "L1=4K:4:64,L2=64K:8:64",
					     "L1=2K:2:32,L2=16K:4:64:plru" };
	struct tally t = { 0 };
	uint64_t s = 0x5851f42d4c957f2d;

	(void)state;
	for (unsigned i = 0; i < sizeof(strides) / sizeof(strides[0]); i++) {
		char path[600];

		snprintf(path, sizeof(path), "%s/rc.mtr", tmpdir);
		write_row_column(path, strides[i], 300, 96);
		for (unsigned k = 0; k < 3; k++)
			check_spec("rc.mtr", "", fixed[k], k != 1, &t);
		for (unsigned k = 0; k < 3; k++) {
			char spec[512];

			random_spec(&s, spec, sizeof(spec));
			check_spec("rc.mtr", "", spec, true, &t);
		}
	}
	print_message("# %u hierarchies, %u runs split\n", t.configs, t.split);
	assert_true(t.split >= 3 * 4 * 3);
}

/* One kernel run (args) on spec: --threads 2 and 4 give --threads 1's report, text and JSON,
 * but for the time; a random policy runs one thread. Returns whether it split. */
/* A run's text report without its "traced ... in X s" line. */
static char *
untimed(const char *text)
{
	char *out = strdup(text), *t = strstr(out, "\ntraced");

	assert_non_null(t);
	memmove(t, strchr(t + 1, '\n'), strlen(strchr(t + 1, '\n')) + 1);
	return out;
}

static bool
check_run(const char *args, const char *spec)
{
	static const unsigned ts[] = { 2, 4 };
	struct result r = memsim("run %s --cache %s --threads 1 --json r1.json", args, spec);
	bool split = false;
	char *one, *text;

	if (r.rc == 2) { /* a combination the model refuses */
		result_free(&r);
		return false;
	}
	if (r.rc != 0)
		fail_msg("run %s --cache %s: %s", args, spec, r.err);
	text = untimed(r.out);
	result_free(&r);
	one = counts_of("r1.json");
	for (unsigned i = 0; i < 2; i++) {
		char why[256], *many, *many_text;
		int used;

		r = memsim("run %s --cache %s --threads %u --json rn.json", args, spec, ts[i]);
		assert_int_equal(r.rc, 0);
		many_text = untimed(r.out);
		if (strcmp(text, many_text) != 0)
			fail_msg("run --threads %u: the text differs: run %s --cache %s", ts[i],
				 args, spec);
		free(many_text);
		result_free(&r);
		many = counts_of("rn.json");
		if (strcmp(one, many) != 0)
			fail_msg("run --threads %u differs from 1: run %s --cache %s", ts[i], args,
				 spec);
		used = threads_used("rn.json", why, sizeof(why));
		assert_true(used >= 1 && (unsigned)used <= ts[i]);
		assert_int_equal((unsigned)used < ts[i], why[0] != 0);
		/* a random policy does not split its sets; a computing run's values split
		 * whatever the cache (the model on one thread) */
		if (strstr(spec, "random") && strstr(args, "--trace-only"))
			assert_int_equal(used, 1);
		split |= used > 1;
		free(many);
	}
	free(one);
	free(text);
	return split;
}

/* run and run --trace-only on threads (issue 24 item 2): every kernel, causal, grouped-query,
 * fp16 and bf16, a paged KV cache, on random hierarchies and the h100 preset (tiles in
 * scratch, write-validate). */
static void
test_run_kernels(void **state)
{
	static const char *const kernels[] = {
		/* at least two units each (run/attn_split.h), so computing runs split */
		"--kernel naive --N 96 --d 32 --heads 2",
		"--kernel naive --N 64 --d 16 --causal --softmax-separate --batch 2",
		"--kernel flash1 --N 128 --d 32 --Br 32 --Bc 16 --heads 3",
		"--kernel flash2 --N 128 --d 32 --heads 4 --kv-heads 2 --Br 16 --Bc 32",
		"--kernel flash2 --N 96 --d 64 --causal --dtype fp16 --heads 2",
		"--kernel flash2 --N 64 --N-kv 200 --d 32 --kv-page 48 --dtype bf16 --batch 2",
		"--kernel flashdecode --N 1 --N-kv 512 --d 64 --heads 4 --kv-heads 1 --splits 3 "
		"--batch 2",
		"--kernel flashdecode --N 4 --N-kv 300 --d 32 --causal --dtype fp16 --heads 2",
		"--kernel proj --N 64 --d 32 --batch 2",
	};
	uint64_t s = 0x243f6a8885a308d3;
	unsigned runs = 0, split = 0;

	(void)state;
	for (unsigned k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		for (unsigned i = 0; i < 6; i++) {
			char spec[512], args[600];

			/* h100 computing and trace-only; random hierarchies, one of them with its
			 * tiles in scratch */
			if (i < 2) {
				snprintf(spec, sizeof(spec), "h100");
			} else {
				random_spec(&s, spec, sizeof(spec));
				if (i == 3)
					strcat(spec, ",tiles=scratch");
			}
			snprintf(args, sizeof(args), "%s%s%s", kernels[k],
				 i % 2 ? " --trace-only" : "", pick(&s, 3) ? "" : " --no-flush");
			runs++;
			split += check_run(args, spec);
		}
	print_message("# %u kernel runs, %u split\n", runs, split);
	assert_true(split >= runs / 2);
}

/* Without --threads, a computing run of 10^8 FLOPs or more takes every core (as many as
 * its units), with one thread's counters; a shorter one, and a trace-only one, one thread. */
static void
test_run_default_threads(void **state)
{
	const char *k = "--kernel naive --N 512 --heads 4 --cache h100";
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned expect = cores < 2 ? 1 : cores < 4 ? (unsigned)cores : 4;
	char on[32];
	struct result r;

	(void)state;
	r = memsim("run %s --threads 1 --json r1.json", k);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("run %s --json rd.json", k);
	assert_int_equal(r.rc, 0);
	snprintf(on, sizeof(on), " on %u threads\n", expect);
	if (expect > 1 && !strstr(r.out, on))
		fail_msg("run %s on %ld cores: no '%s' in %s", k, cores, on, r.out);
	assert_null(strstr(r.err, "note:"));
	result_free(&r);
	assert_same_counts("r1.json", "rd.json");
	r = memsim("run --kernel naive --N 64 --heads 4 --cache h100");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, " threads\n"));
	result_free(&r);
	r = memsim("run %s --trace-only", k);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, " threads\n"));
	result_free(&r);
	/* A trace-only run of 10^10 FLOPs or more on a GPU preset splits its sets over the cores
	 * (a power of two, up to 8), with one thread's counts; a CPU cache and set sampling keep
	 * one thread, and say nothing of it. */
	k = "--kernel naive --N 2048 --heads 16 --trace-only";
	r = memsim("run %s --cache h100 --threads 1 --json t1.json", k);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("run %s --cache h100 --json td.json", k);
	assert_int_equal(r.rc, 0);
	expect = cores < 2 ? 1 : cores < 4 ? 2 : cores < 8 ? 4 : 8;
	snprintf(on, sizeof(on), " on %u threads\n", expect);
	if (expect > 1 && !strstr(r.out, on))
		fail_msg("run %s on %ld cores: no '%s' in %s", k, cores, on, r.out);
	assert_null(strstr(r.err, "note:"));
	result_free(&r);
	assert_same_counts("t1.json", "td.json");
	r = memsim("run %s --cache L1=32K:8:64,L2=1M:16:64,tiles=scratch", k);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, " threads\n"));
	result_free(&r);
	r = memsim("run %s --cache h100 --sample-sets 4", k);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, " threads\n"));
	assert_null(strstr(r.err, "note:"));
	result_free(&r);
}

/* A bench --threads row's copies: one a core it keeps busy (the cores online at most), and
 * its per core against theirs. */
static void
assert_copies(cJSON *run)
{
	double cores = cJSON_GetObjectItem(run, "cores")->valuedouble;
	double per_core = cJSON_GetObjectItem(run, "speedup_per_core")->valuedouble;
	double copies = cJSON_GetObjectItem(run, "copies_speedup_per_core")->valuedouble;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int busy = cJSON_GetObjectItem(run, "busy_threads")->valueint;

	assert_int_equal(cJSON_GetObjectItem(run, "copies")->valueint,
			 busy < online ? busy : online);
	assert_true(cores == cJSON_GetObjectItem(run, "copies")->valuedouble);
	assert_true(copies > 0 && cJSON_GetObjectItem(run, "copies_wall_seconds")->valuedouble > 0);
	assert_true(fabs(cJSON_GetObjectItem(run, "per_core_of_copies")->valuedouble -
			 per_core / copies) < 1e-9);
}

/* bench --threads: naive and flash2, computing and trace-only, on 1 and T threads, their
 * counters the same, and as many one-thread copies at once as the cores they keep busy; bad
 * uses exit 2 in one line. */
static void
test_bench_threads(void **state)
{
	struct result r;
	cJSON *o, *runs, *run;
	unsigned n = 0;

	(void)state;
	if (!bench_begin())
		return;
	r = memsim("bench --threads 2 --N 128 --heads 2 --cache L1=32K:8:64 --json -");
	if (r.rc != 0)
		fail_msg("bench --threads: exit %d: %s", r.rc, r.err);
	assert_non_null(strstr(r.err, "memsim bench --threads: N=128 d=64 heads=2"));
	assert_non_null(strstr(r.err, "flash2 --trace-only"));
	o = cJSON_Parse(r.out);
	assert_non_null(o);
	runs = cJSON_GetObjectItem(o, "runs");
	cJSON_ArrayForEach (run, runs) {
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(run, "counters_equal")));
		assert_true(cJSON_GetObjectItem(run, "speedup_per_core")->valuedouble > 0);
		assert_int_equal(cJSON_GetObjectItem(run, "threads_used")->valueint, 2);
		/* the caller works beside the 2: the values' simulation, or handing out */
		assert_int_equal(cJSON_GetObjectItem(run, "busy_threads")->valueint, 3);
		assert_copies(run);
		n++;
	}
	assert_int_equal(n, 4);
	cJSON_Delete(o);
	result_free(&r);
	/* Tiles in scratch: a trace-only run's caller simulates one of the slices itself. */
	r = memsim("bench --threads 2 --trace-only --N 256 --heads 2 --cache h100 --json -");
	assert_int_equal(r.rc, 0);
	o = cJSON_Parse(r.out);
	n = 0;
	cJSON_ArrayForEach (run, cJSON_GetObjectItem(o, "runs")) {
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(run, "counters_equal")));
		assert_int_equal(cJSON_GetObjectItem(run, "busy_threads")->valueint, 2);
		assert_copies(run);
		n++;
	}
	assert_int_equal(n, 2);
	cJSON_Delete(o);
	result_free(&r);
	/* A list of counts, the trace-only runs alone: one row a kernel and count; 3 threads
	 * split the sets by 2. */
	r = memsim("bench --threads 2,3 --trace-only --N 128 --heads 2 --cache L1=32K:8:64 "
		   "--json -");
	assert_int_equal(r.rc, 0);
	o = cJSON_Parse(r.out);
	n = 0;
	cJSON_ArrayForEach (run, cJSON_GetObjectItem(o, "runs")) {
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(run, "trace_only")));
		assert_true(cJSON_IsTrue(cJSON_GetObjectItem(run, "counters_equal")));
		assert_int_equal(cJSON_GetObjectItem(run, "threads_used")->valueint, 2);
		n++;
	}
	assert_int_equal(n, 4);
	cJSON_Delete(o);
	result_free(&r);
	for (unsigned i = 0; i < 4; i++) {
		static const char *const bad[] = { "1", "2,x", "2,", "2,2,2,2,2,2,2,2,2" };

		r = memsim("bench --threads '%s'", bad[i]);
		assert_int_equal(r.rc, 2);
		assert_non_null(strstr(r.err, "is not a list of up to 8 thread counts"));
		result_free(&r);
	}
	r = memsim("bench --heads 4");
	assert_int_equal(r.rc, 2);
	assert_non_null(strstr(r.err, "it needs --threads"));
	result_free(&r);
	r = memsim("bench --threads 2 --modes");
	assert_int_equal(r.rc, 2);
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	result_free(&r);
	/* bench --onepass, here for its place beside the other benches: a small run whose one
	 * passes count as the separate runs, and a bad use. */
	r = memsim("bench --onepass --N 64 --repeat 2 --json -");
	assert_int_equal(r.rc, 0);
	o = cJSON_Parse(r.out);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItem(o, "onepass_counters_equal")));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(
				 cJSON_GetObjectItem(o, "stack"), "x_one_run")),
			 2);
	cJSON_Delete(o);
	result_free(&r);
	r = memsim("bench --onepass --modes");
	assert_int_equal(r.rc, 2);
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	result_free(&r);
	bench_end();
}

/* DIR/results.json's rows without what may differ between runs of the same counters (the
 * threads, timings, memory), one line each; *min_used the fewest threads a row ran on (1
 * where rows say nothing). Caller frees. */
static char *
sweep_rows(const char *dir, unsigned *min_used)
{
	static const char *const skip[] = { "threads", "traced_seconds", "peak_rss_bytes",
					    "seconds", "accesses_per_second" };
	char path[600], *text, *line, *save = NULL, *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	snprintf(path, sizeof(path), "%s/%s/results.json", tmpdir, dir);
	text = slurp_text(path);
	*min_used = 64;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		cJSON *row = cJSON_Parse(line), *t;
		char *flat;

		assert_non_null(row);
		t = cJSON_GetObjectItem(row, "threads");
		if (!t)
			*min_used = 1;
		else if ((unsigned)cJSON_GetObjectItem(t, "used")->valueint < *min_used)
			*min_used = (unsigned)cJSON_GetObjectItem(t, "used")->valueint;
		for (unsigned i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
			cJSON_DeleteItemFromObject(row, skip[i]);
		flat = cJSON_PrintUnformatted(row);
		fprintf(f, "%s\n", flat);
		free(flat);
		cJSON_Delete(row);
	}
	fclose(f);
	free(text);
	return out;
}

/* sweep --threads: one-pass rows (the stack pass, fan-out) and plain rows hold one thread's
 * counters on 2 and 4 threads, and say how many ran; a swept L1 runs one and says why. */
static void
test_sweep_threads(void **state)
{
	static const char *const sweeps[] = {
		"--kernel naive,flash2 --N 96 --d 32 --heads 2 --cache L1=4K:4:64,L2=64K:8:64 "
		"--cache-sweep L2=16K:256K:x2",
		"--kernel flash2 --N 128 --d 32 --causal --cache L1=4K:4:64,L2=32K:8:64:fifo,"
		"L3=256K:16:64 --cache-sweep L3=64K:1M:x4 --no-flush",
		"--kernel naive --N 64 --d 16 --cache L1=4K:4:64,L2=64K:8:64 --cache L1=8K:2:32,"
		"L2=128K:16:64:wt --trace-only",
	};
	unsigned used;

	(void)state;
	for (unsigned i = 0; i < sizeof(sweeps) / sizeof(sweeps[0]); i++) {
		struct result r = memsim("sweep --out s1 --jobs 1 %s", sweeps[i]);
		char *one;

		assert_int_equal(r.rc, 0);
		result_free(&r);
		one = sweep_rows("s1", &used);
		for (unsigned t = 2; t <= 4; t *= 2) {
			char *more;

			r = memsim("sweep --out s%u --jobs 1 --threads %u %s", t, t, sweeps[i]);
			assert_int_equal(r.rc, 0);
			result_free(&r);
			more = sweep_rows(t == 2 ? "s2" : "s4", &used);
			if (strcmp(one, more))
				fail_msg("sweep %s --threads %u: rows differ from one thread's",
					 sweeps[i], t);
			assert_int_equal(used, t);
			free(more);
		}
		free(one);
		r = shell("rm -rf s1 s2 s4");
		result_free(&r);
	}
	{
		struct result r =
			memsim("sweep --out l1 --jobs 1 --threads 2 --kernel naive --N 64 "
			       "--d 16 --cache L1=4K:4:64 --cache-sweep L1=2K:8K:x2");
		char *rows;

		assert_int_equal(r.rc, 0);
		result_free(&r);
		rows = sweep_rows("l1", &used);
		free(rows);
		assert_int_equal(used, 1);
		r = shell("grep -c 'the swept level is L1' l1/results.json");
		assert_int_equal(atoi(r.out), 3);
		result_free(&r);
	}
	/* What --threads cannot apply to: a usage error in one line, exit 2. */
	{
		static const char *const bad[][2] = {
			{ "--kernel naive --N 64 --formula-only",
			  "--threads simulates; --formula-only does not" },
			{ "--kernel naive --N 64", "--threads: '0' is not 1 to 64" },
		};

		for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct result r = memsim("sweep --out bad %s --threads %s", bad[i][0],
						 i == 1 ? "0" : "2");

			assert_int_equal(r.rc, 2);
			if (!strstr(r.err, bad[i][1]))
				fail_msg("sweep %s: %s", bad[i][0], r.err);
			assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
			result_free(&r);
		}
	}
}

/* run --threads: what does not split runs one thread and says why, a bad N and a plugin are
 * usage errors, and a recording is the same whatever the threads. */
static void
test_run_why_not(void **state)
{
	static const char *const bad[] = { "65", "x", "-1", "" };
	const char *k = "--kernel naive --N 64 --d 16";
	struct result r;
	char why[256];
	char *one;

	(void)state;
	r = memsim("run %s --cache cachegrind --trace-only --threads 2 --json w.json", k);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "note: --threads 2: 1 thread: "));
	assert_non_null(strstr(r.err, "straddle=once"));
	assert_int_equal(threads_used("w.json", why, sizeof(why)), 1);
	result_free(&r);
	/* Computing, the values split by head whatever the cache; one head is one unit. */
	r = memsim("run %s --heads 2 --cache cachegrind --threads 2 --json w.json", k);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "note:"));
	assert_int_equal(threads_used("w.json", why, sizeof(why)), 2);
	result_free(&r);
	r = memsim("run %s --cache L1=32K:8:64 --threads 4 --json w.json", k);
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "note: --threads 4: 1 thread: the values split into 1 unit"));
	assert_int_equal(threads_used("w.json", why, sizeof(why)), 1);
	result_free(&r);
	r = memsim("run %s --cache L1=32K:8:64 --threads 0 --json -", k);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "note:"));
	assert_non_null(strstr(r.out, "\"used\":\t1"));
	result_free(&r);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = memsim("run %s --cache L1=32K:8:64 --threads '%s'", k, bad[i]);
		assert_int_equal(r.rc, 2);
		assert_non_null(strstr(r.err, "--threads"));
		assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1); /* one line */
		result_free(&r);
	}
	r = memsim("run --kernel ./plugin.so --threads 2");
	assert_int_equal(r.rc, 2);
	assert_non_null(strstr(r.err, "--threads is for built-in kernels"));
	result_free(&r);
	/* Models that do not fit as many times as threads (8 x 32 MiB of L2 tags in 150 MB of
	 * address space, one fits): one line, exit 1, as one model that does not fit. Not with
	 * a sanitizer, which reserves terabytes. */
	if (!test_sanitized()) {
		r = shell("printf '0 1000\\n1 2040\\n' >m.din");
		result_free(&r);
		memsim_env = "ulimit -v 150000 &&";
		r = memsim("replay m.din --format din --cache L1=32K:8:64,L2=256M:16:64 --threads 8");
		memsim_env = "";
		assert_int_equal(r.rc, 1);
		assert_non_null(strstr(r.err, "cannot allocate 8 cache models (32.0 MiB each)"));
		assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
		result_free(&r);
		/* Room for 8 models and their threads, not for the 16 slices 8 threads take
		 * (cache_feed_slices_for()): fewer slices, the same counters as one thread. */
		memsim_env = "ulimit -v 450000 && MEMSIM_FEED_TIMES=1";
		r = memsim(
			"replay m.din --format din --cache L1=32K:8:64,L2=256M:16:64 --threads 8 "
			"--json m8.json");
		memsim_env = "";
		assert_int_equal(r.rc, 0);
		assert_non_null(strstr(r.err, "feed of 8 slices on 8 threads"));
		result_free(&r);
		r = memsim(
			"replay m.din --format din --cache L1=32K:8:64,L2=256M:16:64 --json m1.json");
		assert_int_equal(r.rc, 0);
		result_free(&r);
		assert_same_counts("m1.json", "m8.json");
	}
	/* --record beside --threads: the same recording and counters as one thread. */
	r = memsim("run %s --cache L1=4K:4:64,L2=32K:8:64 --record t1.mtr --json r1.json", k);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	r = memsim("run %s --cache L1=4K:4:64,L2=32K:8:64 --record t2.mtr --threads 2 --json "
		   "r2.json",
		   k);
	assert_int_equal(r.rc, 0);
	result_free(&r);
	/* The recordings differ in their header's command line: compare what replays of them
	 * report, but for the first line, which names the file. */
	r = memsim("replay t1.mtr --cache L1=8K:2:64");
	assert_int_equal(r.rc, 0);
	one = strdup(strchr(r.out, '\n'));
	result_free(&r);
	r = memsim("replay t2.mtr --cache L1=8K:2:64");
	assert_int_equal(r.rc, 0);
	assert_string_equal(one, strchr(r.out, '\n'));
	free(one);
	result_free(&r);
	assert_same_counts("r1.json", "r2.json");
}

/* MEMSIM_FEED_TIMES: one line on stderr of where a split run's wall time went, the parts
 * within the whole; nothing without it, and the same counters either way. */
static void
test_feed_times(void **state)
{
	const char *args = "run --kernel flash2 --N 1024 --heads 4 --cache h100 --trace-only "
			   "--threads 4 --json %s.json";
	double all = -1, caller = -1, room = -1, lo = -1, hi = -1;
	unsigned k = 0, threads = 0;
	struct result with, without;
	cJSON *a, *b;
	char *line;

	(void)state;
	with = shell("MEMSIM_FEED_TIMES=1 %s %s", MEMSIM_BIN,
		     "run --kernel flash2 --N 1024 "
		     "--heads 4 --cache h100 --trace-only --threads 4 --json with.json");
	without = memsim(args, "without");
	assert_int_equal(with.rc, 0);
	assert_int_equal(without.rc, 0);
	line = strstr(with.err, "memsim: feed of ");
	assert_non_null(line);
	assert_int_equal(
		sscanf(line,
		       "memsim: feed of %u slices on %u threads: %lf s; the caller's thread "
		       "simulated batches %lf s and waited for room %lf s; the other threads "
		       "waited for batches %lf to %lf s",
		       &k, &threads, &all, &caller, &room, &lo, &hi),
		7);
	assert_int_equal(k, 8); /* two a thread */
	assert_int_equal(threads, 4);
	/* Printed to the millisecond: the parts within the whole to a rounding or two. */
	assert_true(all > 0 && caller >= 0 && room >= 0 && caller + room <= all + 0.002);
	assert_true(lo >= 0 && lo <= hi && hi <= all + 0.001);
	assert_null(strstr(without.err, "feed of"));
	a = read_json("with.json");
	b = read_json("without.json");
	assert_true(cJSON_Compare(cJSON_GetObjectItem(a, "dram"), cJSON_GetObjectItem(b, "dram"),
				  true));
	cJSON_Delete(a);
	cJSON_Delete(b);
	result_free(&with);
	result_free(&without);
}

/* What does not split runs one thread and says why; a bad N is a usage error. */
static void
test_why_not(void **state)
{
	static const struct {
		const char *args, *why;
		int used;
	} cases[] = {
		{ "--cache L1=32K:8:64:random --threads 2", "random replacement", 1 },
		{ "--cache cachegrind --threads 2", "straddle=once", 1 },
		{ "--cache L1=32K:full:64 --threads 2", "fully associative", 1 },
		{ "--cache L1=1K:8:64,L2=64K:8:64 --threads 4", "L1 has 2 sets", 2 },
		{ "--cache L1=32K:8:64 --threads 3", "power of two: 2, not 3", 2 },
		{ "--cache L1=32K:8:64 --sample-sets 4 --threads 2", "set sampling", 1 },
		{ "--cache none --threads 2", "no cache", 1 },
	};
	struct result r;
	char why[256], path[600];
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "%s/w.din", tmpdir);
	write_text(path, 5, 20000, false);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		r = memsim("replay w.din %s --json w.json", cases[i].args);
		assert_int_equal(r.rc, 0);
		if (!strstr(r.err, cases[i].why))
			fail_msg("%s: stderr lacks '%s': %s", cases[i].args, cases[i].why, r.err);
		assert_int_equal(threads_used("w.json", why, sizeof(why)), cases[i].used);
		assert_non_null(strstr(why, cases[i].why));
		result_free(&r);
	}
	/* stdin: one reader feeds the threads, so a pipe splits too, with the same counts. */
	r = memsim("replay - --format din --cache L1=32K:8:64 --threads 2 --json w.json <w.din");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "note:"));
	assert_int_equal(threads_used("w.json", why, sizeof(why)), 2);
	result_free(&r);
	r = memsim("replay - --format din --cache L1=32K:8:64 --threads 1 --json w1.json <w.din");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	{
		char *one = counts_of("w1.json"), *two = counts_of("w.json");

		assert_string_equal(one, two);
		free(one);
		free(two);
	}
	/* Without --threads, no threads field; with 1 or 0, no note. */
	r = memsim("replay w.din --cache L1=32K:8:64 --json w.json");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.out, "threads"));
	result_free(&r);
	r = memsim("replay w.din --cache L1=32K:8:64 --threads 0 --json -");
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "note:"));
	assert_non_null(strstr(r.out, "\"used\":\t1"));
	result_free(&r);
	/* A garbled trace: every thread's reader fails; one line, exit 1, as one thread. */
	snprintf(path, sizeof(path), "%s/bad.din", tmpdir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0 100\ngarbage\n", f);
	fclose(f);
	r = memsim("replay bad.din --format din --cache L1=32K:8:64 --threads 2");
	assert_int_equal(r.rc, 1);
	assert_non_null(strstr(r.err, "bad.din:2: bad label"));
	assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1);
	result_free(&r);
	/* A bad N: one line, exit 2. */
	for (int i = 0; i < 3; i++) {
		static const char *const bad[] = { "65", "x", "-1" };

		r = memsim("replay w.din --cache L1=32K:8:64 --threads %s", bad[i]);
		assert_int_equal(r.rc, 2);
		assert_non_null(strstr(r.err, "--threads"));
		assert_ptr_equal(strchr(r.err, '\n'), r.err + strlen(r.err) - 1); /* one line */
		result_free(&r);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_hierarchies),
		cmocka_unit_test(test_row_column),
		cmocka_unit_test(test_why_not),
		cmocka_unit_test(test_run_kernels),
		cmocka_unit_test(test_run_why_not),
		cmocka_unit_test(test_sweep_threads),
		cmocka_unit_test(test_run_default_threads),
		cmocka_unit_test(test_bench_threads),
		cmocka_unit_test(test_feed_times),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
