/* naive's formula: the distinct lines of unions of row segments, and the segments a stretch
 * of the passes touches (see formula_naive.c). */

#include <stdlib.h>
#include <string.h>

#include "analysis/formula_naive_internal.h"
#include "base/util.h"

/* ---- distinct lines of unions of row segments ---- */

static uint64_t
piece_first(const struct naive_piece *p)
{
	return p->base + p->start;
}

static uint64_t
piece_last(const struct naive_piece *p)
{
	return p->base + (p->rows - 1) * p->stride + p->end - 1;
}

/* Distinct lines of one piece: each row's lines, less the lines two neighbouring rows share. */
static double
strided_lines(const struct naive_piece *p, uint64_t L)
{
	u128 n = p->rows, sum, shared = 0;

	if (p->rows == 1)
		return (double)((p->base + p->end - 1) / L - (p->base + p->start) / L + 1);
	sum = formula_floor_sum(n, L, p->stride, p->base + p->end - 1) -
	      formula_floor_sum(n, L, p->stride, p->base + p->start) + n;
	/* rows x and x + 1 share a line when the gap between them is under a line and no line
	 * boundary falls inside it */
	if (p->stride + p->start - (p->end - 1) < L)
		shared = (n - 1) -
			 (formula_floor_sum(n - 1, L, p->stride, p->base + p->stride + p->start) -
			  formula_floor_sum(n - 1, L, p->stride, p->base + p->end - 1));
	return (double)(sum - shared);
}

void
naive_set_range(struct naive_set *s, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	if (s->nranges == SET_RANGES) {
		s->overflow = true;
		return;
	}
	s->ranges[s->nranges][0] = lo;
	s->ranges[s->nranges][1] = hi;
	s->nranges++;
}

