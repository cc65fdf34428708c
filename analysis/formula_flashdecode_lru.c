/*
 * flashdecode at S > 1 on a fully associative LRU cache of any size, line by line, where each
 * head's query rows are one block (N <= B_r in attn_decode_view(): grouped-query decode packed
 * or not), the tiles in scratch, and every row is whole lines (d s a multiple of the line; K
 * and V paged or not). Then no two rows share a line: only the 4-byte logsumexp values and
 * block-table entries do (paged: each key block first reads its pages' entries).
 *
 * The run: per head hh and split s (a unit), Q_hh (its N rows), each key block's K then V
 * rows, then per row i the partial O row rho = (hh S + s) N + i and lse_accum[rho] (an empty
 * split only these). Then the combine, per iteration t = hh N + i: lse_accum of (hh, s, i) for
 * every s (combine load k = t S + s), lse[t], the S partial O rows, O[t].
 *
 * A line hits iff fewer than C other lines were touched since its last touch (its window,
 * counted below array by array: the arrays never share a line). K and V lines are read by a
 * kv head's first head, and again by each other of its group; Q's by each split of its head; every
 * other line is followed touch by touch, with its dirty state and, under write-validate, the values
 * stored since it came in.
 */

#include <stdint.h>

#include "analysis/formula_kernels.h"

struct decode_geometry {
	uint64_t L, BH, S, N, Nk, Bc, R, T, per; /* R: partial rows; T: combine iterations */
	uint64_t G;                              /* heads a kv head serves */
	uint64_t H, P, np;   /* heads a batch; paged: page tokens, pages a sequence (0 unpaged) */
	double C, q, m, kvt; /* lines: a Q (O, K, V) row, a partial O row, a kv head's K */
	bool rfo, flush;
};

/* Lines of byte ranges added in address order, a line two neighbours share counted once. */
struct line_count {
	double n;
	int64_t last;
};

static void
line_count_add(struct line_count *a, uint64_t lo, uint64_t hi, uint64_t L)
{
	int64_t first, end;

	if (hi <= lo)
		return;
	first = (int64_t)(lo / L);
	end = (int64_t)((hi - 1) / L);
	a->n += (double)(end - first + 1) - (first == a->last ? 1 : 0);
	a->last = end;
}

/* Key rows splits s on read, and those split s reads. */
static uint64_t
rows_from(const struct decode_geometry *f, uint64_t s)
{
	uint64_t a = s * f->per * f->Bc;

	return a < f->Nk ? f->Nk - a : 0;
}

static uint64_t
rows_of(const struct decode_geometry *f, uint64_t s)
{
	return rows_from(f, s) - rows_from(f, s + 1);
}

/* Lines of values [a, b) of a 4-byte array. */
static double
vals(const struct decode_geometry *f, uint64_t a, uint64_t b)
{
	return span(a * 4, b * 4, f->L);
}

/* Adds to a the lse_accum lines of the combine's loads [ka, kb), values below lim only. */
static void
la_loads(const struct decode_geometry *f, struct line_count *a, uint64_t ka, uint64_t kb,
	 uint64_t lim)
{
	const uint64_t NS = f->N * f->S;

	while (ka < kb) {
		uint64_t hh = ka / NS, base = hh * NS, lo = ka - base;
		uint64_t hi = kb - base < NS ? kb - base : NS;

		if (lo == 0 && hi == NS) {
			/* whole heads: the values of every one, one range */
			uint64_t end = kb / NS * NS, e = end < lim ? end : lim;

			if (base < e)
				line_count_add(a, base * 4, e * 4, f->L);
			ka = end;
			continue;
		}
		/* split s's values: rows i with i S + s in [lo, hi) */
		for (uint64_t s = 0; s < f->S; s++) {
			uint64_t i0 = lo > s ? (lo - s + f->S - 1) / f->S : 0;
			uint64_t i1 = hi > s ? (hi - s + f->S - 1) / f->S : 0;
			uint64_t v0 = base + s * f->N + i0, v1 = base + s * f->N + i1;

			v1 = v1 < lim ? v1 : lim;
			if (i0 < i1 && v0 < v1)
				line_count_add(a, v0 * 4, v1 * 4, f->L);
		}
		ka = base + hi;
	}
}

