/* naive's formula: the distinct lines of unions of row segments, and the segments a stretch
 * of the passes touches (see formula_naive.c). */

#include <stdlib.h>
#include <string.h>

#include "analysis/formula_naive_internal.h"
#include "sim/util.h"

/* ---- distinct lines of unions of row segments ---- */

static uint64_t
piece_first(const struct piece *p)
{
	return p->base + p->a;
}

static uint64_t
piece_last(const struct piece *p)
{
	return p->base + (p->rows - 1) * p->st + p->b - 1;
}

/* Distinct lines of one piece: each row's lines, less the lines two neighbouring rows share. */
static double
strided_lines(const struct piece *p, uint64_t L)
{
	u128 n = p->rows, sum, shared = 0;

	if (p->rows == 1)
		return (double)((p->base + p->b - 1) / L - (p->base + p->a) / L + 1);
	sum = formula_floor_sum(n, L, p->st, p->base + p->b - 1) -
	      formula_floor_sum(n, L, p->st, p->base + p->a) + n;
	/* rows x and x + 1 share a line when the gap between them is under a line and no line
	 * boundary falls inside it */
	if (p->st + p->a - (p->b - 1) < L)
		shared = (n - 1) - (formula_floor_sum(n - 1, L, p->st, p->base + p->st + p->a) -
				    formula_floor_sum(n - 1, L, p->st, p->base + p->b - 1));
	return (double)(sum - shared);
}

void
set_range(struct set *s, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	if (s->nr == SET_RANGES) {
		s->overflow = true;
		return;
	}
	s->r[s->nr][0] = lo;
	s->r[s->nr][1] = hi;
	s->nr++;
}

static void
set_piece(struct set *s, uint64_t base, uint64_t rows, uint64_t st, uint64_t a, uint64_t b)
{
	if (rows == 0 || b <= a)
		return;
	if (rows == 1 || (a == 0 && b == st)) {
		set_range(s, base + a, base + (rows - 1) * st + b);
		return;
	}
	if (s->np == SET_PIECES) {
		s->overflow = true;
		return;
	}
	s->p[s->np++] = (struct piece){ base, rows, st, a, b };
}