static void
set_piece(struct naive_set *s, uint64_t base, uint64_t rows, uint64_t st, uint64_t a, uint64_t b)
{
	if (rows == 0 || b <= a)
		return;
	if (rows == 1 || (a == 0 && b == st)) {
		naive_set_range(s, base + a, base + (rows - 1) * st + b);
		return;
	}
	if (s->npieces == SET_PIECES) {
		s->overflow = true;
		return;
	}
	s->pieces[s->npieces++] = (struct naive_piece){ base, rows, st, a, b };
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

/* The set's ranges sorted and merged where they meet or overlap. */
static void
merge_ranges(struct naive_set *s)
{
	int nm = 0;

	qsort(s->ranges, (size_t)s->nranges, sizeof(s->ranges[0]), cmp_range);
	for (int i = 0; i < s->nranges; i++) {
		if (nm > 0 && s->ranges[i][0] <= s->ranges[nm - 1][1]) {
			if (s->ranges[i][1] > s->ranges[nm - 1][1])
				s->ranges[nm - 1][1] = s->ranges[i][1];
		} else {
			s->ranges[nm][0] = s->ranges[i][0];
			s->ranges[nm][1] = s->ranges[i][1];
			nm++;
		}
	}
	s->nranges = nm;
}

/* The parts of piece p outside range [lo, hi) that p meets, appended to next[nn..]; returns
 * the new count. Rows [0, xf) end by lo, rows (xl, rows) start from hi; rows [xf, xl] meet
 * [lo, hi). A range in the gap between two rows splits the piece there, so parts never
 * interleave. */
static int
cut_piece(struct naive_piece p, uint64_t lo, uint64_t hi, struct naive_piece *next, int nn)
{
	int64_t xf = lo >= p.base + p.end ? (int64_t)((lo - p.base - p.end) / p.stride) + 1 : 0;
	int64_t xl = hi > p.base + p.start ? (int64_t)((hi - p.base - p.start - 1) / p.stride) : -1;

	if (xl >= (int64_t)p.rows)
		xl = (int64_t)p.rows - 1;
	if (xf > 0)
		next[nn++] = (struct naive_piece){ p.base, (uint64_t)xf, p.stride, p.start, p.end };
	for (int64_t x = xf; x <= xl; x++) {
		uint64_t s0 = p.base + (uint64_t)x * p.stride;

		if (x > xf && x < xl)
			continue; /* wholly under the range */
		if (s0 + p.start < lo)
			next[nn++] = (struct naive_piece){ s0, 1, p.stride, p.start, lo - s0 };
		if (s0 + p.end > hi)
			next[nn++] = (struct naive_piece){ s0, 1, p.stride,
							   hi - s0 > p.start ? hi - s0 : p.start,
							   p.end };
	}
	if (xl + 1 < (int64_t)p.rows && xl + 1 >= xf)
		next[nn++] = (struct naive_piece){ p.base + (uint64_t)(xl + 1) * p.stride,
						   p.rows - (uint64_t)(xl + 1), p.stride, p.start,
						   p.end };
	else if (xl + 1 < xf && xf < (int64_t)p.rows)
		next[nn++] =
			(struct naive_piece){ p.base + (uint64_t)xf * p.stride,
					      p.rows - (uint64_t)xf, p.stride, p.start, p.end };
	return nn;
}

/* Distinct lines of the set: ranges merged, pieces cut around them, then every part's lines
 * less the lines two neighbouring parts share. */
double
naive_set_lines(struct naive_set *s, uint64_t L)
{
	struct naive_piece all[SET_PIECES * 3 + SET_RANGES];
	int n = 0;
	double lines = 0;

	merge_ranges(s);
	for (int k = 0; k < s->npieces; k++) {
		/* rows of the piece not under any range, as parts */
		struct naive_piece work[SET_PIECES * 3];
		int nw = 1;

		work[0] = s->pieces[k];
		for (int i = 0; i < s->nranges; i++) {
			uint64_t lo = s->ranges[i][0], hi = s->ranges[i][1];
			struct naive_piece next[SET_PIECES * 3];
			int nn = 0;

			for (int w = 0; w < nw; w++) {
				if (piece_last(&work[w]) < lo || piece_first(&work[w]) >= hi)
					next[nn++] = work[w];
				else
					nn = cut_piece(work[w], lo, hi, next, nn);
				if (nn > SET_PIECES * 3 - 4)
					break;
			}
			memcpy(work, next, (size_t)nn * sizeof(next[0]));
			nw = nn;
		}
		for (int w = 0; w < nw && n < SET_PIECES * 3; w++)
			all[n++] = work[w];
	}
	for (int i = 0; i < s->nranges; i++)
		all[n++] = (struct naive_piece){ s->ranges[i][0], 1, 0, 0,
						 s->ranges[i][1] - s->ranges[i][0] };
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
naive_event_bytes(const struct naive_geometry *n, const struct naive_event *e, uint64_t *lo,
		  uint64_t *hi)
{
	uint64_t u = (uint64_t)e->u;

	switch (e->ph) {
	case PH_SCORES:
		if (e->jb < 0) {
			*lo = qo_byte(n, unit_first_row(n, u));
			*hi = qo_byte(n, unit_first_row(n, u) + unit_row_count(n, u));
			return A_Q;
		}
		if (e->i < 0) {
			*lo = kv_byte(n, unit_kv_head(n, u), key_first(n, e->jb));
			*hi = kv_byte(n, unit_kv_head(n, u), key_end(n, e->jb));
			return A_K;
		}
		*lo = sp_byte(n, unit_first_row(n, u) + (uint64_t)e->i, key_first(n, e->jb));
		*hi = sp_byte(n, unit_first_row(n, u) + (uint64_t)e->i, key_end(n, e->jb));
		return A_S;
	case PH_SOFTMAX:
		*lo = sp_byte(n, u, 0);
		*hi = sp_byte(n, u + 1, 0);
		return e->jb == 0 ? A_S : n->P;
	default:
		if ((uint64_t)e->jb == n->Tc) {
			*lo = qo_byte(n, unit_first_row(n, u) + (uint64_t)e->i);
			*hi = qo_byte(n, unit_first_row(n, u) + (uint64_t)e->i + 1);
			return A_O;
		}
		if ((uint64_t)e->i == unit_row_count(n, u)) {
			*lo = kv_byte(n, unit_kv_head(n, u), key_first(n, e->jb));
			*hi = kv_byte(n, unit_kv_head(n, u), key_end(n, e->jb));
			return A_V;
		}
		*lo = sp_byte(n, unit_first_row(n, u) + (uint64_t)e->i, key_first(n, e->jb));
		*hi = sp_byte(n, unit_first_row(n, u) + (uint64_t)e->i, key_end(n, e->jb));
		return n->P;
	}
}

/* Rows [0, nr) of a unit starting at row g0, row x holding columns [A(x), B(x)): A is ca1 for
 * x < xa and ca2 from it, B cb1 for x < xb and cb2 from it. */
static void
unit_rows(const struct naive_geometry *n, struct naive_set *s, uint64_t g0, uint64_t nr,
	  uint64_t xa, uint64_t ca1, uint64_t ca2, uint64_t xb, uint64_t cb1, uint64_t cb2)
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
			set_piece(s, sp_byte(n, g0 + x, 0), cut[k + 1] - x, n->RS, A * n->s,
				  B * n->s);
	}
}

