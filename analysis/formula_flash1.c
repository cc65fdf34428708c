/*
 * flash1, line by line. After init (O, m and l of every head stored row by row: O row i, then
 * m[i], then l[i]), each head runs its key blocks in order: K block jb, V block jb, then a step
 * for each query block ib still active (causal: from fa(jb) = jb B_c / B_r on): load Q, O, m
 * and l of block ib, fold the key block in (tiles), store O, m and l back. A(jb) = the rows of
 * the active blocks, [fa(jb) B_r, N).
 *
 * Between a Q, O, m or l line's touches at key blocks jb - 1 and jb come every other line of
 * A(jb) of those four arrays, and K and V block jb (base - 1 below); a line two blocks share
 * misses the other arrays' lines of one block (f1_edge()). The first load of O, m and l after
 * init sees every O, m and l line and the earlier heads' data; K and V are read once per head,
 * their block edges twice where a step of A(jb - 1) fills the cache, and again by each further
 * head of a group after the whole of the previous head.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "base/util.h"

static uint64_t
f1_first(const struct flash_geometry *f, uint64_t jb)
{
	return f->c->causal ? jb * f->Bc / f->Br : 0;
}

/* Q, O, m and l lines of head hh rows [r0, r1): Q and O share a geometry, m and l too. */
static double
f1_qoml(const struct flash_geometry *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return 2 * flash_qo_lines(f, hh, r0, r1) + 2 * flash_lse_lines(f, hh, r0, r1);
}

/* The same from row ra of head ha to row rb of head hb (contiguous in all four arrays). */
static double
f1_qoml_span(const struct flash_geometry *f, uint64_t ha, uint64_t ra, uint64_t hb, uint64_t rb)
{
	return 2 * span(flash_qo_byte(f, ha, ra), flash_qo_byte(f, hb, rb), f->L) +
	       2 * span(flash_lse_byte(f, ha, ra), flash_lse_byte(f, hb, rb), f->L);
}

static double
f1_kvb(const struct flash_geometry *f, uint64_t kk, uint64_t jb)
{
	uint64_t e = (jb + 1) * f->Bc < f->N ? (jb + 1) * f->Bc : f->N;

	return flash_kv_lines(f, kk, jb * f->Bc, e);
}

enum { F1_Q, F1_O, F1_M, F1_L };

/* Lines of array a (F1_*) of block ib of head hh. */
static double
f1_blk(const struct flash_geometry *f, int a, uint64_t hh, uint64_t ib)
{
	return a <= F1_O ? flash_qo_lines(f, hh, flash_first_row(f, ib), flash_end_row(f, ib))
			 : flash_lse_lines(f, hh, flash_first_row(f, ib), flash_end_row(f, ib));
}

/* Lines of array x (F1_*) of head hh in rows [ra, N) but block b (-1: none). */
static double
f1_rows_but(const struct flash_geometry *f, int x, uint64_t hh, uint64_t ra, int64_t b)
{
	uint64_t (*at)(const struct flash_geometry *, uint64_t, uint64_t) =
		x <= F1_O ? flash_qo_byte : flash_lse_byte;

	if (b < 0)
		return span(at(f, hh, ra), at(f, hh, f->N), f->L);
	return span2(at(f, hh, ra), at(f, hh, flash_first_row(f, (uint64_t)b)),
		     at(f, hh, flash_end_row(f, (uint64_t)b)), at(f, hh, f->N), f->L);
}

/* The Q, O, m and l lines between a key block's touch of a line of array a that blocks ib - 1
 * and ib share and the next key block's: every line of A but the line itself and, of the
 * other arrays, the block the step order leaves out (see the header). */
static double
f1_edge_window(const struct flash_geometry *f, int a, uint64_t hh, uint64_t ib, uint64_t ra)
{
	/* missing[a][x]: which block of array x the window of an edge of array a lacks:
	 * 0 none, 1 block ib - 1, 2 block ib */
	static const int missing[4][4] = {
		{ 0, 1, 1, 1 }, /* Q */
		{ 2, 0, 1, 1 }, /* O */
		{ 2, 2, 0, 1 }, /* m */
		{ 2, 2, 2, 0 }, /* l */
	};
	double d = 0;

	for (int x = F1_Q; x <= F1_L; x++) {
		int m = missing[a][x];

		d += f1_rows_but(f, x, hh, ra, m == 0 ? -1 : (int64_t)(m == 1 ? ib - 1 : ib)) -
		     (x == a ? 1 : 0);
	}
	return d;
}