/* The combine's lse_accum lines in loads [ka, kb). */
static double
la_between(const struct decode_geometry *f, uint64_t ka, uint64_t kb)
{
	struct line_count a = { 0, -1 };

	la_loads(f, &a, ka, kb, UINT64_MAX);
	return a.n;
}

/* Paged: lines of block-table entries [e0, e1) (over batches); 0 unpaged. */
static double
bt(const struct decode_geometry *f, uint64_t e0, uint64_t e1)
{
	return f->P ? span(e0 * 4, e1 * 4, f->L) : 0;
}

/* Paged: the entries split s of batch b reads (its blocks' pages), and from split s on. */
static double
bt_split(const struct decode_geometry *f, uint64_t b, uint64_t s)
{
	uint64_t a = f->Nk - rows_from(f, s), e = a + rows_of(f, s);

	return e > a && f->P ? bt(f, b * f->np + a / f->P, b * f->np + (e - 1) / f->P + 1) : 0;
}

static uint64_t
bt_from(const struct decode_geometry *f, uint64_t b, uint64_t s)
{
	return rows_from(f, s) ? b * f->np + (f->Nk - rows_from(f, s)) / f->P : (b + 1) * f->np;
}

/* Paged: the block table's line ln, read by every head of the batches it holds entries of, by
 * each key block whose pages it names: again by the next block when the block's K and V (and
 * at a split's end, the unit's partial rows and values and the next Q_hh) fill the cache; by
 * the next head when its window does (the K and V from the last block that read it, the
 * entries after the line's, the next head's K and V before its first block that reads it and
 * the entries before the line's,
 * Q_hh if a later split reads keys, Q_hh+1, the partial rows and values of the units between).
 */
static double
bt_line(const struct decode_geometry *f, uint64_t ln)
{
	const uint64_t tc = (f->Nk + f->Bc - 1) / f->Bc, per = f->per;
	uint64_t x0 = ln * f->L / 4, x1 = x0 + f->L / 4, prev_tb = 0;
	double misses = 0;
	bool seen = false;

	for (uint64_t hh = 0; hh < f->BH; hh++) {
		uint64_t b = hh / f->H, lo = x0 > b * f->np ? x0 - b * f->np : 0;
		uint64_t hi = x1 < (b + 1) * f->np ? x1 - b * f->np : f->np;
		uint64_t ta, tb;

		if (x1 <= b * f->np || x0 >= (b + 1) * f->np) {
			if (seen)
				break;
			continue;
		}
		ta = lo * f->P / f->Bc;
		tb = ((hi - 1) * f->P + f->P - 1) / f->Bc;
		tb = tb < tc - 1 ? tb : tc - 1;
		if (!seen) {
			misses += 1;
		} else {
			uint64_t bp = (hh - 1) / f->H, sp = prev_tb / per, sa = ta / per;
			/* the entries after the line's in the earlier pass, before it in this */
			uint64_t after = x1 > bp * f->np ? x1 : bp * f->np;
			uint64_t before = x0 > b * f->np ? x0 : b * f->np;
			uint64_t r0 = ((hh - 1) * f->S + sp) * f->N, r1 = (hh * f->S + sa) * f->N;
			double w = 2 * f->q * (double)(f->Nk - prev_tb * f->Bc + ta * f->Bc) +
				   bt(f, after, (bp + 1) * f->np) + bt(f, b * f->np, before) +
				   (double)f->N * f->q * (rows_from(f, sp + 1) ? 2 : 1) +
				   f->m * (double)(r1 - r0) + vals(f, r0, r1);

			misses += w >= f->C;
		}
		for (uint64_t jb = ta; jb < tb; jb++) {
			uint64_t r = jb * f->Bc, e = r + f->Bc < f->Nk ? r + f->Bc : f->Nk;
			uint64_t s = jb / per, v0 = (hh * f->S + s) * f->N;
			double w = 2 * f->q * (double)(e - r);

			if ((jb + 1) % per == 0)
				w += (double)f->N * (f->m + f->q) + vals(f, v0, v0 + f->N);
			misses += w >= f->C;
		}
		seen = true;
		prev_tb = tb;
	}
	return misses;
}

