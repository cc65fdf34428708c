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
 * proj_span_between() counts them exactly from the set of segments an interval covers, laid out in
 * address order as periodic bands (band()). Regular lines of one slice of a block (of W: of one
 * column block and slice) share their windows and are counted together. Edge lines are counted once
 * for each class of alike ranges that hold them (a block's rows), most of their windows decided by
 * bounds that many lines share (see "edge lines").
 * Q, K, V and y are only stored: every miss reads for ownership under write-allocate and begins
 * a dirty stay, written back when it ends; a stay still cached at the end (the last C distinct
 * lines touched, resident()) is written by the final flush, or never without it.
 */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "analysis/formula_kernels.h"
#include "analysis/formula_proj_internal.h"
#include "base/util.h"

static const char *const pj_names[NPA] = { "x", "O", "W_Q", "W_K", "W_V",
					   "W_O", "Q", "K", "V", "y" };

static const struct proj_time pt_end = { 4, 0, 0, 0, 0 };

/* ---- segments ---- */

void
proj_segment_at(const struct proj_geometry *g, int x, uint64_t at, struct proj_segment *sg)
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
		sg->t = (struct proj_time){ 0, b * g->Tr + r / g->Br, 0, 2 * k, r % g->Br };
	} else if (g->role[x] == ROLE_W) {
		uint64_t m = g->m0[x], n = g->p[m].n, R = e / n, j = e % n / g->Bc;

		sg->st = (R * n + j * g->Bc) * s;
		sg->en = (R * n + proj_column_end(g, m, j)) * s;
		sg->t = (struct proj_time){ m, 0, j, 2 * (R / d) + 1, R % d };
	} else {
		uint64_t m = g->m0[x], n = g->p[m].n, nh = g->p[m].cnh, b, r, j, pos;

		if (!nh) {
			uint64_t row = e / n;

			j = e % n / g->Bc;
			b = row / g->N;
			r = row % g->N;
			pos = r % g->Br;
			sg->st = (row * n + j * g->Bc) * s;
			sg->en = (row * n + proj_column_end(g, m, j)) * s;
		} else {
			uint64_t hr = e / d, h = hr / g->N % nh, col = h * d + e % d;

			j = col / g->Bc;
			b = hr / g->N / nh;
			r = hr % g->N;
			pos = r % g->Br * proj_store_runs(g, m, j) + h - j * g->Bc / d;
			sg->st = (hr * d + max_u64(j * g->Bc, h * d) - h * d) * s;
			sg->en = (hr * d + min_u64(proj_column_end(g, m, j), (h + 1) * d) - h * d) *
				 s;
		}
		sg->t = (struct proj_time){ m, b * g->Tr + r / g->Br, j, 2 * g->Ks, pos };
	}
}

