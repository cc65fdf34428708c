/*
 * What the exact formulas of each kernel share (analysis/formula_*.c): the machine in lines
 * (struct formula_geometry), line sequences (formula_line_sequence()), and the line counts of byte
 * ranges (span()). Private to analysis/formula*.c.
 */
#ifndef MEMSIM_ANALYSIS_FORMULA_KERNELS_H
#define MEMSIM_ANALYSIS_FORMULA_KERNELS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "analysis/formulas.h"

/* The access kinds of a line's sequence. */
enum {
	FORMULA_LOAD,
	FORMULA_STORE,       /* a partial store */
	FORMULA_STORE_WHOLE, /* a store of the whole line */
};

struct formula_step {
	int op;
	double gap; /* reuse distance in lines; INFINITY for a line's first access */
	double rep; /* how many times in a row */
};

/* The run and the machine in lines, each field with its symbol in docs/formulas.md
 * ("Notation"). Set by formula_eval() before the kernel's formula. */
struct formula_geometry {
	double L;    /* L: line bytes */
	double C;    /* C: the cache's capacity in lines */
	double s;    /* s: storage bytes per element */
	double N;    /* N: query rows */
	double Nk;   /* N_kv: key and value rows */
	double d;    /* d: head dimension */
	double Br;   /* B_r: query block rows (at most N) */
	double Bc;   /* B_c: key block rows (at most N_kv) */
	double B;    /* batch */
	double H;    /* heads */
	double Hkv;  /* kv_heads */
	double g;    /* g = heads / kv_heads */
	double Tr;   /* T_r = ceil(N / B_r) */
	double Tc;   /* T_c = ceil(N_kv / B_c) */
	double rq;   /* rq = d s / L: a row of Q, K, V or O */
	double qb;   /* qb = B_r rq: a block of query rows */
	double kb;   /* kb = B_c rq: a block of key rows */
	double Srow; /* Srow = N_kv s / L: a row of S */
	double Sseg; /* Sseg = B_c s / L: a row of S under one key block */
	/* tiles in memory, else 0 */
	double tq;   /* t_q: the Q tile */
	double tk;   /* t_k: the K tile */
	double tv;   /* t_v: the V tile */
	double ts;   /* t_s: the S tile */
	double to;   /* t_o: the O tile */
	double trow; /* t_row: the softmax row tile (N_kv floats) */
	double tm;   /* t_m: one of the max and sum vectors (B_r floats) */
	double Qall; /* Q_all: Q over all batches and heads */
	double Kall; /* K_all: K (or V) over all batches and kv heads */
	double Sall; /* S_all: S over all batches and heads */
	double Oall; /* O_all = Q_all */
	double vec;  /* vec: one fp32 value per query row, all heads */
	bool rfo;    /* write-allocate: partial store misses read the line */
	bool flush;  /* dirty lines written back at the end */
};

struct formula_array *formula_array_named(struct formula_result *r, const char *name);
void formula_line_sequence(struct formula_array *a, const struct formula_geometry *q, double n,
			   const struct formula_step *steps, int ns, double gap_end);
void formula_line_once(struct formula_array *a, const struct formula_geometry *q, double n, int op,
		       double gap_end);
void formula_tiles(struct formula_result *r, const struct formula_geometry *q,
		   const char *const *names, const double *lines, int n, double step_lines);

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
double formula_tile_row_lines(uint64_t rows, uint64_t stride, uint64_t width, uint64_t L);

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
struct flash_geometry {
	const struct attn_config *c;
	const struct formula_geometry *q;
	uint64_t L, RB, N, Nk, Br, Bc, Tr, BH; /* Nk: key rows (N_kv) */
	uint64_t off;                          /* the causal mask's shift, N_kv - N */
	double C, tl; /* cache lines; tile lines always in use (0 in scratch) */
	uint64_t P, np; /* flash2's paged K/V: page tokens, pages a sequence (0 unpaged) */
};

/* The geometry flash1 and flash2 share. */
static inline struct flash_geometry
flash_geometry_of(const struct attn_config *c, const struct formula_geometry *q)
{
	struct flash_geometry f = { .c = c, .q = q };

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
flash_qo_byte(const struct flash_geometry *f, uint64_t hh, uint64_t r)
{
	return (hh * f->N + r) * f->RB;
}

static inline uint64_t
flash_kv_byte(const struct flash_geometry *f, uint64_t kk, uint64_t r)
{
	return (kk * f->Nk + r) * f->RB;
}

static inline uint64_t
flash_lse_byte(const struct flash_geometry *f, uint64_t hh, uint64_t r)
{
	return (hh * f->N + r) * 4;
}

/* Lines of Q (or O) rows [r0, r1) of head hh, of lse, of K (or V) rows of kv head kk. */
static inline double
flash_qo_lines(const struct flash_geometry *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return span(flash_qo_byte(f, hh, r0), flash_qo_byte(f, hh, r1), f->L);
}

static inline double
flash_lse_lines(const struct flash_geometry *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return span(flash_lse_byte(f, hh, r0), flash_lse_byte(f, hh, r1), f->L);
}

static inline double
flash_kv_lines(const struct flash_geometry *f, uint64_t kk, uint64_t r0, uint64_t r1)
{
	return span(flash_kv_byte(f, kk, r0), flash_kv_byte(f, kk, r1), f->L);
}

/* The rows of unit (hh, ib): first and end. */
static inline uint64_t
flash_first_row(const struct flash_geometry *f, uint64_t ib)
{
	return ib * f->Br;
}

static inline uint64_t
flash_end_row(const struct flash_geometry *f, uint64_t ib)
{
	return ib * f->Br + f->Br < f->N ? ib * f->Br + f->Br : f->N;
}

__extension__ typedef unsigned __int128 u128;

/* sum over i < n of floor((a i + b) / m): distinct lines of periodic row segments. */
u128 formula_floor_sum(u128 n, u128 m, u128 a, u128 b);

void formula_naive(struct formula_result *r, const struct attn_config *c,
		   const struct formula_geometry *q);
void formula_flash1(struct formula_result *r, const struct attn_config *c,
		    const struct formula_geometry *q);
void formula_flash2(struct formula_result *r, const struct attn_config *c,
		    const struct formula_geometry *q);
void formula_proj(struct formula_result *r, const struct attn_config *c,
		  const struct formula_geometry *q);
void formula_flashdecode(struct formula_result *r, const struct attn_config *c,
			 const struct formula_geometry *q);
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
			     const struct formula_geometry *q);
/* Is v (attn_decode_view()'s) of formula_flashdecode_walk()'s shape on lines of line_bytes: S >
 * 1, lines of 4 to 256 bytes, paged K and V only with rows of whole lines? Its bound on the
 * line touches (_steps), and both that and its lines few enough to walk (_fits)? */
bool formula_flashdecode_walk_shape(const struct attn_config *v, double line_bytes);
double formula_flashdecode_walk_steps(const struct attn_config *v, double line_bytes);
bool formula_flashdecode_walk_fits(const struct attn_config *v, double line_bytes);
/* flashdecode at S > 1 in that shape, tiles in scratch, walked line by line in the kernel's
 * order: exact on a fully associative LRU cache of any size. */
void formula_flashdecode_walk(struct formula_result *r, const struct attn_config *c,
			      const struct formula_geometry *q);

#endif
