/*
 * proj, line by line. Four products C = A W (kernels/proj.c): Q = x W_Q, K = x W_K, V = x W_V,
 * y = O W_O. Each runs blocks u = b T_r + ib (B_r rows of A of batch b) and, for each, passes jb
 * (B_c columns of W); pass (u, jb) loads, for each d-wide slice k of the inner dimension, A's
 * rows of block u in slice k (phase 2k), then W's rows k d .. k d + d - 1 in column block jb
 * (phase 2k + 1), and finally stores C's block (u, jb) row by row, in Q, K and V head by head
 * (phase 2 K_s). A time is (product, u, jb, phase, position in the phase).
 *
 * Each load or store walks one segment (a row's piece: one byte range) line by line. A line
 * that only one segment reaches (regular) is touched when that segment is; a line several
 * segments share (edge) when any of them is. Between two touches of a line come the lines of
 * every segment touched in between, the rest of its first segment and the start of its second:
 * span_between() counts them exactly from the set of segments an interval covers, laid out in
 * address order as periodic bands (band()). Regular lines of one slice of a block (of W: of one
 * column block and slice) share their windows and are counted together. Edge lines are counted
 * once for each class of alike ranges that hold them (a block's rows), most of their windows
 * decided by bounds that many lines share (see "edge lines").
 * Q, K, V and y are only stored: every miss reads for ownership under write-allocate and begins
 * a dirty stay, written back when it ends; a stay still cached at the end (the last C distinct
 * lines touched, resident()) is written by the final flush, or never without it.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "sim/util.h"

enum { PX, PO, PWQ, PWK, PWV, PWO, PQ, PK, PV, PY, NPA };
enum { ROLE_A, ROLE_W, ROLE_C };

static const char *const pj_names[NPA] = { "x", "O", "W_Q", "W_K", "W_V",
					   "W_O", "Q", "K", "V", "y" };

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

static const struct pt pt_end = { 4, 0, 0, 0, 0 };

static int
pt_cmp(const struct pt *a, const struct pt *b)
{
	const uint64_t x[5] = { a->m, a->u, a->jb, a->ph, a->pos };
	const uint64_t y[5] = { b->m, b->u, b->jb, b->ph, b->pos };

	for (int i = 0; i < 5; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* ---- geometry ---- */

static uint64_t
pj_r0(const struct pj *g, uint64_t u)
{
	return u % g->Tr * g->Br;
}

static uint64_t
pj_nr(const struct pj *g, uint64_t u)
{
	return min_u64(g->Br, g->N - pj_r0(g, u));
}

/* Row of x or y (over batches) of block u's first row. */
static uint64_t
pj_grow(const struct pj *g, uint64_t u)
{
	return u / g->Tr * g->N + pj_r0(g, u);
}

static uint64_t
pj_c1(const struct pj *g, uint64_t m, uint64_t j)
{
	return min_u64(g->p[m].n, (j + 1) * g->Bc);
}

/* Runs a row of C's block stores in pass jb: one per head its columns reach (one in y). */
static uint64_t
pj_nruns(const struct pj *g, uint64_t m, uint64_t j)
{
	if (!g->p[m].cnh)
		return 1;
	return (pj_c1(g, m, j) - 1) / g->d - j * g->Bc / g->d + 1;
}

static uint64_t
pj_npos(const struct pj *g, uint64_t m, uint64_t u, uint64_t j)
{
	return pj_nr(g, u) * pj_nruns(g, m, j);
}

/* ---- lines of byte ranges ---- */

/* Lines counted so far, in address order; the last of them. */
struct acc {
	double n;
	uint64_t last;
	bool any;
};

/* Adds the lines of rows i < cnt of base + i P + [iv[j][0], iv[j][1]) (pieces sorted, apart,
 * within one period), all at or above the lines added so far. */
static void
band(struct acc *a, uint64_t L, uint64_t base, uint64_t P, uint64_t cnt, const uint64_t (*iv)[2],
     int niv)
{
	int64_t n = 0;
	uint64_t first;

	if (cnt == 0 || niv == 0)
		return;
	for (int j = 0; j < niv; j++)
		n += (int64_t)(cnt + floor_sum(cnt, L, P, base + iv[j][1] - 1) -
			       floor_sum(cnt, L, P, base + iv[j][0]));
	/* Consecutive pieces that meet in a line: within a row, and from a row to the next. */
	for (int j = 0; j < niv; j++) {
		uint64_t e = base + iv[j][1] - 1;
		uint64_t nx = base + (j + 1 < niv ? iv[j + 1][0] : iv[0][0] + P);
		uint64_t rows = j + 1 < niv ? cnt : cnt - 1;

		if (rows && nx - e < L)
			n -= (int64_t)(rows - (floor_sum(rows, L, P, nx) - floor_sum(rows, L, P, e)));
	}
	first = (base + iv[0][0]) / L;
	if (a->any && first == a->last)
		n -= 1;
	a->n += (double)n;
	a->last = (base + (cnt - 1) * P + iv[niv - 1][1] - 1) / L;
	a->any = true;
}

/* Adds the lines of [st, en). */
static void
piece(struct acc *a, uint64_t L, uint64_t st, uint64_t en)
{
	const uint64_t iv[1][2] = { { 0, en - st } };

	if (en > st)
		band(a, L, st, en - st, 1, iv, 1);
}

/* Lines wholly inside one of the cnt ranges base + i P + [0, len): a line only that range
 * reaches (the array's last line counts as whole). */
static double
inner_lines(const struct pj *g, int x, uint64_t base, uint64_t P, uint64_t cnt, uint64_t len)
{
	uint64_t L = g->L, size = g->size[x], end = base + (cnt - 1) * P + len;
	double n = 0;

	if (cnt == 0)
		return 0;
	if (len >= L)
		n = (double)(floor_sum(cnt, L, P, base + len) - floor_sum(cnt, L, P, base + L - 1));
	if (end == size && size % L && end - len <= size / L * L)
		n += 1;
	return n;
}

/* ---- which positions an interval of time covers ---- */

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

/* The first A position of product m at or after (strict: after) t. */
static bool
a_ge(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct acut *o)
{
	uint64_t u = t->u, jb = t->jb, nr, p;

	if (t->m != m) {
		*o = (struct acut){ 0, 0, 0 };
		return t->m < m;
	}
	nr = pj_nr(g, u);
	if (t->ph < 2 * g->Ks && t->ph % 2 == 0)
		p = t->ph / 2 * nr + t->pos + strict;
	else
		p = min_u64(t->ph / 2 + 1, g->Ks) * nr;
	if (p >= g->Ks * nr) {
		jb++;
		p = 0;
	}
	if (jb >= g->p[m].Tn) {
		u++;
		jb = 0;
	}
	*o = (struct acut){ u, jb, p };
	return u < g->U;
}

/* The last A position of product m at or before (strict: before) t. */
static bool
a_le(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct acut *o)
{
	uint64_t u = t->u, jb = t->jb, nr, Tn = g->p[m].Tn;
	int64_t p;

	if (t->m != m) {
		*o = (struct acut){ g->U - 1, Tn - 1, g->Ks * pj_nr(g, g->U - 1) - 1 };
		return t->m > m;
	}
	nr = pj_nr(g, u);
	if (t->ph < 2 * g->Ks && t->ph % 2 == 0)
		p = (int64_t)(t->ph / 2 * nr + t->pos) - strict;
	else
		p = (int64_t)(min_u64(t->ph / 2 + 1, g->Ks) * nr) - 1;
	if (p < 0) {
		if (jb == 0) {
			if (u == 0)
				return false;
			u--;
			jb = Tn;
		}
		jb--;
		p = (int64_t)(g->Ks * pj_nr(g, u)) - 1;
	}
	*o = (struct acut){ u, jb, (uint64_t)p };
	return true;
}

/* W's first position at or after t, and last at or before; W slice k follows A slice k. */
static bool
w_ge(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct wcut *o)
{
	uint64_t q;

	if (t->m != m) {
		*o = (struct wcut){ 0, 0 };
		return t->m < m;
	}
	if (t->ph >= 2 * g->Ks)
		q = (t->jb + 1) * g->K;
	else if (t->ph % 2 == 0)
		q = t->jb * g->K + t->ph / 2 * g->d;
	else
		q = t->jb * g->K + t->ph / 2 * g->d + t->pos + strict;
	*o = (struct wcut){ t->u, q };
	if (q >= g->p[m].Tn * g->K)
		*o = (struct wcut){ t->u + 1, 0 };
	return o->u < g->U;
}

static bool
w_le(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct wcut *o)
{
	uint64_t end = g->p[m].Tn * g->K;
	int64_t q;

	if (t->m != m) {
		*o = (struct wcut){ g->U - 1, end - 1 };
		return t->m > m;
	}
	if (t->ph >= 2 * g->Ks)
		q = (int64_t)(t->jb * g->K + g->K) - 1;
	else if (t->ph % 2 == 0)
		q = (int64_t)(t->jb * g->K + t->ph / 2 * g->d) - 1;
	else
		q = (int64_t)(t->jb * g->K + t->ph / 2 * g->d + t->pos) - strict;
	if (q < 0) {
		if (t->u == 0)
			return false;
		*o = (struct wcut){ t->u - 1, end - 1 };
		return true;
	}
	*o = (struct wcut){ t->u, (uint64_t)q };
	return true;
}