/* Q, K and V lines after unit (hh, s): Q_hh again if a later split reads keys, and each later
 * head's; the K and V rows of kv head hh / G from split s + 1 on (all of them if a later head
 * of its group reads them again), and every later kv head's. */
static double
qkv_after(const struct decode_geometry *f, uint64_t hh, uint64_t s)
{
	double later = (double)(f->BH - 1 - hh), nq = (double)f->N * f->q;
	uint64_t own = hh % f->G + 1 < f->G ? f->Nk : rows_from(f, s + 1);

	/* paged: the entries of later splits of hh, every entry of a later head's batch */
	uint64_t b = hh / f->H, e0 = 0;

	if (f->P)
		e0 = hh % f->H + 1 < f->H ? b * f->np : bt_from(f, b, s + 1);
	return (rows_from(f, s + 1) ? nq : 0) + later * nq +
	       2 * f->q * ((double)own + (double)(f->BH / f->G - 1 - hh / f->G) * (double)f->Nk) +
	       bt(f, e0, f->BH / f->H * f->np);
}

/* K (or V) lines read: each once by the first head of its kv head's group; a later head hh
 * re-reads split s's when the window since the previous head read them fills the cache: every
 * other line of the kv head's K and V, Q_hh and (if a later split of hh - 1 reads keys)
 * Q_hh-1, and the partial rows and values of the S units between. */
static double
kv_reads(const struct decode_geometry *f)
{
	double n = (double)(f->BH / f->G) * f->kvt;

	for (uint64_t hh = 0; hh < f->BH; hh++) {
		if (hh % f->G == 0)
			continue;
		for (uint64_t s = 0; rows_of(f, s) > 0; s++) {
			uint64_t v0 = ((hh - 1) * f->S + s) * f->N;
			double w = 2 * f->kvt - 1 +
				   (rows_from(f, s + 1) ? 2 : 1) * (double)f->N * f->q +
				   bt(f, hh / f->H * f->np, (hh / f->H + 1) * f->np) +
				   (double)(f->S * f->N) * f->m + vals(f, v0, v0 + f->S * f->N);

			n += w >= f->C ? (double)rows_of(f, s) * f->q : 0;
		}
	}
	return n;
}

/* The lines the combine touches after iteration t's lse_accum load k (or, k = t S - 1, from
 * iteration t on) to the end. */
static double
comb_after(const struct decode_geometry *f, uint64_t k, uint64_t t)
{
	return la_between(f, k + 1, f->T * f->S) + vals(f, t, f->T) +
	       (double)(f->T - t) * ((double)f->S * f->m + f->q);
}

/* One line through its touches. */
struct line {
	bool in, dirty;
	uint64_t mask; /* write-validate: the values stored since it came in */
};

struct tally {
	double rd, rfo, wr, fl; /* lines read (for ownership), written (by the flush) */
};

