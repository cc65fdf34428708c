/*
 * flashdecode at S > 1 on a fully associative LRU cache, where formula_flashdecode_lru()'s
 * closed windows do not reach: several query blocks a head (N > B_r in attn_decode_view(),
 * causal or not), or rows that are not whole lines (d s or d 4 not a multiple of the line, so
 * neighbouring rows, heads and splits share lines). The kernel's loops are walked line by line
 * in its order (kernels/flashdecode.c): per head, split and query block, Q's rows, each key
 * block's table entries (paged), K and V rows, then per row its partial O row and lse_accum
 * value (an empty split only these); then the combine, per row, the S lse_accum values, lse,
 * the S partial rows, O. A line hits iff fewer than C other lines were touched since its last
 * touch: its window, the lines whose last touch is later than its own, counted in a Fenwick
 * tree over touch times (renumbered when the times run out, so it holds two per line). Each
 * line's dirty state and, under write-validate, the granules stored since it came in (4-byte
 * values up to 256-byte lines, a 64th of the line above, as sim/cache.c keeps them: wrange())
 * are followed as formula_flashdecode_lru.c's touch() does.
 *
 * Paged, K and V rows are placed in the pool as the run's block table places them
 * (attn_block_table_shuffle(), from kv_seed): [pages][P][kv_heads][d], so rows narrower than a
 * line share lines across kv heads and pages as in the run. Every array starts on its own page
 * (kernels/attn.c).
 */

#include <stdlib.h>

#include "analysis/formula_kernels.h"
#include "base/util.h"

enum { A_Q, A_O, A_K, A_V, A_LSE, A_OACC, A_LACC, A_BT, A_N };

static const char *const walk_names[A_N] = { "Q",   "O",       "K",         "V",
					     "lse", "O_accum", "lse_accum", "block_table" };

struct wline {
	uint64_t mask; /* write-validate: the granules stored since it came in */
	uint32_t last; /* touch time, WALK_NONE before the first */
	uint8_t arr;
	bool in, dirty;
};

#define WALK_NONE UINT32_MAX

struct walk {
	uint64_t L, base[A_N + 1]; /* each array's first line; base[A_N]: every line */
	double C;
	bool rfo, flush;
	struct wline *ln;
	uint32_t *bit, *owner; /* Fenwick tree over times; the line last touched at a time */
	uint32_t size, now, live;
	double rd[A_N], rfo_n[A_N], wr[A_N], fl[A_N];
	int32_t *pages; /* paged: the block table */
};

static void
bit_add(struct walk *w, uint32_t i, int32_t v)
{
	for (uint64_t j = (uint64_t)i + 1; j <= w->size; j += j & (~j + 1))
		w->bit[j - 1] += (uint32_t)v;
}

/* Lines whose last touch is before time i. */
static uint32_t
bit_below(const struct walk *w, uint32_t i)
{
	uint32_t n = 0;

	for (uint64_t j = i; j > 0; j -= j & (~j + 1))
		n += w->bit[j - 1];
	return n;
}

/* Renumbers the last touches 0, 1, ... in their order, when the times run out. */
static void
compact(struct walk *w)
{
	uint32_t k = 0;

	for (uint32_t t = 0; t < w->size; t++) {
		if (w->owner[t] == WALK_NONE)
			continue;
		w->ln[w->owner[t]].last = k;
		w->owner[k++] = w->owner[t];
	}
	for (uint32_t t = k; t < w->size; t++)
		w->owner[t] = WALK_NONE;
	/* the tree of k ones, then zeros: node j covers (j - lowbit(j), j] */
	for (uint64_t j = 1; j <= w->size; j++) {
		uint64_t lo = j - (j & (~j + 1));

		w->bit[j - 1] = (uint32_t)((j < k ? j : k) - (lo < k ? lo : k));
	}
	w->now = k;
}

