#pragma once

/*
 * proj's formula (formula_proj.c) in three files: the geometry and the structs they share,
 * and the functions one uses from another. formula_proj_lines.c: lines of byte ranges and
 * which positions an interval of time covers (proj_span_between()); formula_proj.c: segments,
 * regular lines, the passes and the formula; formula_proj_edges.c: edge lines.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { PX, PO, PWQ, PWK, PWV, PWO, PQ, PK, PV, PY, NPA };
enum { ROLE_A, ROLE_W, ROLE_C };

struct proj_product {
	int a, w, c;
	uint64_t n, Tn; /* columns of W and C, and their column blocks */
	uint64_t cnh;   /* heads of C's layout [batch][heads][N][d]; 0 for y, [batch][N][n] */
};

/* proj's geometry: N rows, d head dimension, H heads, B batch, s element bytes, L line bytes,
 * B_r, B_c, T_r; U blocks (B T_r); Ks d-wide slices of the inner dimension K (= H d); E a
 * slice's bytes (d s), rowB a row's (K s); C cache lines, tl tile lines in use (0 in scratch). */
struct proj_geometry {
	uint64_t N, d, H, B, s, L, Br, Bc, Tr, U, Ks, K, E, rowB;
	double C, tl;
	struct proj_product p[4];
	uint64_t size[NPA];
	int role[NPA];
	uint64_t m0[NPA], m1[NPA]; /* the products that use an array: m0 .. m1 */
	struct proj_spans *spans;  /* memoized bounds of windows (bound()) */
};

/* A time: product m, block u, pass jb, phase ph, position pos in the phase. */
struct proj_time {
	uint64_t m, u, jb, ph, pos;
};

static inline int
proj_time_cmp(const struct proj_time *a, const struct proj_time *b)
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
proj_block_first_row(const struct proj_geometry *g, uint64_t u)
{
	return u % g->Tr * g->Br;
}

static inline uint64_t
proj_block_rows(const struct proj_geometry *g, uint64_t u)
{
	return min_u64(g->Br, g->N - proj_block_first_row(g, u));
}

/* Row of x or y (over batches) of block u's first row. */
static inline uint64_t
proj_block_global_row(const struct proj_geometry *g, uint64_t u)
{
	return u / g->Tr * g->N + proj_block_first_row(g, u);
}

static inline uint64_t
proj_column_end(const struct proj_geometry *g, uint64_t m, uint64_t j)
{
	return min_u64(g->p[m].n, (j + 1) * g->Bc);
}

/* Runs a row of C's block stores in pass jb: one per head its columns reach (one in y). */
static inline uint64_t
proj_store_runs(const struct proj_geometry *g, uint64_t m, uint64_t j)
{
	if (!g->p[m].cnh)
		return 1;
	return (proj_column_end(g, m, j) - 1) / g->d - j * g->Bc / g->d + 1;
}

static inline uint64_t
proj_positions(const struct proj_geometry *g, uint64_t m, uint64_t u, uint64_t j)
{
	return proj_block_rows(g, u) * proj_store_runs(g, m, j);
}

/* Lines counted so far, in address order; the last of them. */
struct proj_line_count {
	double n;
	uint64_t last;
	bool any;
};

/* In product m: A position p = k nr + i of pass (u, jb); W position q = jb K + R in block u;
 * C position pos of pass (u, jb). */
struct proj_a_position {
	uint64_t u, jb, p;
};

struct proj_w_position {
	uint64_t u, q;
};

struct proj_c_position {
	uint64_t u, jb, pos;
};

#define SET_MAX 12 /* three products, three whole runs each */

/* Blocks an interval covers whole (fa .. fb), and blocks it covers in part: position ranges
 * a .. b of block u. */
struct proj_a_set {
	uint64_t fa[SET_MAX], fb[SET_MAX];
	int nf;
	struct proj_a_part {
		uint64_t u, a[SET_MAX], b[SET_MAX];
		int n;
	} pt[SET_MAX];
	int np;
};

/* A segment: its bytes and when it is touched: A's at (m, u, jb, ph, pos) for every product
 * m0 .. m1 of the array and pass jb; W's at (m, u, jb, ph, pos) for every block u; C's once. */
struct proj_segment {
	uint64_t st, en;
	struct proj_time t;
};

/* A touch of a line: when, and the bytes of the segment that touches it. */
struct proj_touch {
	struct proj_time t;
	uint64_t st, en;
};

#define KEY 9

/* A block (or a pair of consecutive blocks) and what its line counts depend on. */
struct proj_group {
	uint64_t key[KEY];
	uint64_t u;
};

/* Maps keys of a fixed number of words to indices 0, 1, ... in the order they are added. */
struct proj_table {
	unsigned width;  /* words per key */
	uint64_t *key;   /* key i at key[i * width] */
	size_t *slot;    /* index + 1, or 0 where free */
	size_t n, cap, nslots;
};

/* Line counts of intervals of time (bound()), by key. */
#define SPAN_KEY 16

struct proj_spans {
	struct proj_table t;
	double *val; /* of key i */
	size_t ncap;
};

/* formula_proj_lines.c */
void proj_count_range(struct proj_line_count *a, uint64_t L, uint64_t st, uint64_t en);
double proj_inner_lines(const struct proj_geometry *g, int x, uint64_t base, uint64_t P,
			uint64_t cnt, uint64_t len);
bool proj_a_first_from(const struct proj_geometry *g, uint64_t m, const struct proj_time *t,
		       bool strict, struct proj_a_position *o);
bool proj_a_last_until(const struct proj_geometry *g, uint64_t m, const struct proj_time *t,
		       bool strict, struct proj_a_position *o);
bool proj_c_first_from(const struct proj_geometry *g, uint64_t m, const struct proj_time *t,
		       bool strict, struct proj_c_position *o);
bool proj_c_last_until(const struct proj_geometry *g, uint64_t m, const struct proj_time *t,
		       bool strict, struct proj_c_position *o);
void proj_a_set_add(const struct proj_geometry *g, uint64_t m, const struct proj_a_position *lo,
		    const struct proj_a_position *hi, struct proj_a_set *s);
double proj_a_set_lines(const struct proj_geometry *g, int x, struct proj_a_set *s);
double proj_w_lines(const struct proj_geometry *g, uint64_t m, const struct proj_w_position *lo,
		    const struct proj_w_position *hi);
double proj_c_lines(const struct proj_geometry *g, uint64_t m, const struct proj_c_position *lo,
		    const struct proj_c_position *hi);
double proj_span_between(const struct proj_geometry *g, const struct proj_time *t1, bool s1,
			 const struct proj_time *t2, bool s2);

/* formula_proj.c */
void proj_segment_at(const struct proj_geometry *g, int x, uint64_t at, struct proj_segment *sg);
int proj_touch_cmp(const void *a, const void *b);
size_t proj_line_touches(const struct proj_geometry *g, int x, uint64_t l, struct proj_touch **buf,
			 size_t *cap);
double proj_window_lines(const struct proj_geometry *g, int x, uint64_t l,
			 const struct proj_touch *a, const struct proj_touch *b);
void proj_block_key(const struct proj_geometry *g, uint64_t m, uint64_t u, uint64_t *k);
struct proj_group *proj_groups(const struct proj_geometry *g, uint64_t m, uint64_t n, bool pairs);
uint64_t proj_group_end(const struct proj_group *v, uint64_t i, uint64_t n);

/* formula_proj_edges.c */
void proj_table_finish(struct proj_table *t);
double proj_edge_lines(const struct proj_geometry *g, int x, double *misses);