/* Lines a step touches of array a between two touches of a line blocks ib - 1 and ib share,
 * at one key block (the step of ib - 1 ends it, the step of ib starts it again). */
static double
f1_step_edge(const struct flash_geometry *f, int a, uint64_t hh, uint64_t ib)
{
	switch (a) {
	case F1_Q:
		return f1_blk(f, F1_O, hh, ib - 1) + 2 * f1_blk(f, F1_M, hh, ib - 1);
	case F1_O:
		return 2 * f1_blk(f, F1_M, hh, ib - 1) + f1_blk(f, F1_Q, hh, ib);
	case F1_M:
		return f1_blk(f, F1_M, hh, ib - 1) + f1_blk(f, F1_Q, hh, ib) +
		       f1_blk(f, F1_O, hh, ib);
	default:
		return f1_blk(f, F1_Q, hh, ib) + f1_blk(f, F1_O, hh, ib) + f1_blk(f, F1_M, hh, ib);
	}
}

/* f1_rows_at() line by line, for blocks of under two lines, where a line can hold rows of
 * many blocks b1 .. b2: between its last touch at key block jb - 1 (in step b2) and its first
 * at jb (step b1) come every other line of its array in A, and of each other array the rows of
 * A but blocks b1 .. b2 (block b1 too where that array is loaded after this one, block b2 too
 * where it is stored before this one's store, or is Q). */
static double
f1_rows_at_by_line(const struct flash_geometry *f, int a, uint64_t hh, uint64_t jb, uint64_t kk)
{
	uint64_t (*at)(const struct flash_geometry *, uint64_t, uint64_t) =
		a <= F1_O ? flash_qo_byte : flash_lse_byte;
	uint64_t rowb = a <= F1_O ? f->RB : 4, fa = f1_first(f, jb), ra = fa * f->Br;
	uint64_t first = at(f, hh, ra) / f->L, last = (at(f, hh, f->N) - 1) / f->L;
	uint64_t base = at(f, hh, 0);
	double own = span(at(f, hh, ra), at(f, hh, f->N), f->L) - 1;
	double kv = 2 * f1_kvb(f, kk, jb) + f->tl, misses = 0;

	for (uint64_t ln = first; ln <= last; ln++) {
		uint64_t lo_b = ln * f->L > at(f, hh, ra) ? ln * f->L : at(f, hh, ra);
		uint64_t hi_b =
			(ln + 1) * f->L < at(f, hh, f->N) ? (ln + 1) * f->L : at(f, hh, f->N);
		uint64_t b1 = (lo_b - base) / rowb / f->Br, b2 = (hi_b - 1 - base) / rowb / f->Br;
		double d = own + kv;

		for (int x = F1_Q; x <= F1_L; x++) {
			uint64_t (*xat)(const struct flash_geometry *, uint64_t, uint64_t) =
				x <= F1_O ? flash_qo_byte : flash_lse_byte;
			/* loads go Q, O, m, l; stores O, m, l after all loads */
			bool before = x < a, after = a == F1_Q || (x > a && x != F1_Q);
			uint64_t x0 = before ? flash_end_row(f, b1) : flash_first_row(f, b1);
			uint64_t x1 = after ? flash_first_row(f, b2) : flash_end_row(f, b2);

			if (x == a)
				continue;
			if (x0 >= x1)
				d += span(xat(f, hh, ra), xat(f, hh, f->N), f->L);
			else
				d += span2(xat(f, hh, ra), xat(f, hh, x0), xat(f, hh, x1),
					   xat(f, hh, f->N), f->L);
		}
		if (d >= f->C)
			misses += 1;
	}
	return misses;
}

/* Misses of array a's lines of head hh at key block jb >= 1, last touched at jb - 1: the lines
 * of A(jb); an edge between two active blocks misses a block of the others (f1_edge_less()). */