/* C's first position at or after (u, jb, pos), moving on to the next pass when past it. */
static bool
c_up(const struct pj *g, uint64_t m, uint64_t u, uint64_t jb, uint64_t pos, struct ccut *o)
{
	if (jb < g->p[m].Tn && pos >= pj_npos(g, m, u, jb)) {
		jb++;
		pos = 0;
	}
	if (jb >= g->p[m].Tn) {
		u++;
		jb = 0;
		pos = 0;
	}
	*o = (struct ccut){ u, jb, pos };
	return u < g->U;
}

/* The last position of the pass before (u, jb). */
static bool
c_before(const struct pj *g, uint64_t m, uint64_t u, uint64_t jb, struct ccut *o)
{
	if (jb == 0) {
		if (u == 0)
			return false;
		u--;
		jb = g->p[m].Tn;
	}
	jb--;
	*o = (struct ccut){ u, jb, pj_npos(g, m, u, jb) - 1 };
	return true;
}

static bool
c_ge(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct ccut *o)
{
	if (t->m != m) {
		*o = (struct ccut){ 0, 0, 0 };
		return t->m < m;
	}
	return c_up(g, m, t->u, t->jb, t->ph >= 2 * g->Ks ? t->pos + strict : 0, o);
}

static bool
c_le(const struct pj *g, uint64_t m, const struct pt *t, bool strict, struct ccut *o)
{
	if (t->m != m) {
		uint64_t Tn = g->p[m].Tn;

		*o = (struct ccut){ g->U - 1, Tn - 1, pj_npos(g, m, g->U - 1, Tn - 1) - 1 };
		return t->m > m;
	}
	if (t->ph < 2 * g->Ks || (strict && t->pos == 0))
		return c_before(g, m, t->u, t->jb, o);
	*o = (struct ccut){ t->u, t->jb, t->pos - strict };
	return true;
}

/* ---- A: positions to lines ---- */

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

static void
aset_full(struct aset *s, uint64_t a, uint64_t b)
{
	s->fa[s->nf] = a;
	s->fb[s->nf++] = b;
}

static void
aset_part(struct aset *s, uint64_t u, uint64_t a, uint64_t b)
{
	int i = 0;

	while (i < s->np && s->pt[i].u != u)
		i++;
	if (i == s->np)
		s->pt[s->np++] = (struct apart){ .u = u };
	s->pt[i].a[s->pt[i].n] = a;
	s->pt[i].b[s->pt[i].n++] = b;
}

/* Adds the positions of product m from lo to hi: over passes of one block, every pass covers
 * the whole block. */
static void
aset_add(const struct pj *g, uint64_t m, const struct acut *lo, const struct acut *hi,
	 struct aset *s)
{
	uint64_t e1 = g->Ks * pj_nr(g, lo->u) - 1, e2 = g->Ks * pj_nr(g, hi->u) - 1;

	if (lo->u == hi->u) {
		if (lo->jb == hi->jb) {
			aset_part(s, lo->u, lo->p, hi->p);
		} else if (hi->jb == lo->jb + 1 && hi->p + 1 < lo->p) {
			aset_part(s, lo->u, 0, hi->p);
			aset_part(s, lo->u, lo->p, e1);
		} else {
			aset_full(s, lo->u, lo->u);
		}
		return;
	}
	if (lo->jb + 1 < g->p[m].Tn || lo->p == 0)
		aset_full(s, lo->u, lo->u);
	else
		aset_part(s, lo->u, lo->p, e1);
	if (hi->jb > 0 || hi->p == e2)
		aset_full(s, hi->u, hi->u);
	else
		aset_part(s, hi->u, 0, hi->p);
	if (hi->u > lo->u + 1)
		aset_full(s, lo->u + 1, hi->u - 1);
}

static int
cmp_pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Sorts and merges ranges [a, b] that overlap or meet; returns how many remain. */
static int
merge_ranges(uint64_t *a, uint64_t *b, int n)
{
	uint64_t r[SET_MAX][2];
	int k = 0;

	for (int i = 0; i < n; i++) {
		r[i][0] = a[i];
		r[i][1] = b[i];
	}
	qsort(r, (size_t)n, sizeof(r[0]), cmp_pair);
	for (int i = 0; i < n; i++) {
		if (k && r[i][0] <= r[k - 1][1] + 1) {
			r[k - 1][1] = max_u64(r[k - 1][1], r[i][1]);
			continue;
		}
		r[k][0] = r[i][0];
		r[k++][1] = r[i][1];
	}
	for (int i = 0; i < k; i++) {
		a[i] = r[i][0];
		b[i] = r[i][1];
	}
	return k;
}

static int
cmp_part(const void *a, const void *b)
{
	const struct apart *x = a, *y = b;

	return (x->u > y->u) - (x->u < y->u);
}

/* Whole blocks merged and sorted; parts of blocks not already whole, sorted, their ranges
 * merged. */
static void
aset_normalize(struct aset *s)
{
	int np = 0;

	s->nf = merge_ranges(s->fa, s->fb, s->nf);
	for (int i = 0; i < s->np; i++) {
		bool whole = false;

		for (int j = 0; j < s->nf; j++)
			whole = whole || (s->fa[j] <= s->pt[i].u && s->pt[i].u <= s->fb[j]);
		if (whole)
			continue;
		s->pt[np] = s->pt[i];
		s->pt[np].n = merge_ranges(s->pt[np].a, s->pt[np].b, s->pt[np].n);
		np++;
	}
	s->np = np;
	qsort(s->pt, (size_t)np, sizeof(s->pt[0]), cmp_part);
}

/* Sorted distinct cut points of [lo, hi) among those given. */
static int
cuts(uint64_t *c, int n, uint64_t lo, uint64_t hi)
{
	uint64_t out[2 * SET_MAX + 8];
	int k = 0;

	out[k++] = lo;
	for (int i = 0; i < n; i++)
		if (c[i] > lo && c[i] < hi)
			out[k++] = c[i];
	out[k++] = hi;
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && out[j] < out[j - 1]; j--) {
			uint64_t t = out[j];

			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	n = 0;
	for (int i = 0; i < k; i++)
		if (n == 0 || out[i] != c[n - 1])
			c[n++] = out[i];
	return n;
}

/* x: block part pt, row by row (slices k of row i at (row i) K_s + k). */
static void
x_part(const struct pj *g, struct acc *a, const struct apart *pt)
{
	uint64_t nr = pj_nr(g, pt->u), c[2 * SET_MAX + 8];
	int nc = 0;

	for (int r = 0; r < pt->n; r++) {
		c[nc++] = pt->a[r] % nr;
		c[nc++] = pt->b[r] % nr + 1;
	}
	nc = cuts(c, nc, 0, nr);
	for (int z = 0; z + 1 < nc; z++) {
		uint64_t iv[SET_MAX][2], i0 = c[z];
		int niv = 0;

		for (int r = 0; r < pt->n; r++) {
			int64_t klo = (int64_t)(pt->a[r] / nr) + (i0 < pt->a[r] % nr);
			int64_t khi = (int64_t)(pt->b[r] / nr) - (i0 > pt->b[r] % nr);

			if (klo > khi)
				continue;
			iv[niv][0] = (uint64_t)klo * g->E;
			iv[niv++][1] = (uint64_t)(khi + 1) * g->E;
		}
		band(a, g->L, (pj_grow(g, pt->u) + i0) * g->rowB, g->rowB, c[z + 1] - i0, iv, niv);
	}
}

/* O: rows of head h of the set's blocks in batch b, in address order. */
static void
o_head(const struct pj *g, struct acc *a, const struct aset *s, uint64_t b, uint64_t h)
{
	uint64_t ua = b * g->Tr, ub = ua + g->Tr - 1, base = (b * g->H + h) * g->N * g->E;
	int i = 0, j = 0;

	while (i < s->nf || j < s->np) {
		if (j >= s->np || (i < s->nf && s->fa[i] < s->pt[j].u)) {
			uint64_t fa = max_u64(s->fa[i], ua), fb = min_u64(s->fb[i], ub);

			if (fa <= fb)
				piece(a, g->L, base + pj_r0(g, fa) * g->E,
				      base + (pj_r0(g, fb) + pj_nr(g, fb)) * g->E);
			i++;
			continue;
		}
		if (s->pt[j].u >= ua && s->pt[j].u <= ub) {
			const struct apart *pt = &s->pt[j];
			uint64_t nr = pj_nr(g, pt->u), r0 = pj_r0(g, pt->u);

			for (int r = 0; r < pt->n; r++) {
				uint64_t x0 = max_u64(pt->a[r], h * nr);
				uint64_t x1 = min_u64(pt->b[r], h * nr + nr - 1);

				if (x0 <= x1)
					piece(a, g->L, base + (r0 + x0 - h * nr) * g->E,
					      base + (r0 + x1 + 1 - h * nr) * g->E);
			}
		}
		j++;
	}
}

