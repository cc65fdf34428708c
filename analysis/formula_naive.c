/*
 * naive, line by line. The three passes touch memory in this order (tiles aside):
 *
 *   scores   unit u = (head, query block ib): load Q's block, then for each key block jb load
 *            K's block and store S's row segments [key_first(jb), key_end(jb)) of the block's
 *            rows, row by row;
 *   softmax  each row of S (over all heads) loaded, then stored as P (over S unless P is
 *            apart);
 *   av       each unit: for each key block jb, load P's row segments of the block's rows, then
 *            V's block; then store O's rows.
 *
 * A line's fate follows its touches: under LRU with room for C lines a touch hits exactly when
 * fewer than C other lines were touched since the line's previous touch (its window). Windows
 * are counted exactly: the bytes a stretch of the passes touches are unions of row segments
 * (strided ranges), whose distinct lines have closed forms (floor sums, strided_lines()). A
 * run of lines with the same touches (the whole lines inside one block of K, one row segment
 * of S) shares its windows, since every touch walks addresses upward: counted once, times its
 * lines. A line that holds bytes of two segments, rows or blocks has touches of its own and is
 * counted alone.
 *
 * Where S's windows across passes all reach C (S larger than the cache by a unit), a unit's
 * lines fare alike in every unit with the same line alignments: counted once per alignment
 * (struct unit_memo). Windows of K, V and Q across units are memoized by their geometry too.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "analysis/formula_naive_internal.h"
#include "base/util.h"

/* ---- windows ---- */

/* The window of a run of lines [la, lb] of one array touched at events f and then t (t->ph ==
 * PH_END: the run's end): the distinct other lines touched in between. */
static double
window(const struct naive_geometry *n, uint64_t la, uint64_t lb, const struct naive_event *f,
       const struct naive_event *t)
{
	struct naive_window w;
	double lines = (double)(lb - la);
	uint64_t lo, hi;
	int a;

	for (int k = 0; k < N_ARRAYS; k++) {
		w.arrays[k].npieces = 0;
		w.arrays[k].nranges = 0;
		w.arrays[k].overflow = false;
	}
	for (int ph = f->ph; ph <= t->ph && ph < PH_END; ph++) {
		const struct naive_event *from = ph == f->ph ? f : NULL,
					 *to = ph == t->ph ? t : NULL;

		if (ph == PH_SOFTMAX)
			naive_softmax_rows(n, &w, from, to);
		else
			naive_pass_units(n, &w, ph, from, to);
		lines += n->tile[ph];
	}
	/* the rest of f's own run after the lines, the start of t's before them */
	a = naive_event_bytes(n, f, &lo, &hi);
	naive_set_range(&w.arrays[a], lo > (lb + 1) * n->L ? lo : (lb + 1) * n->L, hi);
	if (t->ph != PH_END) {
		a = naive_event_bytes(n, t, &lo, &hi);
		naive_set_range(&w.arrays[a], lo, hi < la * n->L ? hi : la * n->L);
	}
	for (int k = 0; k < N_ARRAYS; k++)
		if (w.arrays[k].nranges + w.arrays[k].npieces > 0)
			lines += naive_set_lines(&w.arrays[k], n->L);
	return lines;
}

/* ---- memoized windows ---- */

/* A window within one pass between two units next to each other (or within one) depends only
 * on the events, the units' rows, and where the arrays' lines fall (their bytes modulo a
 * line): windows alike in all of these are counted once. */
#define MEMO_SLOTS 65536
#define MEMO_KEY 12
struct naive_memo {
	uint64_t key[MEMO_SLOTS][MEMO_KEY];
	double val[MEMO_SLOTS];
	bool used[MEMO_SLOTS];
};

static int
line_array(const struct naive_geometry *n, const struct naive_event *e)
{
	uint64_t lo, hi;

	return naive_event_bytes(n, e, &lo, &hi);
}

