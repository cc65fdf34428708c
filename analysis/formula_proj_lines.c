/* proj's formula: lines of byte ranges and which positions an interval of time covers. */

#include <stdlib.h>

#include "analysis/formula_kernels.h"
#include "analysis/formula_proj_internal.h"

/* ---- lines of byte ranges ---- */

/* Adds the lines of rows i < cnt of base + i P + [iv[j][0], iv[j][1]) (pieces sorted, apart,
 * within one period), all at or above the lines added so far. */
static void
band(struct proj_line_count *a, uint64_t L, uint64_t base, uint64_t P, uint64_t cnt,
     const uint64_t (*iv)[2], int niv)
{
	int64_t n = 0;
	uint64_t first;

	if (cnt == 0 || niv == 0)
		return;
	for (int j = 0; j < niv; j++)
		n += (int64_t)(cnt + formula_floor_sum(cnt, L, P, base + iv[j][1] - 1) -
			       formula_floor_sum(cnt, L, P, base + iv[j][0]));
	/* Consecutive pieces that meet in a line: within a row, and from a row to the next. */
	for (int j = 0; j < niv; j++) {
		uint64_t e = base + iv[j][1] - 1;
		uint64_t nx = base + (j + 1 < niv ? iv[j + 1][0] : iv[0][0] + P);
		uint64_t rows = j + 1 < niv ? cnt : cnt - 1;

		if (rows && nx - e < L)
			n -= (int64_t)(rows - (formula_floor_sum(rows, L, P, nx) -
					       formula_floor_sum(rows, L, P, e)));
	}
	first = (base + iv[0][0]) / L;
	if (a->any && first == a->last)
		n -= 1;
	a->n += (double)n;
	a->last = (base + (cnt - 1) * P + iv[niv - 1][1] - 1) / L;
	a->any = true;
}

/* Adds the lines of [st, en). */
void
proj_count_range(struct proj_line_count *a, uint64_t L, uint64_t st, uint64_t en)
{
	const uint64_t iv[1][2] = { { 0, en - st } };

	if (en > st)
		band(a, L, st, en - st, 1, iv, 1);
}

/* Lines wholly inside one of the cnt ranges base + i P + [0, len): a line only that range
 * reaches (the array's last line counts as whole). */
double
proj_inner_lines(const struct proj_geometry *g, int x, uint64_t base, uint64_t P, uint64_t cnt,
		 uint64_t len)
{
	uint64_t L = g->L, size = g->size[x], end = base + (cnt - 1) * P + len;
	double n = 0;

	if (cnt == 0)
		return 0;
	if (len >= L)
		n = (double)(formula_floor_sum(cnt, L, P, base + len) -
			     formula_floor_sum(cnt, L, P, base + L - 1));
	if (end == size && size % L && end - len <= size / L * L)
		n += 1;
	return n;
}

/* ---- which positions an interval of time covers ---- */

/* The first A position of product m at or after (strict: after) t. */
bool
proj_a_first_from(const struct proj_geometry *g, uint64_t m, const struct proj_time *t, bool strict,
		  struct proj_a_position *o)
{
	uint64_t u = t->u, jb = t->jb, nr, p;

	if (t->m != m) {
		*o = (struct proj_a_position){ 0, 0, 0 };
		return t->m < m;
	}
	nr = proj_block_rows(g, u);
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
	*o = (struct proj_a_position){ u, jb, p };
	return u < g->U;
}

/* The last A position of product m at or before (strict: before) t. */
bool
proj_a_last_until(const struct proj_geometry *g, uint64_t m, const struct proj_time *t, bool strict,
		  struct proj_a_position *o)
{
	uint64_t u = t->u, jb = t->jb, nr, Tn = g->p[m].Tn;
	int64_t p;

	if (t->m != m) {
		*o = (struct proj_a_position){ g->U - 1, Tn - 1,
					       g->Ks * proj_block_rows(g, g->U - 1) - 1 };
		return t->m > m;
	}
	nr = proj_block_rows(g, u);
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
		p = (int64_t)(g->Ks * proj_block_rows(g, u)) - 1;
	}
	*o = (struct proj_a_position){ u, jb, (uint64_t)p };
	return true;
}

