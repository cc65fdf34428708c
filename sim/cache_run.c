/*
 * Runs of accesses in rows, cut by chunk (sim/cache_run.h).
 */

#include "sim/cache_run.h"

#include "base/util.h"

bool
cache_run_aligned(const struct cache_run *r)
{
	uint64_t line = UINT64_C(1) << r->line_shift;

	return r->n && r->rows && r->elem && is_pow2(r->elem) && r->elem <= line &&
	       r->addr % r->elem == 0 && r->stride % r->elem == 0;
}

/* x rotated left by n (0 .. 127). */
static inline cache_classes
rotl128(cache_classes x, unsigned n)
{
	return n ? (x << n) | (x >> (128 - n)) : x;
}

/* x rotated right by n (0 .. 127). */
static inline cache_classes
rotr128(cache_classes x, unsigned n)
{
	return n ? (x >> n) | (x << (128 - n)) : x;
}

/* The classes of chunks k .. k + w - 1 (bit 0 for k's). */
static inline cache_classes
spanned(uint64_t w)
{
	return w >= 128 ? CACHE_CLASSES_ALL : ((cache_classes)1 << w) - 1;
}

cache_classes
cache_run_classes(const struct cache_run *r, unsigned chunk_shift)
{
	const uint64_t chunk = UINT64_C(1) << chunk_shift, round = CACHE_CLASSES_MAX;
	uint64_t len = (uint64_t)r->n * r->elem, rows = r->rows;
	cache_classes classes = 0;

	/* Rows that follow each other are one row; rows whole chunks apart repeat their classes
	 * every round / 2^ctz(s) rows, s their distance in chunks; other rows are looked at
	 * until every class is marked. */
	if (r->stride == len && rows <= UINT64_MAX / len) {
		len *= rows;
		rows = 1;
	} else if (!(r->stride & (chunk - 1))) {
		uint64_t s = (r->stride >> chunk_shift) & (round - 1);
		uint64_t period = s ? round >> __builtin_ctzll(s) : 1;

		rows = rows < period ? rows : period;
	}
	for (uint64_t row = 0; row < rows && classes != CACHE_CLASSES_ALL; row++) {
		uint64_t a = r->addr + row * r->stride;
		uint64_t w = (((a & (chunk - 1)) + len - 1) >> chunk_shift) + 1;

		classes |= rotl128(spanned(w), (unsigned)((a >> chunk_shift) & (round - 1)));
	}
	return classes;
}

/* One line's piece [a, a + len) of r, as the tracing layer would report it. */
static ALWAYS_INLINE void
piece(struct cache *c, const struct cache_run *r, uint64_t a, uint32_t len)
{
	const enum cache_op op = (enum cache_op)r->op;

	if (r->kind == CACHE_RUN_MERGED) {
		/* elem is a power of two (cache_run_aligned()): a shift, not a division. */
		cache_access_merged(c, a, len, op, len >> __builtin_ctz(r->elem), len);
		return;
	}
	for (uint32_t k = 0; k < len; k += r->elem)
		cache_access(c, a + k, r->elem, op, 1);
}

/* The most pieces cache_access_run() works out once for rows that lie alike. */
#define RUN_PIECES_MAX 256

/* Pieces of rows, each as its offset from its row's first byte and its length. */
struct row_pieces {
	unsigned n;
	uint64_t off[RUN_PIECES_MAX];
	uint32_t len[RUN_PIECES_MAX];
};

/* The pieces of r's row at a in the chunks `owned` marks, in order: to c, or with rec (a
 * constant where inlined) appended to it instead (room for all of them checked first). */