static double
window_m(const struct naive_geometry *n, int array, uint64_t la, uint64_t lb,
	 const struct naive_event *f, const struct naive_event *t)
{
	uint64_t key[MEMO_KEY], h = 1469598103934665603ULL, fu, g0, kk, origin;
	unsigned slot = MEMO_SLOTS;
	double w;

	if (f->ph != t->ph || f->ph == PH_SOFTMAX || t->u < f->u || t->u > f->u + 1)
		return window(n, la, lb, f, t);
	fu = (uint64_t)f->u;
	g0 = unit_first_row(n, fu);
	kk = unit_kv_head(n, fu);
	origin = array == A_K || array == A_V   ? kv_byte(n, kk, 0)
		 : array == A_Q || array == A_O ? qo_byte(n, g0)
						: sp_byte(n, g0, 0);
	key[0] = (uint64_t)f->ph << 48 | (uint64_t)array << 40 | (uint64_t)(t->u - f->u);
	key[1] = (uint64_t)f->jb;
	key[2] = (uint64_t)f->i;
	key[3] = (uint64_t)t->jb;
	key[4] = (uint64_t)t->i;
	key[5] = sp_byte(n, g0, 0) % n->L << 32 | qo_byte(n, g0) % n->L;
	key[6] = kv_byte(n, kk, 0) % n->L << 32 | (unit_kv_head(n, (uint64_t)t->u) - kk);
	key[7] = unit_row_count(n, fu);
	key[8] = unit_row_count(n, (uint64_t)t->u);
	key[9] = la * n->L - origin; /* wraps when below: still one value per offset */
	key[10] = lb - la;
	key[11] = 0;
	for (int i = 0; i < MEMO_KEY; i++)
		h = (h ^ key[i]) * 1099511628211ULL;
	for (unsigned k = 0; k < 32; k++) {
		unsigned sl = (unsigned)((h + k) % MEMO_SLOTS);

		if (!n->memo->used[sl]) {
			slot = sl;
			break;
		}
		if (memcmp(n->memo->key[sl], key, sizeof(key)) == 0)
			return n->memo->val[sl];
	}
	w = window(n, la, lb, f, t);
	if (slot < MEMO_SLOTS) {
		memcpy(n->memo->key[slot], key, sizeof(key));
		n->memo->val[slot] = w;
		n->memo->used[slot] = true;
	}
	return w;
}

/* ---- fates ---- */

/* Traffic of lines, in lines. */
struct fate {
	double reads, rfo, writes, flush;
};

static bool
event_is_store(const struct naive_geometry *n, const struct naive_event *e)
{
	int a = line_array(n, e);

	return a == A_O || (e->ph == PH_SCORES && a == A_S) || (e->ph == PH_SOFTMAX && e->jb == 1);
}

/* How a window is decided: counted, or known to reach the cache size (a miss) or not. */
enum { W_COUNT, W_MISS, W_HIT };

/* The traffic of a run of lines [la, lb] touched at events e[0 .. ne) (sorted). cross: how to
 * decide a window between two passes; at_end: whether the lines are gone by the end. */
