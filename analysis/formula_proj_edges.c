/* proj's formula: edge lines (see formula_proj.c). */

#include <stdlib.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "analysis/formula_proj_internal.h"
#include "base/util.h"

/* ---- edge lines ---- */

/*
 * An edge line is touched by each of its segments; between two touches in a row comes a
 * window (proj_window_lines()). Most windows are decided by bounds that do not depend on the line:
 * the lines touched from the start of the first touch's pass (or phase) to the end of the second's
 * hold the window's lines and the line itself, and those touched strictly between the two passes
 * (phases) are among the window's. Only a window the bounds leave open is counted exactly. The
 * bounds are memoized: between passes of one product at most a block apart by the blocks'
 * geometry (proj_block_key(): blocks alike touch the same lines up to a shift by whole lines),
 * else by the passes themselves.
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
table_grow(struct proj_table *t)
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
table_find(struct proj_table *t, const uint64_t *key, bool *added)
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

void
proj_table_finish(struct proj_table *t)
{
	free(t->key);
	free(t->slot);
}

/* The first and last times of t's pass (phase: of its phase). */
static struct proj_time
grain_first(const struct proj_time *t, bool phase)
{
	return (struct proj_time){ t->m, t->u, t->jb, phase ? t->ph : 0, 0 };
}

static struct proj_time
grain_last(const struct proj_geometry *g, const struct proj_time *t, bool phase)
{
	uint64_t ph = phase ? t->ph : 2 * g->Ks, n;

	n = ph == 2 * g->Ks ? proj_positions(g, t->m, t->u, t->jb)
	    : ph % 2        ? g->d
			    : proj_block_rows(g, t->u);
	return (struct proj_time){ t->m, t->u, t->jb, ph, n - 1 };
}

/* Lines touched from the start of t1's pass (phase) to the end of t2's (outer), or strictly
 * between the two (not outer); t1 is before t2. */
static double
bound(const struct proj_geometry *g, const struct proj_time *t1, const struct proj_time *t2,
      bool phase, bool outer)
{
	struct proj_spans *sp = g->spans;
	struct proj_time a, b;
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
		proj_block_key(g, t1->m, t1->u, key + 7);
		if (t2->u != t1->u) {
			proj_block_key(g, t2->m, t2->u, key + 11);
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
		sp->val[i] = proj_span_between(g, &a, false, &b, false);
	} else if (proj_time_cmp(&a, &b) == 0) {
		sp->val[i] = 0;
	} else {
		a = grain_last(g, t1, phase);
		sp->val[i] = proj_span_between(g, &a, true, &b, true);
	}
	return sp->val[i];
}

/* Does every window from t1 to t2 (of any line) miss (1), hit (0), or does it depend on the
 * line (-1)? */
static int
decide(const struct proj_geometry *g, const struct proj_time *t1, const struct proj_time *t2,
       bool phase)
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
misses_at(const struct proj_geometry *g, int x, uint64_t l, const struct proj_touch *a,
	  const struct proj_touch *b)
{
	int o = decide(g, &a->t, &b->t, false);

	if (o < 0)
		o = decide(g, &a->t, &b->t, true);
	if (o < 0)
		o = proj_window_lines(g, x, l, a, b) >= g->C;
	return o;
}

/* Do segments of array x only meet at line boundaries (no edge lines)? */
static bool
aligned(const struct proj_geometry *g, int x)
{
	const struct proj_product *p = &g->p[g->m0[x]];

	if (g->role[x] == ROLE_A)
		return g->E % g->L == 0;
	if (g->role[x] == ROLE_C && p->cnh)
		return g->E % g->L == 0 && g->Bc * g->s % g->L == 0;
	return p->n * g->s % g->L == 0 && g->Bc * g->s % g->L == 0;
}

