#pragma once

/*
 * naive's formula (formula_naive.c) in two files: the geometry, the structs they share and
 * the functions formula_naive.c takes from formula_naive_segments.c (the lines a stretch of
 * the passes touches).
 */

#include <stdbool.h>
#include <stdint.h>

#include "analysis/formula_kernels.h"

/* Bytes [base + x st + a, base + x st + b) for rows x < rows (rows >= 1, a < b <= st or one
 * row). */
struct piece {
	uint64_t base, rows, st, a, b;
};

#define SET_PIECES 48
#define SET_RANGES 8

/* Bytes one array's lines are touched at in a window: contiguous ranges (they may overlap)
 * and row segments of different rows (disjoint among themselves). */
struct set {
	struct piece p[SET_PIECES];
	uint64_t r[SET_RANGES][2];
	int np, nr;
	bool overflow;
};

/* ---- the kernel's geometry and events ---- */

enum { A_Q, A_K, A_V, A_O, A_S, A_P, N_ARRAYS };
enum { PH_SCORES, PH_SOFTMAX, PH_AV, PH_END };

struct memo;

struct nv {
	const struct attn_config *c;
	const struct formula_geometry *q;
	uint64_t L, s, RB, RS, N, NC, Br, Bc, Tr, Tc, BH, U, NK; /* NC: keys (N_kv); NK: kv heads */
	double C, tile[3]; /* tile lines in use in each pass (0 in scratch) */
	int P;             /* the array softmax stores and av loads: A_P, or A_S in place */
	struct memo *memo;
};

/* An event: one touch of a run of addresses. scores: u, jb = -1 (Q's block), or jb and
 * i = -1 (K's block) or i (S's row segment). softmax: u = row, jb = 0 load, 1 store. av: u, jb
 * and i < nr (P's row segment) or i = nr (V's block); jb = Tc and i (O's row). */
struct ev {
	int ph;
	int64_t u, jb, i;
};

static inline int
ev_cmp(const struct ev *a, const struct ev *b)
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
u_head(const struct nv *n, uint64_t u)
{
	return u / n->Tr;
}

static inline uint64_t
u_row(const struct nv *n, uint64_t u) /* first row over all heads */
{
	return u_head(n, u) * n->N + u % n->Tr * n->Br;
}

static inline uint64_t
u_rows(const struct nv *n, uint64_t u)
{
	uint64_t r0 = u % n->Tr * n->Br;

	return n->N - r0 < n->Br ? n->N - r0 : n->Br;
}

static inline uint64_t
u_kv(const struct nv *n, uint64_t u)
{
	uint64_t hh = u_head(n, u), g = n->c->heads / n->c->kv_heads;

	return hh / n->c->heads * n->c->kv_heads + hh % n->c->heads / g;
}

static inline uint64_t
c0(const struct nv *n, int64_t jb)
{
	uint64_t c = (uint64_t)jb * n->Bc;

	return c < n->NC ? c : n->NC;
}

static inline uint64_t
c1(const struct nv *n, int64_t jb)
{
	return c0(n, jb + 1);
}

static inline uint64_t
qo(const struct nv *n, uint64_t row) /* Q or O, row over all heads */
{
	return row * n->RB;
}

static inline uint64_t
kv(const struct nv *n, uint64_t kk, uint64_t r)
{
	return (kk * n->NC + r) * n->RB;
}

static inline uint64_t
sp(const struct nv *n, uint64_t row, uint64_t col) /* S or P */
{
	return (row * n->NC + col) * n->s;
}

struct win {
	struct set a[N_ARRAYS];
};

/* formula_naive_segments.c */
void set_range(struct set *s, uint64_t lo, uint64_t hi);
double set_lines(struct set *s, uint64_t L);
int ev_bytes(const struct nv *n, const struct ev *e, uint64_t *lo, uint64_t *hi);
void pass_units(const struct nv *n, struct win *w, int ph, const struct ev *f, const struct ev *t);
void softmax_rows(const struct nv *n, struct win *w, const struct ev *f, const struct ev *t);
