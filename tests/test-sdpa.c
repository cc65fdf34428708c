/*
 * The GPU model of PyTorch's flash SDPA (gpu/sdpa_plan.c, gpu/sdpa_sim.c,
 * gpu/tilelru.c, `memsim sdpa`): FlashAttention's launch against the grids Nsight Compute
 * measured, the tile LRU against sim/cache.c, the model against every measured row of
 * tests/data/gpu/sdpa.csv (the bounds docs/gpu.md states), and the command's errors.
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/sdpa_sim.h"
#include "sim/cache.h"
#include "sim/spec.h"
#include "gpu/l2sets.h"
#include "gpu/tilelru_test.h"
#include "tests/unit.h"

#define TMPDIR_NAME "sdpa"
#include "tests/tmpdir.h"

#include "tests/cli-run.h"

struct row {
	struct sdpa_shape s;
	uint64_t read, write;
	unsigned grid[3], combine_grid;
	bool split;
	double waves;
	uint64_t local_store; /* bytes, where the file has local_store_bytes before waves */
};

/* The rows of path (sdpa.csv's columns); returns how many (at most max). */
static unsigned
read_rows_of(const char *path, struct row *rows, unsigned max)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned n = 0;
	bool local_store;

	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f)); /* the header */
	local_store = strstr(line, ",local_store_bytes,waves") != NULL;
	while (n < max && fgets(line, sizeof(line), f)) {
		struct row *r = &rows[n];
		unsigned b, h, hk, d, causal;
		unsigned long long nq, nkv, rd, wr, t;
		char dtype[8], kernels[128];
		int used = 0;

		memset(r, 0, sizeof(*r));
		assert_int_equal(
			sscanf(line, "%u,%u,%u,%llu,%llu,%u,%u,%7[^,],%127[^,],%llu,%llu,%llu,%n",
			       &b, &h, &hk, &nq, &nkv, &d, &causal, dtype, kernels, &rd, &wr, &t,
			       &used),
			12);
		r->s = (struct sdpa_shape){ b,   h, hk,          nq,
					    nkv, d, causal != 0, strcmp(dtype, "bf16") == 0 };
		r->read = rd, r->write = wr;
		r->split = strstr(kernels, "splitkv") != NULL;
		if (r->split)
			assert_int_equal(sscanf(line + used, "\"(%u, %u, %u)+(%u, 1, 1)\"",
						&r->grid[0], &r->grid[1], &r->grid[2],
						&r->combine_grid),
					 4);
		else
			assert_int_equal(sscanf(line + used, "\"(%u, %u, %u)\"", &r->grid[0],
						&r->grid[1], &r->grid[2]),
					 3);
		r->waves = atof(strrchr(line, ',') + 1);
		if (local_store) {
			*strrchr(line, ',') = '\0';
			r->local_store = strtoull(strrchr(line, ',') + 1, NULL, 10);
		}
		n++;
	}
	fclose(f);
	return n;
}

/* sdpa.csv's rows, the H100's. */
static unsigned
read_rows(struct row *rows, unsigned max)
{
	return read_rows_of(SDPA_CSV, rows, max);
}

/* FlashAttention's kernel choice, grid and split count, and the occupancy, against what ncu
 * saw launched on every measured shape (grid, and waves = grid / (132 SMs x blocks per SM)). */
static void
test_grid_matches_measured(void **state)
{
	static struct row rows[128];
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	unsigned n = read_rows(rows, 128);

	(void)state;
	assert_int_equal(n, 72);
	for (unsigned i = 0; i < n; i++) {
		struct sdpa_plan p;
		double waves;

		assert_null(sdpa_shape_check(&rows[i].s));
		sdpa_plan_make(&rows[i].s, g, &p);
		assert_int_equal(p.splits > 1, rows[i].split);
		for (unsigned k = 0; k < 3; k++)
			assert_int_equal(p.grid[k], rows[i].grid[k]);
		if (rows[i].split)
			assert_int_equal(p.combine_grid, rows[i].combine_grid);
		waves = (double)sdpa_blocks(&p) / (g->sms * p.blocks_per_sm);
		assert_true(fabs(waves - rows[i].waves) < 0.006);
	}
}

/* num_splits_heuristic(): one split once the blocks nearly fill the SMs; else the fewest
 * splits within 85% of the best wave efficiency, skipping counts that split no differently. */
static void
test_num_splits(void **state)
{
	(void)state;
	assert_int_equal(sdpa_num_splits(256, 264, 64, 128), 1);
	assert_int_equal(sdpa_num_splits(212, 264, 64, 128), 1); /* 212 >= 0.8 x 264 */
	assert_int_equal(sdpa_num_splits(211, 264, 64, 128), 5);
	assert_int_equal(sdpa_num_splits(32, 264, 64, 128), 7);
	assert_int_equal(sdpa_num_splits(8, 264, 64, 128), 32);
	assert_int_equal(sdpa_num_splits(8, 264, 256, 128), 29);
	assert_int_equal(sdpa_num_splits(64, 264, 64, 128), 4);
	assert_int_equal(sdpa_num_splits(8, 264, 1, 128), 1); /* one K/V block: nothing to split */
}

/* The bad shapes the flash backend refuses, each with its reason. */
static void
test_shape_check(void **state)
{
	struct sdpa_shape ok = { 1, 16, 4, 128, 128, 64, false, false }, s;

	(void)state;
	assert_null(sdpa_shape_check(&ok));
	s = ok, s.kv_heads = 3;
	assert_non_null(strstr(sdpa_shape_check(&s), "divide"));
	s = ok, s.d = 264;
	assert_non_null(strstr(sdpa_shape_check(&s), "256"));
	s = ok, s.d = 60;
	assert_non_null(strstr(sdpa_shape_check(&s), "multiple of 8"));
	s = ok, s.n_kv = 0;
	assert_non_null(strstr(sdpa_shape_check(&s), "at least 1"));
}

/* sdpa_steps(), the work memsim sdpa bounds, is every block's steps summed: prefill and
 * split-KV decode, causal with N_kv above and below N, grouped heads, partial tiles. */
static void
test_steps(void **state)
{
	static const struct sdpa_shape shapes[] = {
		{ 2, 8, 8, 1000, 1000, 64, false, false },
		{ 2, 8, 2, 1000, 3000, 128, true, false },
		{ 1, 4, 4, 3000, 1000, 256, true, true },
		{ 1, 32, 8, 1, 100000, 128, false, false },
		{ 3, 16, 4, 7, 20000, 64, true, false },
		{ 1, 1, 1, 1, 1, 8, false, false },
	};
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	struct sdpa_plan p;

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		uint64_t sum = 0;

		sdpa_plan_make(&shapes[i], g, &p);
		for (uint64_t b = 0; b < sdpa_blocks(&p); b++)
			sum += sdpa_block_steps(&p, b);
		assert_true(sdpa_steps(&p) == (double)sum);
	}
	/* 2^30 of everything: counted, not run (8.4 M query blocks of 8.4 M steps each) */
	sdpa_plan_make(&(struct sdpa_shape){ 1, 1, 1, 1u << 30, 1u << 30, 64, false, false }, g,
		       &p);
	assert_true(sdpa_steps(&p) == 70368744177664.0);
}

