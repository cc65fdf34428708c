/*
 * The replay benchmark's trace and timing loops (measure/replay_bench.h).
 *
 * The trace is the S = Q K^T loop nest of an attention kernel: for a query row i and a key row
 * j, a dot product over k that interleaves two row streams (Q[i][k], K[j][k], 4-byte elements)
 * with a strided column stream (V^T read down a column every 8th step, stride one padded row of
 * N + pad elements), then one store of S[i][j]. N = 4096, d = 64: K and V^T are 1 MiB each.
 */

#include "measure/replay_bench.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "measure/spawn.h"
#include "sim/util.h"
#include "traces/replay.h"

#define BENCH_N 4096u
#define BENCH_D 64u
#define Q_BASE UINT64_C(0x10000000)
#define K_BASE UINT64_C(0x20000000)
#define VT_BASE UINT64_C(0x30000000)
#define S_BASE UINT64_C(0x40000000)

static inline void
emit(struct replay_sink *s, enum trace_event_kind kind, uint64_t addr)
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
step(struct replay_sink *s, uint64_t i, uint64_t j, uint64_t pad)
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

/* Generates at least `target` accesses, whole rows of j at a time; returns how many. Stops
 * early once interrupted (spawn_guard_signal()). */
uint64_t
replay_bench_generate(struct replay_sink *s, uint64_t target, uint64_t pad, bool blocked)
{
	uint64_t n = 0;

	if (!blocked) {
		for (uint64_t i = 0; n < target && !spawn_guard_signal(); i++)
			for (uint64_t j = 0; j < BENCH_N; j++)
				n += step(s, i % BENCH_N, j, pad);
		return n;
	}
	for (uint64_t jb = 0; n < target && !spawn_guard_signal(); jb = (jb + 64) % BENCH_N)
		for (uint64_t i = 0; i < BENCH_N && n < target && !spawn_guard_signal(); i++)
			for (uint64_t j = jb; j < jb + 64; j++)
				n += step(s, i, j, pad);
	return n;
}

bool
replay_bench_same_counters(struct cache *a, struct cache *b)
{
	const struct cache_traffic *da = cache_dram(a), *db = cache_dram(b);

	for (unsigned i = 0; i < cache_level_count(a); i++)
		if (memcmp(cache_level_stats(a, i), cache_level_stats(b, i),
			   sizeof(struct cache_level_stats)))
			return false;
	return memcmp(da, db, sizeof(*da)) == 0;
}

int
replay_bench_time(const char *path, enum trace_format fmt, const struct spec *spec, int repeat,
		  struct replay_timing *t, struct cache **keep, char *err, size_t errlen)
{
	for (int r = 0; r < repeat && !spawn_guard_signal(); r++) {
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

uint64_t
replay_bench_file_size(const char *path)
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
replay_bench_direct(const struct cache_config *cfg, uint64_t target, uint64_t pad, bool blocked,
		    struct replay_timing *t, struct cache **model)
{
	struct replay_sink direct = { 0 };
	double t0;

	direct.cache = cache_create(cfg);
	if (!direct.cache)
		return -1;
	t0 = now_seconds();
	t->accesses = replay_bench_generate(&direct, target, pad, blocked);
	t->best = t->worst = now_seconds() - t0;
	cache_flush(direct.cache);
	*model = direct.cache;
	return 0;
}