static double
aset_lines(const struct pj *g, int x, struct aset *s)
{
	struct acc a = { 0 };

	aset_normalize(s);
	if (x == PX) {
		int i = 0, j = 0;

		while (i < s->nf || j < s->np) {
			if (j >= s->np || (i < s->nf && s->fa[i] < s->pt[j].u)) {
				piece(&a, g->L, pj_grow(g, s->fa[i]) * g->rowB,
				      (pj_grow(g, s->fb[i]) + pj_nr(g, s->fb[i])) * g->rowB);
				i++;
			} else {
				x_part(g, &a, &s->pt[j++]);
			}
		}
		return a.n;
	}
	for (uint64_t b = 0; b < g->B; b++) {
		uint64_t ua = b * g->Tr, ub = ua + g->Tr - 1;
		bool any = false, whole = false;

		for (int i = 0; i < s->nf; i++) {
			any = any || (s->fa[i] <= ub && s->fb[i] >= ua);
			whole = whole || (s->fa[i] <= ua && s->fb[i] >= ub);
		}
		for (int j = 0; j < s->np; j++)
			any = any || (s->pt[j].u >= ua && s->pt[j].u <= ub);
		if (whole)
			piece(&a, g->L, b * g->H * g->N * g->E, (b + 1) * g->H * g->N * g->E);
		else if (any)
			for (uint64_t h = 0; h < g->H; h++)
				o_head(g, &a, s, b, h);
	}
	return a.n;
}

/* ---- W: positions q = jb K + R to lines ---- */

static double
w_lines(const struct pj *g, uint64_t m, const struct wcut *lo, const struct wcut *hi)
{
	const struct pprod *p = &g->p[m];
	uint64_t K = g->K, qe = p->Tn * K - 1, ra[2], rb[2], c[8];
	int nr = 1, nc = 0;
	struct acc a = { 0 };

	if (lo->u > hi->u || (lo->u == hi->u && lo->q > hi->q))
		return 0;
	ra[0] = lo->q;
	rb[0] = hi->q;
	if (lo->u != hi->u) {
		if (hi->u > lo->u + 1 || hi->q + 1 >= lo->q) {
			piece(&a, g->L, 0, g->size[p->w]);
			return a.n;
		}
		ra[0] = 0;
		ra[1] = lo->q;
		rb[1] = qe;
		nr = 2;
	}
	for (int r = 0; r < nr; r++) {
		c[nc++] = ra[r] % K;
		c[nc++] = rb[r] % K + 1;
	}
	nc = cuts(c, nc, 0, K);
	for (int z = 0; z + 1 < nc; z++) {
		uint64_t iv[2][2], R0 = c[z];
		int niv = 0;

		for (int r = 0; r < nr; r++) {
			int64_t jlo = (int64_t)(ra[r] / K) + (R0 < ra[r] % K);
			int64_t jhi = (int64_t)(rb[r] / K) - (R0 > rb[r] % K);

			if (jlo > jhi)
				continue;
			iv[niv][0] = (uint64_t)jlo * g->Bc * g->s;
			iv[niv++][1] = pj_c1(g, m, (uint64_t)jhi) * g->s;
		}
		band(&a, g->L, R0 * p->n * g->s, p->n * g->s, c[z + 1] - R0, iv, niv);
	}
	return a.n;
}

/* ---- C: positions to lines ---- */

/* Positions of one block from (ja, ia, ha) to (jz, iz, hz): pass, row, head of the run. */
struct cpart {
	uint64_t u;
	int64_t ja, ia, ha, jz, iz, hz;
	bool whole; /* blocks u .. uz whole */
	uint64_t uz;
};

static void
c_decode(const struct pj *g, uint64_t m, const struct ccut *c, int64_t *j, int64_t *i, int64_t *h)
{
	uint64_t runs = pj_nruns(g, m, c->jb);

	*j = (int64_t)c->jb;
	*i = (int64_t)(c->pos / runs);
	*h = g->p[m].cnh ? (int64_t)(c->jb * g->Bc / g->d + c->pos % runs) : 0;
}

/* y: a block's part, row by row. */
static void
y_part(const struct pj *g, uint64_t m, struct acc *a, const struct cpart *cp)
{
	uint64_t nr = pj_nr(g, cp->u), n = g->p[m].n, c[4] = { (uint64_t)cp->ia,
							     (uint64_t)cp->iz + 1 };
	int nc = cuts(c, 2, 0, nr);

	for (int z = 0; z + 1 < nc; z++) {
		int64_t i0 = (int64_t)c[z];
		int64_t jlo = cp->ja + (i0 < cp->ia), jhi = cp->jz - (i0 > cp->iz);
		uint64_t iv[1][2];

		if (jlo > jhi)
			continue;
		iv[0][0] = (uint64_t)jlo * g->Bc * g->s;
		iv[0][1] = pj_c1(g, m, (uint64_t)jhi) * g->s;
		band(a, g->L, (pj_grow(g, cp->u) + (uint64_t)i0) * n * g->s, n * g->s,
		     c[z + 1] - (uint64_t)i0, iv, 1);
	}
}

/* Q, K, V: head h's rows of a block's part. */
static void
h_part(const struct pj *g, uint64_t m, struct acc *a, const struct cpart *cp, uint64_t base,
       int64_t h)
{
	int64_t d = (int64_t)g->d, Bc = (int64_t)g->Bc;
	int64_t jf = h * d / Bc, jl = ((h + 1) * d - 1) / Bc;
	uint64_t nr = pj_nr(g, cp->u), c[6] = { (uint64_t)cp->ia, (uint64_t)cp->ia + 1,
						(uint64_t)cp->iz, (uint64_t)cp->iz + 1 };
	int nc = cuts(c, 4, 0, nr);

	for (int z = 0; z + 1 < nc; z++) {
		int64_t i0 = (int64_t)c[z];
		bool ge = i0 > cp->ia || (i0 == cp->ia && h >= cp->ha);
		bool le = i0 < cp->iz || (i0 == cp->iz && h <= cp->hz);
		int64_t jlo = ge ? cp->ja : cp->ja + 1, jhi = le ? cp->jz : cp->jz - 1;
		uint64_t iv[1][2];

		jlo = jlo > jf ? jlo : jf;
		jhi = jhi < jl ? jhi : jl;
		if (jlo > jhi)
			continue;
		iv[0][0] = (uint64_t)(jlo * Bc > h * d ? jlo * Bc - h * d : 0) * g->s;
		iv[0][1] = (min_u64(pj_c1(g, m, (uint64_t)jhi), (uint64_t)((h + 1) * d)) -
			    (uint64_t)(h * d)) *
			   g->s;
		band(a, g->L, base + (pj_r0(g, cp->u) + (uint64_t)i0) * g->d * g->s, g->d * g->s,
		     c[z + 1] - (uint64_t)i0, iv, 1);
	}
}

static double
c_lines(const struct pj *g, uint64_t m, const struct ccut *lo, const struct ccut *hi)
{
	const struct pprod *p = &g->p[m];
	struct cpart cp[3];
	int n = 0;
	struct acc a = { 0 };
	int64_t lj, li, lh, hj, hi_, hh;

	if (lo->u > hi->u || (lo->u == hi->u && (lo->jb > hi->jb ||
						 (lo->jb == hi->jb && lo->pos > hi->pos))))
		return 0;
	c_decode(g, m, lo, &lj, &li, &lh);
	c_decode(g, m, hi, &hj, &hi_, &hh);
	{
		/* the last position of a block: its last row's last run */
		int64_t je = (int64_t)p->Tn - 1;
		int64_t he = p->cnh ? (int64_t)((pj_c1(g, m, p->Tn - 1) - 1) / g->d) : 0;

		if (lo->u == hi->u) {
			cp[n++] = (struct cpart){ lo->u, lj, li, lh, hj, hi_, hh, false, 0 };
		} else {
			cp[n++] = (struct cpart){ lo->u, lj,    li,
						  lh,    je,    (int64_t)pj_nr(g, lo->u) - 1,
						  he,    false, 0 };
			if (hi->u > lo->u + 1)
				cp[n++] = (struct cpart){ .u = lo->u + 1,
							  .whole = true,
							  .uz = hi->u - 1 };
			cp[n++] = (struct cpart){ hi->u, 0, 0, 0, hj, hi_, hh, false, 0 };
		}
	}
	if (!p->cnh) {
		uint64_t rb = p->n * g->s;

		for (int i = 0; i < n; i++) {
			if (cp[i].whole)
				piece(&a, g->L, pj_grow(g, cp[i].u) * rb,
				      (pj_grow(g, cp[i].uz) + pj_nr(g, cp[i].uz)) * rb);
			else
				y_part(g, m, &a, &cp[i]);
		}
		return a.n;
	}
	for (uint64_t b = lo->u / g->Tr; b <= hi->u / g->Tr; b++) {
		uint64_t ua = b * g->Tr, ub = ua + g->Tr - 1, hb = b * p->cnh * g->N * g->d * g->s;

		/* batches between whole: one range */
		if (b > lo->u / g->Tr && b < hi->u / g->Tr) {
			piece(&a, g->L, hb, hb + p->cnh * g->N * g->d * g->s);
			continue;
		}
		for (uint64_t h = 0; h < p->cnh; h++) {
			uint64_t base = hb + h * g->N * g->d * g->s;

			for (int i = 0; i < n; i++) {
				if (cp[i].whole) {
					uint64_t fa = max_u64(cp[i].u, ua), fb = min_u64(cp[i].uz, ub);

					if (fa <= fb)
						piece(&a, g->L, base + pj_r0(g, fa) * g->d * g->s,
						      base + (pj_r0(g, fb) + pj_nr(g, fb)) * g->d *
								     g->s);
				} else if (cp[i].u >= ua && cp[i].u <= ub) {
					h_part(g, m, &a, &cp[i], base, (int64_t)h);
				}
			}
		}
	}
	return a.n;
}

