/*
 * flashdecode's two line-by-line formulas at S > 1 against each other: where both hold (one
 * query block a head, rows of whole lines), formula_flashdecode_lru()'s closed windows and
 * formula_flashdecode_walk()'s walk over the kernel's loops must give every array the same
 * read, write, read-for-ownership and flush bytes, on every cache size from one line to past
 * the footprint (so each window's edge is crossed), write-allocate and -validate, flush and
 * not. The two share no code but touch(): the simulator's equality (test-formulas.c) checks
 * each at a few sizes, this at every size.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/formula_kernels.h"

struct shape {
	uint64_t N, N_kv, d, heads, kv_heads, batch, Br, Bc, S, P;
	enum attn_dtype dtype;
	bool causal;
};

static const struct shape shapes[] = {
	{ 1, 300, 16, 2, 2, 1, 16, 16, 3, 0, ATTN_FP32, false },  /* T_c 19: 7, 7, 5 */
	{ 4, 200, 32, 2, 1, 2, 16, 32, 4, 0, ATTN_FP16, true },   /* causal, kv head shared */
	{ 1, 150, 32, 8, 2, 1, 16, 16, 5, 0, ATTN_BF16, false },  /* packed g = 4 */
	{ 16, 96, 16, 1, 1, 1, 16, 16, 8, 0, ATTN_FP32, true },   /* empty splits */
	{ 2, 250, 16, 2, 1, 2, 16, 32, 3, 7, ATTN_FP32, false },  /* paged, batch 2 */
	{ 1, 180, 64, 4, 1, 1, 16, 16, 4, 1, ATTN_FP16, true },   /* a token a page, packed */
};

static void
check(const struct attn_config *v, double L, double C, bool rfo, bool flush)
{
	struct formula_geometry q;
	struct formula_result a, b;

	memset(&q, 0, sizeof(q));
	q.L = L;
	q.C = C;
	q.rfo = rfo;
	q.flush = flush;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	formula_flashdecode_lru(&a, v, &q);
	formula_flashdecode_walk(&b, v, &q);
	for (unsigned i = 0; i < a.narrays; i++) {
		const struct formula_array *x = &a.arrays[i], *y = formula_array(&b, x->name);

		assert_non_null(y);
		if (x->read_bytes != y->read_bytes || x->write_bytes != y->write_bytes ||
		    x->rfo_bytes != y->rfo_bytes || x->flush_bytes != y->flush_bytes)
			fail_msg("N=%llu N_kv=%llu S=%llu P=%llu L=%.0f C=%.0f%s%s: %s closed %.0f "
				 "%.0f %.0f %.0f, walked %.0f %.0f %.0f %.0f",
				 (unsigned long long)v->N, (unsigned long long)v->N_kv,
				 (unsigned long long)attn_splits(v), (unsigned long long)v->kv_page, L,
				 C, rfo ? "" : " wv", flush ? "" : " no-flush", x->name,
				 x->read_bytes, x->write_bytes, x->rfo_bytes, x->flush_bytes,
				 y->read_bytes, y->write_bytes, y->rfo_bytes, y->flush_bytes);
	}
}

static void
test_walk_equals_closed(void **state)
{
	static const double lines[] = { 32, 64 };
	unsigned n = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const struct shape *k = &shapes[i];
		struct attn_config c = { .kernel = ATTN_FLASHDECODE,
					 .N = k->N,
					 .N_kv = k->N_kv,
					 .d = k->d,
					 .heads = k->heads,
					 .kv_heads = k->kv_heads,
					 .batch = k->batch,
					 .dtype = k->dtype,
					 .Br = k->Br,
					 .Bc = k->Bc,
					 .causal = k->causal,
					 .splits = k->S,
					 .kv_page = k->P,
					 .kv_seed = 5 };
		const struct attn_config v = attn_decode_view(&c);

		for (size_t li = 0; li < sizeof(lines) / sizeof(lines[0]); li++) {
			double L = lines[li], fp = formula_flashdecode_footprint(&v, L);

			assert_true(formula_flashdecode_lru_fits(&v, L));
			assert_true(formula_flashdecode_walk_fits(&v, L));
			for (double C = 1; C <= fp + 2; C++, n++)
				for (int m = 0; m < 4; m++)
					check(&v, L, C, m & 1, m & 2);
		}
	}
	print_message("# %u cache sizes, each 4 ways, every array equal\n", n);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_walk_equals_closed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