/* What scores touches in unit u strictly between events f and t (NULL: the unit's start or
 * end). */
static void
scores_unit(const struct naive_geometry *n, struct naive_window *w, uint64_t u,
	    const struct naive_event *f, const struct naive_event *t)
{
	uint64_t g0 = unit_first_row(n, u), nr = unit_row_count(n, u), kk = unit_kv_head(n, u);
	uint64_t kl, kh, xa = 0, ca1 = 0, ca2 = 0, xb = nr, cb1 = n->NC, cb2 = n->NC;

	if (t && t->jb < 0)
		return;
	if (!f)
		naive_set_range(&w->arrays[A_Q], qo_byte(n, g0), qo_byte(n, g0 + nr));
	kl = !f || f->jb < 0 ? 0 : (uint64_t)f->jb + 1;
	kh = !t ? n->Tc : t->i < 0 ? (uint64_t)t->jb : (uint64_t)t->jb + 1;
	if (kl < kh)
		naive_set_range(&w->arrays[A_K], kv_byte(n, kk, key_first(n, (int64_t)kl)),
				kv_byte(n, kk, key_first(n, (int64_t)kh)));
	if (f && f->jb >= 0) {
		if (f->i < 0) {
			ca2 = key_first(n, f->jb);
		} else {
			xa = (uint64_t)f->i + 1;
			ca1 = key_end(n, f->jb);
			ca2 = key_first(n, f->jb);
		}
	}
	if (t) {
		if (t->i < 0) {
			xb = 0;
			cb2 = key_first(n, t->jb);
		} else {
			xb = (uint64_t)t->i;
			cb1 = key_end(n, t->jb);
			cb2 = key_first(n, t->jb);
		}
	}
	unit_rows(n, &w->arrays[A_S], g0, nr, xa, ca1, ca2, xb, cb1, cb2);
}