static double
f1_rows_at(const struct flash_geometry *f, int a, uint64_t hh, uint64_t jb, uint64_t kk)
{
	uint64_t fa = f1_first(f, jb), ra = fa * f->Br;
	double base = f1_qoml(f, hh, ra, f->N) + 2 * f1_kvb(f, kk, jb) + f->tl;
	double misses =
		a <= F1_O ? flash_qo_lines(f, hh, ra, f->N) : flash_lse_lines(f, hh, ra, f->N);
	/* a window lacks at most the rows of the blocks one line holds, of each array */
	uint64_t rows = f->L / (f->RB < 4 ? f->RB : 4) + 1 + 2 * f->Br;
	double most_less =
		4 * (double)(rows * f->RB / f->L + 2) + 4 * (double)(rows * 4 / f->L + 2);

	if (base - 1 < f->C)
		return 0; /* no interior line misses; an edge misses even less */
	if (base - 1 - most_less >= f->C)
		return misses;
	if (f->Br * (a <= F1_O ? f->RB : 4) < 2 * f->L)
		return f1_rows_at_by_line(f, a, hh, jb, kk);
	for (uint64_t ib = fa + 1; ib < f->Tr; ib++) {
		uint64_t at = a <= F1_O ? flash_qo_byte(f, hh, flash_first_row(f, ib))
					: flash_lse_byte(f, hh, flash_first_row(f, ib));

		if (shares_line(at, f->L) &&
		    f1_edge_window(f, a, hh, ib, ra) + 2 * f1_kvb(f, kk, jb) + f->tl < f->C)
			misses -= 1;
	}
	return misses;
}

/* Within key block jb, a line two active blocks share is touched by both steps: a second miss
 * where the step between fills the cache (caches of about a block). */
static double
f1_step_edges(const struct flash_geometry *f, int a, uint64_t hh, uint64_t jb)
{
	double misses = 0, most = 2 * (double)(f->Br * f->RB / f->L + 2) +
				  2 * (double)(f->Br * 4 / f->L + 2) + f->tl;

	if (most < f->C)
		return 0;
	for (uint64_t ib = f1_first(f, jb) + 1; ib < f->Tr; ib++) {
		uint64_t at = a <= F1_O ? flash_qo_byte(f, hh, flash_first_row(f, ib))
					: flash_lse_byte(f, hh, flash_first_row(f, ib));

		if (shares_line(at, f->L) && f1_step_edge(f, a, hh, ib) + f->tl >= f->C)
			misses += 1;
	}
	return misses;
}

/* Re-reads by head hh of kv head kk's lines (head hh - 1 read them last), line by line, for
 * key blocks of under two lines: a K line holding rows of blocks b1 .. b2 sees every other K
 * line, V but blocks b1 .. b2 - 1, head hh - 1's steps from block b2 on and head hh's steps
 * before block b1 (a V line: K but blocks b1 + 1 .. b2). */
static void
f1_kv_rereads_by_line(const struct flash_geometry *f, uint64_t kk, uint64_t hh, double all,
		      double *k, double *v)
{
	uint64_t base = flash_qo_byte(f, kk, 0), end = flash_qo_byte(f, kk, f->N);

	for (uint64_t ln = base / f->L; ln <= (end - 1) / f->L; ln++) {
		uint64_t lo = ln * f->L > base ? ln * f->L : base;
		uint64_t hi = (ln + 1) * f->L < end ? (ln + 1) * f->L : end;
		uint64_t b1 = (lo - base) / f->RB / f->Bc, b2 = (hi - 1 - base) / f->RB / f->Bc;
		double steps = f1_qoml_span(f, hh - 1, f1_first(f, b2) * f->Br,
					    b1 > 0 ? hh : hh - 1, f->N) +
			       f->tl;
		uint64_t k0 = b1 * f->Bc,
			 k1 = b2 * f->Bc; /* V blocks b1 .. b2 - 1: rows [k0, k1) */
		uint64_t v0 = (b1 + 1) * f->Bc,
			 v1 = (b2 + 1) * f->Bc < f->N ? (b2 + 1) * f->Bc : f->N;

		if (all - 1 +
			    (k0 < k1 ? span2(base, flash_qo_byte(f, kk, k0),
					     flash_qo_byte(f, kk, k1), end, f->L)
				     : all) +
			    steps >=
		    f->C)
			*k += 1;
		if (all - 1 +
			    (v0 < v1 ? span2(base, flash_qo_byte(f, kk, v0),
					     flash_qo_byte(f, kk, v1), end, f->L)
				     : all) +
			    steps >=
		    f->C)
			*v += 1;
	}
}

