/*
 * The replay benchmark's traces and timing loops (bench/replay_bench.h).
 *
 * blocked and unblocked are the S = Q K^T loop nest of an attention kernel: for a query row i
 * and a key row j, a dot product over k that interleaves two row streams (Q[i][k], K[j][k],
 * 4-byte elements) with a strided column stream (V^T read down a column every 8th step, stride
 * one padded row of N + pad elements), then one store of S[i][j]. N = 4096, d = 64: K and V^T
 * are 1 MiB each.
 *
 * naive is a whole attention head as a textbook writes it, a query row at a time (N = 512,
 * d = 64, fp32): S[i][j] = Q[i] . K[j], a softmax over S's row in place (max, exp and sum,
 * divide: five passes of loads and stores), then O[i][c] = sum_j S[i][j] V[j][c], a dot
 * product down V's column c. Every V access misses L1 (a column's 512 lines fall in 16 of
 * L1's 64 sets), so about a quarter of all accesses miss; K streams through L1 once per query
 * row. Arrays Q, K, V, S, O and phases scores, softmax, pv are declared, so replays count
 * DRAM bytes per array and phase as a kernel's trace does. Heads follow each other until the
 * target is reached.
 */

#include "bench/replay_bench.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/util.h"
#include "measure/spawn.h"
#include "traces/replay.h"

#define BENCH_N 4096u
#define BENCH_D 64u
#define Q_BASE UINT64_C(0x10000000)
#define K_BASE UINT64_C(0x20000000)
#define VT_BASE UINT64_C(0x30000000)
#define S_BASE UINT64_C(0x40000000)

#define NAIVE_N 512u
#define NAIVE_D 64u
#define NAIVE_ROWS_BYTES (NAIVE_N * NAIVE_D * 4u) /* Q, K, V or O of one head */
#define NAIVE_S_BYTES (NAIVE_N * NAIVE_N * 4u)
/* Accesses of one query row: scores, softmax, P V. */
#define NAIVE_ROW (NAIVE_N * (2 * NAIVE_D + 1) + 5 * NAIVE_N + NAIVE_D * (2 * NAIVE_N + 1))

static const char *const shape_names[] = { "blocked", "unblocked", "naive" };

bool
replay_shape_parse(const char *name, enum replay_shape *out)
{
	for (unsigned i = 0; i < sizeof(shape_names) / sizeof(shape_names[0]); i++)
		if (strcmp(name, shape_names[i]) == 0) {
			*out = (enum replay_shape)i;
			return true;
		}
	return false;
}

const char *
replay_shape_name(enum replay_shape shape)
{
	return shape_names[shape];
}

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

/* The naive trace's arrays, one of each for all heads, and its phases, declared to the sink;
 * phase[k] is phase k's index in the model ([0]) and in the trace file ([1]). */
struct naive_decl {
	int phase[3][2];
};

static const struct {
	const char *name;
	uint64_t base, head_bytes;
} naive_arrays[] = {
	/* clang-format off */
	{ "Q", UINT64_C(1) << 36, NAIVE_ROWS_BYTES },
	{ "K", UINT64_C(2) << 36, NAIVE_ROWS_BYTES },
	{ "V", UINT64_C(3) << 36, NAIVE_ROWS_BYTES },
	{ "S", UINT64_C(4) << 36, NAIVE_S_BYTES },
	{ "O", UINT64_C(5) << 36, NAIVE_ROWS_BYTES },
	/* clang-format on */
};

static void
naive_declare(struct replay_sink *s, uint64_t heads, struct naive_decl *d)
{
	static const char *const phases[3] = { "scores", "softmax", "pv" };

	for (unsigned a = 0; a < 5; a++) {
		uint64_t bytes = heads * naive_arrays[a].head_bytes;

		if (s->cache)
			cache_add_array(s->cache, naive_arrays[a].name, naive_arrays[a].base, bytes,
					false);
		if (s->mt)
			mtrace_writer_array(s->mt, naive_arrays[a].name, naive_arrays[a].base,
					    bytes, TRACE_SPACE_DRAM);
	}
	for (unsigned p = 0; p < 3; p++) {
		d->phase[p][0] = s->cache ? cache_add_phase(s->cache, phases[p]) : 0;
		d->phase[p][1] = s->mt ? mtrace_writer_phase(s->mt, phases[p]) : 0;
	}
}