/* One access of line id: a load, or a store of values bits. */
static void
wtouch(struct walk *w, uint64_t id, bool store, uint64_t bits)
{
	struct wline *x = &w->ln[id];
	int a = x->arr;

	if (x->last != WALK_NONE) {
		double window = (double)(w->live - bit_below(w, x->last + 1));

		if (window == 0 && x->in && store == false && (x->mask & bits) == bits)
			return; /* the most recent line again: nothing moves */
		if (x->in && window >= w->C) {
			w->wr[a] += x->dirty; /* evicted */
			x->in = x->dirty = false;
		}
		bit_add(w, x->last, -1);
		w->owner[x->last] = WALK_NONE;
		w->live--;
	}
	if (!x->in) {
		x->in = true;
		x->mask = 0;
		if (!store || w->rfo) {
			w->rd[a] += 1;
			w->rfo_n[a] += store;
			x->mask = ~(uint64_t)0;
		}
	} else if (!store && (x->mask & bits) != bits) {
		w->rd[a] += 1; /* write-validated values never stored: fetched now */
		x->mask = ~(uint64_t)0;
	}
	if (store) {
		x->dirty = true;
		x->mask |= bits;
	}
	if (w->now == w->size)
		compact(w);
	x->last = w->now;
	w->owner[w->now] = (uint32_t)id;
	bit_add(w, w->now, 1);
	w->now++;
	w->live++;
}

/* The granules [g0, g1) of a line as mask bits (at most 64 a line). */
static uint64_t
granule_bits(uint64_t g0, uint64_t g1)
{
	if (g1 <= g0)
		return 0;
	return (g1 - g0 >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << (g1 - g0)) - 1)) << g0;
}

/* Bytes [lo, hi) of array a, line by line in address order. Write-validate keeps a valid bit
 * per granule as sim/cache.c does: 4-byte values up to 256-byte lines (the simulator's
 * granules, of 1 to 4 bytes, are filled whole by the kernel's 4-byte-aligned stores), a 64th
 * of the line above. A load needs every granule it touches; a store validates those it covers
 * whole, and the kernel stores one element (4 bytes at most) at a time (the simulator merges
 * no write-validate stores: cache_merge_is_exact()), so a granule over 4 bytes never. */
static void
wrange(struct walk *w, int a, uint64_t lo, uint64_t hi, bool store)
{
	uint64_t G = w->L > 256 ? w->L / 64 : 4;

	for (uint64_t b = lo; b < hi;) {
		uint64_t ln = b / w->L, e = (ln + 1) * w->L < hi ? (ln + 1) * w->L : hi;
		uint64_t o0 = b - ln * w->L, o1 = e - ln * w->L;
		uint64_t bits = store && G > 4 ? 0 : granule_bits(o0 / G, (o1 + G - 1) / G);

		wtouch(w, w->base[a] + ln, store, bits);
		b = e;
	}
}

/* The end: a dirty line still cached is written by the final flush (or never); one evicted
 * was written when it went. */
static void
wfinish(struct walk *w)
{
	for (uint64_t id = 0; id < w->base[A_N]; id++) {
		const struct wline *x = &w->ln[id];
		double window;

		if (x->last == WALK_NONE || !x->dirty)
			continue;
		window = (double)(w->live - bit_below(w, x->last + 1));
		if (window < w->C && !w->flush)
			continue;
		w->wr[x->arr] += 1;
		w->fl[x->arr] += window < w->C;
	}
}

/* Key rows query block [r0, r0 + nr) reads in split s: block range [*jb0, *jb1), empty for
 * FlashAttention's early exit. */
static void
split_blocks(const struct attn_config *c, uint64_t s, uint64_t r0, uint64_t nr, uint64_t *jb0,
	     uint64_t *jb1)
{
	uint64_t tc = attn_blocks(attn_nkv(c), c->Bc), per = attn_split_blocks(c);
	uint64_t vis = c->causal ? attn_blocks(r0 + nr + attn_kv_offset(c), c->Bc) : tc;

	vis = vis < tc ? vis : tc;
	*jb0 = s * per;
	*jb1 = (s + 1) * per < vis ? (s + 1) * per : vis;
}

/* Key rows [c0, c0 + nc) of K or V (a): unpaged one run from row r (of the [batch][kv_heads]
 * layout); paged each row at its pool place, in order. */
static void
walk_kv(struct walk *w, const struct attn_config *c, int a, uint64_t b, uint64_t r, uint64_t c0,
	uint64_t nc)
{
	const uint64_t qs = c->d * dtype_bytes(c->dtype);
	const uint64_t kvh = r / attn_nkv(c) % c->kv_heads;

	if (!c->kv_page) {
		wrange(w, a, r * qs, (r + nc) * qs, false);
		return;
	}
	for (uint64_t j = c0; j < c0 + nc; j++) {
		uint64_t e = attn_kv_row(c, w->pages, b, kvh, j) * dtype_bytes(c->dtype);

		wrange(w, a, e, e + qs, false);
	}
}