/* The tile LRU counts what sim/cache.c counts for a fully associative write-validate LRU of
 * 128-byte lines, on random whole-tile loads and stores of several sizes, partly held tiles
 * and tiles next to eviction included. */
static void
test_tilelru_matches_lines(void **state)
{
	const uint64_t cap = 64 * 1024, ntiles = 64;
	const uint32_t sizes[4] = { 128, 1024, 4096, 16384 };
	struct cache_config cfg = { 0 };
	struct tilelru *t = tilelru_create(cap, ntiles, 1, 0);
	struct cache *c;
	const struct cache_traffic *x;
	struct tilelru_traffic y;
	uint64_t rng = 12345;
	char err[256];

	(void)state;
	cfg.levels = 1;
	strcpy(cfg.level[0].name, "L2");
	cfg.level[0].size_bytes = cap;
	cfg.level[0].fully_assoc = true;
	cfg.level[0].assoc = (uint32_t)(cap / 128);
	cfg.level[0].line_bytes = 128;
	cfg.level[0].alloc = CACHE_ALLOC_VALIDATE;
	assert_int_equal(cache_config_validate(&cfg, err, sizeof(err)), 0);
	c = cache_create(&cfg);
	assert_non_null(t);
	assert_non_null(c);
	for (unsigned i = 0; i < 200000; i++) {
		uint64_t id, base;
		uint32_t bytes;
		bool store;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		id = (rng >> 8) % ntiles;
		bytes = sizes[id % 4];
		store = (rng & 0xff) < 40;
		base = id * 16384;
		tilelru_access(t, id, bytes, 0, store);
		for (uint32_t o = 0; o < bytes; o += 128)
			cache_access(c, base + o, 128, store ? CACHE_OP_STORE : CACHE_OP_LOAD, 1);
	}
	x = cache_dram(c);
	y = tilelru_dram(t, TILELRU_CLASSES);
	assert_true(y.read_bytes > 0 && y.write_bytes > 0);
	assert_int_equal(y.read_bytes, x->read_bytes);
	assert_int_equal(y.write_bytes, x->write_bytes - x->flush_write_bytes);
	assert_true(tilelru_held_bytes(t) <= cap);
	tilelru_destroy(t);
	cache_destroy(c);
}

/* The model through the tile LRU equals the model through sim/cache.c line by line, on
 * shapes small enough for the line model: prefill, causal, grouped, split-KV decode, and an
 * L2 small enough that K and V are re-read. */