/* K and V reads of kv head kk: once per head of its group (each reads every key block in
 * order), an edge two blocks share a second time where the step of A(jb - 1) between (with V's
 * block, or K's) fills the cache; a further head re-reads the lines whose window (the rest of
 * the previous head, this head up to the block) fills it. */
static void
f1_kv_head(const struct flash_geometry *f, uint64_t kk, double *k_reads, double *v_reads)
{
	const uint64_t Hkv = f->c->kv_heads, g = f->c->heads / Hkv;
	const uint64_t hh0 = kk / Hkv * f->c->heads + kk % Hkv * g;
	const uint64_t Tc = (f->N + f->Bc - 1) / f->Bc;
	double all = flash_kv_lines(f, kk, 0, f->N), k = all, v = all;

	/* the first line, where the previous kv head's rows end in it */
	if (kk > 0 && shares_line(flash_qo_byte(f, kk, 0), f->L)) {
		double steps = f1_qoml(f, hh0 - 1, f1_first(f, Tc - 1) * f->Br, f->N) + f->tl;

		if (f1_kvb(f, kk - 1, Tc - 1) + steps < f->C)
			k -= 1;
		if (f1_kvb(f, kk, 0) + steps < f->C)
			v -= 1;
	}
	for (uint64_t j = 0; j < g; j++) {
		uint64_t hh = hh0 + j;

		for (uint64_t jb = 1; jb < Tc; jb++) {
			if (!shares_line(flash_qo_byte(f, kk, jb * f->Bc), f->L))
				continue;
			{
				double steps =
					f1_qoml(f, hh, f1_first(f, jb - 1) * f->Br, f->N) + f->tl;

				if (f1_kvb(f, kk, jb - 1) + steps >= f->C)
					k += 1;
				if (f1_kvb(f, kk, jb) + steps >= f->C)
					v += 1;
			}
		}
		if (j == 0)
			continue;
		/* re-reads by head hh of the lines head hh - 1 read */
		if (f->Bc * f->RB < 2 * f->L) {
			f1_kv_rereads_by_line(f, kk, hh, all, &k, &v);
			continue;
		}
		for (uint64_t jb = 0; jb < Tc; jb++) {
			uint64_t s = flash_qo_byte(f, kk, jb * f->Bc);
			double rest = f1_qoml_span(f, hh - 1, f1_first(f, jb) * f->Br,
						   jb > 0 ? hh : hh - 1, jb > 0 ? f->N : f->N) +
				      f->tl;
			double d = 2 * all - 1 + rest;
			/* block jb's own lines; the first is the previous block's where they share
			 * it */
			double own =
				f1_kvb(f, kk, jb) - (jb > 0 && shares_line(s, f->L) ? 1 : 0) -
				(jb + 1 < Tc && shares_line(flash_qo_byte(f, kk, (jb + 1) * f->Bc),
							    f->L)
					 ? 1
					 : 0);

			if (d < f->C)
				continue;
			k += own;
			v += own;
			/* a shared first line, touched last at block jb (head hh - 1) and first at
			 * jb - 1 (head hh): its window lacks the other array's block jb - 1 (or jb)
			 * and, at jb = 1, this head's steps */
			if (jb > 0 && shares_line(s, f->L)) {
				double edge = 2 * all - 1 +
					      f1_qoml_span(f, hh - 1, f1_first(f, jb) * f->Br,
							   jb > 1 ? hh : hh - 1, f->N) +
					      f->tl;

				uint64_t base = flash_qo_byte(f, kk, 0),
					 end = flash_qo_byte(f, kk, f->N);
				uint64_t r1 = (jb + 1) * f->Bc < f->N ? (jb + 1) * f->Bc : f->N;

				if (edge - all +
					    span2(base, flash_qo_byte(f, kk, (jb - 1) * f->Bc), s,
						  end, f->L) >=
				    f->C)
					k += 1;
				if (edge - all +
					    span2(base, s, flash_qo_byte(f, kk, r1), end, f->L) >=
				    f->C)
					v += 1;
			}
		}
	}
	*k_reads += k;
	*v_reads += v;
}