/* The splits phase of head (b, h). */
static void
walk_head(struct walk *w, const struct attn_config *c, uint64_t b, uint64_t h)
{
	const uint64_t N = c->N, Nk = attn_nkv(c), S = attn_splits(c), Bc = c->Bc;
	const uint64_t qs = c->d * dtype_bytes(c->dtype), ms = c->d * 4, bh = b * c->heads + h;
	const uint64_t kvrow0 = (b * c->kv_heads + h / (c->heads / c->kv_heads)) * Nk;
	const uint64_t P = c->kv_page, np = attn_pages(c);

	for (uint64_t s = 0; s < S; s++) {
		uint64_t rho0 = (bh * S + s) * N;

		for (uint64_t r0 = 0; r0 < N; r0 += c->Br) {
			uint64_t nr = N - r0 < c->Br ? N - r0 : c->Br, jb0, jb1;

			split_blocks(c, s, r0, nr, &jb0, &jb1);
			if (jb0 < jb1)
				wrange(w, A_Q, (bh * N + r0) * qs, (bh * N + r0 + nr) * qs, false);
			for (uint64_t c0 = jb0 * Bc; c0 < jb1 * Bc; c0 += Bc) {
				uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

				if (P)
					wrange(w, A_BT, (b * np + c0 / P) * 4,
					       (b * np + (c0 + nc - 1) / P + 1) * 4, false);
				walk_kv(w, c, A_K, b, kvrow0 + c0, c0, nc);
				walk_kv(w, c, A_V, b, kvrow0 + c0, c0, nc);
			}
			for (uint64_t i = r0; i < r0 + nr; i++) {
				wrange(w, A_OACC, (rho0 + i) * ms, (rho0 + i + 1) * ms, true);
				wrange(w, A_LACC, (rho0 + i) * 4, (rho0 + i + 1) * 4, true);
			}
		}
	}
}

/* The combine of head bh's rows. */
static void
walk_combine(struct walk *w, const struct attn_config *c, uint64_t bh)
{
	const uint64_t N = c->N, S = attn_splits(c);
	const uint64_t qs = c->d * dtype_bytes(c->dtype), ms = c->d * 4;

	for (uint64_t i = 0; i < N; i++) {
		for (uint64_t s = 0; s < S; s++) {
			uint64_t rho = (bh * S + s) * N + i;

			wrange(w, A_LACC, rho * 4, rho * 4 + 4, false);
		}
		wrange(w, A_LSE, (bh * N + i) * 4, (bh * N + i) * 4 + 4, true);
		for (uint64_t s = 0; s < S; s++) {
			uint64_t rho = (bh * S + s) * N + i;

			wrange(w, A_OACC, rho * ms, (rho + 1) * ms, false);
		}
		wrange(w, A_O, (bh * N + i) * qs, (bh * N + i + 1) * qs, true);
	}
}

/* Each array's lines, from the bytes it spans. */
static uint64_t
walk_lines(const struct attn_config *c, uint64_t L, uint64_t base[A_N + 1])
{
	const uint64_t bh = c->batch * c->heads, S = attn_splits(c);
	const uint64_t qs = c->d * dtype_bytes(c->dtype), ms = c->d * 4;
	uint64_t bytes[A_N];

	bytes[A_Q] = bytes[A_O] = bh * c->N * qs;
	/* paged: the pool, every kv head of every page */
	bytes[A_K] = bytes[A_V] = c->batch * c->kv_heads * attn_kv_rows(c) * qs;
	bytes[A_LSE] = bh * c->N * 4;
	bytes[A_OACC] = bh * S * c->N * ms;
	bytes[A_LACC] = bh * S * c->N * 4;
	bytes[A_BT] = c->kv_page ? c->batch * attn_pages(c) * 4 : 0;
	base[0] = 0;
	for (int a = 0; a < A_N; a++)
		base[a + 1] = base[a] + (bytes[a] + L - 1) / L;
	return base[A_N];
}

