/*
 * The hashed L2 models (gpu/l2sets.c, gpu/l2expect.c): l2sets' LRU against sim/cache.c line by
 * line, SRRIP, the dirty cap and the partitions on hand-computed sequences, l2expect's stack
 * distances against a hand count, and l2sets against l2expect on random tile streams.
 */

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cache.h"
#include "gpu/l2expect.h"
#include "gpu/l2sets_test.h"
#include "tests/unit.h"

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* l2sets' LRU on every set (sample 1) counts what sim/cache.c counts for a set-associative
 * write-validate LRU, when each line's address puts it in the set l2sets hashed it to:
 * random whole-tile loads and stores of 1 to 16 lines. */
static void
test_lru_matches_cache(void **state)
{
	const uint32_t ways = 8, sets = 64, ntiles = 96;
	struct l2sets_config c = {
		(uint64_t)sets * ways * 128, ways, 1, 0, 1, L2SETS_LRU, 5, false
	};
	struct cache_config cfg = { 0 };
	struct l2sets *s = l2sets_create(&c, NULL);
	const struct cache_traffic *x;
	struct tilelru_traffic y;
	struct cache *ref;
	uint64_t rng = 99;
	char err[256];

	(void)state;
	assert_non_null(s);
	assert_int_equal(l2sets_nsets(s), sets);
	cfg.levels = 1;
	strcpy(cfg.level[0].name, "L2");
	cfg.level[0].size_bytes = (uint64_t)sets * ways * 128;
	cfg.level[0].assoc = ways;
	cfg.level[0].line_bytes = 128;
	cfg.level[0].alloc = CACHE_ALLOC_VALIDATE;
	assert_int_equal(cache_config_validate(&cfg, err, sizeof(err)), 0);
	ref = cache_create(&cfg);
	assert_non_null(ref);
	for (unsigned i = 0; i < 100000; i++) {
		uint64_t id = xorshift(&rng) % ntiles;
		uint32_t lines = 1 + (uint32_t)(id % 16);
		bool store = xorshift(&rng) % 5 == 0;

		l2sets_access(s, id, lines * 128, 0, store, 0);
		for (uint32_t o = 0; o < lines; o++) {
			/* line number key x sets + set: cache.c's index is the set, its tag
			 * the key */
			uint64_t line = (id * 16 + o) * sets + l2sets_set_of(s, id, o);

			cache_access(ref, line * 128, 128, store ? CACHE_OP_STORE : CACHE_OP_LOAD,
				     1);
		}
	}
	x = cache_dram(ref);
	y = l2sets_dram(s, TILELRU_CLASSES);
	assert_true(y.read_bytes > 0 && y.write_bytes > 0);
	assert_int_equal(y.read_bytes, x->read_bytes);
	assert_int_equal(y.write_bytes, x->write_bytes - x->flush_write_bytes);
	cache_destroy(ref);
	l2sets_destroy(s);
}

/* One set of 4 ways, one line a tile; DRAM bytes read so far. */
static uint64_t
reads(const struct l2sets *s)
{
	return l2sets_dram(s, TILELRU_CLASSES).read_bytes;
}

/* SRRIP by hand: A B C D fill the set "distant" (2); a hit makes A "near" (0); E finds no
 * line at 3, ages all (A 1, B C D 3) and takes B's way; F and G take C's and D's; H finds
 * none at 3 again, ages (A 2, E F G 3) and takes E's, so A stays. LRU takes A there. */
static void
test_srrip_by_hand(void **state)
{
	static const char seq[] = "ABCDAEFGH";
	const enum l2sets_policy pol[2] = { L2SETS_SRRIP, L2SETS_LRU };

	(void)state;
	for (unsigned p = 0; p < 2; p++) {
		struct l2sets_config c = { 4 * 128, 4, 1, 0, 1, pol[p], 1, false };
		struct l2sets *s = l2sets_create(&c, NULL);
		uint64_t before;

		assert_non_null(s);
		for (const char *x = seq; *x; x++)
			l2sets_access(s, (uint64_t)(*x - 'A'), 128, 0, false, 0);
		assert_int_equal(reads(s), 8 * 128); /* A's second access hit */
		before = reads(s);
		l2sets_access(s, 0, 128, 0, false, 0); /* A */
		assert_int_equal(reads(s) - before, pol[p] == L2SETS_SRRIP ? 0 : 128);
		l2sets_destroy(s);
	}
}

/* The dirty cap: with 2 dirty lines a set at most, a third store writes the oldest-written
 * dirty line back and keeps it (a load of it then reads nothing); held lines stay 3. */
