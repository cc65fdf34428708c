#pragma once

/*
 * naive's formula (formula_naive.c) in two files: the geometry, the structs they share and
 * the functions formula_naive.c takes from formula_naive_segments.c (the lines a stretch of
 * the passes touches).
 */

#include <stdbool.h>
#include <stdint.h>

#include "analysis/formula_kernels.h"

/* Bytes [base + x stride + start, base + x stride + end) for rows x < rows (rows >= 1,
 * start < end <= stride or one row). */
struct naive_piece {
	uint64_t base, rows, stride, start, end;
};

#define SET_PIECES 48
#define SET_RANGES 8

/* Bytes one array's lines are touched at in a window: contiguous ranges (they may overlap)
 * and row segments of different rows (disjoint among themselves). */
struct naive_set {
	struct naive_piece pieces[SET_PIECES];
	uint64_t ranges[SET_RANGES][2];
	int npieces, nranges;
	bool overflow;
};

/* ---- the kernel's geometry and events ---- */

enum { A_Q, A_K, A_V, A_O, A_S, A_P, N_ARRAYS };
enum { PH_SCORES, PH_SOFTMAX, PH_AV, PH_END };

struct naive_memo;

/* naive's geometry in bytes: L line, s element, RB a row of Q, K, V or O (d s), RS a row of S
 * (N_kv s); N, NC (N_kv) query and key rows; B_r, B_c, T_r, T_c; BH batch x heads; U units
 * (BH T_r); NK kv heads over batches. */
struct naive_geometry {
	const struct attn_config *c;
	const struct formula_geometry *q;
	uint64_t L, s, RB, RS, N, NC, Br, Bc, Tr, Tc, BH, U, NK;
	double C, tile[3]; /* tile lines in use in each pass (0 in scratch) */
	int P;             /* the array softmax stores and av loads: A_P, or A_S in place */
	struct naive_memo *memo;
};

/* An event: one touch of a run of addresses. scores: u, jb = -1 (Q's block), or jb and
 * i = -1 (K's block) or i (S's row segment). softmax: u = row, jb = 0 load, 1 store. av: u, jb
 * and i < nr (P's row segment) or i = nr (V's block); jb = Tc and i (O's row). */
struct naive_event {
	int ph;
	int64_t u, jb, i;
};

static inline int
naive_event_cmp(const struct naive_event *a, const struct naive_event *b)
{
	if (a->ph != b->ph)
		return a->ph < b->ph ? -1 : 1;
	if (a->u != b->u)
		return a->u < b->u ? -1 : 1;
	if (a->jb != b->jb)
		return a->jb < b->jb ? -1 : 1;
	if (a->i != b->i)
		return a->i < b->i ? -1 : 1;
	return 0;
}

static inline uint64_t
unit_head(const struct naive_geometry *n, uint64_t u)
{
	return u / n->Tr;
}

static inline uint64_t
unit_first_row(const struct naive_geometry *n, uint64_t u) /* first row over all heads */
{
	return unit_head(n, u) * n->N + u % n->Tr * n->Br;
}

static inline uint64_t
unit_row_count(const struct naive_geometry *n, uint64_t u)
{
	uint64_t r0 = u % n->Tr * n->Br;

	return n->N - r0 < n->Br ? n->N - r0 : n->Br;
}

static inline uint64_t
unit_kv_head(const struct naive_geometry *n, uint64_t u)
{
	uint64_t hh = unit_head(n, u), g = n->c->heads / n->c->kv_heads;

	return hh / n->c->heads * n->c->kv_heads + hh % n->c->heads / g;
}

static inline uint64_t
key_first(const struct naive_geometry *n, int64_t jb)
{
	uint64_t c = (uint64_t)jb * n->Bc;

	return c < n->NC ? c : n->NC;
}

static inline uint64_t
key_end(const struct naive_geometry *n, int64_t jb)
{
	return key_first(n, jb + 1);
}

static inline uint64_t
qo_byte(const struct naive_geometry *n, uint64_t row) /* Q or O, row over all heads */
{
	return row * n->RB;
}

static inline uint64_t
kv_byte(const struct naive_geometry *n, uint64_t kk, uint64_t r)
{
	return (kk * n->NC + r) * n->RB;
}

static inline uint64_t
sp_byte(const struct naive_geometry *n, uint64_t row, uint64_t col) /* S or P */
{
	return (row * n->NC + col) * n->s;
}

struct naive_window {
	struct naive_set arrays[N_ARRAYS];
};

/* formula_naive_segments.c */
void naive_set_range(struct naive_set *s, uint64_t lo, uint64_t hi);
double naive_set_lines(struct naive_set *s, uint64_t L);
int naive_event_bytes(const struct naive_geometry *n, const struct naive_event *e, uint64_t *lo,
		      uint64_t *hi);
void naive_pass_units(const struct naive_geometry *n, struct naive_window *w, int ph,
		      const struct naive_event *f, const struct naive_event *t);
void naive_softmax_rows(const struct naive_geometry *n, struct naive_window *w,
			const struct naive_event *f, const struct naive_event *t);