static void
naive_phase(struct replay_sink *s, const struct naive_decl *d, unsigned p)
{
	if (s->cache)
		cache_set_phase(s->cache, d->phase[p][0]);
	if (s->mt)
		mtrace_writer_set_phase(s->mt, d->phase[p][1]);
}

/* Query row i of head h: NAIVE_ROW accesses. */
static void
naive_row(struct replay_sink *s, const struct naive_decl *d, uint64_t h, uint64_t i)
{
	const uint64_t q = naive_arrays[0].base + (h * NAIVE_N + i) * NAIVE_D * 4;
	const uint64_t k = naive_arrays[1].base + h * NAIVE_N * NAIVE_D * 4;
	const uint64_t v = naive_arrays[2].base + h * NAIVE_N * NAIVE_D * 4;
	const uint64_t srow = naive_arrays[3].base + (h * NAIVE_N + i) * NAIVE_N * 4;
	const uint64_t o = naive_arrays[4].base + (h * NAIVE_N + i) * NAIVE_D * 4;

	naive_phase(s, d, 0);
	for (uint64_t j = 0; j < NAIVE_N; j++) {
		for (uint64_t c = 0; c < NAIVE_D; c++) {
			emit(s, TRACE_EV_LOAD, q + c * 4);
			emit(s, TRACE_EV_LOAD, k + (j * NAIVE_D + c) * 4);
		}
		emit(s, TRACE_EV_STORE, srow + j * 4);
	}
	naive_phase(s, d, 1);
	for (uint64_t j = 0; j < NAIVE_N; j++) /* the row's maximum */
		emit(s, TRACE_EV_LOAD, srow + j * 4);
	for (int pass = 0; pass < 2; pass++) /* exp(s - max) and the sum, then / sum */
		for (uint64_t j = 0; j < NAIVE_N; j++) {
			emit(s, TRACE_EV_LOAD, srow + j * 4);
			emit(s, TRACE_EV_STORE, srow + j * 4);
		}
	naive_phase(s, d, 2);
	for (uint64_t c = 0; c < NAIVE_D; c++) {
		for (uint64_t j = 0; j < NAIVE_N; j++) {
			emit(s, TRACE_EV_LOAD, srow + j * 4);
			emit(s, TRACE_EV_LOAD, v + (j * NAIVE_D + c) * 4);
		}
		emit(s, TRACE_EV_STORE, o + c * 4);
	}
}

/* The naive shape: query rows, head after head, until target. */
static uint64_t
naive_generate(struct replay_sink *s, uint64_t target)
{
	uint64_t rows = (target + NAIVE_ROW - 1) / NAIVE_ROW, n = 0;
	struct naive_decl d;

	naive_declare(s, (rows + NAIVE_N - 1) / NAIVE_N, &d);
	for (uint64_t r = 0; r < rows && !spawn_guard_signal(); r++) {
		naive_row(s, &d, r / NAIVE_N, r % NAIVE_N);
		n += NAIVE_ROW;
	}
	return n;
}