/* The same for av. */
static void
av_unit(const struct naive_geometry *n, struct naive_window *w, uint64_t u,
	const struct naive_event *f, const struct naive_event *t)
{
	uint64_t g0 = unit_first_row(n, u), nr = unit_row_count(n, u), kk = unit_kv_head(n, u);
	uint64_t vl = 0, vh = n->Tc, ol = 0, oh = nr;
	uint64_t xa = 0, ca1 = 0, ca2 = 0, xb = nr, cb1 = n->NC, cb2 = n->NC;

	if (f) {
		if ((uint64_t)f->jb == n->Tc) { /* an O row: only O rows after it */
			vl = n->Tc;
			ol = (uint64_t)f->i + 1;
			ca1 = ca2 = n->NC;
		} else if ((uint64_t)f->i == nr) { /* V's block */
			vl = (uint64_t)f->jb + 1;
			ca1 = ca2 = key_end(n, f->jb);
		} else {
			vl = (uint64_t)f->jb;
			xa = (uint64_t)f->i + 1;
			ca1 = key_end(n, f->jb);
			ca2 = key_first(n, f->jb);
		}
	}
	if (t) {
		if ((uint64_t)t->jb == n->Tc) {
			oh = (uint64_t)t->i;
		} else {
			oh = 0;
			if ((uint64_t)t->i == nr) {
				vh = (uint64_t)t->jb;
				cb1 = cb2 = key_end(n, t->jb);
			} else {
				vh = (uint64_t)t->jb;
				xb = (uint64_t)t->i;
				cb1 = key_end(n, t->jb);
				cb2 = key_first(n, t->jb);
			}
		}
	}
	if (vl < vh)
		naive_set_range(&w->arrays[A_V], kv_byte(n, kk, key_first(n, (int64_t)vl)),
				kv_byte(n, kk, key_first(n, (int64_t)vh)));
	if (ol < oh)
		naive_set_range(&w->arrays[A_O], qo_byte(n, g0 + ol), qo_byte(n, g0 + oh));
	unit_rows(n, &w->arrays[n->P], g0, nr, xa, ca1, ca2, xb, cb1, cb2);
}

/* What pass ph (scores or av) touches strictly between f and t (NULL: its start or end). */
void
naive_pass_units(const struct naive_geometry *n, struct naive_window *w, int ph,
		 const struct naive_event *f, const struct naive_event *t)
{
	int64_t uf = f ? f->u : -1, ut = t ? t->u : (int64_t)n->U;
	void (*unit)(const struct naive_geometry *, struct naive_window *, uint64_t,
		     const struct naive_event *, const struct naive_event *) =
		ph == PH_SCORES ? scores_unit : av_unit;

	if (f && t && uf == ut) {
		unit(n, w, (uint64_t)uf, f, t);
		return;
	}
	if (f)
		unit(n, w, (uint64_t)uf, f, NULL);
	if (uf + 1 < ut) {
		uint64_t a = (uint64_t)(uf + 1), b = (uint64_t)(ut - 1);
		uint64_t ra = unit_first_row(n, a),
			 rb = unit_first_row(n, b) + unit_row_count(n, b);

		naive_set_range(&w->arrays[ph == PH_SCORES ? A_Q : A_O], qo_byte(n, ra),
				qo_byte(n, rb));
		naive_set_range(&w->arrays[ph == PH_SCORES ? A_K : A_V],
				kv_byte(n, unit_kv_head(n, a), 0),
				kv_byte(n, unit_kv_head(n, b), n->NC));
		naive_set_range(&w->arrays[ph == PH_SCORES ? A_S : n->P], sp_byte(n, ra, 0),
				sp_byte(n, rb, 0));
	}
	if (t)
		unit(n, w, (uint64_t)ut, NULL, t);
}

/* softmax strictly between f and t: row loads and row stores. */
void
naive_softmax_rows(const struct naive_geometry *n, struct naive_window *w,
		   const struct naive_event *f, const struct naive_event *t)
{
	int64_t ga = f ? f->u : -1, sa = f ? f->jb : 1;
	int64_t gb = t ? t->u : (int64_t)(n->BH * n->N), sb = t ? t->jb : 0;
	int64_t la = ga + 1, lb = gb + (sb == 1 ? 1 : 0), xa = ga + (sa == 0 ? 0 : 1), xb = gb;

	if (la < lb)
		naive_set_range(&w->arrays[A_S], sp_byte(n, (uint64_t)la, 0),
				sp_byte(n, (uint64_t)lb, 0));
	if (xa < xb)
		naive_set_range(&w->arrays[n->P], sp_byte(n, (uint64_t)xa, 0),
				sp_byte(n, (uint64_t)xb, 0));
}