static void
test_dirty_cap(void **state)
{
	struct l2sets_config c = { 4 * 128, 4, 1, 2, 1, L2SETS_LRU, 1, false };
	struct l2sets *s = l2sets_create(&c, NULL);
	uint64_t dirty;

	(void)state;
	assert_non_null(s);
	l2sets_access(s, 0, 128, 0, true, 0);
	l2sets_access(s, 1, 128, 0, true, 0);
	assert_int_equal(l2sets_dram(s, TILELRU_CLASSES).write_bytes, 0);
	l2sets_access(s, 2, 128, 0, true, 0);
	assert_int_equal(l2sets_dram(s, TILELRU_CLASSES).write_bytes, 128);
	assert_int_equal(l2sets_held_lines(s, &dirty), 3);
	assert_int_equal(dirty, 2);
	l2sets_access(s, 0, 128, 0, false, 0);
	assert_int_equal(reads(s), 0);
	/* rewriting line 0 makes it dirty again: now 1 is the oldest written */
	l2sets_access(s, 0, 128, 0, true, 0);
	assert_int_equal(l2sets_dram(s, TILELRU_CLASSES).write_bytes, 256);
	l2sets_destroy(s);
}

/* Two partitions: a load from the line's home side keeps it once; from the other side, it is
 * read from DRAM into the home and copied into the near half; a second load from there hits
 * the copy. A store goes to the home only. Read lookup misses: loads the half looked in first
 * (the SM's own) lacked, whether the home or DRAM then served them. */
static void
test_partitions(void **state)
{
	struct l2sets_config c = { 2 * 4 * 128, 4, 1, 0, 2, L2SETS_LRU, 3, false };
	struct l2sets *s = l2sets_create(&c, NULL);
	unsigned home, far;

	(void)state;
	assert_non_null(s);
	assert_int_equal(l2sets_nsets(s), 2);
	home = l2sets_set_of(s, 7, 0); /* one set a partition: the set is the home */
	far = 1 - home;
	l2sets_access(s, 7, 128, 0, false, home);
	assert_int_equal(l2sets_held_lines(s, NULL), 1);
	assert_int_equal(reads(s), 128);
	assert_int_equal(l2sets_read_lookup_misses(s, TILELRU_CLASSES), 128);
	l2sets_access(s, 7, 128, 0, false, home); /* a hit in the home: no lookup miss */
	assert_int_equal(l2sets_read_lookup_misses(s, TILELRU_CLASSES), 128);
	l2sets_access(s, 7, 128, 0, false, far); /* the near half lacks it: served by the home */
	assert_int_equal(l2sets_held_lines(s, NULL), 2);
	assert_int_equal(reads(s), 128);
	assert_int_equal(l2sets_read_lookup_misses(s, 0), 256);
	l2sets_access(s, 7, 128, 0, false, far);
	assert_int_equal(reads(s), 128);
	assert_int_equal(l2sets_read_lookup_misses(s, TILELRU_CLASSES), 256);
	l2sets_access(s, 9, 128, 0, true, far); /* stores are not read lookups */
	assert_int_equal(l2sets_held_lines(s, NULL), 3);
	assert_int_equal(reads(s), 128);
	assert_int_equal(l2sets_read_lookup_misses(s, TILELRU_CLASSES), 256);
	assert_int_equal(l2sets_read_lookup_misses(s, 1), 0);
	l2sets_destroy(s);
}

/* Impossible geometries are refused with a reason. */
static void
test_config_errors(void **state)
{
	struct l2sets_config ok = { 1u << 20, 16, 1, 0, 1, L2SETS_LRU, 1, false }, c;
	const char *why;

	(void)state;
	c = ok, c.ways = 0;
	assert_null(l2sets_create(&c, &why));
	assert_non_null(strstr(why, "ways"));
	c = ok, c.sample = 3;
	assert_null(l2sets_create(&c, &why));
	assert_non_null(strstr(why, "power of two"));
	c = ok, c.sample = 1024; /* 512 sets */
	assert_null(l2sets_create(&c, &why));
	c = ok, c.dirty_ways = 17;
	assert_null(l2sets_create(&c, &why));
	assert_non_null(strstr(why, "dirty"));
	c = ok, c.partitions = 3;
	assert_null(l2sets_create(&c, &why));
	assert_non_null(strstr(why, "partitions"));
	enum l2sets_policy p;
	assert_int_equal(l2sets_policy_parse("srrip", &p), 0);
	assert_int_equal(p, L2SETS_SRRIP);
	assert_string_equal(l2sets_policy_str(p), "srrip");
	assert_true(l2sets_policy_parse("plru", &p) < 0);
}

