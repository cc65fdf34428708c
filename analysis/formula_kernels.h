/*
 * What the exact formulas of each kernel share (analysis/formula_*.c): the machine in lines
 * (struct q), line sequences (seq()), and the line counts of byte ranges (span()). Private to
 * analysis/formula*.c.
 */
#ifndef MEMSIM_ANALYSIS_FORMULA_KERNELS_H
#define MEMSIM_ANALYSIS_FORMULA_KERNELS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/formulas.h"

enum { LD, ST, STW }; /* load, partial store, whole-line store */

struct step {
	int op;
	double gap; /* reuse distance in lines; INFINITY for a line's first access */
	double rep; /* how many times in a row */
};

struct q {
	double L, C, s, N, Nk, d, Br, Bc, B, H, Hkv, g, Tr, Tc;
	double rq, qb, kb, Srow, Sseg;
	double tq, tk, tv, ts, to, trow, tm; /* tiles in memory, else 0 */
	double Qall, Kall, Sall, Oall, vec;  /* vec: one fp32 value per query row, all heads */
	bool rfo, flush;
};

struct formula_array *arr(struct formula_result *r, const char *name);
void seq(struct formula_array *a, const struct q *q, double n, const struct step *steps, int ns,
	 double gap_end);
void once(struct formula_array *a, const struct q *q, double n, int op, double gap_end);
void tiles(struct formula_result *r, const struct q *q, const char *const *names,
	   const double *lines, int n, double step_lines);

/* The most lines a range of x lines' worth of bytes can touch, wherever it starts. */
static inline double
lines_at_most(double x)
{
	return x > 0 ? ceil(x) + 1 : 0;
}

/* Lines of [a, b) in lines of L bytes (0 when empty). */
static inline double
span(uint64_t a, uint64_t b, uint64_t L)
{
	return b > a ? (double)((b - 1) / L - a / L + 1) : 0;
}

/* Lines that rows ranges of width bytes, stride bytes apart from offset 0, touch together. */
double tile_row_lines(uint64_t rows, uint64_t stride, uint64_t width, uint64_t L);

/* Lines of [a0, a1) and [b0, b1) together, a1 <= b0: a line both reach is counted once. */
static inline double
span2(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1, uint64_t L)
{
	double n = span(a0, a1, L) + span(b0, b1, L);

	if (a1 > a0 && b1 > b0 && (a1 - 1) / L == b0 / L)
		n -= 1;
	return n;
}

/* Does a range starting at byte a begin inside a line that holds bytes before it? */
static inline bool
shares_line(uint64_t a, uint64_t L)
{
	return a % L != 0;
}

/* The geometry of an attention run in bytes and lines, shared by flash1 and flash2. */
struct f2 {
	const struct attn_config *c;
	const struct q *q;
	uint64_t L, RB, N, Nk, Br, Bc, Tr, BH; /* Nk: key rows (N_kv) */
	uint64_t off;                          /* the causal mask's shift, N_kv - N */
	double C, tl; /* cache lines; tile lines always in use (0 in scratch) */
	uint64_t P, np; /* flash2's paged K/V: page tokens, pages a sequence (0 unpaged) */
};

/* The geometry flash1 and flash2 share. */
static inline struct f2
f2_geometry(const struct attn_config *c, const struct q *q)
{
	struct f2 f = { .c = c, .q = q };

	f.L = (uint64_t)q->L;
	f.RB = c->d * dtype_bytes(c->dtype);
	f.N = c->N;
	f.Nk = attn_nkv(c);
	f.off = c->causal ? attn_kv_offset(c) : 0;
	f.Br = c->Br < c->N ? c->Br : c->N;
	f.Bc = c->Bc < f.Nk ? c->Bc : f.Nk;
	f.Tr = attn_blocks(c->N, c->Br);
	f.BH = c->batch * c->heads;
	f.C = q->C;
	f.tl = q->tq + q->tk + q->tv + q->ts + q->to + 2 * q->tm;
	f.P = c->kv_page;
	f.np = attn_pages(c);
	return f;
}

/* Bytes of row r of head hh (over batches) in Q or O, of kv head kk in K or V, in lse. */
static inline uint64_t
f2_row(const struct f2 *f, uint64_t hh, uint64_t r)
{
	return (hh * f->N + r) * f->RB;
}

static inline uint64_t
f2_krow(const struct f2 *f, uint64_t kk, uint64_t r)
{
	return (kk * f->Nk + r) * f->RB;
}

static inline uint64_t
f2_lse(const struct f2 *f, uint64_t hh, uint64_t r)
{
	return (hh * f->N + r) * 4;
}

/* Lines of Q (or O) rows [r0, r1) of head hh, of lse, of K (or V) rows of kv head kk. */
static inline double
f2_q(const struct f2 *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return span(f2_row(f, hh, r0), f2_row(f, hh, r1), f->L);
}

static inline double
f2_l(const struct f2 *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return span(f2_lse(f, hh, r0), f2_lse(f, hh, r1), f->L);
}

static inline double
f2_kv(const struct f2 *f, uint64_t kk, uint64_t r0, uint64_t r1)
{
	return span(f2_krow(f, kk, r0), f2_krow(f, kk, r1), f->L);
}

/* The rows of unit (hh, ib): first and end. */
static inline uint64_t
f2_r0(const struct f2 *f, uint64_t ib)
{
	return ib * f->Br;
}

static inline uint64_t
f2_r1(const struct f2 *f, uint64_t ib)
{
	return ib * f->Br + f->Br < f->N ? ib * f->Br + f->Br : f->N;
}

__extension__ typedef unsigned __int128 u128;

/* sum over i < n of floor((a i + b) / m): distinct lines of periodic row segments. */
u128 floor_sum(u128 n, u128 m, u128 a, u128 b);

void formula_naive(struct formula_result *r, const struct attn_config *c, const struct q *q);
void formula_flash1(struct formula_result *r, const struct attn_config *c, const struct q *q);
void formula_flash2(struct formula_result *r, const struct attn_config *c, const struct q *q);
void formula_proj(struct formula_result *r, const struct attn_config *c, const struct q *q);
void formula_flashdecode(struct formula_result *r, const struct attn_config *c, const struct q *q);
/* flashdecode's accesses each counted once (what no cache moves). */
void formula_flashdecode_accesses(struct formula_result *r, const struct attn_config *c);
/* The lines flashdecode touches at S > 1 (c: attn_decode_view()'s, or its source: the arrays
 * are the same bytes), every array in full: a cache of at least as many evicts none. */
double formula_flashdecode_footprint(const struct attn_config *c, double line_bytes);
/* Is v (attn_decode_view()'s) of formula_flashdecode_lru()'s shape on lines of line_bytes: S >
 * 1, one query block a head, rows of whole lines (up to 256 bytes)? And of few enough steps
 * (formula_flashdecode_lru_steps(): B H N S^2) to follow line by line (_fits)? */
bool formula_flashdecode_lru_shape(const struct attn_config *v, double line_bytes);
double formula_flashdecode_lru_steps(const struct attn_config *v);
bool formula_flashdecode_lru_fits(const struct attn_config *v, double line_bytes);
/* flashdecode at S > 1 in that regime, tiles in scratch: exact on a fully associative LRU
 * cache of any size. */
void formula_flashdecode_lru(struct formula_result *r, const struct attn_config *c,
			     const struct q *q);

#endif