/* Distinct lines of the segments touched from t1 to t2 (strict: leaving out t1, t2 itself). */
static double
span_between(const struct pj *g, const struct pt *t1, bool s1, const struct pt *t2, bool s2)
{
	double n = 0;

	for (int x = PX; x <= PO; x++) {
		struct aset set = { .nf = 0 };
		bool any = false;

		for (uint64_t m = x == PX ? 0 : 3; m <= (x == PX ? 2 : 3); m++) {
			struct acut lo, hi;

			if (a_ge(g, m, t1, s1, &lo) && a_le(g, m, t2, s2, &hi) &&
			    (lo.u < hi.u || (lo.u == hi.u && (lo.jb < hi.jb ||
							       (lo.jb == hi.jb && lo.p <= hi.p))))) {
				aset_add(g, m, &lo, &hi, &set);
				any = true;
			}
		}
		if (any)
			n += aset_lines(g, x, &set);
	}
	for (uint64_t m = 0; m < 4; m++) {
		struct wcut wl, wh;
		struct ccut cl, ch;

		if (w_ge(g, m, t1, s1, &wl) && w_le(g, m, t2, s2, &wh))
			n += w_lines(g, m, &wl, &wh);
		if (c_ge(g, m, t1, s1, &cl) && c_le(g, m, t2, s2, &ch))
			n += c_lines(g, m, &cl, &ch);
	}
	return n;
}

/* ---- segments ---- */

/* A segment: its bytes and when it is touched: A's at (m, u, jb, ph, pos) for every product
 * m0 .. m1 of the array and pass jb; W's at (m, u, jb, ph, pos) for every block u; C's once. */
struct seg {
	uint64_t st, en;
	struct pt t;
};

static void
seg_at(const struct pj *g, int x, uint64_t at, struct seg *sg)
{
	uint64_t s = g->s, d = g->d, e = at / s;

	if (g->role[x] == ROLE_A) {
		uint64_t i = at / g->E, b, r, k;

		if (x == PX) {
			k = i % g->Ks;
			r = i / g->Ks % g->N;
			b = i / g->Ks / g->N;
		} else {
			r = i % g->N;
			k = i / g->N % g->H;
			b = i / g->N / g->H;
		}
		sg->st = i * g->E;
		sg->en = sg->st + g->E;
		sg->t = (struct pt){ 0, b * g->Tr + r / g->Br, 0, 2 * k, r % g->Br };
	} else if (g->role[x] == ROLE_W) {
		uint64_t m = g->m0[x], n = g->p[m].n, R = e / n, j = e % n / g->Bc;

		sg->st = (R * n + j * g->Bc) * s;
		sg->en = (R * n + pj_c1(g, m, j)) * s;
		sg->t = (struct pt){ m, 0, j, 2 * (R / d) + 1, R % d };
	} else {
		uint64_t m = g->m0[x], n = g->p[m].n, nh = g->p[m].cnh, b, r, j, pos;

		if (!nh) {
			uint64_t row = e / n;

			j = e % n / g->Bc;
			b = row / g->N;
			r = row % g->N;
			pos = r % g->Br;
			sg->st = (row * n + j * g->Bc) * s;
			sg->en = (row * n + pj_c1(g, m, j)) * s;
		} else {
			uint64_t hr = e / d, h = hr / g->N % nh, col = h * d + e % d;

			j = col / g->Bc;
			b = hr / g->N / nh;
			r = hr % g->N;
			pos = r % g->Br * pj_nruns(g, m, j) + h - j * g->Bc / d;
			sg->st = (hr * d + max_u64(j * g->Bc, h * d) - h * d) * s;
			sg->en = (hr * d + min_u64(pj_c1(g, m, j), (h + 1) * d) - h * d) * s;
		}
		sg->t = (struct pt){ m, b * g->Tr + r / g->Br, j, 2 * g->Ks, pos };
	}
}

/* The segment's first touch after t. */
static bool
seg_next(const struct pj *g, int x, const struct seg *sg, const struct pt *t, struct pt *o)
{
	struct pt c = sg->t;

	if (g->role[x] == ROLE_C) {
		*o = c;
		return pt_cmp(&c, t) > 0;
	}
	if (g->role[x] == ROLE_W) {
		if (t->m != c.m)
			return t->m < c.m && (*o = c, true);
		c.u = t->u;
		if (pt_cmp(&c, t) <= 0)
			c.u++;
		*o = c;
		return c.u < g->U;
	}
	for (uint64_t m = g->m0[x]; m <= g->m1[x]; m++) {
		c.m = m;
		c.jb = 0;
		if (m < t->m || (m == t->m && c.u < t->u))
			continue;
		if (m == t->m && c.u == t->u) {
			c.jb = t->jb;
			if (pt_cmp(&c, t) <= 0)
				c.jb++;
			if (c.jb >= g->p[m].Tn)
				continue;
		}
		*o = c;
		return true;
	}
	return false;
}

/* Is line l of array x touched after t1 and before t2? */
static bool
touched_between(const struct pj *g, int x, uint64_t l, const struct pt *t1, const struct pt *t2)
{
	uint64_t at = l * g->L, end = min_u64(at + g->L, g->size[x]);

	while (at < end) {
		struct seg sg;
		struct pt nx;

		seg_at(g, x, at, &sg);
		if (seg_next(g, x, &sg, t1, &nx) && pt_cmp(&nx, t2) < 0)
			return true;
		at = sg.en;
	}
	return false;
}

/* A touch of a line: when, and the bytes of the segment that touches it. */
struct touch {
	struct pt t;
	uint64_t st, en;
};

static int
cmp_touch(const void *a, const void *b)
{
	return pt_cmp(&((const struct touch *)a)->t, &((const struct touch *)b)->t);
}

/* Every touch of line l of array x, in time order; returns how many (buf grows). */
static size_t
line_touches(const struct pj *g, int x, uint64_t l, struct touch **buf, size_t *cap)
{
	uint64_t at = l * g->L, end = min_u64(at + g->L, g->size[x]);
	size_t n = 0;

	while (at < end) {
		struct seg sg;
		uint64_t reps;

		seg_at(g, x, at, &sg);
		reps = g->role[x] == ROLE_C ? 1 : g->role[x] == ROLE_W ? g->U : 0;
		for (uint64_t m = g->m0[x]; g->role[x] == ROLE_A && m <= g->m1[x]; m++)
			reps += g->p[m].Tn;
		if (n + reps > *cap) {
			*cap = 2 * (n + reps);
			*buf = xrealloc(*buf, *cap * sizeof(**buf));
		}
		for (uint64_t i = 0; i < reps; i++) {
			struct touch *tc = &(*buf)[n++];

			tc->t = sg.t;
			tc->st = sg.st;
			tc->en = sg.en;
			if (g->role[x] == ROLE_W) {
				tc->t.u = i;
			} else if (g->role[x] == ROLE_A) {
				uint64_t m = g->m0[x], j = i;

				while (j >= g->p[m].Tn)
					j -= g->p[m++].Tn;
				tc->t.m = m;
				tc->t.jb = j;
			}
		}
		at = sg.en;
	}
	qsort(*buf, n, sizeof(**buf), cmp_touch);
	return n;
}

/* Lines touched between a touch of line l and its next: the segments touched in between, the
 * rest of the first segment after l and the second's lines before l (less those the segments
 * between touch too). */
static double
window(const struct pj *g, int x, uint64_t l, const struct touch *a, const struct touch *b)
{
	double n = span_between(g, &a->t, true, &b->t, true) + g->tl;
	uint64_t la = (a->en - 1) / g->L, fb = b->st / g->L;

	if (la > l)
		n += (double)(la - l) - touched_between(g, x, la, &a->t, &b->t);
	if (fb < l)
		n += (double)(l - fb) - touched_between(g, x, fb, &a->t, &b->t);
	return n;
}

/* ---- regular lines ---- */

/* Regular lines of slice k of block u of A array x. */
static double
a_inner(const struct pj *g, int x, uint64_t u, uint64_t k)
{
	uint64_t nr = pj_nr(g, u);

	if (x == PX)
		return inner_lines(g, x, (pj_grow(g, u) * g->Ks + k) * g->E, g->rowB, nr, g->E);
	return inner_lines(g, x, ((u / g->Tr * g->H + k) * g->N + pj_r0(g, u)) * g->E, g->E, nr,
			   g->E);
}

#define KEY 9

/* A block (or a pair of consecutive blocks) and what its line counts depend on. */
struct group {
	uint64_t key[KEY];
	uint64_t u;
};

/* Blocks alike in product m: as many rows, A's and C's bytes at the same offsets in their
 * lines (so each set of their lines counts the same), and the last block (the arrays' end). */