/* Misses of edge line l of array x; adds them to *misses. */
static void
line_misses(const struct proj_geometry *g, int x, uint64_t l, struct proj_touch **buf, size_t *cap,
	    double *misses)
{
	size_t n = proj_line_touches(g, x, l, buf, cap);

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
layout_heads(const struct proj_geometry *g, int x)
{
	return x == PO ? g->H : g->role[x] == ROLE_C ? g->p[g->m0[x]].cnh : 0;
}

static uint64_t
nranges(const struct proj_geometry *g, int x)
{
	uint64_t nh = layout_heads(g, x);

	return nh ? g->B * nh * g->Tr : g->U;
}

/* Range i in address order. */
static void
range_at(const struct proj_geometry *g, int x, uint64_t i, struct range *r)
{
	uint64_t nh = layout_heads(g, x), b, row;

	if (nh) {
		b = i / (nh * g->Tr);
		r->h = i / g->Tr % nh;
		r->u = b * g->Tr + i % g->Tr;
		r->st = ((b * nh + r->h) * g->N + proj_block_first_row(g, r->u)) * g->E;
		r->en = r->st + proj_block_rows(g, r->u) * g->E;
		return;
	}
	row = x == PX ? g->rowB : g->p[g->m0[x]].n * g->s;
	r->h = 0;
	r->u = i;
	r->st = proj_block_global_row(g, i) * row;
	r->en = r->st + proj_block_rows(g, i) * row;
}

#define RANGE_KEY 52

/* What the edge lines of range i and their windows within its block and the next depend on:
 * the head, offsets in lines, the blocks (of each product that uses the array), and the ranges
 * around (two before, three after: as far as the lines of a line's segments reach), their
 * blocks and heads relative to range i's and their lengths. */
static void
range_key(const struct proj_geometry *g, int x, uint64_t i, const struct range *r, uint64_t *k)
{
	unsigned n = 5;

	memset(k, 0, RANGE_KEY * sizeof(*k));
	k[0] = (uint64_t)x;
	k[1] = r->h;
	k[2] = r->st % g->L;
	k[3] = r->u % g->Tr == g->Tr - 1;
	k[4] = r->en == g->size[x];
	for (uint64_t m = g->m0[x]; m <= g->m1[x]; m++, n += 9) {
		proj_block_key(g, m, r->u, k + n);
		if (r->u + 1 < g->U) {
			proj_block_key(g, m, r->u + 1, k + n + 4);
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
owned_edges(const struct proj_geometry *g, int x, uint64_t st, uint64_t en, uint64_t **lines,
	    size_t *cap)
{
	uint64_t at = st, L = g->L, first = (st + L - 1) / L, last = UINT64_MAX;
	size_t n = 0;

	while (at < g->size[x]) {
		struct proj_segment sg;
		uint64_t p;

		proj_segment_at(g, x, at, &sg);
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
	struct proj_touch a, b;
};

/* Ranges alike: their edge lines, misses from first touches and windows within the block and
 * the next, and the windows kept, sorted by their passes: run i is far[run[i] .. run[i + 1]). */
struct range_class {
	double edges, misses;
	struct far *far;
	size_t nfar, *run, nrun;
};

static struct proj_touch
touch_moved(const struct proj_touch *t, uint64_t du, uint64_t db)
{
	struct proj_touch o = *t;

	o.t.u += du;
	o.st += db;
	o.en += db;
	return o;
}

/* Orders times by their passes only. */
static int
pass_cmp(const struct proj_time *a, const struct proj_time *b)
{
	struct proj_time x = grain_first(a, false), y = grain_first(b, false);

	return proj_time_cmp(&x, &y);
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
rclass_count(const struct proj_geometry *g, int x, const struct range *r, struct range_class *c)
{
	uint64_t *lines = NULL;
	struct proj_touch *buf = NULL;
	size_t cap = 0, lcap = 0, fcap = 0, nl = owned_edges(g, x, r->st, r->en, &lines, &lcap);

	*c = (struct range_class){ .edges = (double)nl, .misses = (double)nl };
	for (size_t i = 0; i < nl; i++) {
		uint64_t l = lines[i];
		size_t n = proj_line_touches(g, x, l, &buf, &cap);

		for (size_t k = 1; k < n; k++) {
			const struct proj_touch *a = &buf[k - 1], *b = &buf[k];

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
far_misses(const struct proj_geometry *g, int x, const struct range *r, const struct range_class *c)
{
	double misses = 0;

	for (size_t z = 0; z < c->nrun; z++) {
		size_t i = c->run[z], j = c->run[z + 1];
		struct proj_touch a = touch_moved(&c->far[i].a, r->u, r->st);
		struct proj_touch b = touch_moved(&c->far[i].b, r->u, r->st);
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
edges_ranges(const struct proj_geometry *g, int x, double *misses)
{
	struct proj_table t = { .width = RANGE_KEY };
	struct range_class *cls = NULL;
	uint64_t key[RANGE_KEY], n = nranges(g, x), *lines = NULL;
	struct proj_touch *buf = NULL;
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
	proj_table_finish(&t);
	return edges;
}

/* Misses of W's edge lines (product m): each of a line's segments is touched in every block;
 * the windows within a block are counted once for blocks alike, those from a block to the
 * next once for pairs alike. Adds to *misses and returns how many edge lines there are. */
static double
edges_w(const struct proj_geometry *g, int x, double *misses)
{
	uint64_t m = g->m0[x], at = 0, last = UINT64_MAX, L = g->L;
	struct proj_group *v1 = proj_groups(g, m, g->U, false), *v2 = NULL;
	uint64_t *rep1 = xzalloc(g->U * sizeof(*rep1)), *rep2 = NULL;
	double *cnt1 = xzalloc(g->U * sizeof(*cnt1)), *cnt2 = NULL, edges = 0;
	struct proj_touch *tc = NULL;
	size_t n1 = 0, n2 = 0, cap = 0;

	for (uint64_t i = 0, j; i < g->U; i = j, n1++) {
		j = proj_group_end(v1, i, g->U);
		rep1[n1] = v1[i].u;
		cnt1[n1] = (double)(j - i);
	}
	if (g->U > 1) {
		v2 = proj_groups(g, m, g->U - 1, true);
		rep2 = xzalloc(g->U * sizeof(*rep2));
		cnt2 = xzalloc(g->U * sizeof(*cnt2));
		for (uint64_t i = 0, j; i < g->U - 1; i = j, n2++) {
			j = proj_group_end(v2, i, g->U - 1);
			rep2[n2] = v2[i].u;
			cnt2[n2] = (double)(j - i);
		}
	}
	while (at < g->size[x]) {
		struct proj_segment sg;
		uint64_t l, p;
		size_t ns = 0;

		proj_segment_at(g, x, at, &sg);
		at = sg.en;
		if (at >= g->size[x] || at % L == 0 || at / L == last)
			continue;
		l = last = at / L;
		edges += 1;
		*misses += 1;
		/* the line's segments, touched at block 0; then sorted in time */
		for (p = l * L; p < min_u64(l * L + L, g->size[x]); p = sg.en, ns++) {
			proj_segment_at(g, x, p, &sg);
			if (ns == cap) {
				cap = cap ? 2 * cap : 16;
				tc = xrealloc(tc, cap * sizeof(*tc));
			}
			tc[ns] = (struct proj_touch){ sg.t, sg.st, sg.en };
		}
		qsort(tc, ns, sizeof(*tc), proj_touch_cmp);
		for (size_t k = 0; k < n1; k++)
			for (size_t z = 1; z < ns; z++) {
				struct proj_touch a = touch_moved(&tc[z - 1], rep1[k], 0);
				struct proj_touch b = touch_moved(&tc[z], rep1[k], 0);

				*misses += cnt1[k] * misses_at(g, x, l, &a, &b);
			}
		for (size_t k = 0; k < n2; k++) {
			struct proj_touch a = touch_moved(&tc[ns - 1], rep2[k], 0);
			struct proj_touch b = touch_moved(&tc[0], rep2[k] + 1, 0);

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
double
proj_edge_lines(const struct proj_geometry *g, int x, double *misses)
{
	if (aligned(g, x))
		return 0;
	if (g->role[x] == ROLE_W)
		return edges_w(g, x, misses);
	return edges_ranges(g, x, misses);
}