/* W's first position at or after t, and last at or before; W slice k follows A slice k. */
static bool
w_first_from(const struct proj_geometry *g, uint64_t m, const struct proj_time *t, bool strict,
	     struct proj_w_position *o)
{
	uint64_t q;

	if (t->m != m) {
		*o = (struct proj_w_position){ 0, 0 };
		return t->m < m;
	}
	if (t->ph >= 2 * g->Ks)
		q = (t->jb + 1) * g->K;
	else if (t->ph % 2 == 0)
		q = t->jb * g->K + t->ph / 2 * g->d;
	else
		q = t->jb * g->K + t->ph / 2 * g->d + t->pos + strict;
	*o = (struct proj_w_position){ t->u, q };
	if (q >= g->p[m].Tn * g->K)
		*o = (struct proj_w_position){ t->u + 1, 0 };
	return o->u < g->U;
}

static bool
w_last_until(const struct proj_geometry *g, uint64_t m, const struct proj_time *t, bool strict,
	     struct proj_w_position *o)
{
	uint64_t end = g->p[m].Tn * g->K;
	int64_t q;

	if (t->m != m) {
		*o = (struct proj_w_position){ g->U - 1, end - 1 };
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
		*o = (struct proj_w_position){ t->u - 1, end - 1 };
		return true;
	}
	*o = (struct proj_w_position){ t->u, (uint64_t)q };
	return true;
}

/* C's first position at or after (u, jb, pos), moving on to the next pass when past it. */
static bool
c_up(const struct proj_geometry *g, uint64_t m, uint64_t u, uint64_t jb, uint64_t pos,
     struct proj_c_position *o)
{
	if (jb < g->p[m].Tn && pos >= proj_positions(g, m, u, jb)) {
		jb++;
		pos = 0;
	}
	if (jb >= g->p[m].Tn) {
		u++;
		jb = 0;
		pos = 0;
	}
	*o = (struct proj_c_position){ u, jb, pos };
	return u < g->U;
}

/* The last position of the pass before (u, jb). */
static bool
c_before(const struct proj_geometry *g, uint64_t m, uint64_t u, uint64_t jb,
	 struct proj_c_position *o)
{
	if (jb == 0) {
		if (u == 0)
			return false;
		u--;
		jb = g->p[m].Tn;
	}
	jb--;
	*o = (struct proj_c_position){ u, jb, proj_positions(g, m, u, jb) - 1 };
	return true;
}

bool
proj_c_first_from(const struct proj_geometry *g, uint64_t m, const struct proj_time *t, bool strict,
		  struct proj_c_position *o)
{
	if (t->m != m) {
		*o = (struct proj_c_position){ 0, 0, 0 };
		return t->m < m;
	}
	return c_up(g, m, t->u, t->jb, t->ph >= 2 * g->Ks ? t->pos + strict : 0, o);
}

bool
proj_c_last_until(const struct proj_geometry *g, uint64_t m, const struct proj_time *t, bool strict,
		  struct proj_c_position *o)
{
	if (t->m != m) {
		uint64_t Tn = g->p[m].Tn;

		*o = (struct proj_c_position){ g->U - 1, Tn - 1,
					       proj_positions(g, m, g->U - 1, Tn - 1) - 1 };
		return t->m > m;
	}
	if (t->ph < 2 * g->Ks || (strict && t->pos == 0))
		return c_before(g, m, t->u, t->jb, o);
	*o = (struct proj_c_position){ t->u, t->jb, t->pos - strict };
	return true;
}

/* ---- A: positions to lines ---- */

static void
aset_full(struct proj_a_set *s, uint64_t a, uint64_t b)
{
	s->fa[s->nf] = a;
	s->fb[s->nf++] = b;
}

static void
aset_part(struct proj_a_set *s, uint64_t u, uint64_t a, uint64_t b)
{
	int i = 0;

	while (i < s->np && s->pt[i].u != u)
		i++;
	if (i == s->np)
		s->pt[s->np++] = (struct proj_a_part){ .u = u };
	s->pt[i].a[s->pt[i].n] = a;
	s->pt[i].b[s->pt[i].n++] = b;
}