static struct fate
run_fate(const struct naive_geometry *n, uint64_t la, uint64_t lb, const struct naive_event *e,
	 int ne, int cross, int at_end)
{
	struct fate r = { 0, 0, 0, 0 };
	struct naive_event endev = { PH_END, 0, 0, 0 };
	/* Write-validate granules wider than a store (line / 64 bytes over 64-byte lines: fp16
	 * from 256-byte lines, fp32 from 512): a store validates nothing, so a line a store
	 * brought in holds no data until a load reads it, even a load that hits. */
	const bool wide = !n->q->rfo && n->L > 64 && n->L / 64 > n->s;
	bool dirty = false, fetched = false;
	double run = (double)(lb - la + 1);
	int array;

	if (ne == 0)
		return r;
	array = line_array(n, &e[0]);
	for (int k = 0; k < ne; k++) {
		bool store = event_is_store(n, &e[k]), miss;

		if (k == 0)
			miss = true;
		else if (e[k].ph != e[k - 1].ph && cross != W_COUNT)
			miss = cross == W_MISS;
		else
			miss = window_m(n, array, la, lb, &e[k - 1], &e[k]) >= n->C;
		if (miss) {
			if (k > 0 && dirty)
				r.writes += 1;
			if (!store || n->q->rfo)
				r.reads += 1;
			if (store && n->q->rfo)
				r.rfo += 1;
			dirty = store;
			fetched = !store || n->q->rfo;
		} else {
			if (wide && !store && !fetched)
				r.reads += 1;
			fetched = fetched || !store;
			dirty = dirty || store;
		}
	}
	r.reads *= run;
	r.rfo *= run;
	r.writes *= run;
	if (dirty) {
		/* at the end nothing comes back to the run: its line l sees the lines after it
		 * in the run, lb - l, on top of what follows */
		double gone = run;

		if (at_end == W_HIT) {
			gone = 0;
		} else if (at_end == W_COUNT) {
			double after = window(n, la, lb, &e[ne - 1], &endev) - (run - 1);

			gone = after >= n->C              ? run
			       : run - (n->C - after) > 0 ? run - (n->C - after)
							  : 0;
		}
		r.writes += gone;
		if (n->q->flush) {
			r.writes += run - gone;
			r.flush += run - gone;
		}
	}
	return r;
}

static void
fate_add(struct fate *to, struct fate f, double times)
{
	to->reads += f.reads * times;
	to->rfo += f.rfo * times;
	to->writes += f.writes * times;
	to->flush += f.flush * times;
}

/* Lines wholly inside [lo, hi): first and last; false when none. */
static bool
inner_lines(const struct naive_geometry *n, uint64_t lo, uint64_t hi, uint64_t *la, uint64_t *lb)
{
	uint64_t a = (lo + n->L - 1) / n->L, b = hi / n->L;

	if (b <= a)
		return false;
	*la = a;
	*lb = b - 1;
	return true;
}

/* Are the lines touched last in unit u's av surely gone by the end? The rows of P after the
 * unit's next are touched later. */
static int
gone_after(const struct naive_geometry *n, uint64_t u)
{
	uint64_t next = u + 2 < n->U ? unit_first_row(n, u + 2) : n->BH * n->N;

	return (double)(sp_byte(n, n->BH * n->N, 0) / n->L) - (double)(sp_byte(n, next, 0) / n->L) -
				       2 >=
			       n->C
		       ? W_MISS
		       : W_COUNT;
}

/* A growing list of events. */
struct event_list {
	struct naive_event *e;
	int n, cap;
};

static void
event_list_add(struct event_list *v, struct naive_event e)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 64;
		v->e = xrealloc(v->e, (size_t)v->cap * sizeof(*v->e));
	}
	v->e[v->n++] = e;
}

/* ---- Q, K, V, O ---- */

/* The K (or V) event of unit u at block jb. */
static struct naive_event
kv_event(const struct naive_geometry *n, int array, uint64_t u, uint64_t jb)
{
	if (array == A_K)
		return (struct naive_event){ PH_SCORES, (int64_t)u, (int64_t)jb, -1 };
	return (struct naive_event){ PH_AV, (int64_t)u, (int64_t)jb,
				     (int64_t)unit_row_count(n, u) };
}

/* The events of K (or V) line `line`: every unit reading a block that holds a byte of it. */
static void
kv_line_events(const struct naive_geometry *n, int array, uint64_t line, struct event_list *v)
{
	uint64_t first = line * n->L, last = first + n->L, head = n->NC * n->RB;
	uint64_t k0 = first / head, k1 = (last - 1) / head;

	v->n = 0;
	for (uint64_t kk = k0; kk <= k1 && kk < n->NK; kk++) {
		uint64_t g = n->c->heads / n->c->kv_heads;
		uint64_t u0 = (kk / n->c->kv_heads * n->c->heads + kk % n->c->kv_heads * g) * n->Tr;
		uint64_t lo = first > kv_byte(n, kk, 0) ? first - kv_byte(n, kk, 0) : 0;
		uint64_t hi = last - kv_byte(n, kk, 0) < head ? last - kv_byte(n, kk, 0) : head;
		uint64_t b0 = lo / n->RB / n->Bc, b1 = (hi - 1) / n->RB / n->Bc;

		for (uint64_t u = u0; u < u0 + g * n->Tr; u++)
			for (uint64_t b = b0; b <= b1 && b < n->Tc; b++)
				event_list_add(v, kv_event(n, array, u, b));
	}
}

