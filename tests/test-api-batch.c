/*
 * memsim_access_batch() (api/trace_api.c): random batches of mixed sizes (some straddling two
 * lines), loads and stores, over declared arrays (memory and scratch) and undeclared addresses,
 * in several phases, count exactly what memsim_load() and memsim_store() called one by one
 * count, on several hierarchies: every counter of the model, the public stats in all, per array
 * and per phase, and the JSON report's text. Each refused batch returns -1 and counts nothing.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit.h"

#define MEMSIM_NO_TR_MACROS
#include "memsim/memsim.h"

#include "api/api.h"
#include "tests/counters.h"

#define BASE UINT64_C(0x100000)
#define N_ACCESS 20000

static const char *const specs[] = {
	"none",
	"lab",
	"L1=4K:2:64",
	"L1=32K:8:64,L2=256K:4:64,L3=2M:16:64",
	"L1=2K:4:64:plru,L2=16K:8:64:incl",
	"L1=4K:4:64:wt,L2=64K:8:128:fifo",
	"cachegrind",
	"h100",
};

/* xorshift64: the same batches every run. */
static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct batch {
	uint64_t addr[N_ACCESS];
	uint32_t size[N_ACCESS];
	uint8_t write[N_ACCESS];
};

/* Addresses over a 64 KiB array, a 4 KiB scratch array and 64 KiB that no array covers;
 * sizes from 1 byte to 3 lines, most of them small, some over a line boundary. */
static void
fill(struct batch *b, uint64_t seed)
{
	static const uint32_t sizes[] = { 1, 2, 4, 4, 4, 8, 8, 8, 16, 32, 60, 64, 100, 200 };

	for (size_t i = 0; i < N_ACCESS; i++) {
		uint64_t r = rnd(&seed);

		b->addr[i] = BASE + r % (3 * 65536);
		if (i % 4)
			b->addr[i] = b->addr[i - 1] + 8; /* runs on a line, for the fast path */
		b->size[i] = sizes[(r >> 20) % (sizeof(sizes) / sizeof(sizes[0]))];
		b->write[i] = (r >> 40) % 3 == 0 ? (uint8_t)(1 + (r >> 50) % 255) : 0;
	}
}

static struct memsim_trace *
open_trace(struct memsim_hierarchy **h, const char *spec)
{
	char err[512];
	struct memsim_trace *t;

	*h = memsim_hierarchy_create(spec, err, sizeof(err));
	assert_non_null(*h);
	t = memsim_trace_create(*h, NULL, err, sizeof(err));
	assert_non_null(t);
	return t;
}

static void
declare(struct memsim_trace *t, bool arrays)
{
	if (!arrays)
		return;
	assert_int_equal(
		memsim_array(t, "a", (const void *)(uintptr_t)BASE, 65536, MEMSIM_SPACE_DRAM), 0);
	assert_int_equal(memsim_array(t, "s", (const void *)(uintptr_t)(BASE + 65536), 4096,
				      MEMSIM_SPACE_SCRATCH),
			 0);
	assert_int_equal(memsim_array(t, "tile", (const void *)(uintptr_t)(BASE + 69632), 4096,
				      MEMSIM_SPACE_TILE),
			 0);
}