/* Adds the positions of product m from lo to hi: over passes of one block, every pass covers
 * the whole block. */
void
proj_a_set_add(const struct proj_geometry *g, uint64_t m, const struct proj_a_position *lo,
	       const struct proj_a_position *hi, struct proj_a_set *s)
{
	uint64_t e1 = g->Ks * proj_block_rows(g, lo->u) - 1,
		 e2 = g->Ks * proj_block_rows(g, hi->u) - 1;

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
	const struct proj_a_part *x = a, *y = b;

	return (x->u > y->u) - (x->u < y->u);
}

/* Whole blocks merged and sorted; parts of blocks not already whole, sorted, their ranges
 * merged. */
static void
aset_normalize(struct proj_a_set *s)
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
x_part(const struct proj_geometry *g, struct proj_line_count *a, const struct proj_a_part *pt)
{
	uint64_t nr = proj_block_rows(g, pt->u), c[2 * SET_MAX + 8];
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
		band(a, g->L, (proj_block_global_row(g, pt->u) + i0) * g->rowB, g->rowB,
		     c[z + 1] - i0, iv, niv);
	}
}

/* O: rows of head h of the set's blocks in batch b, in address order. */
static void
o_head(const struct proj_geometry *g, struct proj_line_count *a, const struct proj_a_set *s,
       uint64_t b, uint64_t h)
{
	uint64_t ua = b * g->Tr, ub = ua + g->Tr - 1, base = (b * g->H + h) * g->N * g->E;
	int i = 0, j = 0;

	while (i < s->nf || j < s->np) {
		if (j >= s->np || (i < s->nf && s->fa[i] < s->pt[j].u)) {
			uint64_t fa = max_u64(s->fa[i], ua), fb = min_u64(s->fb[i], ub);

			if (fa <= fb)
				proj_count_range(a, g->L, base + proj_block_first_row(g, fa) * g->E,
						 base + (proj_block_first_row(g, fb) +
							 proj_block_rows(g, fb)) *
								 g->E);
			i++;
			continue;
		}
		if (s->pt[j].u >= ua && s->pt[j].u <= ub) {
			const struct proj_a_part *pt = &s->pt[j];
			uint64_t nr = proj_block_rows(g, pt->u),
				 r0 = proj_block_first_row(g, pt->u);

			for (int r = 0; r < pt->n; r++) {
				uint64_t x0 = max_u64(pt->a[r], h * nr);
				uint64_t x1 = min_u64(pt->b[r], h * nr + nr - 1);

				if (x0 <= x1)
					proj_count_range(a, g->L, base + (r0 + x0 - h * nr) * g->E,
							 base + (r0 + x1 + 1 - h * nr) * g->E);
			}
		}
		j++;
	}
}

