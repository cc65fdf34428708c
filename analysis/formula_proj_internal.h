#pragma once

/*
 * proj's formula (formula_proj.c) in three files: the geometry and the structs they share,
 * and the functions one uses from another. formula_proj_lines.c: lines of byte ranges and
 * which positions an interval of time covers (span_between()); formula_proj.c: segments,
 * regular lines, the passes and the formula; formula_proj_edges.c: edge lines.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PX, PO, PWQ, PWK, PWV, PWO, PQ, PK, PV, PY, NPA };
enum { ROLE_A, ROLE_W, ROLE_C };

struct pprod {
	int a, w, c;
	uint64_t n, Tn; /* columns of W and C, and their column blocks */
	uint64_t cnh;   /* heads of C's layout [batch][heads][N][d]; 0 for y, [batch][N][n] */
};

struct pj {
	uint64_t N, d, H, B, s, L, Br, Bc, Tr, U, Ks, K, E, rowB;
	double C, tl;
	struct pprod p[4];
	uint64_t size[NPA];
	int role[NPA];
	uint64_t m0[NPA], m1[NPA]; /* the products that use an array: m0 .. m1 */
	struct spans *spans;       /* memoized bounds of windows (bound()) */
};

/* A time: product m, block u, pass jb, phase ph, position pos in the phase. */
struct pt {
	uint64_t m, u, jb, ph, pos;
};

static inline int
pt_cmp(const struct pt *a, const struct pt *b)
{
	const uint64_t x[5] = { a->m, a->u, a->jb, a->ph, a->pos };
	const uint64_t y[5] = { b->m, b->u, b->jb, b->ph, b->pos };

	for (int i = 0; i < 5; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static inline uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline uint64_t
max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- geometry ---- */

static inline uint64_t
pj_r0(const struct pj *g, uint64_t u)
{
	return u % g->Tr * g->Br;
}

static inline uint64_t
pj_nr(const struct pj *g, uint64_t u)
{
	return min_u64(g->Br, g->N - pj_r0(g, u));
}

/* Row of x or y (over batches) of block u's first row. */
static inline uint64_t
pj_grow(const struct pj *g, uint64_t u)
{
	return u / g->Tr * g->N + pj_r0(g, u);
}

static inline uint64_t
pj_c1(const struct pj *g, uint64_t m, uint64_t j)
{
	return min_u64(g->p[m].n, (j + 1) * g->Bc);
}

/* Runs a row of C's block stores in pass jb: one per head its columns reach (one in y). */
static inline uint64_t
pj_nruns(const struct pj *g, uint64_t m, uint64_t j)
{
	if (!g->p[m].cnh)
		return 1;
	return (pj_c1(g, m, j) - 1) / g->d - j * g->Bc / g->d + 1;
}

static inline uint64_t
pj_npos(const struct pj *g, uint64_t m, uint64_t u, uint64_t j)
{
	return pj_nr(g, u) * pj_nruns(g, m, j);
}

/* Lines counted so far, in address order; the last of them. */
struct acc {
	double n;
	uint64_t last;
	bool any;
};

/* In product m: A position p = k nr + i of pass (u, jb); W position q = jb K + R in block u;
 * C position pos of pass (u, jb). */
struct acut {
	uint64_t u, jb, p;
};

struct wcut {
	uint64_t u, q;
};

struct ccut {
	uint64_t u, jb, pos;
};

#define SET_MAX 12 /* three products, three whole runs each */

/* Blocks an interval covers whole (fa .. fb), and blocks it covers in part: position ranges
 * a .. b of block u. */
struct aset {
	uint64_t fa[SET_MAX], fb[SET_MAX];
	int nf;
	struct apart {
		uint64_t u, a[SET_MAX], b[SET_MAX];
		int n;
	} pt[SET_MAX];
	int np;
};

/* A segment: its bytes and when it is touched: A's at (m, u, jb, ph, pos) for every product
 * m0 .. m1 of the array and pass jb; W's at (m, u, jb, ph, pos) for every block u; C's once. */
struct seg {
	uint64_t st, en;
	struct pt t;
};

/* A touch of a line: when, and the bytes of the segment that touches it. */
struct touch {
	struct pt t;
	uint64_t st, en;
};

#define KEY 9

/* A block (or a pair of consecutive blocks) and what its line counts depend on. */
struct group {
	uint64_t key[KEY];
	uint64_t u;
};

/* Maps keys of a fixed number of words to indices 0, 1, ... in the order they are added. */
struct table {
	unsigned width;  /* words per key */
	uint64_t *key;   /* key i at key[i * width] */
	size_t *slot;    /* index + 1, or 0 where free */
	size_t n, cap, nslots;
};

/* Line counts of intervals of time (bound()), by key. */
#define SPAN_KEY 16

struct spans {
	struct table t;
	double *val; /* of key i */
	size_t ncap;
};

/* formula_proj_lines.c */
void piece(struct acc *a, uint64_t L, uint64_t st, uint64_t en);
double inner_lines(const struct pj *g, int x, uint64_t base, uint64_t P, uint64_t cnt,
		   uint64_t len);
bool a_ge(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct acut *o);
bool a_le(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct acut *o);
bool c_ge(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct ccut *o);
bool c_le(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct ccut *o);
void aset_add(const struct pj *g, uint64_t m, const struct acut *lo, const struct acut *hi,
	      struct aset *s);
double aset_lines(const struct pj *g, int x, struct aset *s);
double w_lines(const struct pj *g, uint64_t m, const struct wcut *lo, const struct wcut *hi);
double c_lines(const struct pj *g, uint64_t m, const struct ccut *lo, const struct ccut *hi);
double span_between(const struct pj *g, const struct pt *t1, bool s1, const struct pt *t2, bool s2);

/* formula_proj.c */
void seg_at(const struct pj *g, int x, uint64_t at, struct seg *sg);
int cmp_touch(const void *a, const void *b);
size_t line_touches(const struct pj *g, int x, uint64_t l, struct touch **buf, size_t *cap);
double window(const struct pj *g, int x, uint64_t l, const struct touch *a, const struct touch *b);
void block_key(const struct pj *g, uint64_t m, uint64_t u, uint64_t *k);
struct group *groups(const struct pj *g, uint64_t m, uint64_t n, bool pairs);
uint64_t group_end(const struct group *v, uint64_t i, uint64_t n);

/* formula_proj_edges.c */
void table_finish(struct table *t);
double edge_lines(const struct pj *g, int x, double *misses);