/* f1_first_loads() line by line: a line of O, m or l holding rows rlo .. rhi of head hh, stored
 * by init at row rhi and loaded first by step b = block(rlo) of key block 0. Between come: of
 * its own array every other line; of the arrays init stores after it (at row rhi and on) the
 * lines of rows from rhi; of the arrays the step loads before it the rows up to block b's end,
 * of those after it up to block b's start; Q up to block b's end; K and V read so far. The
 * line this head shares with the previous one is counted here as a miss (the caller decides
 * it). */
static double
f1_first_loads_by_line(const struct flash_geometry *f, int a, uint64_t hh, uint64_t kk)
{
	uint64_t (*at)(const struct flash_geometry *, uint64_t, uint64_t) =
		a <= F1_O ? flash_qo_byte : flash_lse_byte;
	uint64_t rowb = a <= F1_O ? f->RB : 4;
	uint64_t kv_end = hh > 0 ? (hh - 1) / f->c->heads * f->c->kv_heads +
					   (hh - 1) % f->c->heads / (f->c->heads / f->c->kv_heads) +
					   1
				 : 0;
	uint64_t kv_to = flash_qo_byte(f, kk, f->Bc);
	double kv =
		2 * span(0,
			 kv_to > flash_qo_byte(f, kv_end, 0) ? kv_to : flash_qo_byte(f, kv_end, 0),
			 f->L);
	uint64_t first = at(f, hh, 0) / f->L, last = (at(f, hh, f->N) - 1) / f->L;
	double misses = shares_line(at(f, hh, 0), f->L) ? 1 : 0;

	for (uint64_t ln = first + (shares_line(at(f, hh, 0), f->L) ? 1 : 0); ln <= last; ln++) {
		/* rows as global indices (head * N + row): a line can end in the next head */
		uint64_t rlo = ln * f->L / rowb - hh * f->N, rhi = ((ln + 1) * f->L - 1) / rowb;
		uint64_t b = rlo / f->Br;

		if (rhi >= f->BH * f->N)
			rhi = f->BH * f->N - 1;
		double d = span(0, flash_qo_byte(f, hh, flash_end_row(f, b)), f->L) + kv +
			   f->tl; /* Q */

		for (int x = F1_O; x <= F1_L; x++) {
			uint64_t (*xat)(const struct flash_geometry *, uint64_t, uint64_t) =
				x <= F1_O ? flash_qo_byte : flash_lse_byte;
			uint64_t all = xat(f, f->BH, 0);
			/* init stores O row i, m[i], l[i]: after this line, rows from rhi (x after
			 * a) or past rhi; the step loads x before a up to block b's end */
			uint64_t from = x > a ? rhi : rhi + 1;
			uint64_t upto =
				hh * f->N + (x < a ? flash_end_row(f, b) : flash_first_row(f, b));

			if (x == a)
				d += span(0, all, f->L) - 1;
			else if (upto >= from)
				d += span(0, all, f->L);
			else
				d += span2(0, xat(f, 0, upto), xat(f, 0, from), all, f->L);
		}
		if (d >= f->C)
			misses += 1;
	}
	return misses;
}

/* Array a's lines of head hh that the first step of each block (key block 0) misses, last
 * touched by init (O, m, l) or new (Q). Between init's store of a line and its first load: the
 * rest of init (every O, m and l line after it), the earlier heads (all their lines), this
 * head's blocks up to it. The line a head shares with the previous head was last touched by
 * that head's last step instead. *init_hits: the others, the lines init stored that the first
 * load finds still cached. */