/* The segment's first touch after t. */
static bool
seg_next(const struct proj_geometry *g, int x, const struct proj_segment *sg,
	 const struct proj_time *t, struct proj_time *o)
{
	struct proj_time c = sg->t;

	if (g->role[x] == ROLE_C) {
		*o = c;
		return proj_time_cmp(&c, t) > 0;
	}
	if (g->role[x] == ROLE_W) {
		if (t->m != c.m)
			return t->m < c.m && (*o = c, true);
		c.u = t->u;
		if (proj_time_cmp(&c, t) <= 0)
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
			if (proj_time_cmp(&c, t) <= 0)
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
touched_between(const struct proj_geometry *g, int x, uint64_t l, const struct proj_time *t1,
		const struct proj_time *t2)
{
	uint64_t at = l * g->L, end = min_u64(at + g->L, g->size[x]);

	while (at < end) {
		struct proj_segment sg;
		struct proj_time nx;

		proj_segment_at(g, x, at, &sg);
		if (seg_next(g, x, &sg, t1, &nx) && proj_time_cmp(&nx, t2) < 0)
			return true;
		at = sg.en;
	}
	return false;
}

int
proj_touch_cmp(const void *a, const void *b)
{
	return proj_time_cmp(&((const struct proj_touch *)a)->t,
			     &((const struct proj_touch *)b)->t);
}

/* Every touch of line l of array x, in time order; returns how many (buf grows). */
size_t
proj_line_touches(const struct proj_geometry *g, int x, uint64_t l, struct proj_touch **buf,
		  size_t *cap)
{
	uint64_t at = l * g->L, end = min_u64(at + g->L, g->size[x]);
	size_t n = 0;

	while (at < end) {
		struct proj_segment sg;
		uint64_t reps;

		proj_segment_at(g, x, at, &sg);
		reps = g->role[x] == ROLE_C ? 1 : g->role[x] == ROLE_W ? g->U : 0;
		for (uint64_t m = g->m0[x]; g->role[x] == ROLE_A && m <= g->m1[x]; m++)
			reps += g->p[m].Tn;
		if (n + reps > *cap) {
			*cap = 2 * (n + reps);
			*buf = xrealloc(*buf, *cap * sizeof(**buf));
		}
		for (uint64_t i = 0; i < reps; i++) {
			struct proj_touch *tc = &(*buf)[n++];

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
	qsort(*buf, n, sizeof(**buf), proj_touch_cmp);
	return n;
}

/* Lines touched between a touch of line l and its next: the segments touched in between, the
 * rest of the first segment after l and the second's lines before l (less those the segments
 * between touch too). */
double
proj_window_lines(const struct proj_geometry *g, int x, uint64_t l, const struct proj_touch *a,
		  const struct proj_touch *b)
{
	double n = proj_span_between(g, &a->t, true, &b->t, true) + g->tl;
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
a_inner(const struct proj_geometry *g, int x, uint64_t u, uint64_t k)
{
	uint64_t nr = proj_block_rows(g, u);

	if (x == PX)
		return proj_inner_lines(g, x, (proj_block_global_row(g, u) * g->Ks + k) * g->E,
					g->rowB, nr, g->E);
	return proj_inner_lines(g, x,
				((u / g->Tr * g->H + k) * g->N + proj_block_first_row(g, u)) * g->E,
				g->E, nr, g->E);
}

/* Blocks alike in product m: as many rows, A's and C's bytes at the same offsets in their
 * lines (so each set of their lines counts the same), and the last block (the arrays' end). */
void
proj_block_key(const struct proj_geometry *g, uint64_t m, uint64_t u, uint64_t *k)
{
	const struct proj_product *p = &g->p[m];
	uint64_t b = u / g->Tr, r0 = proj_block_first_row(g, u);

	k[0] = proj_block_rows(g, u);
	k[1] = (p->a == PX ? proj_block_global_row(g, u) * g->rowB
			   : (b * g->H * g->N + r0) * g->E) %
	       g->L;
	k[2] = (p->cnh ? (b * p->cnh * g->N + r0) * g->d : proj_block_global_row(g, u) * p->n) *
	       g->s % g->L;
	k[3] = u + 1 == g->U;
}

static int
cmp_group(const void *a, const void *b)
{
	const struct proj_group *x = a, *y = b;

	for (int i = 0; i < KEY; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	return 0;
}

/* Blocks u < n of product m (pairs: u and u + 1, and whether they share a batch), sorted so
 * that blocks alike are next to each other. */
struct proj_group *
proj_groups(const struct proj_geometry *g, uint64_t m, uint64_t n, bool pairs)
{
	struct proj_group *v = xzalloc(n * sizeof(*v));

	for (uint64_t u = 0; u < n; u++) {
		v[u].u = u;
		proj_block_key(g, m, u, v[u].key);
		if (pairs) {
			proj_block_key(g, m, u + 1, v[u].key + 4);
			v[u].key[8] = u / g->Tr == (u + 1) / g->Tr;
		}
	}
	qsort(v, n, sizeof(*v), cmp_group);
	return v;
}

/* The end of the group starting at v[i]. */
uint64_t
proj_group_end(const struct proj_group *v, uint64_t i, uint64_t n)
{
	uint64_t j = i + 1;

	while (j < n && cmp_group(&v[j], &v[i]) == 0)
		j++;
	return j;
}

/* A lines of product m touched from t1 to t2. */
static double
a_between(const struct proj_geometry *g, uint64_t m, const struct proj_time *t1,
	  const struct proj_time *t2)
{
	struct proj_a_set s = { .nf = 0 };
	struct proj_a_position lo, hi;

	if (!proj_a_first_from(g, m, t1, false, &lo) || !proj_a_last_until(g, m, t2, false, &hi) ||
	    lo.u > hi.u || (lo.u == hi.u && (lo.jb > hi.jb || (lo.jb == hi.jb && lo.p > hi.p))))
		return 0;
	proj_a_set_add(g, m, &lo, &hi, &s);
	return proj_a_set_lines(g, g->p[m].a, &s);
}

/* C lines of product m stored from t1 to t2. */
static double
c_between(const struct proj_geometry *g, uint64_t m, const struct proj_time *t1,
	  const struct proj_time *t2)
{
	struct proj_c_position lo, hi;

	if (!proj_c_first_from(g, m, t1, false, &lo) || !proj_c_last_until(g, m, t2, false, &hi))
		return 0;
	return proj_c_lines(g, m, &lo, &hi);
}

/* Misses of A's regular lines in product m after their first pass: slice k of block u comes
 * back in the next pass after the rest of the block, W's rows from slice k of column block
 * jb to slice k of the next, and C's block (u, jb). */
static double
a_passes(const struct proj_geometry *g, uint64_t m)
{
	const struct proj_product *p = &g->p[m];
	double *wst, *cb, misses = 0;
	struct proj_group *v;

	if (p->Tn < 2)
		return 0;
	wst = xzalloc(p->Tn * g->Ks * sizeof(*wst));
	cb = xzalloc(p->Tn * sizeof(*cb));
	for (uint64_t jb = 0; jb + 1 < p->Tn; jb++)
		for (uint64_t k = 0; k < g->Ks; k++) {
			struct proj_w_position lo = { 0, jb * g->K + k * g->d };
			struct proj_w_position hi = { 0, (jb + 1) * g->K + k * g->d - 1 };

			wst[jb * g->Ks + k] = proj_w_lines(g, m, &lo, &hi);
		}
	v = proj_groups(g, m, g->U, false);
	for (uint64_t i = 0, j; i < g->U; i = j) {
		uint64_t u = v[i].u;
		struct proj_time t1 = { m, u, 0, 0, 0 }, t2 = { m, u, 0, 2 * g->Ks - 1, g->d - 1 };
		double block = a_between(g, m, &t1, &t2), each = 0;

		j = proj_group_end(v, i, g->U);
		for (uint64_t jb = 0; jb + 1 < p->Tn; jb++) {
			t1 = (struct proj_time){ m, u, jb, 2 * g->Ks, 0 };
			t2 = (struct proj_time){ m, u, jb, 2 * g->Ks,
						 proj_positions(g, m, u, jb) - 1 };
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
x_products(const struct proj_geometry *g, uint64_t m, double regular)
{
	struct proj_line_count a = { 0 };
	double misses = 0, w = 0;

	proj_count_range(&a, g->L, 0, g->size[PX]);
	if (a.n - 1 + g->tl >= g->C)
		return regular;
	for (uint64_t u = 0; u < g->U; u++)
		for (uint64_t k = 0; k < g->Ks; k++) {
			if (k == 0 || u == 0 || u + 1 == g->U) {
				struct proj_time t1 = { m - 1, u, g->p[m - 1].Tn - 1, 2 * k, 0 };
				struct proj_time t2 = { m, u, 0, 2 * k, 0 };

				w = proj_span_between(g, &t1, false, &t2, false) - 1 + g->tl;
			}
			if (w >= g->C)
				misses += a_inner(g, PX, u, k);
		}
	return misses;
}

/* Misses of W's regular lines: column block jb and slice k, loaded in every block; a line comes
 * back in the next block after every other W line and the A and C lines between. */
static double
w_blocks(const struct proj_geometry *g, uint64_t m)
{
	const struct proj_product *p = &g->p[m];
	uint64_t n = p->Tn * g->Ks;
	double *reg = xzalloc(n * sizeof(*reg)), *miss = xzalloc(n * sizeof(*miss));
	double *cp = xzalloc(p->Tn * sizeof(*cp)), wall, total = 0;
	struct proj_group *v = NULL;
	struct proj_line_count a = { 0 };

	proj_count_range(&a, g->L, 0, g->size[p->w]);
	wall = a.n;
	for (uint64_t jb = 0; jb < p->Tn; jb++)
		for (uint64_t k = 0; k < g->Ks; k++)
			reg[jb * g->Ks + k] = proj_inner_lines(
				g, p->w, (k * g->d * p->n + jb * g->Bc) * g->s, p->n * g->s, g->d,
				(proj_column_end(g, m, jb) - jb * g->Bc) * g->s);
	if (g->U > 1)
		v = proj_groups(g, m, g->U - 1, true);
	for (uint64_t i = 0, j; v && i < g->U - 1; i = j) {
		uint64_t u = v[i].u;
		double mid = -1;

		j = proj_group_end(v, i, g->U - 1);
		for (uint64_t jb = 0; jb < p->Tn; jb++) {
			struct proj_time t1 = { m, u, jb, 2 * g->Ks, 0 },
					 t2 = { m, u + 1, jb, 0, 0 };

			cp[jb] = c_between(g, m, &t1, &t2);
		}
		for (uint64_t jb = 0; jb < p->Tn; jb++)
			for (uint64_t k = 0; k < g->Ks; k++) {
				struct proj_time t1 = { m, u, jb, 2 * k + 1, 0 };
				struct proj_time t2 = { m, u + 1, jb, 2 * k + 1, 0 };
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
from(const struct proj_geometry *g, const struct proj_time *t, bool strict)
{
	return proj_span_between(g, t, strict, &pt_end, false) + g->tl;
}

/* The largest v < n with at least C lines touched from time c, *field = v, to the end (v = 0
 * has). */
static uint64_t
bisect(const struct proj_geometry *g, struct proj_time *c, uint64_t *field, uint64_t n)
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
resident(const struct proj_geometry *g, double *res)
{
	struct proj_time t = { 0, 0, 0, 0, 0 };
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

		t = (struct proj_time){ mid / g->U, mid % g->U, 0, 0, 0 };
		if (from(g, &t, false) >= g->C)
			lo = mid;
		else
			hi = mid - 1;
	}
	t = (struct proj_time){ lo / g->U, lo % g->U, 0, 0, 0 };
	bisect(g, &t, &t.jb, g->p[t.m].Tn);
	bisect(g, &t, &t.ph, 2 * g->Ks + 1);
	n = t.ph == 2 * g->Ks ? proj_positions(g, t.m, t.u, t.jb)
	    : t.ph % 2        ? g->d
			      : proj_block_rows(g, t.u);
	bisect(g, &t, &t.pos, n);
	y = t.ph == 2 * g->Ks ? g->p[t.m].c : t.ph % 2 ? g->p[t.m].w : g->p[t.m].a;
	for (uint64_t m = 0; m < 4; m++) {
		struct proj_c_position after, last;
		int x = g->p[m].c;

		res[x] = 0;
		if (proj_c_first_from(g, m, &t, true, &after) &&
		    proj_c_last_until(g, m, &pt_end, false, &last))
			res[x] = proj_c_lines(g, m, &after, &last);
		if (x == y)
			res[x] += g->C - from(g, &t, true);
	}
}

/* Lines of the W tile (Kt) the products touch: d rows of min(B_c, D) floats at a stride of
 * B_c floats (no product has more than D columns), so rows narrower than B_c leave gaps. */
static double
w_tile_lines(const struct attn_config *c, uint64_t L)
{
	return formula_tile_row_lines(c->d, c->Bc * 4, min_u64(c->Bc, c->heads * c->d) * 4, L);
}

/* The most lines one step touches between two uses of a tile line: B_r rows of d inputs, d
 * rows of B_c weights, and the block's outputs, a row of B_c columns in runs of at most d
 * (one per head it crosses). B_c blocks columns here, so it is not clipped to N. */
static double
proj_step_lines(const struct attn_config *c, const struct formula_geometry *q,
		const double *tile_lines)
{
	double Bc = (double)c->Bc, s = q->s, L = q->L, run = fmin(Bc, q->d);
	double in = q->Br * lines_at_most(q->d * s / L) + q->d * lines_at_most(Bc * s / L);
	double out = q->Br * (ceil(Bc / q->d) + 1) * lines_at_most(run * s / L);

	return tile_lines[0] + tile_lines[1] + tile_lines[2] + in + out;
}

void
formula_proj(struct formula_result *r, const struct attn_config *c,
	     const struct formula_geometry *q)
{
	static const int order[NPA] = { PX, PWQ, PQ, PWK, PK, PWV, PV, PO, PWO, PY };
	/* the S tile holds B_r rows of B_c floats, B_c not clipped to N (columns, not rows) */
	double tile_lines[] = { q->tq, q->tk > 0 ? w_tile_lines(c, (uint64_t)q->L) : 0,
				q->ts > 0 ? ceil(q->Br * (double)c->Bc * 4 / q->L) : 0 };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "S_tile" };
	uint64_t Dm = c->heads * c->d, Dkv = c->kv_heads * c->d;
	double misses[NPA] = { 0 }, res[NPA];
	struct proj_spans spans = { .t = { .width = SPAN_KEY } };
	struct proj_geometry g = { .spans = &spans };

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
	g.p[0] = (struct proj_product){ PX, PWQ, PQ, Dm, 0, c->heads };
	g.p[1] = (struct proj_product){ PX, PWK, PK, Dkv, 0, c->kv_heads };
	g.p[2] = (struct proj_product){ PX, PWV, PV, Dkv, 0, c->kv_heads };
	g.p[3] = (struct proj_product){ PO, PWO, PY, Dm, 0, 0 };
	for (uint64_t m = 0; m < 4; m++) {
		struct proj_product *p = &g.p[m];

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
		formula_array_named(r, pj_names[order[i]]);
	for (int x = 0; x < NPA; x++) {
		/* every regular line misses at its first touch */
		double regular =
			ceil((double)g.size[x] / (double)g.L) - proj_edge_lines(&g, x, &misses[x]);

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
		struct formula_array *a = formula_array_named(r, pj_names[x]);
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
	proj_table_finish(&spans.t);
	formula_tiles(r, q, tile_names, tile_lines, 3, proj_step_lines(c, q, tile_lines));
}