static int
cmp_range(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

static int
cmp_piece(const void *x, const void *y)
{
	uint64_t a = piece_first(x), b = piece_first(y);

	return a < b ? -1 : a > b;
}

/* Distinct lines of the set: ranges merged, pieces cut around them, then every part's lines
 * less the lines two neighbouring parts share. */
double
set_lines(struct set *s, uint64_t L)
{
	struct piece all[SET_PIECES * 3 + SET_RANGES];
	int n = 0, nm = 0;
	double lines = 0;

	qsort(s->r, (size_t)s->nr, sizeof(s->r[0]), cmp_range);
	for (int i = 0; i < s->nr; i++) {
		if (nm > 0 && s->r[i][0] <= s->r[nm - 1][1]) {
			if (s->r[i][1] > s->r[nm - 1][1])
				s->r[nm - 1][1] = s->r[i][1];
		} else {
			s->r[nm][0] = s->r[i][0];
			s->r[nm][1] = s->r[i][1];
			nm++;
		}
	}
	s->nr = nm;
	for (int k = 0; k < s->np; k++) {
		/* rows of the piece not under any range, as parts */
		struct piece work[SET_PIECES * 3];
		int nw = 1;

		work[0] = s->p[k];
		for (int i = 0; i < s->nr; i++) {
			uint64_t lo = s->r[i][0], hi = s->r[i][1];
			struct piece next[SET_PIECES * 3];
			int nn = 0;

			for (int w = 0; w < nw; w++) {
				struct piece p = work[w];

				if (piece_last(&p) < lo || piece_first(&p) >= hi) {
					next[nn++] = p;
					continue;
				}
				/* rows [0, xf) end by lo, rows (xl, rows) start from hi; rows
				 * [xf, xl] meet [lo, hi). A range in the gap between two rows
				 * splits the piece there, so parts never interleave. */
				{
					int64_t xf =
						lo >= p.base + p.b
							? (int64_t)((lo - p.base - p.b) / p.st) + 1
							: 0;
					int64_t xl =
						hi > p.base + p.a
							? (int64_t)((hi - p.base - p.a - 1) / p.st)
							: -1;

					if (xl >= (int64_t)p.rows)
						xl = (int64_t)p.rows - 1;
					if (xf > 0)
						next[nn++] = (struct piece){ p.base, (uint64_t)xf,
									     p.st, p.a, p.b };
					for (int64_t x = xf; x <= xl; x++) {
						uint64_t s0 = p.base + (uint64_t)x * p.st;

						if (x > xf && x < xl)
							continue; /* wholly under the range */
						if (s0 + p.a < lo)
							next[nn++] = (struct piece){ s0, 1, p.st,
										     p.a, lo - s0 };
						if (s0 + p.b > hi)
							next[nn++] = (struct piece){
								s0, 1, p.st,
								hi - s0 > p.a ? hi - s0 : p.a, p.b
							};
					}
					if (xl + 1 < (int64_t)p.rows && xl + 1 >= xf)
						next[nn++] = (struct piece){
							p.base + (uint64_t)(xl + 1) * p.st,
							p.rows - (uint64_t)(xl + 1), p.st, p.a, p.b
						};
					else if (xl + 1 < xf && xf < (int64_t)p.rows)
						next[nn++] = (struct piece){ p.base + (uint64_t)xf *
											      p.st,
									     p.rows - (uint64_t)xf,
									     p.st, p.a, p.b };
				}
				if (nn > SET_PIECES * 3 - 4)
					break;
			}
			memcpy(work, next, (size_t)nn * sizeof(next[0]));
			nw = nn;
		}
		for (int w = 0; w < nw && n < SET_PIECES * 3; w++)
			all[n++] = work[w];
	}
	for (int i = 0; i < s->nr; i++)
		all[n++] = (struct piece){ s->r[i][0], 1, 0, 0, s->r[i][1] - s->r[i][0] };
	qsort(all, (size_t)n, sizeof(all[0]), cmp_piece);
	for (int i = 0; i < n; i++) {
		lines += strided_lines(&all[i], L);
		if (i > 0 && piece_last(&all[i - 1]) / L == piece_first(&all[i]) / L)
			lines -= 1;
	}
	return lines;
}

/* The array and bytes event e touches. */
int
ev_bytes(const struct nv *n, const struct ev *e, uint64_t *lo, uint64_t *hi)
{
	uint64_t u = (uint64_t)e->u;

	switch (e->ph) {
	case PH_SCORES:
		if (e->jb < 0) {
			*lo = qo(n, u_row(n, u));
			*hi = qo(n, u_row(n, u) + u_rows(n, u));
			return A_Q;
		}
		if (e->i < 0) {
			*lo = kv(n, u_kv(n, u), c0(n, e->jb));
			*hi = kv(n, u_kv(n, u), c1(n, e->jb));
			return A_K;
		}
		*lo = sp(n, u_row(n, u) + (uint64_t)e->i, c0(n, e->jb));
		*hi = sp(n, u_row(n, u) + (uint64_t)e->i, c1(n, e->jb));
		return A_S;
	case PH_SOFTMAX:
		*lo = sp(n, u, 0);
		*hi = sp(n, u + 1, 0);
		return e->jb == 0 ? A_S : n->P;
	default:
		if ((uint64_t)e->jb == n->Tc) {
			*lo = qo(n, u_row(n, u) + (uint64_t)e->i);
			*hi = qo(n, u_row(n, u) + (uint64_t)e->i + 1);
			return A_O;
		}
		if ((uint64_t)e->i == u_rows(n, u)) {
			*lo = kv(n, u_kv(n, u), c0(n, e->jb));
			*hi = kv(n, u_kv(n, u), c1(n, e->jb));
			return A_V;
		}
		*lo = sp(n, u_row(n, u) + (uint64_t)e->i, c0(n, e->jb));
		*hi = sp(n, u_row(n, u) + (uint64_t)e->i, c1(n, e->jb));
		return n->P;
	}
}

/* Rows [0, nr) of a unit starting at row g0, row x holding columns [A(x), B(x)): A is ca1 for
 * x < xa and ca2 from it, B cb1 for x < xb and cb2 from it. */
static void
unit_rows(const struct nv *n, struct set *s, uint64_t g0, uint64_t nr, uint64_t xa, uint64_t ca1,
	  uint64_t ca2, uint64_t xb, uint64_t cb1, uint64_t cb2)
{
	uint64_t cut[4] = { 0, xa < nr ? xa : nr, xb < nr ? xb : nr, nr };

	if (cut[1] > cut[2]) {
		uint64_t t = cut[1];

		cut[1] = cut[2];
		cut[2] = t;
	}
	for (int k = 0; k < 3; k++) {
		uint64_t x = cut[k], A, B;

		if (cut[k + 1] <= x)
			continue;
		A = x < xa ? ca1 : ca2;
		B = x < xb ? cb1 : cb2;
		if (A < B)
			set_piece(s, sp(n, g0 + x, 0), cut[k + 1] - x, n->RS, A * n->s, B * n->s);
	}
}

/* What scores touches in unit u strictly between events f and t (NULL: the unit's start or
 * end). */
static void
scores_unit(const struct nv *n, struct win *w, uint64_t u, const struct ev *f, const struct ev *t)
{
	uint64_t g0 = u_row(n, u), nr = u_rows(n, u), kk = u_kv(n, u);
	uint64_t kl, kh, xa = 0, ca1 = 0, ca2 = 0, xb = nr, cb1 = n->NC, cb2 = n->NC;

	if (t && t->jb < 0)
		return;
	if (!f)
		set_range(&w->a[A_Q], qo(n, g0), qo(n, g0 + nr));
	kl = !f || f->jb < 0 ? 0 : (uint64_t)f->jb + 1;
	kh = !t ? n->Tc : t->i < 0 ? (uint64_t)t->jb : (uint64_t)t->jb + 1;
	if (kl < kh)
		set_range(&w->a[A_K], kv(n, kk, c0(n, (int64_t)kl)), kv(n, kk, c0(n, (int64_t)kh)));
	if (f && f->jb >= 0) {
		if (f->i < 0) {
			ca2 = c0(n, f->jb);
		} else {
			xa = (uint64_t)f->i + 1;
			ca1 = c1(n, f->jb);
			ca2 = c0(n, f->jb);
		}
	}
	if (t) {
		if (t->i < 0) {
			xb = 0;
			cb2 = c0(n, t->jb);
		} else {
			xb = (uint64_t)t->i;
			cb1 = c1(n, t->jb);
			cb2 = c0(n, t->jb);
		}
	}
	unit_rows(n, &w->a[A_S], g0, nr, xa, ca1, ca2, xb, cb1, cb2);
}

/* The same for av. */
static void
av_unit(const struct nv *n, struct win *w, uint64_t u, const struct ev *f, const struct ev *t)
{
	uint64_t g0 = u_row(n, u), nr = u_rows(n, u), kk = u_kv(n, u);
	uint64_t vl = 0, vh = n->Tc, ol = 0, oh = nr;
	uint64_t xa = 0, ca1 = 0, ca2 = 0, xb = nr, cb1 = n->NC, cb2 = n->NC;

	if (f) {
		if ((uint64_t)f->jb == n->Tc) { /* an O row: only O rows after it */
			vl = n->Tc;
			ol = (uint64_t)f->i + 1;
			ca1 = ca2 = n->NC;
		} else if ((uint64_t)f->i == nr) { /* V's block */
			vl = (uint64_t)f->jb + 1;
			ca1 = ca2 = c1(n, f->jb);
		} else {
			vl = (uint64_t)f->jb;
			xa = (uint64_t)f->i + 1;
			ca1 = c1(n, f->jb);
			ca2 = c0(n, f->jb);
		}
	}
	if (t) {
		if ((uint64_t)t->jb == n->Tc) {
			oh = (uint64_t)t->i;
		} else {
			oh = 0;
			if ((uint64_t)t->i == nr) {
				vh = (uint64_t)t->jb;
				cb1 = cb2 = c1(n, t->jb);
			} else {
				vh = (uint64_t)t->jb;
				xb = (uint64_t)t->i;
				cb1 = c1(n, t->jb);
				cb2 = c0(n, t->jb);
			}
		}
	}
	if (vl < vh)
		set_range(&w->a[A_V], kv(n, kk, c0(n, (int64_t)vl)), kv(n, kk, c0(n, (int64_t)vh)));
	if (ol < oh)
		set_range(&w->a[A_O], qo(n, g0 + ol), qo(n, g0 + oh));
	unit_rows(n, &w->a[n->P], g0, nr, xa, ca1, ca2, xb, cb1, cb2);
}

/* What pass ph (scores or av) touches strictly between f and t (NULL: its start or end). */
void
pass_units(const struct nv *n, struct win *w, int ph, const struct ev *f, const struct ev *t)
{
	int64_t uf = f ? f->u : -1, ut = t ? t->u : (int64_t)n->U;
	void (*unit)(const struct nv *, struct win *, uint64_t, const struct ev *,
		     const struct ev *) = ph == PH_SCORES ? scores_unit : av_unit;

	if (f && t && uf == ut) {
		unit(n, w, (uint64_t)uf, f, t);
		return;
	}
	if (f)
		unit(n, w, (uint64_t)uf, f, NULL);
	if (uf + 1 < ut) {
		uint64_t a = (uint64_t)(uf + 1), b = (uint64_t)(ut - 1);
		uint64_t ra = u_row(n, a), rb = u_row(n, b) + u_rows(n, b);

		set_range(&w->a[ph == PH_SCORES ? A_Q : A_O], qo(n, ra), qo(n, rb));
		set_range(&w->a[ph == PH_SCORES ? A_K : A_V], kv(n, u_kv(n, a), 0),
			  kv(n, u_kv(n, b), n->NC));
		set_range(&w->a[ph == PH_SCORES ? A_S : n->P], sp(n, ra, 0), sp(n, rb, 0));
	}
	if (t)
		unit(n, w, (uint64_t)ut, NULL, t);
}

/* softmax strictly between f and t: row loads and row stores. */
void
softmax_rows(const struct nv *n, struct win *w, const struct ev *f, const struct ev *t)
{
	int64_t ga = f ? f->u : -1, sa = f ? f->jb : 1;
	int64_t gb = t ? t->u : (int64_t)(n->BH * n->N), sb = t ? t->jb : 0;
	int64_t la = ga + 1, lb = gb + (sb == 1 ? 1 : 0), xa = ga + (sa == 0 ? 0 : 1), xb = gb;

	if (la < lb)
		set_range(&w->a[A_S], sp(n, (uint64_t)la, 0), sp(n, (uint64_t)lb, 0));
	if (xa < xb)
		set_range(&w->a[n->P], sp(n, (uint64_t)xa, 0), sp(n, (uint64_t)xb, 0));
}