static void
test_tiles_equal_lines(void **state)
{
	static const struct sdpa_shape shapes[] = {
		{ 2, 4, 4, 1024, 1024, 64, false, false },
		{ 2, 4, 2, 1024, 1024, 128, true, false },
		{ 1, 8, 2, 1, 4096, 128, false, true },
		{ 1, 4, 4, 1, 8192, 64, false, false },
	};
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	char err[256];

	(void)state;
	for (unsigned i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (uint64_t l2 = 1u << 20; l2 <= (8u << 20); l2 *= 8) {
			struct sdpa_plan p;
			struct sdpa_model mt = { .l2_bytes = l2, .backend = SDPA_BACKEND_TILES };
			struct sdpa_model ml = { .l2_bytes = l2, .backend = SDPA_BACKEND_LINES };
			struct sdpa_result a, b;

			sdpa_plan_make(&shapes[i], g, &p);
			assert_int_equal(sdpa_simulate(&p, g, &mt, &a, err, sizeof(err)), 0);
			assert_int_equal(sdpa_simulate(&p, g, &ml, &b, err, sizeof(err)), 0);
			assert_true(a.main.read_bytes > 0);
			assert_int_equal(a.main.read_bytes, b.main.read_bytes);
			/* one query row stores less than a line of log-sum-exp: sectors against
			 * lines */
			if (shapes[i].n_q > 1)
				assert_int_equal(a.main.write_bytes, b.main.write_bytes);
			for (unsigned k = 0; k < SDPA_ARRAYS; k++)
				assert_int_equal(a.main.read[k], b.main.read[k]);
		}
}

/* The rows docs/gpu.md lists as outside 10% under the default model (--l2-model hashed), all
 * for one reason: the GPU reads more of K and V again than the model (causal d = 128 at batch
 * 8, K and V reused about 17 MB later; grouped-query batch 8, N 4096, d 64). */
struct miss {
	unsigned b, hk, n, d, causal;
};

static const struct miss misses[] = {
	{ 8, 4, 4096, 64, 0 },   { 8, 4, 4096, 64, 1 },    { 8, 16, 4096, 128, 1 },
	{ 8, 4, 4096, 128, 1 },  { 8, 16, 16384, 128, 1 }, { 8, 4, 16384, 128, 1 },
};

static bool
listed_miss(const struct sdpa_shape *s)
{
	for (size_t i = 0; i < sizeof(misses) / sizeof(misses[0]); i++)
		if (misses[i].b == s->batch && misses[i].hk == s->kv_heads &&
		    misses[i].n == s->n_q && misses[i].d == s->d && misses[i].causal == s->causal)
			return true;
	return false;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct row_score {
	unsigned within;    /* rows within 10% of ncu's read + written */
	double median, lo, hi; /* of |model / ncu - 1|; the extreme ratios */
	double read_median; /* of |model read / ncu read - 1| */
	/* per kind of shape (sdpa_validation_of()): its rows and extreme ratios */
	const struct sdpa_validation *kind[3];
	unsigned kind_rows[3];
	double kind_lo[3], kind_hi[3];
};

/* Row ratio counted to its kind in sc. */
static void
score_kind(struct row_score *sc, const struct sdpa_shape *s, const struct sdpa_gpu *g, double ratio)
{
	const struct sdpa_validation *v = sdpa_validation_of(s, g);
	unsigned i = 0;

	assert_non_null(v);
	while (i < 3 && sc->kind[i] && sc->kind[i] != v)
		i++;
	assert_true(i < 3);
	if (!sc->kind[i]) {
		sc->kind[i] = v;
		sc->kind_lo[i] = sc->kind_hi[i] = ratio;
	}
	sc->kind_rows[i]++;
	sc->kind_lo[i] = ratio < sc->kind_lo[i] ? ratio : sc->kind_lo[i];
	sc->kind_hi[i] = ratio > sc->kind_hi[i] ? ratio : sc->kind_hi[i];
}

/* Model m on every measured row: every row within 10% unless listed (with listed), decode
 * rows within 1%. */
static struct row_score
score_rows_of(const char *path, const char *gpu, const struct sdpa_model *m,
	      bool (*listed)(const struct sdpa_shape *))
{
	static struct row rows[128];
	static double err[128], rerr[128];
	const struct sdpa_gpu *g = sdpa_gpu_find(gpu);
	unsigned n = read_rows_of(path, rows, 128);
	struct row_score sc = { .lo = 2 };
	char msg[256];

	for (unsigned i = 0; i < n; i++) {
		struct sdpa_plan p;
		struct sdpa_result r;
		double model, ncu = (double)(rows[i].read + rows[i].write), ratio;

		sdpa_plan_make(&rows[i].s, g, &p);
		assert_int_equal(sdpa_simulate(&p, g, m, &r, msg, sizeof(msg)), 0);
		model = (double)(r.main.read_bytes + r.main.write_bytes + r.combine.read_bytes +
				 r.combine.write_bytes);
		ratio = model / ncu;
		err[i] = fabs(ratio - 1);
		rerr[i] = fabs((double)(r.main.read_bytes + r.combine.read_bytes) /
				       (double)rows[i].read -
			       1);
		sc.lo = ratio < sc.lo ? ratio : sc.lo;
		sc.hi = ratio > sc.hi ? ratio : sc.hi;
		score_kind(&sc, &rows[i].s, g, ratio);
		if (err[i] <= 0.10)
			sc.within++;
		else if (listed && !listed(&rows[i].s))
			fail_msg("row %u (b %u hk %u N %llu d %u causal %d): model / ncu %.3f",
				 i + 2, rows[i].s.batch, rows[i].s.kv_heads,
				 (unsigned long long)rows[i].s.n_q, rows[i].s.d, rows[i].s.causal,
				 ratio);
		if (rows[i].s.n_q == 1 && err[i] > 0.01)
			fail_msg("decode row %u: model / ncu %.4f", i + 2, ratio);
	}
	qsort(err, n, sizeof(err[0]), cmp_double);
	qsort(rerr, n, sizeof(rerr[0]), cmp_double);
	sc.median = (err[n / 2 - 1] + err[n / 2]) / 2;
	sc.read_median = (rerr[n / 2 - 1] + rerr[n / 2]) / 2;
	return sc;
}

/* Model m on the H100's rows (sdpa.csv). */
static struct row_score
score_rows(const struct sdpa_model *m, bool (*listed)(const struct sdpa_shape *))
{
	return score_rows_of(SDPA_CSV, "h100", m, listed);
}

/* What memsim sdpa prints beside its number (sdpa_validation_of()) is what the measurements
 * give: every kind's rows, and its extremes within sampling's 0.02. */
static void
check_kinds(const struct row_score *sc)
{
	for (unsigned i = 0; i < 3; i++) {
		const struct sdpa_validation *v = sc->kind[i];

		assert_non_null(v);
		print_message("# %s: %u rows, %.3f to %.3f (printed: %u, %.3f to %.3f)\n", v->kind,
			      sc->kind_rows[i], sc->kind_lo[i], sc->kind_hi[i], v->shapes, v->lo,
			      v->hi);
		assert_int_equal(sc->kind_rows[i], v->shapes);
		assert_true(fabs(sc->kind_lo[i] - v->lo) <= 0.02);
		assert_true(fabs(sc->kind_hi[i] - v->hi) <= 0.02);
	}
}

/* The default model (memsim sdpa's: the hashed L2 of the h100's microbenchmarks, 50 MiB in two
 * partitions of 32-way sets, 16 dirty ways, with the spilled registers' frames) on every
 * measured row, 1 set in 64 simulated for speed (docs/gpu.md's table simulates 1 in 16):
 * every row within 10% but the 6 listed, the median within 2.6%, the worst 0.65. */
static void
test_measured_rows(void **state)
{
	struct sdpa_model m = { .backend = SDPA_BACKEND_HASHED, .sample = 64 };
	struct row_score sc = score_rows(&m, listed_miss);

	(void)state;
	print_message("# hashed: %u within 10%%, median %.2f%%, %.3f to %.3f\n", sc.within,
		      100 * sc.median, sc.lo, sc.hi);
	assert_true(sc.within >= 66);
	assert_true(sc.median <= 0.026);
	assert_true(sc.lo >= 0.64 && sc.hi <= 1.10);
	check_kinds(&sc);
}

/* The default model on the H200 (--gpu h200: its 60 MiB L2 as the device reports it, in the
 * H100's partitions and sets) on 28 shapes measured there (tests/data/gpu/sdpa-h200.csv,
 * tools/gpu-sdpa-check.py): every row within 10%, the median within 3%, decode rows within
 * 1%; and what memsim sdpa prints beside its number is what these rows give. */
static void
test_h200_rows(void **state)
{
	struct sdpa_model m = { .backend = SDPA_BACKEND_HASHED, .sample = 64 };
	struct row_score sc = score_rows_of(SDPA_H200_CSV, "h200", &m, NULL);

	(void)state;
	print_message("# h200: %u within 10%%, median %.2f%%, %.3f to %.3f\n", sc.within,
		      100 * sc.median, sc.lo, sc.hi);
	assert_int_equal(sc.within, 28);
	assert_true(sc.median <= 0.03);
	check_kinds(&sc);
}

/* The H200: --gpu h200 and the h200 cache preset carry its L2 as the device reports it
 * (62914560 bytes), what one kernel keeps of it (28 MiB, measured), the datasheet's 4.8 TB/s,
 * the H100's SMs (so FlashAttention's split heuristic splits alike), and name their sources. */
static void
test_h200_gpu(void **state)
{
	const struct sdpa_gpu *g = sdpa_gpu_find("h200"), *h = sdpa_gpu_find("h100");
	struct attn_config c = { .N = 1, .N_kv = 131072, .d = 128, .heads = 32, .kv_heads = 8,
				 .batch = 1, .Br = 64, .Bc = 64 };
	enum attn_splits_source src;
	struct spec s;
	struct result r;
	const char *source;
	char err[256];

	(void)state;
	assert_non_null(g);
	assert_int_equal(g->l2_hashed_bytes, 62914560);
	assert_int_equal(g->l2_model_bytes, 28u << 20);
	assert_int_equal(g->sms, h->sms);
	assert_true(g->hbm_bytes_per_s == 4.8e12);
	assert_non_null(strstr(g->hbm_source, "H200"));
	assert_int_equal(spec_parse("h200", &s, err, sizeof(err)), 0);
	assert_int_equal(s.cache.level[0].size_bytes, 28u << 20);
	assert_int_equal(s.cache.level[0].line_bytes, 128);
	assert_true(s.tiles_in_scratch);
	assert_true(spec_preset_bandwidth("h200", &source) == 4800);
	assert_non_null(strstr(source, "H200"));
	assert_int_equal(sdpa_default_splits(&c, "h200", &src),
			 sdpa_default_splits(&c, "h100", &src));
	assert_int_equal(src, ATTN_SPLITS_HEURISTIC);
	r = memsim("sdpa --q 1,32,1,128 --k 1,8,131072,128 --gpu h200");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "L2: 60.0 MiB in 2 partitions"));
	assert_non_null(strstr(r.out, "time bound at 4.80 TB/s (H200 SXM datasheet)"));
	assert_non_null(strstr(r.out, "on the 7 measured shapes of this kind"));
	assert_non_null(strstr(r.out, "of the H200's"));
	result_free(&r);
}