static double
f1_first_loads(const struct flash_geometry *f, int a, uint64_t hh, uint64_t kk, double *init_hits)
{
	double lines = a <= F1_O ? flash_qo_lines(f, hh, 0, f->N) : flash_lse_lines(f, hh, 0, f->N);
	uint64_t at = a <= F1_O ? flash_qo_byte(f, hh, 0) : flash_lse_byte(f, hh, 0);
	bool first_block = true; /* block 0's lines are among those counted */
	double shared = hh > 0 && shares_line(at, f->L) ? 1 : 0;

	*init_hits = 0;

	if (a != F1_Q) {
		double O = span(0, flash_qo_byte(f, f->BH, 0), f->L),
		       ml = span(0, flash_lse_byte(f, f->BH, 0), f->L);
		/* K and V of the earlier heads' kv heads, and this head's block 0 */
		uint64_t kv_end =
			hh > 0 ? (hh - 1) / f->c->heads * f->c->kv_heads +
					 (hh - 1) % f->c->heads / (f->c->heads / f->c->kv_heads) + 1
			       : 0;
		double kv = 2 * span(0, flash_qo_byte(f, kv_end, 0), f->L) +
			    (kk >= kv_end ? 2 * f1_kvb(f, kk, 0) : 0);
		double earlier_q = span(0, flash_qo_byte(f, hh, 0), f->L);
		double hi = O + 2 * ml + earlier_q + flash_qo_lines(f, hh, 0, f->N) + kv + f->tl;
		/* a line of array a holds up to L / row + 1 rows, of this head or the next ones
		 * (init stored it at the last); the window lacks each other array's rows from
		 * block b's start to that last row */
		uint64_t rows = f->L / (a <= F1_O ? f->RB : 4) + 1 + f->Br;
		double lo = O + 2 * ml - 1 + earlier_q + kv + f->tl;

		for (int x = F1_O; x <= F1_L; x++)
			if (x != a)
				lo -= (double)(rows * (x <= F1_O ? f->RB : 4) / f->L + 2);

		if (hi < f->C) {
			*init_hits = lines - shared;
			return 0;
		} else if (lo < f->C) {
			/* near the cache size: decide line by line (the shared line a miss) */
			*init_hits = lines - f1_first_loads_by_line(f, a, hh, kk);
			lines -= *init_hits;
			first_block = true;
		}
		if (lines == 0)
			return 0;
	}
	/* the line shared with the previous head: last touched by its last step (where block 0
	 * misses at all) */
	if (hh > 0 && first_block && shares_line(at, f->L)) {
		uint64_t last = f->Tr - 1;
		double kv = 2 * f1_kvb(f, kk, 0) + f->tl;
		double d = a == F1_Q ? f1_blk(f, F1_O, hh - 1, last) +
					       2 * f1_blk(f, F1_M, hh - 1, last)
			   : a == F1_O ? 2 * f1_blk(f, F1_M, hh - 1, last) + f1_blk(f, F1_Q, hh, 0)
			   : a == F1_M ? f1_blk(f, F1_M, hh - 1, last) + f1_blk(f, F1_Q, hh, 0) +
						 f1_blk(f, F1_O, hh, 0)
				       : f1_blk(f, F1_Q, hh, 0) + f1_blk(f, F1_O, hh, 0) +
						 f1_blk(f, F1_M, hh, 0);

		if (d + kv < f->C)
			lines -= 1;
	}
	return lines;
}

/* The kv head head hh reads. */
static uint64_t
f1_kv_of(const struct flash_geometry *f, uint64_t hh)
{
	return hh / f->c->heads * f->c->kv_heads +
	       hh % f->c->heads / (f->c->heads / f->c->kv_heads);
}

/* O, m and l lines dirty and cached at the end (every one's last touch is a store): among the
 * last C distinct lines, walking back through the last steps. The K and V lines more recent
 * than a step of key block jb are those of the later blocks and heads (all of its kv head's
 * where a later head of the group reads them again). */