bool
formula_flashdecode_walk_shape(const struct attn_config *v, double line_bytes)
{
	uint64_t L = (uint64_t)line_bytes;

	return attn_splits(v) > 1 && L >= 4;
}

/* A bound on the lines the walk touches: each row range at most its bytes over L plus 2. */
double
formula_flashdecode_walk_steps(const struct attn_config *v, double line_bytes)
{
	const uint64_t N = v->N, Nk = attn_nkv(v), S = attn_splits(v), Bc = v->Bc;
	const double L = line_bytes, bh = (double)v->batch * (double)v->heads;
	const double q = (double)(v->d * dtype_bytes(v->dtype)) / L + 2;
	const double m = (double)(v->d * 4) / L + 2;
	double head = 0;

	for (uint64_t s = 0; s < S; s++)
		for (uint64_t r0 = 0; r0 < N; r0 += v->Br) {
			uint64_t nr = N - r0 < v->Br ? N - r0 : v->Br, jb0, jb1;

			split_blocks(v, s, r0, nr, &jb0, &jb1);
			if (jb0 < jb1) {
				uint64_t e = jb1 * Bc < Nk ? jb1 * Bc : Nk;

				head += (double)nr * q + 2 * q * (double)(e - jb0 * Bc);
				if (v->kv_page)
					head += (double)(jb1 - jb0) *
						((double)(Bc / v->kv_page) * 4 / L + 3);
			}
			head += (double)nr * (m + 1);
		}
	return bh * (head + (double)N * ((double)S * (m + 1) + 1 + q));
}

/* Past this many line touches, or lines, the walk is not taken (memory: about 40 bytes a
 * line; time: about a second for the touches). */
#define WALK_MAX_STEPS 3e7
#define WALK_MAX_LINES 4e6

bool
formula_flashdecode_walk_fits(const struct attn_config *v, double line_bytes)
{
	uint64_t base[A_N + 1];

	return formula_flashdecode_walk_shape(v, line_bytes) &&
	       formula_flashdecode_walk_steps(v, line_bytes) <= WALK_MAX_STEPS &&
	       (double)walk_lines(v, (uint64_t)line_bytes, base) <= WALK_MAX_LINES;
}

void
formula_flashdecode_walk(struct formula_result *r, const struct attn_config *c,
			 const struct formula_geometry *q)
{
	struct walk w = { 0 };
	uint64_t lines;

	w.L = (uint64_t)q->L;
	w.C = q->C;
	w.rfo = q->rfo;
	w.flush = q->flush;
	lines = walk_lines(c, w.L, w.base);
	w.ln = xzalloc((lines ? lines : 1) * sizeof(*w.ln));
	for (int a = 0; a < A_N; a++)
		for (uint64_t id = w.base[a]; id < w.base[a + 1]; id++) {
			w.ln[id].arr = (uint8_t)a;
			w.ln[id].last = WALK_NONE;
		}
	if (c->kv_page) {
		w.pages = xzalloc(c->batch * attn_pages(c) * sizeof(*w.pages));
		attn_block_table_shuffle(c, w.pages);
	}
	w.size = (uint32_t)(2 * lines + 16);
	w.bit = xzalloc(w.size * sizeof(*w.bit));
	w.owner = xzalloc(w.size * sizeof(*w.owner));
	for (uint32_t t = 0; t < w.size; t++)
		w.owner[t] = WALK_NONE;
	for (uint64_t b = 0; b < c->batch; b++)
		for (uint64_t h = 0; h < c->heads; h++)
			walk_head(&w, c, b, h);
	for (uint64_t bh = 0; bh < c->batch * c->heads; bh++)
		walk_combine(&w, c, bh);
	wfinish(&w);
	for (int a = 0; a < A_N; a++) {
		struct formula_array *x;

		if (w.base[a + 1] == w.base[a])
			continue; /* unpaged: no table */
		x = formula_array_named(r, walk_names[a]);
		x->read_bytes += w.rd[a] * q->L;
		x->rfo_bytes += w.rfo_n[a] * q->L;
		x->write_bytes += w.wr[a] * q->L;
		x->flush_bytes += w.fl[a] * q->L;
	}
	free(w.ln);
	free(w.bit);
	free(w.owner);
	free(w.pages);
}