/* The L2's read lookup misses (the loads the SM's own partition lacked) against ncu's on the six
 * shapes of 03313eb:docs/gpu-run/sdpa-locals/locals.csv: the share of them the other partition
 * served (lookup misses less DRAM reads, over lookup misses) within 0.06 of the GPU's on every
 * shape (0.15 to 0.45 there), and the lookup misses within 10% on the two shapes not among the rows
 * test_measured_rows lists (the other four are, docs/gpu.md). */
static void
test_lookup_misses(void **state)
{
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	struct sdpa_model m = { .backend = SDPA_BACKEND_HASHED, .sample = 64 };
	FILE *f = fopen(SDPA_LOCALS_CSV, "r");
	char line[512], dtype[8], msg[256];
	unsigned b, h, hk, d, causal, n = 0, close = 0;
	unsigned long long nq, nkv, rd, wr, l2rd, miss;

	(void)state;
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	while (fgets(line, sizeof(line), f)) {
		struct sdpa_shape s;
		struct sdpa_plan p;
		struct sdpa_result r;
		double gpu_far, model_far, lookup_ratio, read_ratio;

		assert_int_equal(sscanf(line, "%u,%u,%u,%llu,%llu,%u,%u,%7[^,],%llu,%llu,%llu,%llu",
					&b, &h, &hk, &nq, &nkv, &d, &causal, dtype, &rd, &wr, &l2rd,
					&miss),
				 12);
		s = (struct sdpa_shape){ b, h, hk, nq, nkv, d, causal != 0, false };
		sdpa_plan_make(&s, g, &p);
		assert_int_equal(sdpa_simulate(&p, g, &m, &r, msg, sizeof(msg)), 0);
		assert_true(r.main.lookup_known);
		assert_true(r.main.read_lookup_miss_bytes >= r.main.read_bytes);
		gpu_far = 1 - (double)rd / (double)miss;
		model_far = 1 - (double)r.main.read_bytes / (double)r.main.read_lookup_miss_bytes;
		lookup_ratio = (double)r.main.read_lookup_miss_bytes / (double)miss;
		read_ratio = (double)r.main.read_bytes / (double)rd;
		print_message("# b %u hk %u N %llu d %u causal %u: served by the other partition "
			      "%.3f (ncu %.3f), lookup misses %.3f, DRAM reads %.3f of ncu's\n",
			      b, hk, nq, d, causal, model_far, gpu_far, lookup_ratio, read_ratio);
		assert_true(fabs(model_far - gpu_far) <= 0.06);
		if (!listed_miss(&s)) {
			assert_true(fabs(lookup_ratio - 1) <= 0.10);
			close++;
		}
		n++;
	}
	fclose(f);
	assert_int_equal(n, 6);
	assert_int_equal(close, 2);
}

/* The alternatives: the 22 MiB LRU of whole tiles (--l2-model lru) and the hashed L2 without
 * the spills (--no-spill), each worse than the default: the LRU's edge (its cyclic worst case,
 * 5.8 times ncu's bytes on causal d = 128) and, without the spills, the writes the GPU makes
 * beyond O (the model never reaches ncu's writes, every row 1.005 or less). */
static void
test_alternative_rows(void **state)
{
	struct sdpa_model lru = { 0 };
	struct sdpa_model no_spill = { .backend = SDPA_BACKEND_HASHED,
				       .sample = 64,
				       .no_spill = true };
	struct row_score a = score_rows(&lru, NULL), b = score_rows(&no_spill, NULL);

	(void)state;
	print_message("# lru: %u within 10%%, median %.2f%%; no spill: %u, %.2f%%\n", a.within,
		      100 * a.median, b.within, 100 * b.median);
	assert_true(a.within < 66 && a.median > 0.03 && a.hi > 5);
	assert_true(b.within < 66 && b.median > 0.05 && b.hi <= 1.005);
	assert_true(b.read_median < 0.012);
}

/* The model over ncu's measured row for shape s (read + written). */
static double
row_ratio(const struct sdpa_shape *s, const struct sdpa_model *m)
{
	static struct row rows[128];
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	unsigned n = read_rows(rows, 128);
	struct sdpa_plan p;
	struct sdpa_result r;
	char err[256];

	for (unsigned i = 0; i < n; i++) {
		const struct sdpa_shape *t = &rows[i].s;

		if (t->batch != s->batch || t->heads != s->heads || t->kv_heads != s->kv_heads ||
		    t->n_q != s->n_q || t->n_kv != s->n_kv || t->d != s->d ||
		    t->causal != s->causal || t->bf16 != s->bf16)
			continue;
		sdpa_plan_make(s, g, &p);
		assert_int_equal(sdpa_simulate(&p, g, m, &r, err, sizeof(err)), 0);
		return (double)(r.main.read_bytes + r.main.write_bytes) /
		       (double)(rows[i].read + rows[i].write);
	}
	fail_msg("no measured row of that shape");
	return 0;
}

/* The page hash with colours at random (docs/gpu.md): closer than the default on batch 8,
 * causal d = 128 at N 16384, but over-counting batch 1 of the same shape by more than 10%. */
static void
test_page_hash_rows(void **state)
{
	static const struct sdpa_shape b8 = { 8, 16, 16, 16384, 16384, 128, true, false };
	static const struct sdpa_shape b1 = { 1, 16, 16, 16384, 16384, 128, true, false };
	struct sdpa_model def = { .backend = SDPA_BACKEND_HASHED, .sample = 64 };
	struct sdpa_model pages = { .backend = SDPA_BACKEND_HASHED, .sample = 64, .by_page = true };
	double d8 = row_ratio(&b8, &def), p8 = row_ratio(&b8, &pages), p1 = row_ratio(&b1, &pages);

	(void)state;
	print_message("# batch 8: default %.3f, pages %.3f; batch 1: pages %.3f\n", d8, p8, p1);
	assert_true(d8 < 0.7 && p8 > d8 + 0.1);
	assert_true(p1 > 1.1);
}

/* The hashed L2: sampling 1 set in 16 (the default) counts within 0.5% of all sets (writes 1%); with one
 * partition, no dirty cap and LRU it agrees with the same cache in expectation (l2expect,
 * SDPA_BACKEND_SETS) within 3% on a shape whose K and V are re-read. */