/* Everything the public interface tells of h is the same as of g. */
static void
assert_same(struct memsim_hierarchy *h, struct memsim_hierarchy *g)
{
	struct memsim_stats x, y;
	char *jh, *jg;

	assert_true(same_counters(h->cache, g->cache));
	memset(&x, 0, sizeof(x));
	memset(&y, 0, sizeof(y));
	assert_int_equal(memsim_stats_total(h, &x), 0);
	assert_int_equal(memsim_stats_total(g, &y), 0);
	assert_memory_equal(&x, &y, sizeof(x));
	assert_int_equal(memsim_stats_arrays(h), memsim_stats_arrays(g));
	for (unsigned i = 0; i < memsim_stats_arrays(h); i++) {
		memset(&x, 0, sizeof(x));
		memset(&y, 0, sizeof(y));
		assert_int_equal(memsim_stats_array(h, i, &x), 0);
		assert_int_equal(memsim_stats_array(g, i, &y), 0);
		assert_memory_equal(&x, &y, sizeof(x));
	}
	assert_int_equal(memsim_stats_phases(h), memsim_stats_phases(g));
	for (unsigned i = 0; i < memsim_stats_phases(h); i++) {
		memset(&x, 0, sizeof(x));
		memset(&y, 0, sizeof(y));
		assert_int_equal(memsim_stats_phase(h, i, &x), 0);
		assert_int_equal(memsim_stats_phase(g, i, &y), 0);
		assert_memory_equal(&x, &y, sizeof(x));
	}
	jh = memsim_report_json(h);
	jg = memsim_report_json(g);
	assert_non_null(jh);
	assert_non_null(jg);
	assert_string_equal(jh, jg);
	memsim_free(jh);
	memsim_free(jg);
}

/* mode: 0 sizes and writes given, 1 sizes only (all loads), 2 sizes only (all stores),
 * 3 writes only (8 bytes each), 4 neither (16-byte loads). */
static void
compare(const char *spec, bool arrays, int mode, uint64_t seed)
{
	static struct batch b;
	struct memsim_hierarchy *h, *g;
	struct memsim_trace *t = open_trace(&h, spec), *u = open_trace(&g, spec);
	const uint32_t *sizes = mode <= 2 ? b.size : NULL;
	const uint8_t *writes = mode == 0 || mode == 3 ? b.write : NULL;
	uint32_t size = mode == 3 ? 8 : 16;
	int write = mode == 2;
	char err[256];

	declare(t, arrays);
	declare(u, arrays);
	for (int part = 0; part < 3; part++) {
		size_t n = N_ACCESS - (size_t)part * 777; /* not all the same length */

		fill(&b, seed + (uint64_t)part);
		if (part) {
			const char *ph = part == 1 ? "first" : "second";

			assert_int_equal(memsim_phase(t, ph), 0);
			assert_int_equal(memsim_phase(u, ph), 0);
		}
		for (size_t i = 0; i < n; i++) {
			const void *p = (const void *)(uintptr_t)b.addr[i];
			uint32_t s = sizes ? sizes[i] : size;

			if (writes ? writes[i] != 0 : write != 0)
				memsim_store(t, p, s);
			else
				memsim_load(t, p, s);
		}
		assert_int_equal(memsim_access_batch(u, n, b.addr, sizes, writes, size, write), 0);
	}
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), 0);
	assert_int_equal(memsim_trace_finish(u, err, sizeof(err)), 0);
	assert_same(h, g);
	memsim_trace_destroy(t);
	memsim_trace_destroy(u);
	memsim_hierarchy_destroy(h);
	memsim_hierarchy_destroy(g);
}

static void
test_batch_equals_one_by_one(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
		for (int mode = 0; mode <= 4; mode++) {
			print_message("# %s, mode %d\n", specs[s], mode);
			compare(specs[s], true, mode, 17 + s * 5 + (uint64_t)mode);
			compare(specs[s], false, mode, 99 + s * 5 + (uint64_t)mode);
		}
}

/* h's report now, to see that a refused batch counted nothing. */
static char *
snapshot(struct memsim_trace *t, struct memsim_hierarchy *h)
{
	char *j;

	/* The counters of accesses merged or on the fast path wait in the trace until flushed. */
	trace_flush(t->ctx);
	j = memsim_report_json(h);
	assert_non_null(j);
	return j;
}