static ALWAYS_INLINE void
row_walk(struct cache *c, const struct cache_run *r, uint64_t a, unsigned chunk_shift,
	 cache_classes owned, struct row_pieces *rec)
{
	const uint64_t line = UINT64_C(1) << r->line_shift, len = (uint64_t)r->n * r->elem;
	const uint64_t chunk = UINT64_C(1) << chunk_shift;
	/* Last bytes, not ends, which may lie at 2^64. */
	const uint64_t row_last = a + (len - 1);
	const uint64_t first = a >> chunk_shift, last = row_last >> chunk_shift;

	/* 64 chunks at a time from a multiple of 64, whose classes are one word of the
	 * pattern's bits as they stand; only the first and last chunk may be cut short. */
	for (uint64_t base = first & ~UINT64_C(63);; base += 64) {
		uint64_t ours = (uint64_t)(owned >> (base & 64));

		if (base < first)
			ours &= ~UINT64_C(0) << (first - base);
		if (last - base < 63)
			ours &= (UINT64_C(2) << (last - base)) - 1;
		for (; ours; ours &= ours - 1) {
			const uint64_t k = base + (uint64_t)__builtin_ctzll(ours);
			uint64_t lo = k << chunk_shift, hi = lo | (chunk - 1);

			lo = lo > a ? lo : a;
			hi = hi < row_last ? hi : row_last;
			/* The chunk's lines, one piece each. */
			for (;;) {
				uint64_t piece_last = (lo | (line - 1)) < hi ? lo | (line - 1) : hi;

				if (rec) {
					rec->off[rec->n] = lo - a;
					rec->len[rec->n++] = (uint32_t)(piece_last - lo + 1);
				} else {
					piece(c, r, lo, (uint32_t)(piece_last - lo + 1));
				}
				if (piece_last == hi)
					break;
				lo = piece_last + 1;
			}
		}
		if (last - base < 64)
			break;
	}
}

/* Rows a whole number of chunks apart lie alike in their lines and chunks, and their
 * chunks' classes repeat every `period` rows: the pieces of the first period rows that hold
 * any of ours, worked out once (a row inside one line is one piece, its whole self), then
 * every such row's, moved to its address. False, doing nothing, where working them out
 * would not pay (no row repeats, and rows of more than one piece) or they might not fit. */
static bool
run_by_period(struct cache *c, const struct cache_run *r, unsigned chunk_shift, uint64_t mask,
	      cache_classes owned, uint64_t period)
{
	/* A row's pieces are cut at lines and chunks, the smaller of which bounds them. */
	const unsigned cut = r->line_shift < chunk_shift ? r->line_shift : chunk_shift;
	const uint64_t len = (uint64_t)r->n * r->elem, rows = r->rows < period ? r->rows : period;
	const uint64_t lines = (((r->addr & ((UINT64_C(1) << cut) - 1)) + len - 1) >> cut) + 1;
	const uint64_t chunk = UINT64_C(1) << chunk_shift;
	const uint64_t k0 = r->addr >> chunk_shift, s = r->stride >> chunk_shift;
	/* The chunks a row spans; a row spanning the round of classes holds every one. */
	const uint64_t w = (((r->addr & (chunk - 1)) + len - 1) >> chunk_shift) + 1;
	const cache_classes span = w > mask ? CACHE_CLASSES_ALL : spanned(w);
	struct row_pieces rec;
	unsigned from[CACHE_CLASSES_MAX + 1], q[CACHE_CLASSES_MAX], nq = 0;

	if ((lines > 1 && r->rows <= period) || lines > RUN_PIECES_MAX / rows)
		return false;
	rec.n = 0;
	for (uint64_t i = 0; i < rows; i++) {
		if (!(rotr128(owned, (unsigned)((k0 + i * s) & (CACHE_CLASSES_MAX - 1))) & span))
			continue;
		from[nq] = rec.n;
		if (lines == 1) {
			rec.off[rec.n] = 0;
			rec.len[rec.n++] = (uint32_t)len;
		} else {
			row_walk(c, r, r->addr + i * r->stride, chunk_shift, owned, &rec);
		}
		q[nq++] = (unsigned)i;
	}
	from[nq] = rec.n;
	for (uint64_t base = 0; base < r->rows; base += period)
		for (unsigned j = 0; j < nq && base + q[j] < r->rows; j++) {
			uint64_t a = r->addr + (base + q[j]) * r->stride;

			for (unsigned p = from[j]; p < from[j + 1]; p++)
				piece(c, r, a + rec.off[p], rec.len[p]);
		}
	return true;
}

/* r as one row where its rows follow each other in memory and meet at the bounds of lines
 * and chunks: cut the same, pieces and order, and walked a chunk of ours at a time. Only for
 * a slice of several (mask not 0): one that gets every chunk does better replaying a row's
 * pieces (run_by_period()). */
static bool
run_as_one_row(const struct cache_run *r, unsigned chunk_shift, uint64_t mask,
	       struct cache_run *one)
{
	const unsigned cut = r->line_shift < chunk_shift ? r->line_shift : chunk_shift;
	const uint64_t len = (uint64_t)r->n * r->elem;