/* K (or V): each kv head's units read its blocks in order. A block's whole lines are one run;
 * a line two blocks or two kv heads share is counted alone. */
static void
kv_lines(const struct naive_geometry *n, int array, struct fate *out)
{
	struct event_list v = { NULL, 0, 0 };
	struct {
		uint64_t sig[2], u;
		double count;
	} *tr = NULL;
	size_t nt = 0, tcap = 0;
	uint64_t u0 = 0, prev = UINT64_MAX;

	for (uint64_t kk = 0; kk < n->NK; kk++) {
		uint64_t u1 = u0;

		while (u1 < n->U && unit_kv_head(n, u1) == kk)
			u1++;
		/* Transitions between the kv head's consecutive units, by what their windows
		 * depend on (struct naive_memo): each kind is decided once per block. */
		nt = 0;
		for (uint64_t u = u0; u + 1 < u1; u++) {
			uint64_t sig[2] = { sp_byte(n, unit_first_row(n, u), 0) % n->L << 32 |
						    qo_byte(n, unit_first_row(n, u)) % n->L,
					    unit_row_count(n, u) << 32 | unit_row_count(n, u + 1) };
			size_t k = 0;

			while (k < nt && (memcmp(tr[k].sig, sig, sizeof(sig)) != 0))
				k++;
			if (k == nt) {
				if (nt == tcap) {
					tcap = tcap ? 2 * tcap : 8;
					tr = xrealloc(tr, tcap * sizeof(*tr));
				}
				memcpy(tr[k].sig, sig, sizeof(sig));
				tr[k].u = u;
				tr[k].count = 0;
				nt++;
			}
			tr[k].count += 1;
		}
		for (uint64_t jb = 0; jb < n->Tc; jb++) {
			uint64_t la, lb;
			double reads = 1;

			if (!inner_lines(n, kv_byte(n, kk, key_first(n, (int64_t)jb)),
					 kv_byte(n, kk, key_end(n, (int64_t)jb)), &la, &lb))
				continue;
			/* K and V are only loaded: a read at the first unit and at each
			 * transition whose window reaches the cache size */
			for (size_t k = 0; k < nt; k++) {
				struct naive_event f = kv_event(n, array, tr[k].u, jb),
						   t = kv_event(n, array, tr[k].u + 1, jb);

				if (window_m(n, array, la, lb, &f, &t) >= n->C)
					reads += tr[k].count;
			}
			out->reads += reads * (double)(lb - la + 1);
		}
		/* block ends inside a line (the kv head's end too) */
		for (uint64_t jb = 1; jb <= n->Tc; jb++) {
			uint64_t at = kv_byte(n, kk, key_first(n, (int64_t)jb)), line = at / n->L;

			if (at % n->L == 0 || line == prev)
				continue;
			prev = line;
			kv_line_events(n, array, line, &v);
			fate_add(out, run_fate(n, line, line, v.e, v.n, W_COUNT, W_COUNT), 1);
		}
		u0 = u1;
	}
	free(v.e);
	free(tr);
}