uint64_t
replay_bench_generate(struct replay_sink *s, uint64_t target, uint64_t pad, enum replay_shape shape)
{
	uint64_t n = 0;

	if (shape == REPLAY_SHAPE_NAIVE)
		return naive_generate(s, target);
	if (shape == REPLAY_SHAPE_UNBLOCKED) {
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

/* This process's user CPU time in seconds. */
static double
user_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6;
}

/* Replay r's times into t: wall seconds and user seconds. */
static void
note_times(struct replay_timing *t, int r, double seconds, double user)
{
	if (r == 0 || seconds < t->best)
		t->best = seconds;
	if (r == 0 || seconds > t->worst)
		t->worst = seconds;
	if (r == 0 || user < t->best_user)
		t->best_user = user;
}

int
replay_bench_time(const char *path, enum trace_format fmt, const struct spec *spec, int repeat,
		  struct replay_timing *t, struct cache **keep, char *err, size_t errlen)
{
	return replay_bench_time_threads(path, fmt, spec, repeat, 1, t, keep, err, errlen);
}

int
replay_bench_time_threads(const char *path, enum trace_format fmt, const struct spec *spec,
			  int repeat, unsigned threads, struct replay_timing *t, struct cache **keep,
			  char *err, size_t errlen)
{
	for (int r = 0; r < repeat && !spawn_guard_signal(); r++) {
		struct replay_result res;
		double u0 = user_seconds();

		if (threads > 1 ? replay_file_split(path, fmt, spec, true, threads, &res, err,
						    errlen)
				: replay_file(path, fmt, spec, true, &res, err, errlen))
			return -1;
		note_times(t, r, res.seconds, user_seconds() - u0);
		t->accesses = res.accesses;
		if (r == repeat - 1) {
			*keep = res.cache;
			res.cache = NULL;
		}
		replay_result_finish(&res);
	}
	return 0;
}

int
replay_bench_floor(const char *path, enum trace_format fmt, int repeat, struct replay_timing *t,
		   char *err, size_t errlen)
{
	enum { BATCH = 1024 };
	struct cache_ref *buf = xzalloc(BATCH * sizeof(*buf));
	int rc = 0;

	for (int r = 0; r < repeat && !rc && !spawn_guard_signal(); r++) {
		double t0 = now_seconds(), u0 = user_seconds();
		struct trace_reader *rd = trace_reader_open(path, fmt, err, errlen);
		uint64_t accesses = 0;
		long got;

		if (!rd) {
			rc = -1;
			break;
		}
		while ((got = trace_reader_read(rd, buf, BATCH)) > 0)
			for (long i = 0; i < got; i++)
				if (buf[i].kind < CACHE_OP_COUNT)
					accesses += buf[i].count;
		if (got < 0) {
			snprintf(err, errlen, "%s", trace_reader_error(rd));
			rc = -1;
		}
		trace_reader_close(rd);
		note_times(t, r, now_seconds() - t0, user_seconds() - u0);
		t->accesses = accesses;
	}
	free(buf);
	return rc;
}

int
replay_bench_raw_read(const char *path, int repeat, struct replay_timing *t, char *err,
		      size_t errlen)
{
	/* The block the trace readers read in (traces/input.c), so that only decoding differs. */
	enum { BLOCK = 1 << 20 };
	uint8_t *buf = xzalloc(BLOCK);
	int rc = 0;

	for (int r = 0; r < repeat && !rc && !spawn_guard_signal(); r++) {
		double t0 = now_seconds(), u0 = user_seconds();
		int fd = open(path, O_RDONLY);
		ssize_t got;

		if (fd < 0) {
			snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
			rc = -1;
			break;
		}
		while ((got = read(fd, buf, BLOCK)) > 0 || (got < 0 && errno == EINTR))
			;
		if (got < 0) {
			snprintf(err, errlen, "reading %s: %s", path, strerror(errno));
			rc = -1;
		}
		close(fd);
		note_times(t, r, now_seconds() - t0, user_seconds() - u0);
	}
	free(buf);
	return rc;
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
replay_bench_direct(const struct cache_config *cfg, uint64_t target, uint64_t pad,
		    enum replay_shape shape, struct replay_timing *t, struct cache **model)
{
	struct replay_sink direct = { 0 };
	double t0, u0;

	direct.cache = cache_create(cfg);
	if (!direct.cache)
		return -1;
	t0 = now_seconds();
	u0 = user_seconds();
	t->accesses = replay_bench_generate(&direct, target, pad, shape);
	t->best = t->worst = now_seconds() - t0;
	t->best_user = user_seconds() - u0;
	cache_flush(direct.cache);
	*model = direct.cache;
	return 0;
}