static void
test_refusals(void **state)
{
	struct memsim_hierarchy *h;
	struct memsim_trace *t = open_trace(&h, "L1=4K:2:64");
	uint64_t addr[4] = { BASE, BASE + 8, BASE + 64, BASE + 200 };
	uint32_t size[4] = { 8, 8, 8, 8 };
	uint8_t write[4] = { 0, 1, 0, 1 };
	char *before, *after, err[256];
	struct memsim_stats s;

	(void)state;
	assert_int_equal(memsim_access_batch(t, 4, addr, size, write, 0, 0), 0);
	before = snapshot(t, h);
	assert_int_equal(memsim_access_batch(NULL, 4, addr, size, write, 0, 0), -1);
	assert_int_equal(memsim_access_batch(t, 4, NULL, size, write, 0, 0), -1);
	size[3] = 0; /* the last one bad: the first three are not counted either */
	assert_int_equal(memsim_access_batch(t, 4, addr, size, write, 0, 0), -1);
	size[3] = MEMSIM_BATCH_MAX_SIZE + 1;
	assert_int_equal(memsim_access_batch(t, 4, addr, size, write, 0, 0), -1);
	size[3] = 8;
	assert_int_equal(memsim_access_batch(t, 4, addr, NULL, write, 0, 0), -1);
	assert_int_equal(memsim_access_batch(t, 4, addr, NULL, NULL, MEMSIM_BATCH_MAX_SIZE + 1, 1),
			 -1);
	addr[3] = UINT64_MAX - 6; /* [2^64 - 7, 2^64 + 1) wraps */
	assert_int_equal(memsim_access_batch(t, 4, addr, size, write, 0, 0), -1);
	assert_int_equal(memsim_access_batch(t, 4, addr, NULL, NULL, 8, 0), -1);
	/* n 0: nothing to do, whatever the arrays */
	assert_int_equal(memsim_access_batch(t, 0, NULL, NULL, NULL, 0, 0), 0);
	assert_int_equal(memsim_access_batch(t, 0, addr, size, write, 0, 0), 0);
	after = snapshot(t, h);
	assert_string_equal(before, after);
	memsim_free(after);

	/* The limits themselves are taken: 1 MiB, and a range that ends at 2^64. */
	addr[0] = BASE;
	addr[1] = UINT64_MAX - 7;
	size[0] = MEMSIM_BATCH_MAX_SIZE;
	size[1] = 8;
	assert_int_equal(memsim_access_batch(t, 2, addr, size, NULL, 0, 0), 0);
	assert_int_equal(memsim_stats_total(h, &s), 0);
	after = snapshot(t, h);
	assert_string_not_equal(before, after);
	memsim_free(after);
	memsim_free(before);

	/* After finish: 0 and nothing counted, as memsim_load(). */
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), 0);
	before = memsim_report_json(h);
	addr[3] = BASE;
	assert_int_equal(memsim_access_batch(t, 4, addr, size, write, 0, 0), 0);
	memsim_load(t, addr, 8);
	after = memsim_report_json(h);
	assert_string_equal(before, after);
	memsim_free(before);
	memsim_free(after);
	memsim_trace_destroy(t);
	memsim_hierarchy_destroy(h);
}

/* The counts themselves, by hand: 3 loads and 2 stores of 4 bytes, one store of 2. */
static void
test_hand_count(void **state)
{
	struct memsim_hierarchy *h;
	struct memsim_trace *t = open_trace(&h, "none");
	const uint64_t addr[6] = { 0x1000, 0x1004, 0x1040, 0x2000, 0x2004, 0x3000 };
	const uint32_t size[6] = { 4, 4, 4, 4, 4, 2 };
	const uint8_t write[6] = { 0, 0, 0, 7, 1, 1 };
	struct memsim_stats s;
	char err[256];

	(void)state;
	assert_int_equal(memsim_access_batch(t, 6, addr, size, write, 0, 0), 0);
	assert_int_equal(memsim_trace_finish(t, err, sizeof(err)), 0);
	assert_int_equal(memsim_stats_total(h, &s), 0);
	assert_int_equal(s.cpu.loads, 3);
	assert_int_equal(s.cpu.stores, 3);
	assert_int_equal(s.cpu.load_bytes, 12);
	assert_int_equal(s.cpu.store_bytes, 10);
	assert_int_equal(s.dram.read_bytes, 12);
	assert_int_equal(s.dram.write_bytes, 10);
	memsim_trace_destroy(t);
	memsim_hierarchy_destroy(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_equals_one_by_one),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_hand_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