	if (!mask || r->rows < 2 || r->stride != len ||
	    (r->addr | len) & ((UINT64_C(1) << cut) - 1) || (uint64_t)r->n * r->rows > UINT32_MAX)
		return false;
	*one = *r;
	one->n = r->n * r->rows;
	one->rows = 1;
	return true;
}

/* The one long row r (run_as_one_row()) from memo where it lies as the last one did, else
 * walked into memo first where its pieces fit; false, doing nothing, where they might not. */
static bool
long_row(struct cache *c, const struct cache_run *r, unsigned chunk_shift, cache_classes owned,
	 struct cache_run_memo *memo)
{
	const uint64_t round = (uint64_t)CACHE_CLASSES_MAX << chunk_shift;
	const uint64_t len = (uint64_t)r->n * r->elem, at = r->addr & (round - 1);
	const unsigned shifts = (chunk_shift | (unsigned)r->line_shift << 8) + 1;

	if (memo->shifts != shifts || memo->at != at || memo->len != len) {
		const unsigned cut = r->line_shift < chunk_shift ? r->line_shift : chunk_shift;
		struct row_pieces rec;

		if (len > UINT32_MAX || (((at & ((UINT64_C(1) << cut) - 1)) + len - 1) >> cut) + 1 >
						CACHE_RUN_MEMO_PIECES)
			return false;
		rec.n = 0;
		row_walk(c, r, r->addr, chunk_shift, owned, &rec);
		for (unsigned p = 0; p < rec.n; p++) {
			memo->off[p] = (uint32_t)rec.off[p];
			memo->bytes[p] = rec.len[p];
		}
		memo->at = at;
		memo->len = len;
		memo->shifts = shifts;
		memo->n = rec.n;
	}
	for (unsigned p = 0; p < memo->n; p++)
		piece(c, r, r->addr + memo->off[p], memo->bytes[p]);
	return true;
}

void
cache_access_run(struct cache *c, const struct cache_run *run, unsigned chunk_shift, uint64_t mask,
		 cache_classes owned, struct cache_run_memo *memo)
{
	struct cache_run one;
	const bool as_one = run_as_one_row(run, chunk_shift, mask, &one);
	const struct cache_run *r = as_one ? &one : run;
	const uint64_t chunk = UINT64_C(1) << chunk_shift, len = (uint64_t)r->n * r->elem;
	const uint64_t k0 = r->addr >> chunk_shift, s = r->stride >> chunk_shift;
	uint64_t w, period, q[CACHE_CLASSES_MAX];
	unsigned nq = 0;

	if (as_one && memo && long_row(c, r, chunk_shift, owned, memo))
		return;
	if (r->stride & (chunk - 1)) {
		for (uint64_t row = 0; row < r->rows; row++)
			row_walk(c, r, r->addr + row * r->stride, chunk_shift, owned, NULL);
		return;
	}
	/* Row i's first chunk is k0 + i s, so its classes repeat every `period` rows. */
	period = !mask ? 1
		       : (mask + 1) >> (s & mask ? (unsigned)__builtin_ctzll(s & mask)
						 : log2_u64(mask + 1));
	if (run_by_period(c, r, chunk_shift, mask, owned, period))
		return;
	/* Rows of several pieces, none repeating or too many to keep: where they are narrower
	 * than the round of classes most hold none of ours, so visit only those that do. */
	w = (((r->addr & (chunk - 1)) + len - 1) >> chunk_shift) + 1;
	if (!mask || w > mask) {
		for (uint64_t row = 0; row < r->rows; row++)
			row_walk(c, r, r->addr + row * r->stride, chunk_shift, owned, NULL);
		return;
	}
	for (uint64_t i = 0; i < period && i < r->rows; i++)
		if (rotr128(owned, (unsigned)((k0 + i * s) & (CACHE_CLASSES_MAX - 1))) & spanned(w))
			q[nq++] = i;
	if (!nq)
		return;
	for (uint64_t base = 0; base < r->rows; base += period)
		for (unsigned j = 0; j < nq && base + q[j] < r->rows; j++)
			row_walk(c, r, r->addr + (base + q[j]) * r->stride, chunk_shift, owned,
				 NULL);
}