static void
block_key(const struct pj *g, uint64_t m, uint64_t u, uint64_t *k)
{
	const struct pprod *p = &g->p[m];
	uint64_t b = u / g->Tr, r0 = pj_r0(g, u);

	k[0] = pj_nr(g, u);
	k[1] = (p->a == PX ? pj_grow(g, u) * g->rowB : (b * g->H * g->N + r0) * g->E) % g->L;
	k[2] = (p->cnh ? (b * p->cnh * g->N + r0) * g->d : pj_grow(g, u) * p->n) * g->s % g->L;
	k[3] = u + 1 == g->U;
}

static int
cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	for (int i = 0; i < KEY; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return 0;
}

/* Blocks u < n of product m (pairs: u and u + 1, and whether they share a batch), sorted so
 * that blocks alike are next to each other. */
static struct group *
groups(const struct pj *g, uint64_t m, uint64_t n, bool pairs)
{
	struct group *v = xzalloc(n * sizeof(*v));

	for (uint64_t u = 0; u < n; u++) {
		v[u].u = u;
		block_key(g, m, u, v[u].key);
		if (pairs) {
			block_key(g, m, u + 1, v[u].key + 4);
			v[u].key[8] = u / g->Tr == (u + 1) / g->Tr;
		}
	}
	qsort(v, n, sizeof(*v), cmp_group);
	return v;
}

/* The end of the group starting at v[i]. */
static uint64_t
group_end(const struct group *v, uint64_t i, uint64_t n)
{
	uint64_t j = i + 1;

	while (j < n && cmp_group(&v[j], &v[i]) == 0)
		j++;
	return j;
}

/* ---- edge lines ---- */

/*
 * An edge line is touched by each of its segments; between two touches in a row comes a
 * window (window()). Most windows are decided by bounds that do not depend on the line: the
 * lines touched from the start of the first touch's pass (or phase) to the end of the second's
 * hold the window's lines and the line itself, and those touched strictly between the two
 * passes (phases) are among the window's. Only a window the bounds leave open is counted
 * exactly. The bounds are memoized: between passes of one product at most a block apart by
 * the blocks' geometry (block_key(): blocks alike touch the same lines up to a shift by whole
 * lines), else by the passes themselves.
 *
 * Edge lines are counted by ranges of bytes (a block's rows; in the head-major layouts, a
 * block's rows of one head) that each own the lines starting in them. Ranges alike (same
 * head, same offsets in their lines, blocks alike, and the ranges around them alike and as
 * far from them) own the same edge lines at the same offsets, touched by the same segments at
 * the same times relative to their block: their windows within that block and the next are
 * the same. The windows further apart (from one product to the next, or from a head's last
 * block to the next head's first) are kept for each range. A range shorter than a line, or
 * followed by one (a batch's last block of few rows), is counted line by line. W's edge lines
 * are touched in every block: their windows are counted once for blocks alike and once for
 * pairs of blocks alike.
 */

/* Maps keys of a fixed number of words to indices 0, 1, ... in the order they are added. */
struct table {
	unsigned width;  /* words per key */
	uint64_t *key;   /* key i at key[i * width] */
	size_t *slot;    /* index + 1, or 0 where free */
	size_t n, cap, nslots;
};

static uint64_t
key_hash(const uint64_t *key, unsigned width)
{
	uint64_t h = 1469598103934665603ULL;

	for (unsigned i = 0; i < width; i++) {
		h ^= key[i];
		h *= 1099511628211ULL;
		h ^= h >> 29;
	}
	return h;
}

static void
table_grow(struct table *t)
{
	size_t nslots = t->nslots ? 2 * t->nslots : 1024;

	free(t->slot);
	t->slot = xzalloc(nslots * sizeof(*t->slot));
	t->nslots = nslots;
	for (size_t i = 0; i < t->n; i++) {
		size_t s = key_hash(t->key + i * t->width, t->width) & (nslots - 1);

		while (t->slot[s])
			s = (s + 1) & (nslots - 1);
		t->slot[s] = i + 1;
	}
}

/* The index of key, adding it (*added) when new. */
static size_t
table_find(struct table *t, const uint64_t *key, bool *added)
{
	size_t s;

	if (2 * (t->n + 1) > t->nslots)
		table_grow(t);
	s = key_hash(key, t->width) & (t->nslots - 1);
	for (; t->slot[s]; s = (s + 1) & (t->nslots - 1))
		if (memcmp(t->key + (t->slot[s] - 1) * t->width, key, t->width * sizeof(*key)) == 0) {
			*added = false;
			return t->slot[s] - 1;
		}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->key = xrealloc(t->key, t->cap * t->width * sizeof(*t->key));
	}
	memcpy(t->key + t->n * t->width, key, t->width * sizeof(*key));
	t->slot[s] = ++t->n;
	*added = true;
	return t->n - 1;
}

static void
table_finish(struct table *t)
{
	free(t->key);
	free(t->slot);
}

/* Line counts of intervals of time (bound()), by key. */
#define SPAN_KEY 16

struct spans {
	struct table t;
	double *val; /* of key i */
	size_t ncap;
};

/* The first and last times of t's pass (phase: of its phase). */
static struct pt
grain_first(const struct pt *t, bool phase)
{
	return (struct pt){ t->m, t->u, t->jb, phase ? t->ph : 0, 0 };
}

static struct pt
grain_last(const struct pj *g, const struct pt *t, bool phase)
{
	uint64_t ph = phase ? t->ph : 2 * g->Ks, n;

	n = ph == 2 * g->Ks ? pj_npos(g, t->m, t->u, t->jb) : ph % 2 ? g->d : pj_nr(g, t->u);
	return (struct pt){ t->m, t->u, t->jb, ph, n - 1 };
}

/* Lines touched from the start of t1's pass (phase) to the end of t2's (outer), or strictly
 * between the two (not outer); t1 is before t2. */
static double
bound(const struct pj *g, const struct pt *t1, const struct pt *t2, bool phase, bool outer)
{
	struct spans *sp = g->spans;
	struct pt a, b;
	uint64_t key[SPAN_KEY] = { 0 };
	bool added;
	size_t i;

	/* which bound; then the passes (phases) relative to block t1->u and the blocks' geometry,
	 * or the passes themselves */
	key[0] = 1 | (uint64_t)phase << 1 | (uint64_t)outer << 2;
	if (t1->m == t2->m && t2->u - t1->u <= 1) {
		key[0] |= 8;
		key[1] = t1->m;
		key[2] = t1->jb;
		key[3] = phase ? t1->ph : 0;
		key[4] = t2->jb;
		key[5] = phase ? t2->ph : 0;
		key[6] = t2->u - t1->u;
		block_key(g, t1->m, t1->u, key + 7);
		if (t2->u != t1->u) {
			block_key(g, t2->m, t2->u, key + 11);
			key[15] = t1->u / g->Tr == t2->u / g->Tr;
		}
	} else {
		key[1] = t1->m;
		key[2] = t1->u;
		key[3] = t1->jb;
		key[4] = phase ? t1->ph : 0;
		key[5] = t2->m;
		key[6] = t2->u;
		key[7] = t2->jb;
		key[8] = phase ? t2->ph : 0;
	}
	i = table_find(&sp->t, key, &added);
	if (!added)
		return sp->val[i];
	if (i >= sp->ncap) {
		sp->ncap = sp->t.cap;
		sp->val = xrealloc(sp->val, sp->ncap * sizeof(*sp->val));
	}
	a = grain_first(t1, phase);
	b = grain_first(t2, phase);
	if (outer) {
		b = grain_last(g, t2, phase);
		sp->val[i] = span_between(g, &a, false, &b, false);
	} else if (pt_cmp(&a, &b) == 0) {
		sp->val[i] = 0;
	} else {
		a = grain_last(g, t1, phase);
		sp->val[i] = span_between(g, &a, true, &b, true);
	}
	return sp->val[i];
}

/* Does every window from t1 to t2 (of any line) miss (1), hit (0), or does it depend on the
 * line (-1)? */
static int
decide(const struct pj *g, const struct pt *t1, const struct pt *t2, bool phase)
{
	/* the outer span holds the line itself */
	if (bound(g, t1, t2, phase, true) - 1 + g->tl < g->C)
		return 0;
	if (bound(g, t1, t2, phase, false) + g->tl >= g->C)
		return 1;
	return -1;
}

/* Does line l of array x miss at touch b, touched last at a? */
static bool
misses_at(const struct pj *g, int x, uint64_t l, const struct touch *a, const struct touch *b)
{
	int o = decide(g, &a->t, &b->t, false);

	if (o < 0)
		o = decide(g, &a->t, &b->t, true);
	if (o < 0)
		o = window(g, x, l, a, b) >= g->C;
	return o;
}

/* Do segments of array x only meet at line boundaries (no edge lines)? */
static bool
aligned(const struct pj *g, int x)
{
	const struct pprod *p = &g->p[g->m0[x]];

	if (g->role[x] == ROLE_A)
		return g->E % g->L == 0;
	if (g->role[x] == ROLE_C && p->cnh)
		return g->E % g->L == 0 && g->Bc * g->s % g->L == 0;
	return p->n * g->s % g->L == 0 && g->Bc * g->s % g->L == 0;
}