/* Q: each unit loads its block; O: each unit stores its rows, one by one, at its end. */
static void
qo_lines(const struct naive_geometry *n, int array, struct fate *out)
{
	const uint64_t rows = n->BH * n->N;
	struct event_list v = { NULL, 0, 0 };
	uint64_t prev = UINT64_MAX, la, lb;

	for (uint64_t u = 0; u < n->U; u++) {
		uint64_t g0 = unit_first_row(n, u), nr = unit_row_count(n, u);

		if (array == A_Q) {
			struct naive_event e = { PH_SCORES, (int64_t)u, -1, 0 };

			if (inner_lines(n, qo_byte(n, g0), qo_byte(n, g0 + nr), &la, &lb))
				fate_add(out, run_fate(n, la, lb, &e, 1, W_COUNT, W_MISS), 1);
			continue;
		}
		for (uint64_t i = 0; i < nr; i++) {
			struct naive_event e = { PH_AV, (int64_t)u, (int64_t)n->Tc, (int64_t)i };

			if (inner_lines(n, qo_byte(n, g0 + i), qo_byte(n, g0 + i + 1), &la, &lb))
				fate_add(out, run_fate(n, la, lb, &e, 1, W_COUNT, gone_after(n, u)),
					 1);
		}
	}
	/* lines holding bytes of two rows (of two units, for Q), and the last line */
	for (uint64_t g = 1; g <= rows; g++) {
		uint64_t at = qo_byte(n, g), line = at / n->L, u = 0;

		if (at % n->L == 0 || line == prev)
			continue;
		if (array == A_Q && g < rows && g % n->N % n->Br != 0)
			continue; /* inside a unit's block: in its run */
		prev = line;
		v.n = 0;
		for (uint64_t r = line * n->L / n->RB;
		     r < rows && qo_byte(n, r) < (line + 1) * n->L; r++) {
			u = r / n->N * n->Tr + r % n->N / n->Br;
			if (array == A_O)
				event_list_add(&v, (struct naive_event){
							   PH_AV, (int64_t)u, (int64_t)n->Tc,
							   (int64_t)(r - unit_first_row(n, u)) });
			else if (v.n == 0 || v.e[v.n - 1].u != (int64_t)u)
				event_list_add(
					&v, (struct naive_event){ PH_SCORES, (int64_t)u, -1, 0 });
		}
		fate_add(out,
			 run_fate(n, line, line, v.e, v.n, W_COUNT,
				  array == A_Q ? W_MISS : gone_after(n, u)),
			 1);
	}
	free(v.e);
}

/* ---- S and P ---- */

/* The events of array's (A_S or n->P) lines holding bytes of row `row` in block jb. */
static int
seg_events(const struct naive_geometry *n, int array, uint64_t row, uint64_t jb,
	   struct naive_event *e)
{
	uint64_t u = row / n->N * n->Tr + row % n->N / n->Br;
	int64_t i = (int64_t)(row - unit_first_row(n, u));
	int ne = 0;

	if (array == A_S) {
		e[ne++] = (struct naive_event){ PH_SCORES, (int64_t)u, (int64_t)jb, i };
		e[ne++] = (struct naive_event){ PH_SOFTMAX, (int64_t)row, 0, 0 };
	}
	if (array == n->P) {
		e[ne++] = (struct naive_event){ PH_SOFTMAX, (int64_t)row, 1, 0 };
		e[ne++] = (struct naive_event){ PH_AV, (int64_t)u, (int64_t)jb, i };
	}
	return ne;
}

static int
event_qsort_cmp(const void *a, const void *b)
{
	return naive_event_cmp(a, b);
}

/* The events of one line of S or P: of every (row, block) it holds bytes of, each once. */
static void
s_line_events(const struct naive_geometry *n, int array, uint64_t line, struct event_list *v)
{
	uint64_t e0 = line * n->L / n->s, e1 = (line + 1) * n->L / n->s, all = n->BH * n->N * n->NC;
	int k = 0;

	v->n = 0;
	if (e1 > all)
		e1 = all;
	for (uint64_t x = e0; x < e1;) {
		uint64_t row = x / n->NC, jb = x % n->NC / n->Bc;
		struct naive_event e[4];
		int ne = seg_events(n, array, row, jb, e);

		for (int i = 0; i < ne; i++)
			event_list_add(v, e[i]);
		x = row * n->NC + key_end(n, (int64_t)jb);
	}
	qsort(v->e, (size_t)v->n, sizeof(v->e[0]), event_qsort_cmp);
	for (int i = 0; i < v->n; i++)
		if (k == 0 || naive_event_cmp(&v->e[k - 1], &v->e[i]) != 0)
			v->e[k++] = v->e[i];
	v->n = k;
}