static void
touch(const struct decode_geometry *f, struct line *x, struct tally *y, double window, bool store,
      uint64_t bits)
{
	if (x->in && window >= f->C) {
		y->wr += x->dirty; /* evicted */
		x->in = x->dirty = false;
	}
	if (!x->in) {
		x->in = true;
		x->mask = 0;
		if (!store || f->rfo) {
			y->rd += 1;
			y->rfo += store;
			x->mask = ~(uint64_t)0;
		}
	} else if (!store && (x->mask & bits) != bits) {
		y->rd += 1; /* write-validated values never stored: fetched now */
		x->mask = ~(uint64_t)0;
	}
	if (store) {
		x->dirty = true;
		x->mask |= bits;
	}
}

/* After its last touch (window: the lines to the end): a dirty line still cached is written by
 * the final flush, or never; one evicted, when it goes. */
static void
finish(const struct decode_geometry *f, const struct line *x, struct tally *y, double window)
{
	if (!x->dirty || (window < f->C && !f->flush))
		return;
	y->wr += 1;
	y->fl += window < f->C;
}

/* Adds n times one line's tally. */
static void
times(struct tally *y, const struct tally *one, double n)
{
	y->rd += n * one->rd;
	y->rfo += n * one->rfo;
	y->wr += n * one->wr;
	y->fl += n * one->fl;
}

/* O_accum: row rho's lines stored by its split, loaded by the combine (iteration t, load s):
 * between, the rest of the splits and the combine up to there; every other partial row but
 * those of head hh below rho that the combine reads later. */
static void
oa_rows(const struct decode_geometry *f, struct tally *y)
{
	for (uint64_t rho = 0; rho < f->R; rho++) {
		uint64_t u = rho / f->N, i = rho % f->N, hh = u / f->S, s = u % f->S;
		uint64_t t = hh * f->N + i, below = hh * f->S * f->N + s * i + i + s;
		struct line_count a = { 0, -1 };
		struct line x = { 0 };
		struct tally one = { 0 };
		double w1, w2;

		/* lse_accum: the combine's loads through iteration t below rho, the splits'
		 * stores from rho on */
		la_loads(f, &a, 0, (t + 1) * f->S, rho);
		line_count_add(&a, rho * 4, f->R * 4, f->L);
		w1 = f->m * (double)(f->R - 1 - rho + below) + f->m - 1 + a.n + vals(f, 0, t + 1) +
		     (double)t * f->q + qkv_after(f, hh, s);
		touch(f, &x, &one, 0, true, ~(uint64_t)0);
		touch(f, &x, &one, w1, false, ~(uint64_t)0);
		times(y, &one, f->m);
		/* to the end: this iteration's later rows and O row, the later iterations; and
		 * the row's own lines after line j */
		w2 = f->m * (double)(f->S - 1 - s) + f->q +
		     comb_after(f, (t + 1) * f->S - 1, t + 1);
		for (double j = 0; j < f->m; j++)
			finish(f, &x, y, w2 + f->m - 1 - j);
	}
}

/* lse_accum line ln: values [e0, e1), stored in order by the splits (a partial O row between
 * two, and a unit's Q, K and V where a unit starts), then loaded by the combine in its order. */