/* Misses of edge line l of array x; adds them to *misses. */
static void
line_misses(const struct pj *g, int x, uint64_t l, struct touch **buf, size_t *cap, double *misses)
{
	size_t n = line_touches(g, x, l, buf, cap);

	*misses += 1;
	for (size_t i = 1; i < n; i++)
		*misses += misses_at(g, x, l, &(*buf)[i - 1], &(*buf)[i]);
}

/* ---- edge lines by ranges ---- */

/* Bytes [st, en) of array x: block u's rows (of head h in the head-major layouts). */
struct range {
	uint64_t u, h, st, en;
};

/* Heads of array x's layout [batch][heads][N][d]; 0 when it is [batch][N][columns]. */
static uint64_t
layout_heads(const struct pj *g, int x)
{
	return x == PO ? g->H : g->role[x] == ROLE_C ? g->p[g->m0[x]].cnh : 0;
}

static uint64_t
nranges(const struct pj *g, int x)
{
	uint64_t nh = layout_heads(g, x);

	return nh ? g->B * nh * g->Tr : g->U;
}

/* Range i in address order. */
static void
range_at(const struct pj *g, int x, uint64_t i, struct range *r)
{
	uint64_t nh = layout_heads(g, x), b, row;

	if (nh) {
		b = i / (nh * g->Tr);
		r->h = i / g->Tr % nh;
		r->u = b * g->Tr + i % g->Tr;
		r->st = ((b * nh + r->h) * g->N + pj_r0(g, r->u)) * g->E;
		r->en = r->st + pj_nr(g, r->u) * g->E;
		return;
	}
	row = x == PX ? g->rowB : g->p[g->m0[x]].n * g->s;
	r->h = 0;
	r->u = i;
	r->st = pj_grow(g, i) * row;
	r->en = r->st + pj_nr(g, i) * row;
}

#define RANGE_KEY 52

/* What the edge lines of range i and their windows within its block and the next depend on:
 * the head, offsets in lines, the blocks (of each product that uses the array), and the ranges
 * around (two before, three after: as far as the lines of a line's segments reach), their
 * blocks and heads relative to range i's and their lengths. */
static void
range_key(const struct pj *g, int x, uint64_t i, const struct range *r, uint64_t *k)
{
	unsigned n = 5;

	memset(k, 0, RANGE_KEY * sizeof(*k));
	k[0] = (uint64_t)x;
	k[1] = r->h;
	k[2] = r->st % g->L;
	k[3] = r->u % g->Tr == g->Tr - 1;
	k[4] = r->en == g->size[x];
	for (uint64_t m = g->m0[x]; m <= g->m1[x]; m++, n += 9) {
		block_key(g, m, r->u, k + n);
		if (r->u + 1 < g->U) {
			block_key(g, m, r->u + 1, k + n + 4);
			k[n + 8] = r->u / g->Tr == (r->u + 1) / g->Tr;
		} else {
			k[n + 8] = 2;
		}
	}
	for (int64_t j = -2; j <= 3; j++, n += 3) {
		struct range o;

		if (j == 0 || (int64_t)i + j < 0 || i + (uint64_t)j >= nranges(g, x))
			continue;
		range_at(g, x, i + (uint64_t)j, &o);
		k[n] = o.u - r->u;
		k[n + 1] = o.h - r->h;
		k[n + 2] = o.en - o.st;
	}
}

/* Edge lines owned by [st, en) of array x (starting there): appended to *lines; returns how
 * many. */
static size_t
owned_edges(const struct pj *g, int x, uint64_t st, uint64_t en, uint64_t **lines, size_t *cap)
{
	uint64_t at = st, L = g->L, first = (st + L - 1) / L, last = UINT64_MAX;
	size_t n = 0;

	while (at < g->size[x]) {
		struct seg sg;
		uint64_t p;

		seg_at(g, x, at, &sg);
		p = sg.en;
		if (p >= g->size[x] || p / L * L >= en)
			break;
		if (p % L && p / L >= first && p / L != last) {
			if (n == *cap) {
				*cap = *cap ? 2 * *cap : 256;
				*lines = xrealloc(*lines, *cap * sizeof(**lines));
			}
			(*lines)[n++] = last = p / L;
		}
		at = p;
	}
	return n;
}

/* A window kept for each range: the line's offset from the range and the two touches, their
 * blocks and bytes relative to the range's. */
struct far {
	uint64_t off;
	struct touch a, b;
};

/* Ranges alike: their edge lines, misses from first touches and windows within the block and
 * the next, and the windows kept, sorted by their passes: run i is far[run[i] .. run[i + 1]). */
struct rclass {
	double edges, misses;
	struct far *far;
	size_t nfar, *run, nrun;
};

static struct touch
touch_moved(const struct touch *t, uint64_t du, uint64_t db)
{
	struct touch o = *t;

	o.t.u += du;
	o.st += db;
	o.en += db;
	return o;
}

/* Orders times by their passes only. */
static int
pass_cmp(const struct pt *a, const struct pt *b)
{
	struct pt x = grain_first(a, false), y = grain_first(b, false);

	return pt_cmp(&x, &y);
}

static int
far_cmp(const void *a, const void *b)
{
	const struct far *x = a, *y = b;
	int c = pass_cmp(&x->a.t, &y->a.t);

	return c ? c : pass_cmp(&x->b.t, &y->b.t);
}

/* Counts the class of range r from r's edge lines. */
static void
rclass_count(const struct pj *g, int x, const struct range *r, struct rclass *c)
{
	uint64_t *lines = NULL;
	struct touch *buf = NULL;
	size_t cap = 0, lcap = 0, fcap = 0, nl = owned_edges(g, x, r->st, r->en, &lines, &lcap);

	*c = (struct rclass){ .edges = (double)nl, .misses = (double)nl };
	for (size_t i = 0; i < nl; i++) {
		uint64_t l = lines[i];
		size_t n = line_touches(g, x, l, &buf, &cap);

		for (size_t k = 1; k < n; k++) {
			const struct touch *a = &buf[k - 1], *b = &buf[k];

			/* in one product, in blocks u and u + 1 (unsigned: earlier ones are far) */
			if (a->t.m == b->t.m && a->t.u - r->u <= 1 && b->t.u - r->u <= 1) {
				c->misses += misses_at(g, x, l, a, b);
				continue;
			}
			if (c->nfar == fcap) {
				fcap = fcap ? 2 * fcap : 64;
				c->far = xrealloc(c->far, fcap * sizeof(*c->far));
			}
			c->far[c->nfar++] = (struct far){ l * g->L - r->st,
							  touch_moved(a, -r->u, -r->st),
							  touch_moved(b, -r->u, -r->st) };
		}
	}
	if (c->nfar)
		qsort(c->far, c->nfar, sizeof(*c->far), far_cmp);
	c->run = xzalloc((c->nfar + 1) * sizeof(*c->run));
	for (size_t i = 0; i < c->nfar; i++)
		if (i == 0 || far_cmp(&c->far[i], &c->far[i - 1]))
			c->run[c->nrun++] = i;
	c->run[c->nrun] = c->nfar;
	free(buf);
	free(lines);
}

/* Misses of the windows kept by class c, for range r: decided once for each pair of passes
 * where the bounds allow. */
static double
far_misses(const struct pj *g, int x, const struct range *r, const struct rclass *c)
{
	double misses = 0;

	for (size_t z = 0; z < c->nrun; z++) {
		size_t i = c->run[z], j = c->run[z + 1];
		struct touch a = touch_moved(&c->far[i].a, r->u, r->st);
		struct touch b = touch_moved(&c->far[i].b, r->u, r->st);
		int o = decide(g, &a.t, &b.t, false);

		if (o >= 0) {
			misses += o * (double)(j - i);
			continue;
		}
		for (size_t k = i; k < j; k++) {
			a = touch_moved(&c->far[k].a, r->u, r->st);
			b = touch_moved(&c->far[k].b, r->u, r->st);
			misses += misses_at(g, x, (c->far[k].off + r->st) / g->L, &a, &b);
		}
	}
	return misses;
}

/* Misses of the edge lines of array x (A or C) by ranges; adds to *misses and returns how
 * many edge lines there are. A range shorter than a line, or followed by one, owns lines that
 * may reach past the next range: counted one by one. */
static double
edges_ranges(const struct pj *g, int x, double *misses)
{
	struct table t = { .width = RANGE_KEY };
	struct rclass *cls = NULL;
	uint64_t key[RANGE_KEY], n = nranges(g, x), *lines = NULL;
	struct touch *buf = NULL;
	size_t ccap = 0, lcap = 0, cap = 0;
	double edges = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct range r, nx = { 0, 0, 0, g->L }; /* after the last: as if a line long */
		bool added;
		size_t k;

		range_at(g, x, i, &r);
		if (i + 1 < n)
			range_at(g, x, i + 1, &nx);
		if (r.en - r.st < g->L || nx.en - nx.st < g->L) {
			size_t nl = owned_edges(g, x, r.st, r.en, &lines, &lcap);

			for (size_t z = 0; z < nl; z++)
				line_misses(g, x, lines[z], &buf, &cap, misses);
			edges += (double)nl;
			continue;
		}
		range_key(g, x, i, &r, key);
		k = table_find(&t, key, &added);
		if (added) {
			if (k == ccap) {
				ccap = ccap ? 2 * ccap : 16;
				cls = xrealloc(cls, ccap * sizeof(*cls));
			}
			rclass_count(g, x, &r, &cls[k]);
		}
		edges += cls[k].edges;
		*misses += cls[k].misses + far_misses(g, x, &r, &cls[k]);
	}
	for (size_t k = 0; k < t.n; k++) {
		free(cls[k].run);
		free(cls[k].far);
	}
	free(cls);
	free(buf);
	free(lines);
	table_finish(&t);
	return edges;
}