/* P(Poisson(lambda) >= k), summed here independently of l2expect's table. */
static double
tail(double lambda, unsigned k)
{
	double term = exp(-lambda), below = 0;

	for (unsigned i = 0; i < k; i++) {
		below += term;
		term *= lambda / (i + 1);
	}
	return 1 - below;
}

/* l2expect by hand: 100 tiles of 16 KiB read cyclically; each re-read sees 99 other tiles
 * since its last, so every pass after the first reads bytes x P(Poisson(99 x 16 KiB x ways /
 * capacity) >= ways); a store after the last pass is written back at the end with the
 * probability for the tiles touched after it. */
static void
test_expect_by_hand(void **state)
{
	const uint64_t cap = 27u << 16, tile = 16384;
	struct l2expect *l = l2expect_create(cap, 16, 200);
	double q = tail(99.0 * tile * 16 / cap, 16), got;

	(void)state;
	assert_non_null(l);
	assert_null(l2expect_create(cap, 0, 10));
	assert_true(q > 0.2 && q < 0.8); /* at the edge: a real test of the middle */
	for (unsigned p = 0; p < 3; p++)
		for (unsigned i = 0; i < 100; i++)
			l2expect_access(l, i, tile, 0, false);
	got = (double)l2expect_dram(l, 0).read_bytes;
	assert_true(fabs(got - (100.0 * tile + 2 * 100.0 * tile * q)) < 2 * 100.0 * tile * 1e-3);
	assert_true(fabs(l2expect_miss_prob(l, 99.0 * tile) - q) < 1e-3);
	/* tile 150 stored, then the 100 tiles read once more: written back at the end with the
	 * probability for 100 x 16 KiB */
	l2expect_access(l, 150, tile, 1, true);
	for (unsigned i = 0; i < 100; i++)
		l2expect_access(l, i, tile, 0, false);
	l2expect_finish(l);
	got = (double)l2expect_dram(l, 1).write_bytes;
	assert_true(fabs(got - tile * tail(100.0 * tile * 16 / cap, 16)) < tile * 1e-3);
	l2expect_destroy(l);
}

/* l2sets' LRU (one hash drawn, 1 set in 4 simulated) against l2expect (the mean over hashes):
 * random tiles of 8 to 32 KiB over about twice the capacity, a fifth of them stores. */
static void
test_sets_match_expectation(void **state)
{
	const uint64_t cap = 8u << 20;
	const uint32_t ntiles = 1000;
	struct l2sets_config c = { cap, 16, 4, 0, 1, L2SETS_LRU, 11, false };
	struct l2sets *s = l2sets_create(&c, NULL);
	struct l2expect *l = l2expect_create(cap, 16, ntiles);
	struct tilelru_traffic a, b;
	uint64_t rng = 7;

	(void)state;
	assert_non_null(s);
	assert_non_null(l);
	for (unsigned i = 0; i < 200000; i++) {
		/* skewed: low ids are reused sooner */
		uint64_t r = xorshift(&rng), id = (r % ntiles) * ((r >> 20) % ntiles) / ntiles;
		uint32_t bytes = 8192u << (id % 3);
		bool store = (r >> 40) % 5 == 0;

		l2sets_access(s, id, bytes, 0, store, 0);
		l2expect_access(l, id, bytes, 0, store);
	}
	a = l2sets_dram(s, TILELRU_CLASSES);
	b = l2expect_dram(l, TILELRU_CLASSES);
	assert_true(b.read_bytes > 100 * cap / 10);
	assert_true(fabs((double)a.read_bytes / (double)b.read_bytes - 1) < 0.02);
	assert_true(fabs((double)a.write_bytes / (double)b.write_bytes - 1) < 0.03);
	l2sets_destroy(s);
	l2expect_destroy(l);
}

/* The H100's 50 MiB as two partitions of 25 x 512 16-way sets, hashed by page. */
static struct l2sets *
page_l2(uint32_t sample, uint64_t seed)
{
	struct l2sets_config c = { 50u << 20, 16, sample, 0, 2, L2SETS_LRU, seed, true };
	const char *why;
	struct l2sets *s = l2sets_create(&c, &why);

	assert_non_null(s);
	return s;
}

/* A page's 16384 lines take 8192 distinct sets in each partition (the H100's sets hold one
 * line of a page each, 03313eb:docs/gpu-run/l2-evict/), the sets' x a window of 16 of the 25
 * values; the partition is the XOR of address bits 12, 13, 16, 17 and 19, flipped per page. */