static double
f1_resident(const struct flash_geometry *f, int a)
{
	const uint64_t Tc = (f->N + f->Bc - 1) / f->Bc;
	double used = f->tl, res = 0;
	uint64_t kv_hi = 0;

	for (uint64_t hh = f->BH; hh-- > 0;) {
		uint64_t kk = f1_kv_of(f, hh);
		bool again = hh + 1 < f->BH && f1_kv_of(f, hh + 1) == kk;
		uint64_t lo = f->Tr; /* blocks [lo, Tr) already counted for this head */

		if (hh + 1 == f->BH)
			kv_hi = flash_qo_byte(f, kk, f->N);
		for (uint64_t jb = Tc; jb-- > 0;) {
			uint64_t fa = f1_first(f, jb);
			uint64_t kv_lo =
				again ? flash_qo_byte(f, kk, 0)
				      : flash_qo_byte(f, kk, jb + 1 < Tc ? (jb + 1) * f->Bc : f->N);
			double kv = kv_lo < kv_hi ? 2 * span(kv_lo, kv_hi, f->L) : 0;

			if (used + kv >= f->C)
				return res;
			for (uint64_t ib = lo; ib-- > fa;) {
				/* a step stores O, then m, then l: l most recent */
				static const int order[] = { F1_L, F1_M, F1_O, F1_Q };

				for (int k = 0; k < 4; k++) {
					int x = order[k];
					uint64_t end =
						x <= F1_O
							? flash_qo_byte(f, hh, flash_end_row(f, ib))
							: flash_lse_byte(f, hh,
									 flash_end_row(f, ib));
					double n = f1_blk(f, x, hh, ib) -
						   ((ib + 1 < f->Tr || hh + 1 < f->BH) &&
								    shares_line(end, f->L)
							    ? 1
							    : 0);
					double room = f->C - used - kv;

					if (room <= 0)
						return res;
					if (x == a)
						res += n < room ? n : room;
					used += n;
				}
			}
			if (fa < lo)
				lo = fa;
		}
	}
	return res;
}

/* A step loads its O, m and l block, then stores it: where the block and the others' blocks
 * between fill the cache, every store misses again (a read for ownership; the load missed
 * too, so no extra write). Adds those lines to store_rfo[F1_O..F1_L]. */
static void
f1_store_misses(const struct flash_geometry *f, uint64_t Tc, double store_rfo[4])
{
	for (uint64_t hh = 0; hh < f->BH; hh++)
		for (uint64_t jb = 0; jb < Tc; jb++)
			for (uint64_t ib = f1_first(f, jb); ib < f->Tr; ib++) {
				double o = f1_blk(f, F1_O, hh, ib), m = f1_blk(f, F1_M, hh, ib);

				/* the blocks are alike: none further misses either */
				if (o - 1 + 2 * m + f->tl < f->C && m - 1 + m + o + f->tl < f->C)
					break;
				if (o - 1 + 2 * m + f->tl >= f->C)
					store_rfo[F1_O] += o;
				if (m - 1 + m + o + f->tl >= f->C) {
					store_rfo[F1_M] += m;
					store_rfo[F1_L] += m;
				}
			}
}

/* Write-validate: a store that misses takes the line with only its own bytes valid, so the
 * next step's load of a line blocks ib - 1 and ib share reads it even where it hits (where
 * it misses, f1_step_edges() counted it): a read, no write. Adds those lines to
 * fetch[F1_O..F1_L].
 * The step (hh, ib) does not depend on the key block: count it once, times the key blocks jb
 * whose first query block is before ib (f1_first() grows with jb). Blocks whose gap cannot
 * reach the cache have none. */
static void
f1_validated_reads(const struct flash_geometry *f, uint64_t Tc, double fetch[4])
{
	if (2 * (double)(f->Br * f->RB / f->L + 2) + 2 * (double)(f->Br * 4 / f->L + 2) + f->tl <
	    f->C)
		return;
	for (uint64_t hh = 0; hh < f->BH; hh++) {
		uint64_t jbs = 0; /* key blocks with f1_first(jb) < ib */

		for (uint64_t ib = 1; ib < f->Tr; ib++) {
			double o = f1_blk(f, F1_O, hh, ib - 1), m = f1_blk(f, F1_M, hh, ib - 1);

			while (jbs < Tc && f1_first(f, jbs) < ib)
				jbs++;
			for (int a = F1_O; a <= F1_L; a++) {
				uint64_t at =
					a == F1_O ? flash_qo_byte(f, hh, flash_first_row(f, ib))
						  : flash_lse_byte(f, hh, flash_first_row(f, ib));
				double gap = a == F1_O ? o - 1 + 2 * m : m - 1 + m + o;

				if (shares_line(at, f->L) && gap + f->tl >= f->C &&
				    f1_step_edge(f, a, hh, ib) + f->tl < f->C)
					fetch[a] += (double)jbs;
			}
		}
	}
}