/* Misses of W's edge lines (product m): each of a line's segments is touched in every block;
 * the windows within a block are counted once for blocks alike, those from a block to the
 * next once for pairs alike. Adds to *misses and returns how many edge lines there are. */
static double
edges_w(const struct pj *g, int x, double *misses)
{
	uint64_t m = g->m0[x], at = 0, last = UINT64_MAX, L = g->L;
	struct group *v1 = groups(g, m, g->U, false), *v2 = NULL;
	uint64_t *rep1 = xzalloc(g->U * sizeof(*rep1)), *rep2 = NULL;
	double *cnt1 = xzalloc(g->U * sizeof(*cnt1)), *cnt2 = NULL, edges = 0;
	struct touch *tc = NULL;
	size_t n1 = 0, n2 = 0, cap = 0;

	for (uint64_t i = 0, j; i < g->U; i = j, n1++) {
		j = group_end(v1, i, g->U);
		rep1[n1] = v1[i].u;
		cnt1[n1] = (double)(j - i);
	}
	if (g->U > 1) {
		v2 = groups(g, m, g->U - 1, true);
		rep2 = xzalloc(g->U * sizeof(*rep2));
		cnt2 = xzalloc(g->U * sizeof(*cnt2));
		for (uint64_t i = 0, j; i < g->U - 1; i = j, n2++) {
			j = group_end(v2, i, g->U - 1);
			rep2[n2] = v2[i].u;
			cnt2[n2] = (double)(j - i);
		}
	}
	while (at < g->size[x]) {
		struct seg sg;
		uint64_t l, p;
		size_t ns = 0;

		seg_at(g, x, at, &sg);
		at = sg.en;
		if (at >= g->size[x] || at % L == 0 || at / L == last)
			continue;
		l = last = at / L;
		edges += 1;
		*misses += 1;
		/* the line's segments, touched at block 0; then sorted in time */
		for (p = l * L; p < min_u64(l * L + L, g->size[x]); p = sg.en, ns++) {
			seg_at(g, x, p, &sg);
			if (ns == cap) {
				cap = cap ? 2 * cap : 16;
				tc = xrealloc(tc, cap * sizeof(*tc));
			}
			tc[ns] = (struct touch){ sg.t, sg.st, sg.en };
		}
		qsort(tc, ns, sizeof(*tc), cmp_touch);
		for (size_t k = 0; k < n1; k++)
			for (size_t z = 1; z < ns; z++) {
				struct touch a = touch_moved(&tc[z - 1], rep1[k], 0);
				struct touch b = touch_moved(&tc[z], rep1[k], 0);

				*misses += cnt1[k] * misses_at(g, x, l, &a, &b);
			}
		for (size_t k = 0; k < n2; k++) {
			struct touch a = touch_moved(&tc[ns - 1], rep2[k], 0);
			struct touch b = touch_moved(&tc[0], rep2[k] + 1, 0);

			*misses += cnt2[k] * misses_at(g, x, l, &a, &b);
		}
	}
	free(tc);
	free(cnt2);
	free(rep2);
	free(v2);
	free(cnt1);
	free(rep1);
	free(v1);
	return edges;
}

/* Misses of every edge line of array x (lines that several segments reach); adds to *misses
 * and returns how many edge lines there are. */
static double
edge_lines(const struct pj *g, int x, double *misses)
{
	if (aligned(g, x))
		return 0;
	if (g->role[x] == ROLE_W)
		return edges_w(g, x, misses);
	return edges_ranges(g, x, misses);
}

/* A lines of product m touched from t1 to t2. */
static double
a_between(const struct pj *g, uint64_t m, const struct pt *t1, const struct pt *t2)
{
	struct aset s = { .nf = 0 };
	struct acut lo, hi;

	if (!a_ge(g, m, t1, false, &lo) || !a_le(g, m, t2, false, &hi) || lo.u > hi.u ||
	    (lo.u == hi.u && (lo.jb > hi.jb || (lo.jb == hi.jb && lo.p > hi.p))))
		return 0;
	aset_add(g, m, &lo, &hi, &s);
	return aset_lines(g, g->p[m].a, &s);
}

/* C lines of product m stored from t1 to t2. */
static double
c_between(const struct pj *g, uint64_t m, const struct pt *t1, const struct pt *t2)
{
	struct ccut lo, hi;

	if (!c_ge(g, m, t1, false, &lo) || !c_le(g, m, t2, false, &hi))
		return 0;
	return c_lines(g, m, &lo, &hi);
}

/* Misses of A's regular lines in product m after their first pass: slice k of block u comes
 * back in the next pass after the rest of the block, W's rows from slice k of column block
 * jb to slice k of the next, and C's block (u, jb). */
static double
a_passes(const struct pj *g, uint64_t m)
{
	const struct pprod *p = &g->p[m];
	double *wst, *cb, misses = 0;
	struct group *v;

	if (p->Tn < 2)
		return 0;
	wst = xzalloc(p->Tn * g->Ks * sizeof(*wst));
	cb = xzalloc(p->Tn * sizeof(*cb));
	for (uint64_t jb = 0; jb + 1 < p->Tn; jb++)
		for (uint64_t k = 0; k < g->Ks; k++) {
			struct wcut lo = { 0, jb * g->K + k * g->d };
			struct wcut hi = { 0, (jb + 1) * g->K + k * g->d - 1 };

			wst[jb * g->Ks + k] = w_lines(g, m, &lo, &hi);
		}
	v = groups(g, m, g->U, false);
	for (uint64_t i = 0, j; i < g->U; i = j) {
		uint64_t u = v[i].u;
		struct pt t1 = { m, u, 0, 0, 0 }, t2 = { m, u, 0, 2 * g->Ks - 1, g->d - 1 };
		double block = a_between(g, m, &t1, &t2), each = 0;

		j = group_end(v, i, g->U);
		for (uint64_t jb = 0; jb + 1 < p->Tn; jb++) {
			t1 = (struct pt){ m, u, jb, 2 * g->Ks, 0 };
			t2 = (struct pt){ m, u, jb, 2 * g->Ks, pj_npos(g, m, u, jb) - 1 };
			cb[jb] = c_between(g, m, &t1, &t2);
		}
		for (uint64_t k = 0; k < g->Ks; k++) {
			double reg = a_inner(g, p->a, u, k), n = 0;

			for (uint64_t jb = 0; reg > 0 && jb + 1 < p->Tn; jb++)
				n += block - 1 + g->tl + wst[jb * g->Ks + k] + cb[jb] >= g->C;
			each += reg * n;
		}
		misses += each * (double)(j - i);
	}
	free(v);
	free(cb);
	free(wst);
	return misses;
}

/* Misses of the regular x lines' first loads in product m (1 or 2): last loaded in the last
 * pass of their block in product m - 1; between come all of x and the W and C lines of the
 * two products after and before the block (the same for every slice of a block other than the
 * first and last, where part of W is left out). */
static double
x_products(const struct pj *g, uint64_t m, double regular)
{
	struct acc a = { 0 };
	double misses = 0, w = 0;

	piece(&a, g->L, 0, g->size[PX]);
	if (a.n - 1 + g->tl >= g->C)
		return regular;
	for (uint64_t u = 0; u < g->U; u++)
		for (uint64_t k = 0; k < g->Ks; k++) {
			if (k == 0 || u == 0 || u + 1 == g->U) {
				struct pt t1 = { m - 1, u, g->p[m - 1].Tn - 1, 2 * k, 0 };
				struct pt t2 = { m, u, 0, 2 * k, 0 };

				w = span_between(g, &t1, false, &t2, false) - 1 + g->tl;
			}
			if (w >= g->C)
				misses += a_inner(g, PX, u, k);
		}
	return misses;
}

/* Misses of W's regular lines: column block jb and slice k, loaded in every block; a line comes
 * back in the next block after every other W line and the A and C lines between. */
