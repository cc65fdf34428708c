/*
 * Runs of accesses in rows, cut by chunk (sim/cache_run.h).
 */

#include "sim/cache_run.h"

#include "sim/util.h"

bool
cache_run_aligned(const struct cache_run *r)
{
	uint64_t line = UINT64_C(1) << r->line_shift;

	return r->n && r->rows && r->elem && is_pow2(r->elem) && r->elem <= line &&
	       r->addr % r->elem == 0 && r->stride % r->elem == 0;
}

uint64_t
cache_run_row_accesses(const struct cache_run *r, uint64_t a)
{
	const unsigned ls = r->line_shift;
	const uint64_t line = UINT64_C(1) << ls, end = a + (uint64_t)r->n * r->elem;
	uint64_t lines, first, last;

	if (r->kind != CACHE_RUN_LINES)
		return r->n;
	lines = ((end - 1) >> ls) - (a >> ls) + 1;
	if (r->op != CACHE_OP_STORE || line == r->elem)
		return lines;
	/* A store's line: its first element alone, then the rest where there is one. */
	if (lines == 1)
		return r->n > 1 ? 2 : 1;
	first = (line - (a & (line - 1))) / r->elem;
	last = (((end - 1) & (line - 1)) + 1) / r->elem;
	return (first > 1 ? 2 : 1) + (last > 1 ? 2 : 1) + 2 * (lines - 2);
}

uint64_t
cache_run_accesses(const struct cache_run *r)
{
	const uint64_t line = UINT64_C(1) << r->line_shift;
	uint64_t acc = 0;

	/* Where every row lies the same way in its lines, rows x one row's. */
	if (r->kind != CACHE_RUN_LINES)
		return (uint64_t)r->rows * r->n;
	if (r->rows == 1 || r->stride % line == 0)
		return (uint64_t)r->rows * cache_run_row_accesses(r, r->addr);
	for (uint64_t row = 0; row < r->rows; row++)
		acc += cache_run_row_accesses(r, r->addr + row * r->stride);
	return acc;
}

/* One line's piece [a, a + len) of r, as the tracing layer would report it. */
static ALWAYS_INLINE void
piece(struct cache *c, const struct cache_run *r, uint64_t a, uint32_t len)
{
	const enum cache_op op = (enum cache_op)r->op;

	switch (r->kind) {
	case CACHE_RUN_MERGED:
		cache_access_merged(c, a, len, op, len / r->elem, len);
		return;
	case CACHE_RUN_ELEMS:
		for (uint32_t k = 0; k < len; k += r->elem)
			cache_access(c, a + k, r->elem, op, 1);
		return;
	default:
		if (op == CACHE_OP_STORE && len > r->elem) {
			cache_access(c, a, r->elem, op, 1);
			a += r->elem;
			len -= r->elem;
		}
		cache_access(c, a, len, op, 1);
	}
}

/* x rotated right by n (0 .. 63). */
static inline uint64_t
rotr64(uint64_t x, unsigned n)
{
	return (x >> n) | (x << ((64 - n) & 63));
}

/* Row `row` of r: the pieces in the chunks `owned` marks (cache_access_run()). */
static ALWAYS_INLINE void
run_row(struct cache *c, const struct cache_run *r, uint64_t row, unsigned chunk_shift,
	uint64_t owned)
{
	const uint64_t line = UINT64_C(1) << r->line_shift, len = (uint64_t)r->n * r->elem;
	const uint64_t chunk = UINT64_C(1) << chunk_shift;
	/* Last bytes, not ends, which may lie at 2^64. */
	uint64_t a = r->addr + row * r->stride, row_last = a + (len - 1);
	uint64_t k = a >> chunk_shift, last = row_last >> chunk_shift;

	for (;;) {
		/* The next chunk that is ours: bit 0 of the pattern turned to k's class. */
		uint64_t d = (uint64_t)__builtin_ctzll(rotr64(owned, (unsigned)(k & 63)));
		uint64_t lo, hi;

		if (d > last - k)
			break;
		k += d;
		lo = k << chunk_shift > a ? k << chunk_shift : a;
		hi = (k << chunk_shift | (chunk - 1)) < row_last ? (k << chunk_shift | (chunk - 1))
								 : row_last;
		/* The chunk's lines, one piece each. */
		for (;;) {
			uint64_t piece_last = (lo | (line - 1)) < hi ? lo | (line - 1) : hi;

			piece(c, r, lo, (uint32_t)(piece_last - lo + 1));
			if (piece_last == hi)
				break;
			lo = piece_last + 1;
		}
		if (k == last)
			break;
		k++;
	}
}

void
cache_access_run(struct cache *c, const struct cache_run *r, unsigned chunk_shift, uint64_t mask,
		 uint64_t owned)
{
	const uint64_t chunk = UINT64_C(1) << chunk_shift, len = (uint64_t)r->n * r->elem;
	const uint64_t k0 = r->addr >> chunk_shift, s = r->stride >> chunk_shift;
	uint64_t w, period, q[CACHE_MAX_SLICES];
	unsigned nq = 0;

	/* Rows narrower than the round of classes mostly hold none of ours. Where the stride is
	 * whole chunks every row spans the same w chunks, and row i's first chunk is k0 + i s,
	 * so whether a row holds one of ours repeats every `period` rows: visit only those, in
	 * order. */
	w = (((r->addr & (chunk - 1)) + len - 1) >> chunk_shift) + 1;
	if (!mask || r->stride & (chunk - 1) || w > mask) {
		for (uint64_t row = 0; row < r->rows; row++)
			run_row(c, r, row, chunk_shift, owned);
		return;
	}
	period =
		(mask + 1) >> (s & mask ? (unsigned)__builtin_ctzll(s & mask) : log2_u64(mask + 1));
	for (uint64_t i = 0; i < period && i < r->rows; i++)
		if (rotr64(owned, (unsigned)((k0 + i * s) & 63)) & ((UINT64_C(1) << w) - 1))
			q[nq++] = i;
	if (!nq)
		return;
	for (uint64_t base = 0; base < r->rows; base += period)
		for (unsigned j = 0; j < nq && base + q[j] < r->rows; j++)
			run_row(c, r, base + q[j], chunk_shift, owned);
}