static void
la_line(const struct decode_geometry *f, uint64_t ln, struct tally *y)
{
	uint64_t e0 = ln * f->L / 4, e1 = e0 + f->L / 4 < f->R ? e0 + f->L / 4 : f->R;
	uint64_t k[64], n = e1 - e0, u = (e1 - 1) / f->N, kf;
	struct line x = { 0 };
	struct line_count a = { 0, -1 };
	double w, oa_rows_below = 0;

	for (uint64_t e = e0; e < e1; e++) {
		uint64_t s = e / f->N % f->S;

		w = f->m;
		if (e % f->N == 0 && rows_of(f, s))
			w += (double)f->N * f->q + 2 * (double)rows_of(f, s) * f->q +
			     bt_split(f, e / f->N / f->S / f->H, s);
		touch(f, &x, y, e == e0 ? 0 : w, true, (uint64_t)1 << (e - e0));
		/* the combine's load of e */
		k[e - e0] = (e / (f->S * f->N) * f->N + e % f->N) * f->S + e / f->N % f->S;
	}
	/* the combine's order: insertion sort of at most 64 */
	for (uint64_t a1 = 1; a1 < n; a1++)
		for (uint64_t b1 = a1; b1 > 0 && k[b1 - 1] > k[b1]; b1--) {
			uint64_t tmp = k[b1];

			k[b1] = k[b1 - 1];
			k[b1 - 1] = tmp;
		}
	/* From the last store to the first load: the splits after value e1 - 1 (the later
	 * partial rows and values, units' Q, K and V), the combine before load kf (its earlier
	 * iterations' partial rows below e1, values below e0, lse and O rows). */
	kf = k[0];
	{
		uint64_t tf = kf / f->S, hf = tf / f->N, i_f = tf % f->N, base = hf * f->S * f->N;

		oa_rows_below = (double)(hf * f->S * f->N);
		for (uint64_t s = 0; s < f->S; s++) {
			uint64_t r0 = base + s * f->N, lim = e1 > r0 ? e1 - r0 : 0;

			oa_rows_below += (double)(i_f < lim ? i_f : lim);
		}
		la_loads(f, &a, 0, kf, e0);
		line_count_add(&a, e1 * 4, f->R * 4, f->L);
		w = f->m * ((double)(f->R - e1) + oa_rows_below) + a.n +
		    qkv_after(f, u / f->S, u % f->S) + vals(f, 0, tf) + (double)tf * f->q;
	}
	for (uint64_t j = 0; j < n; j++) {
		uint64_t e, t1, t2;

		if (j > 0) {
			t1 = k[j - 1] / f->S;
			t2 = k[j] / f->S;
			w = la_between(f, k[j - 1] + 1, k[j]) + vals(f, t1, t2) +
			    (double)(t2 - t1) * ((double)f->S * f->m + f->q);
		}
		/* the value: load k = t S + s reads (hh, s, i), t = hh N + i */
		t1 = k[j] / f->S;
		e = (t1 / f->N * f->S + k[j] % f->S) * f->N + t1 % f->N;
		touch(f, &x, y, w, false, (uint64_t)1 << (e - e0));
	}
	finish(f, &x, y, comb_after(f, k[n - 1], k[n - 1] / f->S));
}

/* lse line ln: values [t0, t1) stored by iterations t0 .. t1 - 1 (between two, a partial row
 * per split, an O row, the next iteration's lse_accum loads). */
static void
lse_line(const struct decode_geometry *f, uint64_t ln, struct tally *y)
{
	uint64_t t0 = ln * f->L / 4, t1 = t0 + f->L / 4 < f->T ? t0 + f->L / 4 : f->T;
	struct line x = { 0 };
	double step = (double)f->S * f->m + f->q;

	for (uint64_t t = t0; t < t1; t++)
		touch(f, &x, y, t == t0 ? 0 : step + la_between(f, t * f->S, (t + 1) * f->S), true,
		      (uint64_t)1 << (t - t0));
	finish(f, &x, y, step + comb_after(f, t1 * f->S - 1, t1));
}

/* O row t, stored once at the end of its iteration. */
static void
o_rows(const struct decode_geometry *f, struct tally *y)
{
	for (uint64_t t = 0; t < f->T; t++) {
		struct line x = { 0 };
		struct tally one = { 0 };
		double w = comb_after(f, (t + 1) * f->S - 1, t + 1);

		touch(f, &x, &one, 0, true, ~(uint64_t)0);
		times(y, &one, f->q);
		for (double j = 0; j < f->q; j++)
			finish(f, &x, y, w + f->q - 1 - j);
	}
}

static void
put(struct formula_result *r, const char *name, const struct tally *y, double L)
{
	struct formula_array *a = formula_array_named(r, name);

	a->read_bytes += y->rd * L;
	a->rfo_bytes += y->rfo * L;
	a->write_bytes += y->wr * L;
	a->flush_bytes += y->fl * L;
}