/* Do all of unit u's S and P windows across passes reach the cache size? Across scores,
 * softmax and av every line is touched but those of the unit and the next (a line can hold
 * bytes of both); P's lines after the next unit come after its av. */
static bool
unit_far(const struct naive_geometry *n, uint64_t u)
{
	uint64_t next = u + 1 < n->U ? u + 1 : u;
	double all = (double)(sp_byte(n, n->BH * n->N, 0) / n->L);
	double two = (double)((unit_row_count(n, u) + unit_row_count(n, next)) * n->RS / n->L + 4);

	return all - two - 2 >= n->C && gone_after(n, u) == W_MISS;
}

/* Unit u's S and P traffic: the runs of its segments, and each line starting in its rows that
 * holds bytes of more than one segment. */
static void
unit_lines(const struct naive_geometry *n, uint64_t u, bool far, struct fate *s, struct fate *p)
{
	uint64_t g0 = unit_first_row(n, u), nr = unit_row_count(n, u), start = sp_byte(n, g0, 0);
	struct event_list v = { NULL, 0, 0 };
	int cross = far ? W_MISS : W_COUNT, at_end = far ? W_MISS : W_COUNT;

	for (int array = A_S; array <= n->P; array += n->P - A_S > 0 ? n->P - A_S : 1) {
		struct fate *out = array == A_S ? s : p;
		uint64_t prev = UINT64_MAX;

		for (uint64_t i = 0; i < nr; i++) {
			for (uint64_t jb = 0; jb < n->Tc; jb++) {
				uint64_t lo = sp_byte(n, g0 + i, key_first(n, (int64_t)jb)),
					 hi = sp_byte(n, g0 + i, key_end(n, (int64_t)jb)), la, lb;
				struct naive_event e[4];
				int ne = seg_events(n, array, g0 + i, jb, e);

				if (inner_lines(n, lo, hi, &la, &lb))
					fate_add(out, run_fate(n, la, lb, e, ne, cross, at_end), 1);
				if (hi % n->L == 0 || hi / n->L == prev || hi / n->L * n->L < start)
					continue;
				prev = hi / n->L;
				s_line_events(n, array, prev, &v);
				fate_add(out, run_fate(n, prev, prev, v.e, v.n, cross, at_end), 1);
			}
		}
		if (n->P == A_S)
			break;
	}
	free(v.e);
}

/* Units far from the cache size whose lines fall alike (alignments of their rows in S, Q, O
 * and of their kv head, their rows, the same of the next unit) fare alike. */
struct unit_class {
	uint64_t k[6];
	struct fate s, p;
};

static void
s_lines(const struct naive_geometry *n, struct fate *s, struct fate *p)
{
	struct unit_class *seen = NULL;
	size_t nseen = 0, cap = 0;

	for (uint64_t u = 0; u < n->U; u++) {
		bool far = unit_far(n, u);
		uint64_t g0 = unit_first_row(n, u), nx = u + 1 < n->U ? u + 1 : u;
		uint64_t key[6] = {
			sp_byte(n, g0, 0) % n->L,
			kv_byte(n, unit_kv_head(n, u), 0) % n->L << 20 | qo_byte(n, g0) % n->L,
			unit_row_count(n, u) << 32 | unit_row_count(n, nx),
			(uint64_t)(u + 1 < n->U),
			kv_byte(n, unit_kv_head(n, nx), 0) % n->L << 20 |
				qo_byte(n, unit_first_row(n, nx)) % n->L,
			unit_kv_head(n, u) != unit_kv_head(n, nx),
		};
		struct fate fs = { 0, 0, 0, 0 }, fp = { 0, 0, 0, 0 };
		bool found = false;

		for (size_t k = 0; far && k < nseen && !found; k++)
			if (memcmp(seen[k].k, key, sizeof(key)) == 0) {
				fs = seen[k].s;
				fp = seen[k].p;
				found = true;
			}
		if (!found) {
			unit_lines(n, u, far, &fs, &fp);
			if (far) {
				if (nseen == cap) {
					cap = cap ? 2 * cap : 16;
					seen = xrealloc(seen, cap * sizeof(*seen));
				}
				memcpy(seen[nseen].k, key, sizeof(key));
				seen[nseen].s = fs;
				seen[nseen].p = fp;
				nseen++;
			}
		}
		fate_add(s, fs, 1);
		fate_add(p, fp, 1);
	}
	free(seen);
}