static double
w_blocks(const struct pj *g, uint64_t m)
{
	const struct pprod *p = &g->p[m];
	uint64_t n = p->Tn * g->Ks;
	double *reg = xzalloc(n * sizeof(*reg)), *miss = xzalloc(n * sizeof(*miss));
	double *cp = xzalloc(p->Tn * sizeof(*cp)), wall, total = 0;
	struct group *v = NULL;
	struct acc a = { 0 };

	piece(&a, g->L, 0, g->size[p->w]);
	wall = a.n;
	for (uint64_t jb = 0; jb < p->Tn; jb++)
		for (uint64_t k = 0; k < g->Ks; k++)
			reg[jb * g->Ks + k] = inner_lines(
				g, p->w, (k * g->d * p->n + jb * g->Bc) * g->s, p->n * g->s, g->d,
				(pj_c1(g, m, jb) - jb * g->Bc) * g->s);
	if (g->U > 1)
		v = groups(g, m, g->U - 1, true);
	for (uint64_t i = 0, j; v && i < g->U - 1; i = j) {
		uint64_t u = v[i].u;
		double mid = -1;

		j = group_end(v, i, g->U - 1);
		for (uint64_t jb = 0; jb < p->Tn; jb++) {
			struct pt t1 = { m, u, jb, 2 * g->Ks, 0 }, t2 = { m, u + 1, jb, 0, 0 };

			cp[jb] = c_between(g, m, &t1, &t2);
		}
		for (uint64_t jb = 0; jb < p->Tn; jb++)
			for (uint64_t k = 0; k < g->Ks; k++) {
				struct pt t1 = { m, u, jb, 2 * k + 1, 0 };
				struct pt t2 = { m, u + 1, jb, 2 * k + 1, 0 };
				double ap;

				/* between the first and last column block both blocks are whole */
				if (jb > 0 && jb + 1 < p->Tn && mid >= 0) {
					ap = mid;
				} else {
					ap = a_between(g, m, &t1, &t2);
					if (jb > 0 && jb + 1 < p->Tn)
						mid = ap;
				}
				if (wall - 1 + g->tl + ap + cp[jb] >= g->C)
					miss[jb * g->Ks + k] += (double)(j - i);
			}
	}
	for (uint64_t z = 0; z < n; z++)
		total += reg[z] * (1 + miss[z]);
	free(v);
	free(cp);
	free(miss);
	free(reg);
	return total;
}

/* Lines touched from t to the end (and the tiles). */
static double
from(const struct pj *g, const struct pt *t, bool strict)
{
	return span_between(g, t, strict, &pt_end, false) + g->tl;
}

/* The largest v < n with at least C lines touched from time c, *field = v, to the end (v = 0
 * has). */
static uint64_t
bisect(const struct pj *g, struct pt *c, uint64_t *field, uint64_t n)
{
	uint64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		*field = mid;
		if (from(g, c, false) >= g->C)
			lo = mid;
		else
			hi = mid - 1;
	}
	*field = lo;
	return lo;
}

/* The lines of each stored array still cached at the end: the last C distinct lines touched.
 * From the last touch t from which C lines are touched to the end, those touched after t, and
 * of t's segment as many as fill the cache. */
static void
resident(const struct pj *g, double *res)
{
	struct pt t = { 0, 0, 0, 0, 0 };
	uint64_t lo, hi, n;
	int y;

	for (int x = 0; x < NPA; x++)
		res[x] = g->role[x] == ROLE_C ? ceil((double)g->size[x] / (double)g->L) : 0;
	if (from(g, &t, false) < g->C)
		return;
	/* blocks (m, u) in order, then the pass, the phase and the position in it */
	lo = 0;
	hi = 4 * g->U - 1;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;

		t = (struct pt){ mid / g->U, mid % g->U, 0, 0, 0 };
		if (from(g, &t, false) >= g->C)
			lo = mid;
		else
			hi = mid - 1;
	}
	t = (struct pt){ lo / g->U, lo % g->U, 0, 0, 0 };
	bisect(g, &t, &t.jb, g->p[t.m].Tn);
	bisect(g, &t, &t.ph, 2 * g->Ks + 1);
	n = t.ph == 2 * g->Ks ? pj_npos(g, t.m, t.u, t.jb) : t.ph % 2 ? g->d : pj_nr(g, t.u);
	bisect(g, &t, &t.pos, n);
	y = t.ph == 2 * g->Ks ? g->p[t.m].c : t.ph % 2 ? g->p[t.m].w : g->p[t.m].a;
	for (uint64_t m = 0; m < 4; m++) {
		struct ccut after, last;
		int x = g->p[m].c;

		res[x] = 0;
		if (c_ge(g, m, &t, true, &after) && c_le(g, m, &pt_end, false, &last))
			res[x] = c_lines(g, m, &after, &last);
		if (x == y)
			res[x] += g->C - from(g, &t, true);
	}
}

/* Lines of the W tile (Kt) the products touch: d rows of min(B_c, D) floats at a stride of
 * B_c floats (no product has more than D columns), so rows narrower than B_c leave gaps. */
static double
w_tile_lines(const struct attn_config *c, uint64_t L)
{
	return tile_row_lines(c->d, c->Bc * 4, min_u64(c->Bc, c->heads * c->d) * 4, L);
}

/* The most lines one step touches between two uses of a tile line: B_r rows of d inputs, d
 * rows of B_c weights, and the block's outputs, a row of B_c columns in runs of at most d
 * (one per head it crosses). B_c blocks columns here, so it is not clipped to N. */
static double
proj_step_lines(const struct attn_config *c, const struct q *q, const double *tile_lines)
{
	double Bc = (double)c->Bc, s = q->s, L = q->L, run = fmin(Bc, q->d);
	double in = q->Br * lines_at_most(q->d * s / L) + q->d * lines_at_most(Bc * s / L);
	double out = q->Br * (ceil(Bc / q->d) + 1) * lines_at_most(run * s / L);

	return tile_lines[0] + tile_lines[1] + tile_lines[2] + in + out;
}

void
formula_proj(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	static const int order[NPA] = { PX, PWQ, PQ, PWK, PK, PWV, PV, PO, PWO, PY };
	/* the S tile holds B_r rows of B_c floats, B_c not clipped to N (columns, not rows) */
	double tile_lines[] = { q->tq, q->tk > 0 ? w_tile_lines(c, (uint64_t)q->L) : 0,
				q->ts > 0 ? ceil(q->Br * (double)c->Bc * 4 / q->L) : 0 };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "S_tile" };
	uint64_t Dm = c->heads * c->d, Dkv = c->kv_heads * c->d;
	double misses[NPA] = { 0 }, res[NPA];
	struct spans spans = { .t = { .width = SPAN_KEY } };
	struct pj g = { .spans = &spans };

	g.N = c->N;
	g.d = c->d;
	g.H = c->heads;
	g.B = c->batch;
	g.s = dtype_bytes(c->dtype);
	g.L = (uint64_t)q->L;
	g.Br = min_u64(c->Br, c->N);
	g.Bc = c->Bc;
	g.Tr = attn_blocks(c->N, c->Br);
	g.U = g.B * g.Tr;
	g.Ks = g.H;
	g.K = Dm;
	g.E = g.d * g.s;
	g.rowB = Dm * g.s;
	g.C = q->C;
	g.tl = tile_lines[0] + tile_lines[1] + tile_lines[2];
	g.p[0] = (struct pprod){ PX, PWQ, PQ, Dm, 0, c->heads };
	g.p[1] = (struct pprod){ PX, PWK, PK, Dkv, 0, c->kv_heads };
	g.p[2] = (struct pprod){ PX, PWV, PV, Dkv, 0, c->kv_heads };
	g.p[3] = (struct pprod){ PO, PWO, PY, Dm, 0, 0 };
	for (uint64_t m = 0; m < 4; m++) {
		struct pprod *p = &g.p[m];

		p->Tn = (p->n + g.Bc - 1) / g.Bc;
		g.role[p->a] = ROLE_A;
		g.role[p->w] = ROLE_W;
		g.role[p->c] = ROLE_C;
		g.m0[p->w] = g.m1[p->w] = g.m0[p->c] = g.m1[p->c] = m;
		g.m0[p->a] = m == 0 || p->a == PO ? m : g.m0[p->a];
		g.m1[p->a] = m;
		g.size[p->w] = Dm * p->n * g.s;
		g.size[p->c] = g.B * g.N * p->n * g.s;
	}
	g.size[PX] = g.size[PO] = g.B * g.N * Dm * g.s;
	for (int i = 0; i < NPA; i++)
		arr(r, pj_names[order[i]]);
	for (int x = 0; x < NPA; x++) {
		/* every regular line misses at its first touch */
		double regular = ceil((double)g.size[x] / (double)g.L) - edge_lines(&g, x, &misses[x]);

		if (g.role[x] == ROLE_W) {
			misses[x] += w_blocks(&g, g.m0[x]);
			continue;
		}
		misses[x] += regular;
		for (uint64_t m = g.m0[x]; g.role[x] == ROLE_A && m <= g.m1[x]; m++) {
			misses[x] += a_passes(&g, m);
			if (m > g.m0[x])
				misses[x] += x_products(&g, m, regular);
		}
	}
	resident(&g, res);
	for (int x = 0; x < NPA; x++) {
		struct formula_array *a = arr(r, pj_names[x]);
		double L = q->L;

		if (g.role[x] != ROLE_C) {
			a->read_bytes += misses[x] * L;
			continue;
		}
		if (q->rfo) {
			a->read_bytes += misses[x] * L;
			a->rfo_bytes += misses[x] * L;
		}
		a->write_bytes += (misses[x] - (q->flush ? 0 : res[x])) * L;
		if (q->flush) {
			a->flush_bytes += res[x] * L;
		}
	}
	free(spans.val);
	table_finish(&spans.t);
	tiles(r, q, tile_names, tile_lines, 3, proj_step_lines(c, q, tile_lines));
}