static void
test_page_hash(void **state)
{
	struct l2sets *s = page_l2(1, 3);
	static uint8_t seen[2][25 * 512];
	unsigned flips = 0;

	(void)state;
	assert_int_equal(l2sets_nsets(s), 2 * 25 * 512);
	for (uint64_t page = 5; page < 13; page++) {
		unsigned xs[2][25] = { { 0 } };
		unsigned flip = 0;

		memset(seen, 0, sizeof(seen));
		for (uint64_t i = 0; i < 16384; i++) {
			uint64_t a = page << 21 | i << 7;
			unsigned home,
				bits = (unsigned)(a >> 12 ^ a >> 13 ^ a >> 16 ^ a >> 17 ^ a >> 19) &
				       1;
			uint32_t set = l2sets_page_set_of(s, a, &home);

			assert_true(set < 25 * 512);
			if (i == 0)
				flip = home ^ bits;
			assert_int_equal(home, bits ^ flip);
			assert_int_equal(seen[home][set], 0);
			seen[home][set] = 1;
			xs[home][set >> 9]++;
		}
		flips += flip;
		for (unsigned h = 0; h < 2; h++) {
			unsigned in = 0, start = 0;

			for (unsigned x = 0; x < 25; x++) {
				assert_true(xs[h][x] == 0 || xs[h][x] == 512);
				in += xs[h][x] == 512;
				if (xs[h][x] && !xs[h][(x + 24) % 25])
					start++;
			}
			assert_int_equal(in, 16);
			assert_int_equal(start, 1); /* one window, mod 25 */
		}
	}
	assert_true(flips > 0 && flips < 8); /* the page term is drawn per page */
	l2sets_destroy(s);
}

/* MiB the second of two reads of w MiB, stored as pieces of piece KiB every stride KiB, missed
 * in the reading side's partition. */
static double
page_reread_misses(uint32_t sample, uint64_t w, uint64_t piece, uint64_t stride)
{
	struct l2sets *s = page_l2(sample, 0);
	uint64_t n = w * 1024 / piece;
	double miss = 0;

	for (unsigned pass = 0; pass < 2; pass++) {
		if (pass)
			miss = (double)l2sets_read_lookup_misses(s, TILELRU_CLASSES);
		for (uint64_t i = 0; i < n; i++)
			for (uint64_t o = 0; o < piece * 1024; o += 32768)
				l2sets_access_at(s, (1u << 21) + i * stride * 1024 + o, 32768, 0,
						 false, (unsigned)(o >> 15) & 1);
	}
	miss = (double)l2sets_read_lookup_misses(s, TILELRU_CLASSES) - miss;
	l2sets_destroy(s);
	return miss / 1048576;
}

/* What the page hash is for: 512 KiB pieces 2 MiB apart use a quarter of each page's window,
 * and their re-read misses more than the same bytes contiguous (the H100 at 24 MiB: 9.8
 * against 3.8 MiB, 03313eb:docs/gpu-run/l2-pieces/), where a random hash per line misses alike. A
 * re-read of the same addresses finds them (a line's key is its address), and 1 set in 16
 * estimates every set's count. */
static void
test_page_pieces(void **state)
{
	double flat = page_reread_misses(1, 24, 512, 512);
	double pieces = page_reread_misses(1, 24, 512, 2048);
	double sampled = page_reread_misses(16, 24, 512, 2048);

	(void)state;
	assert_true(page_reread_misses(1, 8, 512, 512) == 0);
	assert_true(pieces > 2 * flat + 1);
	assert_true(fabs(sampled / pieces - 1) < 0.25);
}

/* Hashing by page needs 25 x 512-like geometry: n x 512 sets a partition, n >= 16. */
static void
test_page_config_errors(void **state)
{
	struct l2sets_config c = { 50u << 20, 32, 1, 0, 2, L2SETS_LRU, 0, true };
	const char *why;

	(void)state;
	assert_null(l2sets_create(&c, &why)); /* 6400 sets a partition */
	assert_non_null(strstr(why, "512"));
	c.ways = 16, c.capacity_bytes = 2 * 15 * 512 * 16 * 128; /* n = 15 */
	assert_null(l2sets_create(&c, &why));
	c.capacity_bytes = 50u << 20, c.sample = 1024;
	assert_null(l2sets_create(&c, &why));
	assert_non_null(strstr(why, "sample"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lru_matches_cache),
		cmocka_unit_test(test_srrip_by_hand),
		cmocka_unit_test(test_dirty_cap),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_expect_by_hand),
		cmocka_unit_test(test_sets_match_expectation),
		cmocka_unit_test(test_page_hash),
		cmocka_unit_test(test_page_pieces),
		cmocka_unit_test(test_page_config_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
