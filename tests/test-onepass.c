/*
 * One pass for many sizes (sim/cache.h cache_create_onepass()) against a separate run per
 * size: every counter equal (tests/counters.h), for naive and flash2, flushed and not, on a
 * 2-level spec sweeping L2 and a 1-level spec sweeping L1, set-associative (the stack pass over
 * several set counts, and fan-out) and fully associative (the stack pass over one set count, and
 * fan-out), write-through and other line sizes above, a 3-level spec,
 * random and FIFO swept levels. The stack pass alone against single-level models on random
 * streams (one set count with ways 1 to 16; several set counts at a fixed or growing
 * associativity; reads and writes), and victim by victim against a plain LRU per cache, and
 * the geometries it refuses. The cases where one pass must
 * not apply say so (inclusive, exclusive, non-LRU for the stack pass).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "kernels/attn.h"
#include "run/simulate.h"
#include "sim/spec.h"
#include "sim/drive/stackdist.h"
#include "tests/counters.h"
#include "tests/unit.h"

static const struct onepass_case {
	const char *spec;
	unsigned level; /* 0: L1 */
	uint64_t sizes[6];
	enum cache_onepass method; /* what cache_onepass_method() must say */
} cases[] = {
	{ "L1=4K:4:64,L2=64K:8:64", 1, { 8192, 16384, 32768, 131072 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:4:64,L2=64K:full:64", 1, { 8192, 16384, 32768, 131072 }, CACHE_ONEPASS_STACK },
	{ "L1=8K:4:64", 0, { 2048, 4096, 16384, 65536 }, CACHE_ONEPASS_STACK },
	{ "L1=8K:1:64", 0, { 1024, 4096, 8192 }, CACHE_ONEPASS_STACK },
	{ "L1=8K:full:64", 0, { 4096, 8192, 32768, 65536 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:4:64:wt,L2=64K:full:64", 1, { 8192, 32768, 65536 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:4:128,L2=64K:full:64", 1, { 8192, 32768, 65536 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:4:32,L2=64K:full:64", 1, { 8192, 32768, 65536 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:4:64,L2=32K:8:64,L3=256K:full:64", 2, { 65536, 262144 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:4:64,L2=32K:8:64,L3=256K:16:64", 1, { 16384, 65536 }, CACHE_ONEPASS_FANOUT },
	{ "L1=4K:4:64,L2=64K:8:64:random", 1, { 16384, 65536 }, CACHE_ONEPASS_FANOUT },
	{ "L1=4K:4:64,L2=64K:full:64:fifo", 1, { 16384, 65536 }, CACHE_ONEPASS_FANOUT },
	{ "L1=4K:4:64,L2=64K:8:64,tiles=scratch", 1, { 8192, 65536 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:4:64,L2=32K:8:64,L3=256K:16:64",
	  2,
	  { 65536, 131072, 524288 },
	  CACHE_ONEPASS_STACK },
	{ "L1=4K:4:64,L2=64K:full:64:nwa", 1, { 8192, 65536 }, CACHE_ONEPASS_FANOUT },
	/* A size of one set among others, and a base whose own size has one set: N ways at
	 * every size (cache_config_resize()). */
	{ "L1=4K:8:64,L2=64K:4:64", 1, { 256, 1024, 16384 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:8:64,L2=256B:4:64", 1, { 256, 1024, 4096, 65536 }, CACHE_ONEPASS_STACK },
	{ "L1=4K:8:64,L2=256B:4:64:fifo", 1, { 1024, 256, 4096 }, CACHE_ONEPASS_FANOUT },
	/* More ways than a set scan could afford: the stack pass scans none. */
	{ "L1=4K:4:64,L2=1M:128:64", 1, { 16384, 65536, 262144 }, CACHE_ONEPASS_STACK },
};

static const struct attn_config kernels[] = {
	{ .kernel = ATTN_NAIVE,
	  .N = 96,
	  .d = 24,
	  .heads = 2,
	  .kv_heads = 1,
	  .batch = 1,
	  .dtype = ATTN_FP32,
	  .Br = 16,
	  .Bc = 32 },
	{ .kernel = ATTN_FLASH2,
	  .N = 128,
	  .d = 32,
	  .heads = 2,
	  .kv_heads = 2,
	  .batch = 1,
	  .dtype = ATTN_FP16,
	  .Br = 32,
	  .Bc = 16,
	  .causal = true },
};

/* One-pass runs on more than one thread so far (check_sizes() with threads > 1). */
static unsigned split_runs;

/* Runs cfg once for every size with method how on up to `threads` threads, and once per size
 * on its own; compares. */
static void
check_sizes(const struct onepass_case *oc, const struct attn_config *cfg, bool flush,
	    enum cache_onepass how, bool trace_only, unsigned threads)
{
	struct sim_result outs[6], alone;
	struct spec spec;
	char err[256];
	unsigned n = 0;

	while (n < 6 && oc->sizes[n])
		n++;
	assert_int_equal(spec_parse(oc->spec, &spec, err, sizeof(err)), 0);
	if (sim_kernel_onepass_split(cfg, &spec, oc->level, oc->sizes, n, how, flush, 5, trace_only,
				     threads, outs, err, sizeof(err)))
		fail_msg("%s: %s", oc->spec, err);
	if (outs[0].threads > 1)
		split_runs++;
	else if (threads > 1 && !outs[0].threads_why[0])
		fail_msg("%s: one thread of %u, and no reason given", oc->spec, threads);
	for (unsigned k = 0; k < n; k++) {
		struct spec one = spec;

		assert_int_equal(cache_config_resize(&spec.cache, oc->level, oc->sizes[k],
						     &one.cache, err, sizeof(err)),
				 0);
		assert_int_equal(
			trace_only
				? sim_kernel_trace_only(cfg, &one, flush, &alone, err, sizeof(err))
				: sim_kernel(cfg, &one, flush, 5, false, &alone, err, sizeof(err)),
			0);
		if (!same_counters(outs[k].cache, alone.cache))
			fail_msg("%s, L%u = %llu B, %s, %s%s: one pass (%s, %u threads) differs "
				 "from its own run",
				 oc->spec, oc->level + 1, (unsigned long long)oc->sizes[k],
				 attn_kernel_name(cfg->kernel), flush ? "flush" : "no flush",
				 trace_only ? ", trace-only" : "", cache_onepass_str(how),
				 outs[k].threads);
		sim_result_finish(&alone);
		sim_result_finish(&outs[k]);
	}
}

static void
test_case(void **state)
{
	const struct onepass_case *oc = *state;
	struct spec spec;
	char err[256];
	const char *why;
	unsigned n = 0;

	while (n < 6 && oc->sizes[n])
		n++;
	assert_int_equal(spec_parse(oc->spec, &spec, err, sizeof(err)), 0);
	assert_int_equal(cache_onepass_method(&spec.cache, oc->level, oc->sizes, n, &why),
			 oc->method);
	print_message("# %s L%u: %s%s%s\n", oc->spec, oc->level + 1, cache_onepass_str(oc->method),
		      why ? ": " : "", why ? why : "");
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		check_sizes(oc, &kernels[i], true, oc->method, true, 1);
		check_sizes(oc, &kernels[i], false, oc->method, true, 1);
		/* The stack pass's sizes by fan-out too: both must agree with the plain runs. */
		if (oc->method == CACHE_ONEPASS_STACK)
			check_sizes(oc, &kernels[i], true, CACHE_ONEPASS_FANOUT, true, 1);
		/* Split by set over threads (sim_kernel_onepass_split()): the same counters. */
		for (unsigned t = 2; t <= 4; t *= 2) {
			check_sizes(oc, &kernels[i], true, oc->method, true, t);
			check_sizes(oc, &kernels[i], false, oc->method, true, t);
		}
	}
	/* The computing kernel once (the same counters as trace-only, seed and all). */
	check_sizes(oc, &kernels[0], true, oc->method, false, 1);
	check_sizes(oc, &kernels[0], true, oc->method, false, 2);
}

/* After the cases: most of them split, and a swept L1 says why it does not. */
static void
test_split_threads_ran(void **state)
{
	struct sim_result outs[3];
	const uint64_t sizes[] = { 2048, 4096, 16384 };
	struct spec spec;
	char err[256];

	(void)state;
	print_message("# %u one-pass runs split over threads\n", split_runs);
	assert_true(split_runs >= 20);
	assert_int_equal(spec_parse("L1=8K:4:64", &spec, err, sizeof(err)), 0);
	assert_int_equal(sim_kernel_onepass_split(&kernels[0], &spec, 0, sizes, 3,
						  CACHE_ONEPASS_STACK, true, 1, true, 4, outs, err,
						  sizeof(err)),
			 0);
	assert_int_equal(outs[0].threads, 1);
	assert_non_null(strstr(outs[0].threads_why, "L1"));
	for (unsigned k = 0; k < 3; k++)
		sim_result_finish(&outs[k]);
}

/* Where the swept level's input depends on its size, or the stack pass's assumptions fail. */
static void
test_not_applicable(void **state)
{
	static const struct {
		const char *spec;
		unsigned level;
		enum cache_onepass method;
	} rows[] = {
		{ "L1=4K:4:64,L2=64K:8:64:incl", 1, CACHE_ONEPASS_SEPARATE },
		{ "L1=4K:4:64,L2=64K:8:64,L3=1M:16:64:incl", 1, CACHE_ONEPASS_SEPARATE },
		{ "L1=4K:4:64,L2=64K:8:64:excl", 1, CACHE_ONEPASS_SEPARATE },
		{ "L1=4K:4:64:straddle=once,L2=64K:8:64:straddle=once", 1, CACHE_ONEPASS_SEPARATE },
		{ "L1=4K:4:64,L2=64K:full:64:plru", 1, CACHE_ONEPASS_FANOUT },
		{ "L1=4K:4:64,L2=64K:full:64:wt", 1, CACHE_ONEPASS_FANOUT },
		{ "L1=4K:4:64,L2=64K:full:64,L3=1M:16:64", 1, CACHE_ONEPASS_FANOUT },
		{ NULL, 0, 0 },
	};
	const uint64_t sizes[] = { 16384, 65536 }, twice[] = { 16384, 16384 };
	struct spec spec;
	char err[256];
	const char *why;

	(void)state;
	for (int i = 0; rows[i].spec; i++) {
		assert_int_equal(spec_parse(rows[i].spec, &spec, err, sizeof(err)), 0);
		assert_int_equal(cache_onepass_method(&spec.cache, rows[i].level, sizes, 2, &why),
				 rows[i].method);
		assert_non_null(why);
		if (rows[i].method == CACHE_ONEPASS_SEPARATE)
			assert_null(cache_create_onepass(&spec.cache, rows[i].level, sizes, 2,
							 CACHE_ONEPASS_FANOUT));
		assert_null(cache_create_onepass(&spec.cache, rows[i].level, sizes, 2,
						 CACHE_ONEPASS_STACK));
	}
	assert_int_equal(cache_onepass_method(&spec.cache, 1, twice, 2, &why),
			 CACHE_ONEPASS_SEPARATE);
	assert_int_equal(cache_onepass_method(&spec.cache, 7, sizes, 2, &why),
			 CACHE_ONEPASS_SEPARATE);
}

/* stackdist_flush()'s callback: one flush write-back in caches from .. n-1. */
struct flush_count {
	uint64_t fwb[8];
	unsigned n;
};

static void
count_flush(void *ctx, uint64_t line, unsigned from)
{
	struct flush_count *fc = ctx;

	(void)line;
	for (unsigned k = from; k < fc->n; k++)
		fc->fwb[k]++;
}

/* Caches of sets[k] sets and ways[k] ways (0 ends the rows), nested as sim/drive/stackdist.h says. */
static const struct stack_geometry {
	uint64_t sets[8];
	uint32_t ways[8];
} geometries[] = {
	{ { 1, 1, 1, 1, 1, 1 }, { 1, 2, 3, 4, 8, 16 } },
	{ { 4, 4, 4, 4, 4, 4 }, { 1, 2, 3, 4, 8, 16 } },
	{ { 16, 16, 16, 16, 16, 16 }, { 1, 2, 3, 4, 8, 16 } },
	/* Several set counts: a fixed associativity, and ways that grow too. */
	{ { 1, 2, 4, 8, 16, 64 }, { 1, 1, 1, 1, 1, 1 } },
	{ { 2, 4, 8, 16, 32 }, { 4, 4, 4, 4, 4 } },
	{ { 4, 8, 16, 64 }, { 8, 8, 8, 8 } },
	{ { 1, 2, 2, 4, 16, 16 }, { 2, 2, 3, 3, 3, 16 } },
	{ { 1, 2, 4, 4, 8 }, { 80, 80, 80, 100, 100 } },
};

/* The stack pass alone on random streams against a single-level model per geometry: misses,
 * evictions, write-backs and the flush's write-backs, line by line. */
static void
test_stack_random(void **state)
{
	(void)state;
	for (size_t g = 0; g < sizeof(geometries) / sizeof(geometries[0]); g++) {
		const struct stack_geometry *geo = &geometries[g];
		unsigned n = 0;
		struct stackdist *sd;
		struct stackdist_victim v[8];
		struct cache *model[8];
		uint64_t miss[8] = { 0 }, wb[8] = { 0 }, ev[8] = { 0 };
		struct flush_count fc = { { 0 }, 0 };
		uint64_t rng = 12345 + g, span;

		while (n < 8 && geo->ways[n])
			n++;
		fc.n = n;
		sd = geo->sets[0] == geo->sets[n - 1]
			     ? stackdist_create(geo->sets[0], geo->ways, n)
			     : stackdist_create_sets(geo->sets, geo->ways, n);
		assert_non_null(sd);
		span = geo->sets[n - 1] * geo->ways[n - 1];
		for (unsigned k = 0; k < n; k++) {
			struct cache_config cfg = { .levels = 1 };
			struct cache_level_config *l = &cfg.level[0];

			snprintf(l->name, sizeof(l->name), "L1");
			l->line_bytes = 64;
			l->assoc = geo->ways[k];
			l->size_bytes = 64 * geo->sets[k] * geo->ways[k];
			model[k] = cache_create(&cfg);
			assert_non_null(model[k]);
		}
		for (int i = 0; i < 40000; i++) {
			uint64_t line, r;
			bool write;
			unsigned z;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			r = rng;
			/* Mostly a small hot range, sometimes far: every depth is reached. */
			line = (r >> 8) % (r & 1 ? 2 * span : span / 3 + 1);
			write = (r >> 40) % 3 == 0;
			z = stackdist_ref(sd, line, write, v);
			for (unsigned k = 0; k < n; k++) {
				if (k < z) {
					miss[k]++;
					ev[k] += v[k].valid;
					wb[k] += v[k].valid && v[k].dirty;
				}
				cache_access(model[k], line * 64, 8,
					     write ? CACHE_OP_STORE : CACHE_OP_LOAD, 1);
			}
		}
		for (unsigned k = 0; k < n; k++) {
			const struct cache_level_stats *st = cache_level_stats(model[k], 0);

			assert_int_equal(st->read_misses + st->write_misses, miss[k]);
			assert_int_equal(st->evictions, ev[k]);
			assert_int_equal(st->writebacks, wb[k]);
			cache_flush(model[k]);
		}
		stackdist_flush(sd, count_flush, &fc);
		for (unsigned k = 0; k < n; k++) {
			assert_int_equal(cache_level_stats(model[k], 0)->flush_writebacks,
					 fc.fwb[k]);
			cache_destroy(model[k]);
		}
		stackdist_destroy(sd);
	}
}

/* A plain LRU, write-back, write-allocate cache of sets x ways lines, the reference for
 * test_stack_victims(): a way is its line + 1 (0: empty), its time and whether it is dirty. */
struct lru_ref {
	uint64_t sets, ways, *line, *time;
	bool *dirty;
};

/* References line at time t: true on a hit; on a miss *victim the line pushed out (+ 1; 0:
 * none) and *victim_dirty whether it was dirty. */
static bool
lru_ref_access(struct lru_ref *c, uint64_t line, bool write, uint64_t t, uint64_t *victim,
	       bool *victim_dirty)
{
	uint64_t base = (line & (c->sets - 1)) * c->ways, w = base;

	for (uint64_t i = base; i < base + c->ways; i++) {
		if (c->line[i] == line + 1) {
			c->time[i] = t;
			c->dirty[i] |= write;
			return true;
		}
		if (c->line[i] == 0 || (c->line[w] != 0 && c->time[i] < c->time[w]))
			w = i;
	}
	*victim = c->line[w];
	*victim_dirty = c->line[w] && c->dirty[w];
	c->line[w] = line + 1;
	c->time[w] = t;
	c->dirty[w] = write;
	return false;
}

struct flush_lines {
	uint64_t lines[8], sum[8];
	unsigned n;
};

static void
sum_flush(void *ctx, uint64_t line, unsigned from)
{
	struct flush_lines *f = ctx;

	for (unsigned k = from; k < f->n; k++)
		f->lines[k]++, f->sum[k] += line;
}

/* The stack pass line by line against a plain LRU per cache: which caches miss, and the line
 * each pushes out and whether it was dirty, on random streams over every geometry; then the
 * lines its flush writes back. A victim taken from the wrong line keeps the counts of
 * test_stack_random() but moves another array's bytes. */
static void
test_stack_victims(void **state)
{
	(void)state;
	for (size_t g = 0; g < sizeof(geometries) / sizeof(geometries[0]); g++) {
		const struct stack_geometry *geo = &geometries[g];
		struct lru_ref ref[8];
		struct stackdist_victim v[8];
		struct flush_lines got = { { 0 }, { 0 }, 0 }, want = { { 0 }, { 0 }, 0 };
		struct stackdist *sd;
		uint64_t rng = 777 + g, span;
		unsigned n = 0;

		while (n < 8 && geo->ways[n])
			n++;
		sd = geo->sets[0] == geo->sets[n - 1]
			     ? stackdist_create(geo->sets[0], geo->ways, n)
			     : stackdist_create_sets(geo->sets, geo->ways, n);
		assert_non_null(sd);
		for (unsigned k = 0; k < n; k++) {
			uint64_t lines = geo->sets[k] * geo->ways[k];

			ref[k] = (struct lru_ref){ geo->sets[k], geo->ways[k],
						   test_malloc(lines * sizeof(uint64_t)),
						   test_malloc(lines * sizeof(uint64_t)),
						   test_malloc(lines * sizeof(bool)) };
			memset(ref[k].line, 0, lines * sizeof(uint64_t));
		}
		span = geo->sets[n - 1] * geo->ways[n - 1];
		for (uint64_t t = 1; t <= 60000; t++) {
			uint64_t line, r;
			bool write;
			unsigned z;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			r = rng;
			/* A hot range, a stream that walks past every cache, and far lines. */
			line = r % 5 == 0   ? (t * (1 + g % 3)) % (3 * span)
			       : r & 8	    ? (r >> 8) % (2 * span)
					    : (r >> 8) % (span / 3 + 1);
			write = (r >> 40) % 3 == 0;
			z = stackdist_ref(sd, line, write, v);
			for (unsigned k = 0; k < n; k++) {
				uint64_t victim = 0;
				bool dirty = false, hit;

				hit = lru_ref_access(&ref[k], line, write, t, &victim, &dirty);
				assert_int_equal(hit, k >= z);
				if (hit)
					continue;
				assert_int_equal(v[k].valid, victim != 0);
				if (victim) {
					assert_int_equal(v[k].line, victim - 1);
					assert_int_equal(v[k].dirty, dirty);
				}
			}
		}
		got.n = want.n = n;
		stackdist_flush(sd, sum_flush, &got);
		for (unsigned k = 0; k < n; k++) {
			for (uint64_t i = 0; i < ref[k].sets * ref[k].ways; i++)
				if (ref[k].line[i] && ref[k].dirty[i])
					want.lines[k]++, want.sum[k] += ref[k].line[i] - 1;
			assert_int_equal(got.lines[k], want.lines[k]);
			assert_int_equal(got.sum[k], want.sum[k]);
			test_free(ref[k].line);
			test_free(ref[k].time);
			test_free(ref[k].dirty);
		}
		stackdist_destroy(sd);
	}
}

/* Fan-out's requests at the edge of its whole-line path (cache_span_refs()): whole lines
 * written through with a repeat count, half lines from an L1 of smaller lines, double lines
 * from one of larger ones, accesses that straddle lines, under L2s that take the plain path
 * and one that does not (random). Each size's counters equal those of its own model. */
static void
test_fanout_requests(void **state)
{
	static const char *const specs[] = {
		"L1=1K:2:64:wt,L2=4K:4:64",
		"L1=1K:2:64:nwa,L2=4K:4:64",
		"L1=1K:2:32,L2=4K:4:64",
		"L1=1K:2:128,L2=4K:4:64",
		"L1=1K:2:64,L2=4K:4:64",
		"L1=1K:2:64,L2=4K:4:64:random",
		NULL,
	};
	static const uint32_t bytes[] = { 4, 32, 64, 64, 8 };
	const uint64_t sizes[] = { 2048, 4096, 16384 };

	(void)state;
	for (int i = 0; specs[i]; i++) {
		struct cache *one[3], *c;
		struct spec spec;
		char err[256];
		uint64_t rng = 99 + (uint64_t)i;

		assert_int_equal(spec_parse(specs[i], &spec, err, sizeof(err)), 0);
		c = cache_create_onepass(&spec.cache, 1, sizes, 3, CACHE_ONEPASS_FANOUT);
		assert_non_null(c);
		for (unsigned k = 0; k < 3; k++) {
			struct cache_config cfg;

			assert_int_equal(cache_config_resize(&spec.cache, 1, sizes[k], &cfg, err,
							     sizeof(err)),
					 0);
			one[k] = cache_create(&cfg);
			assert_non_null(one[k]);
		}
		for (int a = 0; a < 20000; a++) {
			uint64_t r, addr;
			uint32_t size, count;
			enum cache_op op;

			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			r = rng;
			size = bytes[r % 5];
			/* Aligned to its size but for the last kind, which straddles a line. */
			addr = ((r >> 8) % 512) * 64 + (size == 8 ? 60 : ((r >> 20) % 2) * 64);
			count = (r >> 30) % 4 == 0 ? 3 : 1;
			op = (r >> 33) % 2 ? CACHE_OP_STORE : CACHE_OP_LOAD;
			cache_access(c, addr, size, op, count);
			for (unsigned k = 0; k < 3; k++)
				cache_access(one[k], addr, size, op, count);
		}
		cache_flush(c);
		for (unsigned k = 0; k < 3; k++) {
			struct cache *s = cache_onepass_take(c, k);

			cache_flush(one[k]);
			assert_non_null(s);
			if (!same_counters(s, one[k]))
				fail_msg("%s, L2 = %llu B: fan-out differs from its own run",
					 specs[i], (unsigned long long)sizes[k]);
			cache_destroy(s);
			cache_destroy(one[k]);
		}
		cache_destroy(c);
	}
}

/* Geometries stackdist_create_sets() must refuse: not nested, or out of range. */
static void
test_stack_sets_refused(void **state)
{
	static const uint64_t shrink[] = { 8, 4 }, same[] = { 4, 4 }, odd[] = { 4, 12 };
	static const uint64_t grow[] = { 4, 8 };
	static const uint32_t w22[] = { 2, 2 }, w42[] = { 4, 2 }, none[] = { 0, 2 };

	(void)state;
	assert_null(stackdist_create_sets(shrink, w22, 2));
	assert_null(stackdist_create_sets(same, w22, 2));
	assert_null(stackdist_create_sets(odd, w22, 2));
	assert_null(stackdist_create_sets(grow, w42, 2));
	assert_null(stackdist_create_sets(grow, none, 2));
	assert_null(stackdist_create_sets(same, w22, 0));
}

/* A level's fields that say its geometry. */
static void
assert_geometry(const struct cache_level_config *l, uint64_t size, uint32_t assoc, bool full)
{
	assert_int_equal(l->size_bytes, size);
	assert_int_equal(l->assoc, assoc);
	assert_int_equal(l->fully_assoc, full);
}

/* Resizing keeps the associativity the spec gave: N ways stay N ways where N made one set
 * (spec_parse() flags that fully associative), "full" stays one set, and a size where N ways
 * make one set is flagged as spec_parse() flags it. */
static void
test_resize_keeps_ways(void **state)
{
	struct spec s, back;
	struct cache_config a, b;
	char err[256];

	(void)state;
	assert_int_equal(spec_parse("L1=4K:8:64,L2=256B:4:64", &s, err, sizeof(err)), 0);
	assert_geometry(&s.cache.level[1], 256, 4, true);
	assert_int_equal(cache_config_resize(&s.cache, 1, 1024, &a, err, sizeof(err)), 0);
	assert_geometry(&a.level[1], 1024, 4, false);
	assert_int_equal(cache_config_resize(&a, 1, 256, &b, err, sizeof(err)), 0);
	assert_geometry(&b.level[1], 256, 4, true);
	assert_int_equal(spec_parse("L1=4K:8:64,L2=256B:4:64", &back, err, sizeof(err)), 0);
	assert_geometry(&back.cache.level[1], 256, 4, true);
	assert_int_equal(cache_config_resize(&b, 1, 65536, &a, err, sizeof(err)), 0);
	assert_geometry(&a.level[1], 65536, 4, false);
	/* 4 ways do not divide 2 lines. */
	assert_int_not_equal(cache_config_resize(&s.cache, 1, 128, &a, err, sizeof(err)), 0);

	assert_int_equal(spec_parse("L1=4K:8:64,L2=256B:full:64", &s, err, sizeof(err)), 0);
	assert_int_equal(cache_config_resize(&s.cache, 1, 4096, &a, err, sizeof(err)), 0);
	assert_geometry(&a.level[1], 4096, 0, true);

	/* One set at 4 ways, from a base of 4 ways, and ways that grow with "full". */
	{
		const uint64_t sizes[] = { 256, 1024, 4096 };
		const char *why;

		assert_int_equal(spec_parse("L1=4K:8:64,L2=64K:4:64", &s, err, sizeof(err)), 0);
		assert_int_equal(cache_onepass_method(&s.cache, 1, sizes, 3, &why),
				 CACHE_ONEPASS_STACK);
		assert_int_equal(spec_parse("L1=4K:8:64,L2=256B:4:64", &s, err, sizeof(err)), 0);
		assert_int_equal(cache_onepass_method(&s.cache, 1, sizes, 3, &why),
				 CACHE_ONEPASS_STACK);
	}
}

/* sim_onepass_split(): as many of the smallest sizes as fit in a pass, a size too large alone;
 * an L1 of one set apart from an L1 of several. */
static void
test_split(void **state)
{
	const uint64_t sizes[] = { 1 << 20, 1 << 18, 1 << 19, 1 << 21 },
		       two[] = { 1 << 18, 1 << 19 };
	const uint64_t l1[] = { 256, 1024, 4096 };
	unsigned pass[4];
	struct spec s;
	char err[256];

	(void)state;
	assert_int_equal(spec_parse("L1=4K:4:64,L2=64K:full:64:fifo", &s, err, sizeof(err)), 0);
	assert_int_equal(sim_onepass_split(&s, 1, sizes, 4, CACHE_ONEPASS_FANOUT, UINT64_MAX, pass),
			 1);
	assert_true(pass[0] == 0 && pass[1] == 0 && pass[2] == 0 && pass[3] == 0);
	assert_int_equal(
		sim_onepass_split(&s, 1, sizes, 4, CACHE_ONEPASS_FANOUT,
				  cache_onepass_bytes(&s.cache, 1, two, 2, CACHE_ONEPASS_FANOUT),
				  pass),
		3);
	assert_true(pass[1] == 0 && pass[2] == 0 && pass[0] == 1 && pass[3] == 2);
	assert_int_equal(sim_onepass_split(&s, 1, sizes, 4, CACHE_ONEPASS_FANOUT, 0, pass), 4);
	assert_true(pass[1] == 0 && pass[2] == 1 && pass[0] == 2 && pass[3] == 3);
	/* The estimate grows with every size a pass holds. */
	assert_true(cache_onepass_bytes(&s.cache, 1, sizes, 4, CACHE_ONEPASS_FANOUT) >
		    cache_onepass_bytes(&s.cache, 1, two, 2, CACHE_ONEPASS_FANOUT) +
			    3 * (UINT64_C(1) << 20) / 64 * 8);

	assert_int_equal(spec_parse("L1=4K:4:64", &s, err, sizeof(err)), 0);
	assert_int_equal(sim_onepass_split(&s, 0, l1, 3, CACHE_ONEPASS_STACK, UINT64_MAX, pass), 2);
	assert_true(pass[0] == 1 && pass[1] == 0 && pass[2] == 0);
	assert_int_equal(spec_parse("L1=4K:full:64", &s, err, sizeof(err)), 0);
	assert_int_equal(sim_onepass_split(&s, 0, l1, 3, CACHE_ONEPASS_STACK, UINT64_MAX, pass), 1);
}

/* This process's address space, in bytes (/proc/self/statm), or 0. */
static uint64_t
mapped_now(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long long pages = 0;

	if (f) {
		if (fscanf(f, "%llu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Lowers the soft address-space limit to what is mapped now plus extra bytes; restore with
 * set_as(old). */
static void
limit_as(uint64_t extra, struct rlimit *old)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_AS, old), 0);
	rl = *old;
	rl.rlim_cur = (rlim_t)(mapped_now() + extra);
	assert_true(rl.rlim_max == RLIM_INFINITY || rl.rlim_cur <= rl.rlim_max);
	assert_int_equal(setrlimit(RLIMIT_AS, &rl), 0);
}

static void
set_as(const struct rlimit *rl)
{
	assert_int_equal(setrlimit(RLIMIT_AS, rl), 0);
}

/* Models that cannot be allocated are refused, never an abort: a plain model and a one-pass
 * one (-ENOMEM, the message names the bytes), a stack whose line index cannot grow during the
 * run (the pass is marked failed). The estimate holds what a model allocates. */
static void
test_out_of_memory(void **state)
{
	static const struct attn_config cfg = { .kernel = ATTN_NAIVE,
						.N = 32,
						.d = 16,
						.heads = 1,
						.kv_heads = 1,
						.batch = 1,
						.dtype = ATTN_FP32,
						.Br = 16,
						.Bc = 16 };
	const uint64_t huge[] = { UINT64_C(4) << 30, UINT64_C(8) << 30 };
	const uint64_t mid[] = { 16 << 20, 32 << 20 }, big[] = { 64 << 20, 128 << 20 };
	struct sim_result r, outs[2];
	struct rlimit old;
	struct cache *c;
	struct spec s;
	char err[256];
	uint64_t need;

	(void)state;
	if (test_sanitized()) {
		print_message("# not run: an address-space limit in a sanitized build\n");
		return;
	}
	/* 3 GiB of tags and index; the arrays' mapping reserves 1 GiB more while it maps. */
	assert_int_equal(spec_parse("L1=4K:4:64,L2=8G:full:64:fifo", &s, err, sizeof(err)), 0);
	limit_as(UINT64_C(5) << 28, &old);
	assert_int_equal(sim_kernel(&cfg, &s, true, 1, false, &r, err, sizeof(err)), -ENOMEM);
	assert_non_null(strstr(err, "cannot allocate the cache model (3.0 GiB)"));
	assert_null(cache_create_onepass(&s.cache, 1, huge, 2, CACHE_ONEPASS_FANOUT));
	assert_int_equal(sim_kernel_onepass(&cfg, &s, 1, huge, 2, CACHE_ONEPASS_FANOUT, true, 1,
					    false, outs, err, sizeof(err)),
			 -ENOMEM);
	assert_non_null(strstr(err, "cannot allocate the one-pass model of 2 sizes (4.5 GiB)"));
	set_as(&old);

	/* The estimate is enough, and half of it is not. */
	need = cache_onepass_bytes(&s.cache, 1, mid, 2, CACHE_ONEPASS_FANOUT);
	limit_as(need + (8 << 20), &old);
	c = cache_create_onepass(&s.cache, 1, mid, 2, CACHE_ONEPASS_FANOUT);
	set_as(&old);
	assert_non_null(c);
	cache_destroy(c);
	limit_as(need / 2, &old);
	c = cache_create_onepass(&s.cache, 1, mid, 2, CACHE_ONEPASS_FANOUT);
	set_as(&old);
	assert_null(c);

	/* A stack pass whose line index must grow to 32 MiB, with 2 MiB to grow in. */
	assert_int_equal(spec_parse("L1=4K:4:64,L2=8G:full:64", &s, err, sizeof(err)), 0);
	c = cache_create_onepass(&s.cache, 1, big, 2, CACHE_ONEPASS_STACK);
	assert_non_null(c);
	limit_as(2 << 20, &old);
	for (uint64_t line = 0; line < (UINT64_C(1) << 21) && !cache_onepass_failed(c); line++)
		cache_access(c, line * 64, 8, CACHE_OP_LOAD, 1);
	set_as(&old);
	assert_true(cache_onepass_failed(c));
	cache_destroy(c);
}

int
main(void)
{
	enum { NCASES = sizeof(cases) / sizeof(cases[0]), NMORE = 9 };
	struct CMUnitTest tests[NCASES + NMORE];

	/* First: its address-space limits count on a heap that earlier models have not grown
	 * (what they freed would be handed out again under the limit). */
	tests[0] = (struct CMUnitTest)cmocka_unit_test(test_out_of_memory);
	for (size_t i = 0; i < NCASES; i++)
		tests[1 + i] = (struct CMUnitTest){ cases[i].spec, test_case, NULL, NULL,
						    (void *)&cases[i] };
	tests[NCASES + 1] = (struct CMUnitTest)cmocka_unit_test(test_not_applicable);
	tests[NCASES + 2] = (struct CMUnitTest)cmocka_unit_test(test_stack_random);
	tests[NCASES + 3] = (struct CMUnitTest)cmocka_unit_test(test_stack_sets_refused);
	tests[NCASES + 4] = (struct CMUnitTest)cmocka_unit_test(test_resize_keeps_ways);
	tests[NCASES + 5] = (struct CMUnitTest)cmocka_unit_test(test_split);
	tests[NCASES + 6] = (struct CMUnitTest)cmocka_unit_test(test_split_threads_ran);
	tests[NCASES + 7] = (struct CMUnitTest)cmocka_unit_test(test_fanout_requests);
	tests[NCASES + 8] = (struct CMUnitTest)cmocka_unit_test(test_stack_victims);
	return _cmocka_run_group_tests("onepass", tests, NCASES + NMORE, NULL, NULL);
}