bool
formula_flashdecode_lru_shape(const struct attn_config *v, double line_bytes)
{
	uint64_t L = (uint64_t)line_bytes, rb = v->d * dtype_bytes(v->dtype);

	return attn_splits(v) > 1 && v->N <= v->Br && L <= 256 && rb % L == 0 && v->d * 4 % L == 0;
}

/* Each partial row and value costs up to S steps (the combine's strided values): past this
 * many, about a second, the formula is not followed line by line. */
#define LRU_MAX_STEPS 5e8

double
formula_flashdecode_lru_steps(const struct attn_config *v)
{
	double S = (double)attn_splits(v);

	return (double)v->batch * (double)v->heads * (double)v->N * S * S;
}

bool
formula_flashdecode_lru_fits(const struct attn_config *v, double line_bytes)
{
	return formula_flashdecode_lru_shape(v, line_bytes) &&
	       formula_flashdecode_lru_steps(v) <= LRU_MAX_STEPS;
}

void
formula_flashdecode_lru(struct formula_result *r, const struct attn_config *c,
			const struct formula_geometry *q)
{
	struct decode_geometry f = { 0 };
	struct tally oa = { 0 }, la = { 0 }, ls = { 0 }, o = { 0 };
	double qr = 0;

	f.L = (uint64_t)q->L;
	f.BH = c->batch * c->heads;
	f.S = attn_splits(c);
	f.N = c->N;
	f.Nk = attn_nkv(c);
	f.Bc = c->Bc;
	f.R = f.BH * f.S * f.N;
	f.T = f.BH * f.N;
	f.per = attn_split_blocks(c);
	f.C = q->C;
	f.q = (double)(c->d * dtype_bytes(c->dtype) / f.L);
	f.m = (double)(c->d * 4 / f.L);
	f.kvt = (double)f.Nk * f.q;
	f.G = c->heads / c->kv_heads;
	f.H = c->heads;
	f.P = c->kv_page;
	f.np = c->kv_page ? attn_pages(c) : 0;
	f.rfo = q->rfo;
	f.flush = q->flush;
	/* Q: a head's lines once, again after each split that reads keys and fills the cache
	 * (the rest of Q_hh, the split's K and V, its partial rows and values) */
	for (uint64_t hh = 0; hh < f.BH; hh++) {
		qr += (double)f.N * f.q;
		for (uint64_t s = 0; rows_from(&f, s + 1) > 0; s++) {
			uint64_t v0 = (hh * f.S + s) * f.N;
			double w = (double)f.N * f.q - 1 + 2 * (double)rows_of(&f, s) * f.q +
				   (double)f.N * f.m + vals(&f, v0, v0 + f.N) +
				   bt_split(&f, hh / f.H, s);

			qr += w >= f.C ? (double)f.N * f.q : 0;
		}
	}
	formula_array_named(r, "Q")->read_bytes += qr * q->L;
	if (f.P) {
		double n = 0;

		for (uint64_t ln = 0; ln * f.L / 4 < f.BH / f.H * f.np; ln++)
			n += bt_line(&f, ln);
		formula_array_named(r, "block_table")->read_bytes += n * q->L;
	}
	formula_array_named(r, "K")->read_bytes += kv_reads(&f) * q->L;
	formula_array_named(r, "V")->read_bytes += kv_reads(&f) * q->L;
	oa_rows(&f, &oa);
	for (uint64_t ln = 0; ln * f.L / 4 < f.R; ln++)
		la_line(&f, ln, &la);
	for (uint64_t ln = 0; ln * f.L / 4 < f.T; ln++)
		lse_line(&f, ln, &ls);
	o_rows(&f, &o);
	put(r, "O_accum", &oa, q->L);
	put(r, "lse_accum", &la, q->L);
	put(r, "lse", &ls, q->L);
	put(r, "O", &o, q->L);
}