static void
fate_to(struct formula_array *a, const struct fate *f, double L)
{
	a->read_bytes += f->reads * L;
	a->rfo_bytes += f->rfo * L;
	a->write_bytes += f->writes * L;
	a->flush_bytes += f->flush * L;
}

/* The most lines one step touches between two uses of a line it keeps: a key block against
 * the query block (scores), one row (softmax), a value block into the output block (av). */
static double
naive_step_lines(const struct formula_geometry *q, const struct attn_config *c)
{
	double sblock = fmin(q->Br * lines_at_most(q->Sseg), lines_at_most(q->Br * q->Srow));
	double scores = q->tq + q->tk + lines_at_most(q->qb) + lines_at_most(q->kb) + sblock;
	double softmax = q->trow + lines_at_most(q->Srow) * (c->softmax_separate ? 2 : 1);
	double av = q->ts + q->tv + q->to + sblock + lines_at_most(q->kb) + lines_at_most(q->qb);

	return fmax(scores, fmax(softmax, av));
}

void
formula_naive(struct formula_result *r, const struct attn_config *c,
	      const struct formula_geometry *q)
{
	double tile_lines[] = { q->tq, q->tk, q->tv, q->ts, q->to, q->trow };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "V_tile",
						  "S_tile", "O_tile", "row_tile" };
	static const char *const names[N_ARRAYS] = { "Q", "K", "V", "O", "S", "P" };
	struct naive_geometry n = { .c = c, .q = q };
	struct fate f[N_ARRAYS];

	memset(f, 0, sizeof(f));
	n.L = (uint64_t)q->L;
	n.s = dtype_bytes(c->dtype);
	n.RB = c->d * n.s;
	n.N = c->N;
	n.NC = attn_nkv(c);
	n.RS = n.NC * n.s;
	n.Br = c->Br < c->N ? c->Br : c->N;
	n.Bc = c->Bc < n.NC ? c->Bc : n.NC;
	n.Tr = attn_blocks(c->N, c->Br);
	n.Tc = attn_blocks(n.NC, c->Bc);
	n.BH = c->batch * c->heads;
	n.NK = c->batch * c->kv_heads;
	n.U = n.BH * n.Tr;
	n.C = q->C;
	n.tile[PH_SCORES] = q->tq + q->tk;
	n.tile[PH_SOFTMAX] = q->trow;
	n.tile[PH_AV] = q->ts + q->tv + q->to;
	n.P = c->softmax_separate ? A_P : A_S;
	n.memo = xzalloc(sizeof(*n.memo));
	qo_lines(&n, A_Q, &f[A_Q]);
	kv_lines(&n, A_K, &f[A_K]);
	kv_lines(&n, A_V, &f[A_V]);
	qo_lines(&n, A_O, &f[A_O]);
	s_lines(&n, &f[A_S], &f[A_P]);
	for (int a = 0; a < N_ARRAYS; a++)
		if (a != A_P || c->softmax_separate)
			fate_to(formula_array_named(r, names[a]), &f[a], q->L);
	free(n.memo);
	formula_tiles(r, q, tile_names, tile_lines, 6, naive_step_lines(q, c));
}