void
formula_flash1(struct formula_result *r, const struct attn_config *c,
	       const struct formula_geometry *q)
{
	double tile_lines[] = { q->tq, q->tk, q->tv, q->ts, q->to, q->tm, q->tm };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "V_tile", "S_tile",
						  "O_tile", "m_tile", "l_tile" };
	static const char *const names[] = { "Q", "O", "m", "l" };
	struct flash_geometry f = flash_geometry_of(c, q);
	uint64_t Tc;
	double loads[4] = { 0, 0, 0, 0 }, store_rfo[4] = { 0, 0, 0, 0 }, fetch[4] = { 0, 0, 0, 0 },
	       k = 0, v = 0, init_o, init_ml;

	Tc = attn_blocks(c->N, c->Bc);
	/* init: every O line, and every m and l line, stored once (each m and l value apart
	 * where an O row between fills the cache) */
	init_o = span(0, flash_qo_byte(&f, f.BH, 0), f.L);
	init_ml = (double)(f.RB / f.L) + 1 + f.tl >= f.C
			  ? (double)(f.BH * f.N)
			  : span(0, flash_lse_byte(&f, f.BH, 0), f.L);
	for (uint64_t hh = 0; hh < f.BH; hh++) {
		uint64_t kk =
			hh / c->heads * c->kv_heads + hh % c->heads / (c->heads / c->kv_heads);

		for (int a = F1_Q; a <= F1_L; a++) {
			double init_hits;

			loads[a] += f1_first_loads(&f, a, hh, kk, &init_hits);
			/* Write-validate granules wider than the array's stores (line / 64 bytes
			 * over 64-byte lines: fp16 O from 256-byte lines, fp32 from 512): init's
			 * stores validated nothing, so the first load reads even a cached line. */
			if (!q->rfo && q->L > 64 && q->L / 64 > (a == F1_O ? q->s : 4))
				fetch[a] += init_hits;
			for (uint64_t jb = 0; jb < Tc; jb++) {
				if (jb > 0)
					loads[a] += f1_rows_at(&f, a, hh, jb, kk);
				loads[a] += f1_step_edges(&f, a, hh, jb);
			}
		}
	}
	for (uint64_t kk = 0; kk < c->batch * c->kv_heads; kk++)
		f1_kv_head(&f, kk, &k, &v);
	formula_array_named(r, "Q")->read_bytes += loads[F1_Q] * q->L;
	if (q->rfo)
		f1_store_misses(&f, Tc, store_rfo);
	else
		f1_validated_reads(&f, Tc, fetch);
	for (int a = F1_O; a <= F1_L; a++) {
		struct formula_array *x = formula_array_named(r, names[a]);
		double init = a == F1_O ? init_o : init_ml, rfo = q->rfo ? init + store_rfo[a] : 0;
		double res = f1_resident(&f, a);

		/* a load that misses finds the line evicted dirty: written, then read */
		x->read_bytes += (loads[a] + fetch[a] + rfo) * q->L;
		x->rfo_bytes += rfo * q->L;
		x->write_bytes += (init + loads[a] - (q->flush ? 0 : res)) * q->L;
		x->flush_bytes += (q->flush ? res : 0) * q->L;
	}
	formula_array_named(r, "K")->read_bytes += k * q->L;
	formula_array_named(r, "V")->read_bytes += v * q->L;
	/* a step: the key and value blocks against a query block, its O rows, m and l */
	formula_tiles(r, q, tile_names, tile_lines, 7,
		      f.tl + 2 * lines_at_most(q->kb) + 2 * lines_at_most(q->qb) +
			      2 * lines_at_most(q->Br * 4 / q->L));
}