static void
test_hashed_sampling(void **state)
{
	static const struct sdpa_shape s = { 1, 16, 16, 4096, 4096, 128, true, false };
	static const struct sdpa_shape t = { 2, 8, 8, 4096, 4096, 128, true, false };
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	struct sdpa_model all = { .backend = SDPA_BACKEND_HASHED, .sample = 1 };
	struct sdpa_model some = { .backend = SDPA_BACKEND_HASHED };
	struct sdpa_model one = { .backend = SDPA_BACKEND_HASHED,
				  .l2_bytes = 4u << 20,
				  .line_ways = 16,
				  .dirty_ways = UINT32_MAX,
				  .partitions = 1,
				  .sample = 4 };
	struct sdpa_model mean = { .backend = SDPA_BACKEND_SETS,
				   .l2_bytes = 4u << 20,
				   .line_ways = 16 };
	struct sdpa_result a, b;
	struct sdpa_plan p;
	char err[256];

	(void)state;
	sdpa_plan_make(&s, g, &p);
	assert_int_equal(sdpa_simulate(&p, g, &all, &a, err, sizeof(err)), 0);
	assert_int_equal(sdpa_simulate(&p, g, &some, &b, err, sizeof(err)), 0);
	assert_int_equal(b.model.sample, SDPA_SAMPLE_DEFAULT);
	assert_int_equal(b.l2_bytes, 50u << 20);
	assert_int_equal(b.model.partitions, 2);
	assert_true(fabs((double)b.main.read_bytes / (double)a.main.read_bytes - 1) < 0.005);
	/* writes within 1%: 10.6 MB of them, a third the spill frames' few thousand lines */
	assert_true(fabs((double)b.main.write_bytes / (double)a.main.write_bytes - 1) < 0.01);
	sdpa_plan_make(&t, g, &p);
	assert_int_equal(sdpa_simulate(&p, g, &one, &a, err, sizeof(err)), 0);
	assert_int_equal(sdpa_simulate(&p, g, &mean, &b, err, sizeof(err)), 0);
	assert_true(a.main.read[SDPA_K] > 2 * sdpa_array_bytes(&p, SDPA_K));
	for (unsigned k = SDPA_K; k <= SDPA_V; k++)
		assert_true(fabs((double)a.main.read[k] / (double)b.main.read[k] - 1) < 0.03);
	one.sample = 3;
	assert_int_equal(sdpa_simulate(&p, g, &one, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sample"));
}

/* The spill frames against their two sources: the plan's table equals frames.csv (read off the
 * kernels' SASS by 03313eb:tools/gpu-sdpa/frames_parse.py), and ncu's local store bytes on the
 * shapes of 03313eb:docs/gpu-run/sdpa-excess (N_kv from 1K to 32K: the frame once a block, the hot
 * part every step) are within 1.5% of the blocks' cold bytes plus their steps' hot bytes. */
static void
test_spill_frames(void **state)
{
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	FILE *f = fopen(SDPA_FRAMES_CSV, "r");
	char line[512];
	unsigned rows = 0;

	(void)state;
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	while (fgets(line, sizeof(line), f)) {
		unsigned d, bm, bn, causal, even, stack, hot, cold;
		struct sdpa_plan p;

		assert_int_equal(sscanf(line, "flash_fwd_kernel,%u,%u,%u,%*[^,],%u,%u,%u,%u,%u", &d,
					&bm, &bn, &causal, &even, &stack, &hot, &cold),
				 8);
		/* 4096 rows are whole tiles; 4000 are not (Is_even_MN false) */
		sdpa_plan_make(&(struct sdpa_shape){ 1, 16, 16, even ? 4096 : 4000, 4096, d,
						     causal != 0, false },
			       g, &p);
		assert_int_equal(p.block_m, bm);
		assert_int_equal(p.block_n, bn);
		assert_int_equal(p.even_mn, even != 0);
		assert_int_equal(p.spill_cold, cold * 128);
		assert_int_equal(p.spill_hot, hot * 128);
		assert_true(cold + hot <= stack);
		rows++;
	}
	fclose(f);
	assert_int_equal(rows, 20);
	f = fopen(SDPA_EXCESS_CSV, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	rows = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned b, h, hk, d, causal;
		unsigned long long n, nkv, blocks, local_st;
		struct sdpa_plan p;
		uint64_t model;

		assert_int_equal(sscanf(line, "%u,%u,%u,%llu,%llu,%u,%u,%*[^,],%llu,%*u,%*u,%llu",
					&b, &h, &hk, &n, &nkv, &d, &causal, &blocks, &local_st),
				 9);
		sdpa_plan_make(&(struct sdpa_shape){ b, h, hk, n, nkv, d, causal != 0, false }, g,
			       &p);
		assert_int_equal(sdpa_blocks(&p), blocks);
		model = sdpa_spill_store_bytes(&p);
		if (fabs((double)model / (double)local_st - 1) > 0.015)
			fail_msg("%s: model %llu local store bytes, ncu %llu", line,
				 (unsigned long long)model, local_st);
		rows++;
	}
	fclose(f);
	assert_int_equal(rows, 15);
}

/* The spill frames on the H200 (the same sm_90 SASS): ncu's local store bytes on the rows of
 * sdpa-h200.csv, d = 64 to 256, against the frames' cold bytes a block plus their hot bytes a
 * step: within 1.5%, but d = 256 causal, where ncu counts 4 bytes a thread more than the
 * SASS's frame in most blocks (11% over its 32). */
static void
test_h200_spills(void **state)
{
	static struct row rows[64];
	const struct sdpa_gpu *g = sdpa_gpu_find("h200");
	unsigned n = read_rows_of(SDPA_H200_CSV, rows, 64), spilled = 0;

	(void)state;
	for (unsigned i = 0; i < n; i++) {
		const struct sdpa_shape *s = &rows[i].s;
		uint64_t local_st = rows[i].local_store;
		struct sdpa_plan p;
		double model, tol;

		sdpa_plan_make(s, g, &p);
		model = (double)sdpa_spill_store_bytes(&p);
		tol = s->d == 256 && s->causal ? 0.12 : 0.015;
		if (local_st ? fabs(model / (double)local_st - 1) > tol : model != 0)
			fail_msg("row %u (N %llu d %u causal %d): local stores %.0f, ncu %llu", i + 2,
				 (unsigned long long)s->n_q, s->d, s->causal, model,
				 (unsigned long long)local_st);
		spilled += local_st > 0;
	}
	assert_int_equal(n, 28);
	assert_int_equal(spilled, 15);
}

#define PROBE_CHUNK (32u << 10) /* a buffer is its 32 KiB chunks, read in order */
#define PROBE_STEPS 512

struct probe_step {
	bool write;   /* a fill: every line written, none read */
	bool idle;    /* a sleep: no access */
	unsigned buf; /* 0, 1: the cases' buffers x and b in order of first use; 8: the flush's */
	uint64_t bytes;
};

/* A microbenchmark run's steps (cases.json), in the GPU's order; returns how many. A flush
 * reads the run's flush_mib (256 MiB when absent) of a buffer of its own. */
static unsigned
probe_steps(const char *cases, struct probe_step *st, unsigned max)
{
	char *text = slurp(cases, NULL);
	cJSON *j = text ? cJSON_Parse(text) : NULL, *c, *flush_mib;
	int first = -1; /* the buffer used first: 'x' or 'b' */
	unsigned n = 0;
	uint64_t flush;

	free(text);
	assert_non_null(j);
	flush_mib = cJSON_GetObjectItem(j, "flush_mib");
	flush = (uint64_t)(flush_mib ? flush_mib->valueint : 256) << 20;
	cJSON_ArrayForEach (c, cJSON_GetObjectItem(j, "cases")) {
		int x = cJSON_GetObjectItem(c, "x")->valueint,
		    b = cJSON_GetObjectItem(c, "b")->valueint;
		cJSON *v;

		cJSON_ArrayForEach (v, cJSON_GetObjectItem(c, "steps")) {
			int name = strstr(v->valuestring, " b") ? 'b' : 'x';

			if (n == max)
				break;
			if (strcmp(v->valuestring, "flush") == 0) {
				st[n++] = (struct probe_step){ false, false, 8, flush };
				continue;
			}
			if (strcmp(v->valuestring, "sleep") == 0) {
				st[n++] = (struct probe_step){ .idle = true };
				continue;
			}
			if (first < 0)
				first = name;
			st[n++] = (struct probe_step){ strncmp(v->valuestring, "fill", 4) == 0, false,
						       name != first,
						       (uint64_t)(name == 'b' ? b : x) << 20 };
		}
	}
	cJSON_Delete(j);
	return n;
}

/* One step through the hashed L2 (gpu/l2sets.h), each chunk from a fixed side as one grid's
 * blocks read the same chunks; its DRAM bytes are the counters' growth. */
static struct tilelru_traffic
probe_run(struct l2sets *s, const struct probe_step *st)
{
	struct tilelru_traffic before = l2sets_dram(s, TILELRU_CLASSES), after;
	uint64_t chunks = (st->bytes + PROBE_CHUNK - 1) / PROBE_CHUNK;

	for (uint64_t i = 0; i < chunks; i++) {
		uint64_t rest = st->bytes - i * PROBE_CHUNK;

		l2sets_access(s, (uint64_t)st->buf << 24 | i,
			      (uint32_t)(rest < PROBE_CHUNK ? rest : PROBE_CHUNK), 0, st->write,
			      (unsigned)((i * 0x9e3779b97f4a7c15ull) >> 63));
	}
	after = l2sets_dram(s, TILELRU_CLASSES);
	return (struct tilelru_traffic){ after.read_bytes - before.read_bytes,
					 after.write_bytes - before.write_bytes };
}

/* The RMS over the steps that access (not flushes, not sleeps) of (|read - ncu's| + |written -
 * ncu's|) / the step's size, the score the L2 models were compared by; cases and csv are a
 * microbenchmark run's steps and its DRAM MiB a step. */
static double
probe_score(const struct l2sets_config *cfg, const char *cases, const char *csv)
{
	static struct probe_step st[PROBE_STEPS];
	FILE *f = fopen(csv, "r");
	unsigned n = probe_steps(cases, st, PROBE_STEPS), used = 0;
	const char *why = NULL;
	struct l2sets *s = l2sets_create(cfg, &why);
	char line[512];
	double sum = 0;

	assert_non_null(f);
	assert_non_null(s);
	assert_true(n > 200);
	assert_non_null(fgets(line, sizeof(line), f));
	for (unsigned i = 0; i < n; i++) {
		struct tilelru_traffic t = probe_run(s, &st[i]);
		char *tok = line;
		double ncu_r, ncu_w, mib = (double)st[i].bytes / 1048576, e;

		/* exp,x_mib,b_mib,step,name,dram_read_mib,dram_write_mib,... */
		assert_non_null(fgets(line, sizeof(line), f));
		for (int k = 0; k < 5; k++)
			tok = strchr(tok, ',') + 1;
		ncu_r = strtod(tok, &tok);
		ncu_w = strtod(tok + 1, NULL);
		if (st[i].buf == 8 || st[i].idle)
			continue;
		e = (fabs((double)t.read_bytes / 1048576 - ncu_r) +
		     fabs((double)t.write_bytes / 1048576 - ncu_w)) /
		    mib;
		sum += e * e;
		used++;
	}
	fclose(f);
	l2sets_destroy(s);
	return sqrt(sum / used);
}

/* The hashed L2's parameters reproduce the H100's L2 microbenchmarks (every cyclic re-read,
 * scan and fill of tests/data/gpu/l2-policy.csv) with an RMS error of 0.059 of each step's
 * bytes; the 22 MiB LRU the tile model uses, 0.44. On the H200's (l2-policy-h200.csv: those
 * and dirty lines under a stream, tools/gpu-sdpa-check.py measure-l2) the same geometry on its
 * 60 MiB scores 0.090, the best of 60 MiB's (no dirty cap 0.139, 8 or 24 dirty ways 0.144 and
 * 0.113), the 28 MiB LRU of the h200 preset 0.41. Numbers only, the same in every build: a
 * sanitized build (where it took 40 s of the suite's time) leaves it to the main one, and
 * test-l2sets runs the model's memory paths there. */
static void
test_microbenchmarks(void **state)
{
	const struct l2sets_config hashed = { .capacity_bytes = 50ull << 20,
					      .ways = 32,
					      .dirty_ways = 16,
					      .partitions = 2,
					      .sample = 8 };
	const struct l2sets_config lru = { .capacity_bytes = 22ull << 20, .ways = 64, .sample = 8 };
	struct l2sets_config h200 = hashed, h200_lru = lru, h200_clean = hashed;

	(void)state;
	if (test_sanitized()) {
		print_message("# not run in a sanitized build: the scores are the main build's\n");
		return;
	}
	assert_true(probe_score(&hashed, L2_POLICY_CASES, L2_POLICY_CSV) < 0.060);
	assert_true(probe_score(&lru, L2_POLICY_CASES, L2_POLICY_CSV) > 0.4);
	h200.capacity_bytes = h200_clean.capacity_bytes = 62914560;
	h200_clean.dirty_ways = 0;
	h200_lru.capacity_bytes = 28ull << 20;
	assert_true(probe_score(&h200, L2_POLICY_H200_CASES, L2_POLICY_H200_CSV) < 0.095);
	assert_true(probe_score(&h200_clean, L2_POLICY_H200_CASES, L2_POLICY_H200_CSV) > 0.13);
	assert_true(probe_score(&h200_lru, L2_POLICY_H200_CASES, L2_POLICY_H200_CSV) > 0.4);
}

/* The spilled registers: each kernel kind's frame (bytes a thread stored once a block and every
 * K/V step, read off its SASS), and the L2 room they take: at the edge (causal d = 128, N 16384)
 * K and V are read again with them, about once without. */
static void
test_spill(void **state)
{
	static const struct {
		struct sdpa_shape s;
		uint32_t cold, hot; /* a thread's */
	} cases[] = {
		{ { 1, 16, 16, 16384, 16384, 128, true, false }, 72, 56 },
		{ { 1, 16, 16, 4096, 4096, 64, false, false }, 88, 24 },
		{ { 1, 16, 16, 4000, 4096, 64, true, false }, 184, 20 }, /* not Is_even_MN */
		{ { 8, 32, 32, 1, 8192, 128, false, false }, 28, 32 },
		{ { 1, 32, 32, 1, 8192, 128, false, false }, 0, 0 }, /* split-KV */
		{ { 1, 16, 16, 4096, 4096, 96, false, false }, 0, 0 }, /* not read */
	};
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	struct sdpa_model with = { 0 }, without = { .no_spill = true };
	struct sdpa_result a, b;
	struct sdpa_plan p;
	char err[256];

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sdpa_plan_make(&cases[i].s, g, &p);
		assert_int_equal(p.spill_cold, cases[i].cold * 128);
		assert_int_equal(p.spill_hot, cases[i].hot * 128);
	}
	sdpa_plan_make(&cases[0].s, g, &p);
	assert_int_equal(sdpa_simulate(&p, g, &with, &a, err, sizeof(err)), 0);
	assert_int_equal(sdpa_simulate(&p, g, &without, &b, err, sizeof(err)), 0);
	assert_true(b.main.read[SDPA_K] < 1.05 * sdpa_array_bytes(&p, SDPA_K));
	assert_true(a.main.read[SDPA_K] > 2 * sdpa_array_bytes(&p, SDPA_K));
}

/* The other L2 models read every input once at least and write what they evict. */
static void
test_l2_alternatives(void **state)
{
	static const struct sdpa_shape s = { 8, 16, 4, 4096, 4096, 128, true, false };
	const struct sdpa_gpu *g = sdpa_gpu_find("h100");
	struct sdpa_model models[] = {
		{ .l2_bytes = 50u << 20, .backend = SDPA_BACKEND_PARTITIONS },
		{ .random_seed = 1 },
		{ .ways = 22 },
		{ .l2_bytes = 25u << 20, .slots = 132 },
	};
	struct sdpa_plan p;
	struct sdpa_result r;
	char err[256];

	(void)state;
	sdpa_plan_make(&s, g, &p);
	for (unsigned i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		assert_int_equal(sdpa_simulate(&p, g, &models[i], &r, err, sizeof(err)), 0);
		for (unsigned a = SDPA_Q; a <= SDPA_V; a++)
			assert_true(r.main.read[a] >= sdpa_array_bytes(&p, a));
		assert_true(r.main.write[SDPA_O] <= sdpa_array_bytes(&p, SDPA_O));
		assert_true(r.main.write[SDPA_O] > 0);
	}
	assert_int_equal(r.slots, 132);
	assert_int_equal(sdpa_l2_sets(&p, 22u << 20, 22), 64);
}

/* `memsim sdpa`: the report names the kernel, tiles and grid, the bytes and the bounds; JSON
 * carries them. */
/* memsim sdpa's L2 read lookup misses over its DRAM reads with --l2-model model, the text and
 * the JSON agreeing on whether it counts them; -1 where it does not. */
static double
lookup_over_reads(const char *model)
{
	char cmd[160];
	struct result r;
	cJSON *j, *miss;
	double x = -1;

	snprintf(cmd, sizeof(cmd),
		 "sdpa --q 1,16,1024,64 --k 1,16,1024,64 --l2-model %s --json out.json", model);
	r = memsim(cmd);
	assert_int_equal(r.rc, 0);
	j = read_json("out.json");
	assert_non_null(j);
	miss = cJSON_GetObjectItem(j, "l2_read_lookup_miss_bytes");
	assert_true((strstr(r.out, "L2 read lookup misses (ncu's ") != NULL) == (miss != NULL));
	if (miss)
		x = miss->valuedouble /
		    cJSON_GetObjectItem(cJSON_GetObjectItem(j, "dram"), "read_bytes")->valuedouble;
	result_free(&r);
	cJSON_Delete(j);
	return x;
}

static void
test_cli_report(void **state)
{
	struct result r;
	cJSON *j, *k;

	(void)state;
	r = memsim("sdpa --q 1,32,1,128 --k 1,8,8192,128 --json out.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "flash_fwd_splitkv_kernel (split-KV decode)"));
	assert_non_null(strstr(r.out, "32 splits"));
	assert_non_null(strstr(r.out, "grid (1, 32, 8)"));
	assert_non_null(strstr(r.out, "seqlenq_ngroups_swapped"));
	assert_non_null(strstr(r.out, "tokens/s bound"));
	result_free(&r);
	j = read_json("out.json");
	assert_non_null(j);
	k = cJSON_GetObjectItem(j, "kernel");
	assert_int_equal(cJSON_GetObjectItem(k, "splits")->valuedouble, 32);
	assert_int_equal(cJSON_GetObjectItem(k, "block_n")->valuedouble, 128);
	assert_true(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "dram"), "read_bytes")->valuedouble >
		    2.0 * 8192 * 8 * 128 * 2);
	assert_true(cJSON_GetObjectItem(j, "tokens_per_s_bound")->valuedouble > 0);
	k = cJSON_GetObjectItem(j, "validation");
	assert_string_equal(cJSON_GetObjectItem(k, "kind")->valuestring, "decode, one query row");
	assert_int_equal(cJSON_GetObjectItem(k, "measured_shapes")->valuedouble, 12);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(k, "note")));
	cJSON_Delete(j);
	r = memsim("sdpa --q 2,16,4096,128 --k 2,16,4096,128 --causal --dtype bf16");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "flash_fwd_kernel (prefill), tiles 128 x 64"));
	assert_non_null(strstr(r.out, "grid (32, 2, 16)"));
	/* the number beside how far to trust it: this kind's measured extremes and why */
	assert_non_null(strstr(r.out, "against Nsight Compute: on the 26 measured shapes of this "
				      "kind (prefill, batch above 1) the model's bytes were 0.657 "
				      "to 1.040 of the H100's; the model does not see where the "
				      "heads lie in memory"));
	assert_non_null(strstr(r.out, "move by up to 13% with where PyTorch's allocation lands"));
	result_free(&r);
	r = memsim("sdpa --q 1,16,4096,128 --k 1,16,4096,128 --no-spill --json out.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "against Nsight Compute: not measured for these model "
				      "options"));
	result_free(&r);
	j = read_json("out.json");
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "validation")));
	cJSON_Delete(j);
	expect_ok("sdpa --q 1,16,1024,64 --k 1,16,1024,64 --l2-model partitions --l2 50M "
		  "--no-spill --slots 132 --l2-ways 0");
	expect_ok("sdpa --q 1,16,1024,64 --k 1,16,1024,64 --l2-model random --l2-ways 8");
	r = memsim("sdpa --q 1,16,1024,64 --k 1,16,1024,64 --l2-model hashed --json out.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "L2: 50.0 MiB in 2 partitions of 32-way lru sets"));
	assert_non_null(strstr(r.out, "at most 16 dirty lines a set, 1 set in 16 simulated"));
	result_free(&r);
	j = read_json("out.json");
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "l2_model")->valuestring, "hashed");
	assert_string_equal(cJSON_GetObjectItem(j, "l2_hash")->valuestring, "lines");
	cJSON_Delete(j);
	/* hashed by page: 16 ways unless told, the seed in the report, the same counts twice */
	r = memsim("sdpa --q 1,16,1024,64 --k 1,16,1024,64 --l2-hash pages --l2-hash-seed 5 "
		   "--json out.json");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "of 16-way lru sets, lines hashed to them by 2 MiB page"));
	result_free(&r);
	j = read_json("out.json");
	assert_non_null(j);
	assert_string_equal(cJSON_GetObjectItem(j, "l2_hash")->valuestring, "pages");
	assert_int_equal(cJSON_GetObjectItem(j, "l2_hash_seed")->valuedouble, 5);
	double pages_read =
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "dram"), "read_bytes")->valuedouble;
	cJSON_Delete(j);
	r = memsim("sdpa --q 1,16,1024,64 --k 1,16,1024,64 --l2-hash pages --l2-hash-seed 5 "
		   "--json out.json");
	assert_int_equal(r.rc, 0);
	result_free(&r);
	j = read_json("out.json");
	assert_true(
		cJSON_GetObjectItem(cJSON_GetObjectItem(j, "dram"), "read_bytes")->valuedouble ==
		pages_read);
	cJSON_Delete(j);
	/* the loads the SM's own partition lacked: at least DRAM's reads (the other partition
	 * serves the rest), all of them with one LRU, not counted by the tile partitions */
	assert_true(lookup_over_reads("hashed") >= 1);
	assert_true(lookup_over_reads("lru") == 1);
	assert_true(lookup_over_reads("partitions") == -1);
	r = memsim("sdpa --q 1,16,1024,64 --k 1,16,1024,64 --l2-model hashed --l2 8M "
		   "--l2-partitions 1 --l2-line-ways 8 --l2-dirty-ways 0 --l2-policy srrip "
		   "--l2-sample 4");
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "L2: 8.0 MiB in 1 partition of 8-way srrip sets"));
	assert_non_null(strstr(r.out, "at most 8 dirty lines a set, 1 set in 4 simulated"));
	result_free(&r);
}