double
proj_a_set_lines(const struct proj_geometry *g, int x, struct proj_a_set *s)
{
	struct proj_line_count a = { 0 };

	aset_normalize(s);
	if (x == PX) {
		int i = 0, j = 0;

		while (i < s->nf || j < s->np) {
			if (j >= s->np || (i < s->nf && s->fa[i] < s->pt[j].u)) {
				proj_count_range(&a, g->L,
						 proj_block_global_row(g, s->fa[i]) * g->rowB,
						 (proj_block_global_row(g, s->fb[i]) +
						  proj_block_rows(g, s->fb[i])) *
							 g->rowB);
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
			proj_count_range(&a, g->L, b * g->H * g->N * g->E,
					 (b + 1) * g->H * g->N * g->E);
		else if (any)
			for (uint64_t h = 0; h < g->H; h++)
				o_head(g, &a, s, b, h);
	}
	return a.n;
}

/* ---- W: positions q = jb K + R to lines ---- */

double
proj_w_lines(const struct proj_geometry *g, uint64_t m, const struct proj_w_position *lo,
	     const struct proj_w_position *hi)
{
	const struct proj_product *p = &g->p[m];
	uint64_t K = g->K, qe = p->Tn * K - 1, ra[2], rb[2], c[8];
	int nr = 1, nc = 0;
	struct proj_line_count a = { 0 };

	if (lo->u > hi->u || (lo->u == hi->u && lo->q > hi->q))
		return 0;
	ra[0] = lo->q;
	rb[0] = hi->q;
	if (lo->u != hi->u) {
		if (hi->u > lo->u + 1 || hi->q + 1 >= lo->q) {
			proj_count_range(&a, g->L, 0, g->size[p->w]);
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
			iv[niv++][1] = proj_column_end(g, m, (uint64_t)jhi) * g->s;
		}
		band(&a, g->L, R0 * p->n * g->s, p->n * g->s, c[z + 1] - R0, iv, niv);
	}
	return a.n;
}

/* ---- C: positions to lines ---- */

/* Positions of one block from (ja, ia, ha) to (jz, iz, hz): pass, row, head of the run. */
struct c_part {
	uint64_t u;
	int64_t ja, ia, ha, jz, iz, hz;
	bool whole; /* blocks u .. uz whole */
	uint64_t uz;
};

static void
c_decode(const struct proj_geometry *g, uint64_t m, const struct proj_c_position *c, int64_t *j,
	 int64_t *i, int64_t *h)
{
	uint64_t runs = proj_store_runs(g, m, c->jb);

	*j = (int64_t)c->jb;
	*i = (int64_t)(c->pos / runs);
	*h = g->p[m].cnh ? (int64_t)(c->jb * g->Bc / g->d + c->pos % runs) : 0;
}

/* y: a block's part, row by row. */
static void
y_part(const struct proj_geometry *g, uint64_t m, struct proj_line_count *a,
       const struct c_part *cp)
{
	uint64_t nr = proj_block_rows(g, cp->u), n = g->p[m].n,
		 c[4] = { (uint64_t)cp->ia, (uint64_t)cp->iz + 1 };
	int nc = cuts(c, 2, 0, nr);

	for (int z = 0; z + 1 < nc; z++) {
		int64_t i0 = (int64_t)c[z];
		int64_t jlo = cp->ja + (i0 < cp->ia), jhi = cp->jz - (i0 > cp->iz);
		uint64_t iv[1][2];

		if (jlo > jhi)
			continue;
		iv[0][0] = (uint64_t)jlo * g->Bc * g->s;
		iv[0][1] = proj_column_end(g, m, (uint64_t)jhi) * g->s;
		band(a, g->L, (proj_block_global_row(g, cp->u) + (uint64_t)i0) * n * g->s, n * g->s,
		     c[z + 1] - (uint64_t)i0, iv, 1);
	}
}

/* Q, K, V: head h's rows of a block's part. */
static void
h_part(const struct proj_geometry *g, uint64_t m, struct proj_line_count *a,
       const struct c_part *cp, uint64_t base, int64_t h)
{
	int64_t d = (int64_t)g->d, Bc = (int64_t)g->Bc;
	int64_t jf = h * d / Bc, jl = ((h + 1) * d - 1) / Bc;
	uint64_t nr = proj_block_rows(g, cp->u), c[6] = { (uint64_t)cp->ia, (uint64_t)cp->ia + 1,
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
		iv[0][1] = (min_u64(proj_column_end(g, m, (uint64_t)jhi), (uint64_t)((h + 1) * d)) -
			    (uint64_t)(h * d)) *
			   g->s;
		band(a, g->L, base + (proj_block_first_row(g, cp->u) + (uint64_t)i0) * g->d * g->s,
		     g->d * g->s, c[z + 1] - (uint64_t)i0, iv, 1);
	}
}

double
proj_c_lines(const struct proj_geometry *g, uint64_t m, const struct proj_c_position *lo,
	     const struct proj_c_position *hi)
{
	const struct proj_product *p = &g->p[m];
	struct c_part cp[3];
	int n = 0;
	struct proj_line_count a = { 0 };
	int64_t lj, li, lh, hj, hi_, hh;

	if (lo->u > hi->u || (lo->u == hi->u && (lo->jb > hi->jb ||
						 (lo->jb == hi->jb && lo->pos > hi->pos))))
		return 0;
	c_decode(g, m, lo, &lj, &li, &lh);
	c_decode(g, m, hi, &hj, &hi_, &hh);
	{
		/* the last position of a block: its last row's last run */
		int64_t je = (int64_t)p->Tn - 1;
		int64_t he = p->cnh ? (int64_t)((proj_column_end(g, m, p->Tn - 1) - 1) / g->d) : 0;

		if (lo->u == hi->u) {
			cp[n++] = (struct c_part){ lo->u, lj, li, lh, hj, hi_, hh, false, 0 };
		} else {
			cp[n++] = (struct c_part){
				lo->u, lj,    li, lh, je, (int64_t)proj_block_rows(g, lo->u) - 1,
				he,    false, 0
			};
			if (hi->u > lo->u + 1)
				cp[n++] = (struct c_part){ .u = lo->u + 1,
							   .whole = true,
							   .uz = hi->u - 1 };
			cp[n++] = (struct c_part){ hi->u, 0, 0, 0, hj, hi_, hh, false, 0 };
		}
	}
	if (!p->cnh) {
		uint64_t rb = p->n * g->s;

		for (int i = 0; i < n; i++) {
			if (cp[i].whole)
				proj_count_range(&a, g->L, proj_block_global_row(g, cp[i].u) * rb,
						 (proj_block_global_row(g, cp[i].uz) +
						  proj_block_rows(g, cp[i].uz)) *
							 rb);
			else
				y_part(g, m, &a, &cp[i]);
		}
		return a.n;
	}
	for (uint64_t b = lo->u / g->Tr; b <= hi->u / g->Tr; b++) {
		uint64_t ua = b * g->Tr, ub = ua + g->Tr - 1, hb = b * p->cnh * g->N * g->d * g->s;

		/* batches between whole: one range */
		if (b > lo->u / g->Tr && b < hi->u / g->Tr) {
			proj_count_range(&a, g->L, hb, hb + p->cnh * g->N * g->d * g->s);
			continue;
		}
		for (uint64_t h = 0; h < p->cnh; h++) {
			uint64_t base = hb + h * g->N * g->d * g->s;

			for (int i = 0; i < n; i++) {
				if (cp[i].whole) {
					uint64_t fa = max_u64(cp[i].u, ua), fb = min_u64(cp[i].uz, ub);

					if (fa <= fb)
						proj_count_range(
							&a, g->L,
							base + proj_block_first_row(g, fa) * g->d *
									g->s,
							base + (proj_block_first_row(g, fb) +
								proj_block_rows(g, fb)) *
									g->d * g->s);
				} else if (cp[i].u >= ua && cp[i].u <= ub) {
					h_part(g, m, &a, &cp[i], base, (int64_t)h);
				}
			}
		}
	}
	return a.n;
}

/* Distinct lines of the segments touched from t1 to t2 (strict: leaving out t1, t2 itself). */
double
proj_span_between(const struct proj_geometry *g, const struct proj_time *t1, bool s1,
		  const struct proj_time *t2, bool s2)
{
	double n = 0;

	for (int x = PX; x <= PO; x++) {
		struct proj_a_set set = { .nf = 0 };
		bool any = false;

		for (uint64_t m = x == PX ? 0 : 3; m <= (x == PX ? 2 : 3); m++) {
			struct proj_a_position lo, hi;

			if (proj_a_first_from(g, m, t1, s1, &lo) &&
			    proj_a_last_until(g, m, t2, s2, &hi) &&
			    (lo.u < hi.u || (lo.u == hi.u && (lo.jb < hi.jb ||
							      (lo.jb == hi.jb && lo.p <= hi.p))))) {
				proj_a_set_add(g, m, &lo, &hi, &set);
				any = true;
			}
		}
		if (any)
			n += proj_a_set_lines(g, x, &set);
	}
	for (uint64_t m = 0; m < 4; m++) {
		struct proj_w_position wl, wh;
		struct proj_c_position cl, ch;

		if (w_first_from(g, m, t1, s1, &wl) && w_last_until(g, m, t2, s2, &wh))
			n += proj_w_lines(g, m, &wl, &wh);
		if (proj_c_first_from(g, m, t1, s1, &cl) && proj_c_last_until(g, m, t2, s2, &ch))
			n += proj_c_lines(g, m, &cl, &ch);
	}
	return n;
}