/* Bad shapes and options: one line each, exit 2. */
static void
test_cli_errors(void **state)
{
	(void)state;
	expect_error("sdpa --q 1,16,128,64 --k 2,16,128,64", 2, "batch");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,128", 2, "q's d (64) and k's (128)");
	expect_error("sdpa --q 1,16,128,64 --k 1,5,128,64", 2, "must divide");
	expect_error("sdpa --q 1,16,128,512 --k 1,16,128,512", 2, "d up to 256");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --dtype fp32", 2, "only fp16 and bf16");
	expect_error("sdpa --q 1,16,128 --k 1,16,128,64", 2, "--q: '1,16,128' is not B,H,N,D");
	expect_error("sdpa --q 1,16,128,64,1 --k 1,16,128,64", 2, "is not B,H,N,D");
	expect_error("sdpa --q 1,16,x,64 --k 1,16,128,64", 2, "is not B,H,N,D");
	expect_error("sdpa --q 1,16,128,64", 2, "needs --q B,H,N,D and --k");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --v 1,16,64,64", 2, "k's shape");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --gpu a100", 2, "unknown GPU 'a100'");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-model plru", 2, "--l2-model");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2 1", 2, "--l2: '1'");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2 512K", 2, "from 1M to 1T");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-ways 2", 2, "0 or a number from 4");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-policy lfu", 2,
		     "--l2-policy: 'lfu'");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-model lru --l2-policy srrip", 2,
		     "--l2-policy: only with --l2-model hashed");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-ways 8", 2,
		     "--l2-ways: only with --l2-model lru, random or partitions");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-model random --l2-sample 4", 2,
		     "--l2-sample: only with --l2-model hashed");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-line-ways 65", 2,
		     "--l2-line-ways: '65' is not a number from 1 to 64");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-dirty-ways x", 2,
		     "--l2-dirty-ways: 'x'");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-partitions 4", 2,
		     "--l2-partitions: '4' is not 1 or 2");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-model hashed --l2-sample 6", 2,
		     "at least the sample (6)");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-model hashed --l2-dirty-ways 40", 2,
		     "dirty ways up to the ways");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-hash page", 2,
		     "--l2-hash: 'page' is not lines or pages");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-model lru --l2-hash pages", 2,
		     "--l2-hash: only with --l2-model hashed");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-hash pages --l2-line-ways 32", 2,
		     "--l2-hash pages: hashing by page needs n x 512 sets a partition");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-hash-seed -1", 2, "--l2-hash-seed");
	expect_error("sdpa --q 0,16,128,64 --k 0,16,128,64", 2, "at least 1");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --slots 0", 2, "--slots: '0'");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 --l2-ways x", 2, "--l2-ways: 'x'");
	expect_error("sdpa --q 1,16,128,64 --k 1,16,128,64 extra", 2, "unexpected argument");
	/* Shapes past the limit of the work, counted in block steps, are refused at once rather
	 * than run for years (2^30 of N) or days (65535 x 65535 heads). */
	memsim_env = "timeout 30";
	expect_error("sdpa --q 1,1,1073741824,64 --k 1,1,1073741824,64", 2,
		     "the shape takes 7.04e+13 block steps to simulate (a step: one K/V tile of a "
		     "thread block), over the limit of 1e+10: give a smaller N, N_kv or batch x "
		     "heads");
	expect_error("sdpa --q 65535,65535,1,64 --k 65535,65535,1024,64", 2,
		     "the shape takes 3.44e+10 block steps");
	memsim_env = "";
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grid_matches_measured),
		cmocka_unit_test(test_num_splits),
		cmocka_unit_test(test_shape_check),
		cmocka_unit_test(test_steps),
		cmocka_unit_test(test_tilelru_matches_lines),
		cmocka_unit_test(test_tiles_equal_lines),
		cmocka_unit_test(test_measured_rows),
		cmocka_unit_test(test_h200_rows),
		cmocka_unit_test(test_h200_gpu),
		cmocka_unit_test(test_alternative_rows),
		cmocka_unit_test(test_page_hash_rows),
		cmocka_unit_test(test_lookup_misses),
		cmocka_unit_test(test_hashed_sampling),
		cmocka_unit_test(test_microbenchmarks),
		cmocka_unit_test(test_spill),
		cmocka_unit_test(test_spill_frames),
		cmocka_unit_test(test_h200_spills),
		cmocka_unit_test(test_l2_alternatives),
		cmocka_unit_test(test_cli_report),
		cmocka_unit_test(test_cli_errors),
	};

	return cmocka_run_group_tests(tests, tmpdir_setup, tmpdir_teardown);
}
