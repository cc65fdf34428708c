/*
 * The closed forms of analysis/formulas.h.
 *
 * Method. Lines are counted, not bytes: for an array of B bytes, B / L lines. Each group of
 * lines that the kernel treats alike follows a sequence of accesses; each access comes a
 * reuse distance after the previous access to the same line: the number of OTHER lines the
 * kernel touches in between (written G_x below, derived from the loop nests of the kernels;
 * "block" means the lines of B_r or B_c rows). Under LRU with room for C lines an access hits
 * exactly when its distance is below C (no conflict misses: the sets of a fully associative
 * cache). Then, for one line:
 *   - a miss on a load, or on a partial store under write-allocate, reads the line (the
 *     latter is read for ownership);
 *   - a miss on a line that was dirty is preceded by its write-back;
 *   - a line still dirty at the end is written by the final flush (or, when the run touches
 *     C other lines after its last access, by an eviction).
 * seq() below applies these rules; the kernels' sections list the sequences and distances.
 *
 * Notation (all in lines): rq = d s / L, one row of Q, K, V or O in the storage type;
 * qb = B_r rq and kb = B_c rq, a block of query or key rows; Srow = N s / L, one row of S;
 * T_r = ceil(N / B_r), T_c = ceil(N / B_c); g = heads / kv_heads; tiles t* (0 when they live
 * in scratch). Partial last tiles are averaged into T_r and T_c.
 */

#include "analysis/formulas.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

enum { LD, ST, STW }; /* load, partial store, whole-line store */

struct step {
	int op;
	double gap; /* reuse distance in lines; INFINITY for a line's first access */
	double rep; /* how many times in a row */
};

struct q {
	double L, C, s, N, d, Br, Bc, B, H, Hkv, g, Tr, Tc;
	double rq, qb, kb, Srow, Sseg;
	double tq, tk, tv, ts, to, trow, tm; /* tiles in memory, else 0 */
	double Qall, Kall, Sall, Oall, vec;  /* vec: one fp32 value per query row, all heads */
	bool rfo, flush;
};

static struct formula_array *
arr(struct formula_result *r, const char *name)
{
	for (unsigned i = 0; i < r->narrays; i++)
		if (strcmp(r->arrays[i].name, name) == 0)
			return &r->arrays[i];
	if (r->narrays == FORMULA_MAX_ARRAYS)
		return &r->arrays[FORMULA_MAX_ARRAYS - 1];
	snprintf(r->arrays[r->narrays].name, sizeof(r->arrays[0].name), "%s", name);
	return &r->arrays[r->narrays++];
}

/* Adds to a the traffic of n lines that each follow steps[0 .. ns), then see gap_end other
 * lines before the run ends. */
static void
seq(struct formula_array *a, const struct q *q, double n, const struct step *steps, int ns,
    double gap_end)
{
	/* A sequence that starts with a finite distance continues an earlier one: the line
	 * was there, clean (earlier stores belong in the sequence). */
	bool present = ns > 0 && isfinite(steps[0].gap), dirty = false;
	double reads = 0, rfo = 0, writes = 0, flush = 0;

	if (n <= 0)
		return;
	for (int i = 0; i < ns; i++) {
		const struct step *st = &steps[i];
		/* The first repetition can differ (state from before); from the second on, each
		 * one repeats the same increments: count it once and multiply. */
		double last[3] = { 0, 0, 0 };

		for (int k = 0; k < 2 && k < st->rep; k++) {
			double r0 = reads, f0 = rfo, w0 = writes;
			bool miss = !present || st->gap >= q->C;

			if (miss) {
				if (present && dirty)
					writes += 1;
				if (st->op == LD || (st->op == ST && q->rfo)) {
					reads += 1;
					if (st->op == ST)
						rfo += 1;
				}
				present = true;
				dirty = st->op != LD;
			} else {
				dirty = dirty || st->op != LD;
			}
			last[0] = reads - r0;
			last[1] = rfo - f0;
			last[2] = writes - w0;
		}
		if (st->rep > 2) {
			reads += (st->rep - 2) * last[0];
			rfo += (st->rep - 2) * last[1];
			writes += (st->rep - 2) * last[2];
		}
	}
	if (present && dirty) {
		if (gap_end >= q->C) {
			writes += 1;
		} else if (q->flush) {
			writes += 1;
			flush += 1;
		}
	}
	a->read_bytes += n * reads * q->L;
	a->rfo_bytes += n * rfo * q->L;
	a->write_bytes += n * writes * q->L;
	a->flush_bytes += n * flush * q->L;
}

/* One access kind to fresh lines: a read, or a partial store. */
static void
once(struct formula_array *a, const struct q *q, double n, int op, double gap_end)
{
	struct step s = { op, INFINITY, 1 };

	seq(a, q, n, &s, 1, gap_end);
}

static void
setup(struct q *q, const struct attn_config *c, const struct formula_machine *m)
{
	double L = m->line_bytes, tile = m->tiles_in_scratch ? 0 : 1;

	memset(q, 0, sizeof(*q));
	q->L = L;
	q->C = m->capacity_bytes / L;
	q->s = dtype_bytes(c->dtype);
	q->N = (double)c->N;
	q->d = (double)c->d;
	q->Br = (double)(c->Br < c->N ? c->Br : c->N);
	q->Bc = (double)(c->Bc < c->N ? c->Bc : c->N);
	q->B = (double)c->batch;
	q->H = (double)c->heads;
	q->Hkv = (double)c->kv_heads;
	q->g = q->H / q->Hkv;
	q->Tr = (double)attn_blocks(c->N, c->Br);
	q->Tc = (double)attn_blocks(c->N, c->Bc);
	q->rq = q->d * q->s / L;
	q->qb = q->Br * q->rq;
	q->kb = q->Bc * q->rq;
	q->Srow = q->N * q->s / L;
	q->Sseg = q->Bc * q->s / L;
	q->tq = tile * q->Br * q->d * 4 / L;
	q->tk = tile * q->Bc * q->d * 4 / L;
	q->tv = q->tk;
	q->ts = tile * q->Br * q->Bc * 4 / L;
	q->to = q->tq;
	q->trow = tile * q->N * 4 / L;
	q->tm = tile * q->Br * 4 / L;
	q->Qall = q->B * q->H * q->N * q->rq;
	q->Kall = q->B * q->Hkv * q->N * q->rq;
	q->Sall = q->B * q->H * q->N * q->Srow;
	q->Oall = q->Qall;
	q->vec = q->B * q->H * q->N * 4 / L;
	q->rfo = m->rfo;
	q->flush = m->flush;
}

/* The distance a K or V line of key block jb travels from its use at one query block (of
 * nr_prev rows) to the next (of nr_next rows). */
typedef double (*kv_gap_fn)(const struct q *q, double nr_prev, double nr_next, double jb);

/* K or V lines: read at first use, then again at each later query block of each head of the
 * group whose distance reaches C. Query blocks are full but the last (N mod B_r rows), so the
 * transitions are full -> full, full -> last and, between heads of a group, last -> full. */
static void
kv_reads(struct formula_array *a, const struct q *q, kv_gap_fn gap)
{
	double last = q->N - (q->Tr - 1) * q->Br, misses = 0;
	struct {
		double count, nr_prev, nr_next;
	} tr[3] = {
		{ q->g * fmax(q->Tr - 2, 0), q->Br, q->Br },
		{ q->Tr > 1 ? q->g : 0, q->Br, last },
		{ q->g - 1, last, q->Tr > 1 ? q->Br : last },
	};

	for (int t = 0; t < 3; t++) {
		if (tr[t].count <= 0)
			continue;
		for (double jb = 0; jb < q->Tc; jb++) {
			double rows = fmin(q->Bc, q->N - jb * q->Bc);

			if (gap(q, tr[t].nr_prev, tr[t].nr_next, jb) >= q->C)
				misses += tr[t].count * rows * q->rq;
		}
	}
	a->read_bytes += q->B * q->Hkv * (q->N * q->rq + misses) * q->L;
}

/* naive: between a K line's use at one query block and the next come every other K line,
 * the S rows stored in between (the rest of the first block's rows after key block jb, the
 * second block's rows before it), the second Q block and the tiles. */
static double
naive_gap_k(const struct q *q, double nr_prev, double nr_next, double jb)
{
	return q->N * q->rq - 1 + nr_prev * (q->Srow - jb * q->Sseg) + nr_next * jb * q->Sseg +
	       nr_next * q->rq + q->tq + q->tk;
}

/* naive av: the same with P's rows loaded, and the first block's O rows stored. */
static double
naive_gap_v(const struct q *q, double nr_prev, double nr_next, double jb)
{
	return q->N * q->rq - 1 + nr_prev * (q->Srow - jb * q->Sseg) + nr_next * jb * q->Sseg +
	       nr_prev * q->rq + q->tv + q->ts + q->to;
}

/* flash2: every other K line and all V lines (or the reverse), the first block's O and
 * logsumexp rows, the second Q block and the tiles. */
static double
flash2_gap(const struct q *q, double nr_prev, double nr_next, double jb)
{
	(void)jb;
	return 2 * q->N * q->rq - 1 + nr_next * q->rq + nr_prev * (q->rq + 4 / q->L) + q->tq +
	       q->tk + q->tv + q->ts + q->to + 2 * q->tm;
}

/* Tiles in memory: first touched by scalar stores (a read for ownership under write-allocate),
 * then hit while the kernel's per-iteration lines fit, so their only other DRAM traffic is
 * the final flush. When they do not fit (caches of a few tiles), the spill traffic is not
 * modeled: the result says so. */
static void
tiles(struct formula_result *r, const struct q *q, const char *const *names, const double *lines,
      int n, double working_set)
{
	for (int i = 0; i < n; i++)
		if (lines[i] > 0)
			once(arr(r, names[i]), q, lines[i], ST, 0);
	if (lines[0] > 0 && working_set >= q->C)
		r->tiles_approximate = true;
}

/* ---- naive ---- */

/* S (and P) in naive. Take an S line of row r = r0 + i of query block z (blocks counted
 * over batches and heads, Z in all) and key block jb:
 *   - scores stores it (partial stores: read for ownership, then dirty);
 *   - softmax loads it after every other S line except the rows below r in block z that
 *     scores stored before it, U1 = (B_r - 1 - i) jb Sseg, plus the Q blocks after z, the K
 *     lines scores still touched, and the row tile: G1 = Sall - 1 - U1 + ...;
 *   - softmax stores P over it a row (and the row tile) later: G_P = Srow - 1 + trow;
 *   - av loads it after every other P line except the rows above r in block z that av has
 *     not reached, U2 = i (T_c - 1 - jb) Sseg, plus the V lines and O rows av touched
 *     before: G2 = Sall - 1 - U2 + ....
 * With P apart, S waits also for the P rows stored before r, and P for the S rows loaded
 * after r. Where S is far from the cache size every line agrees and the sums collapse; near
 * it the loop below counts lines by their own distances. */
static void
naive_scores_matrix(struct formula_result *r, const struct attn_config *c, const struct q *q,
		    double G_P)
{
	double Z = q->B * q->H * q->Tr, per_head = q->Tr, rows = q->B * q->H * q->N;
	double lo1 = q->Sall - 1 - (q->Br - 1) * (q->Tc - 1) * q->Sseg, hi1, lo2, hi2;
	double sep = c->softmax_separate ? 1 : 0;
	bool spread;

	/* Largest extras: the first block sees all Q and K after it, the last all V and O
	 * before it (and, apart, all of P or S). */
	hi1 = q->Sall - 1 + q->Qall + q->Kall + q->tq + q->tk + q->trow + sep * q->Sall;
	lo2 = q->Sall - 1 - (q->Br - 1) * (q->Tc - 1) * q->Sseg;
	hi2 = q->Sall - 1 + q->Kall + q->Oall + q->tv + q->ts + q->to + sep * q->Sall;
	spread = !((lo1 >= q->C && lo2 >= q->C) || (hi1 < q->C && hi2 < q->C));
	if (!spread) {
		/* Every line has the same fate: one sequence for all. */
		double g1 = lo1 >= q->C ? INFINITY : 0, g2 = lo2 >= q->C ? INFINITY : 0;
		struct step in_place[] = {
			{ ST, INFINITY, 1 }, { LD, g1, 1 }, { ST, G_P, 1 }, { LD, g2, 1 }
		};
		struct step st[] = { { ST, INFINITY, 1 }, { LD, g1, 1 } };
		struct step pt[] = { { ST, INFINITY, 1 }, { LD, g2, 1 } };

		if (!c->softmax_separate) {
			seq(arr(r, "S"), q, q->Sall, in_place, 4, q->Sall / 2);
		} else {
			seq(arr(r, "S"), q, q->Sall, st, 2, INFINITY);
			seq(arr(r, "P"), q, q->Sall, pt, 2, q->Sall / 2);
		}
		return;
	}
	for (double z = 0; z < Z; z++) {
		double head = floor(z / per_head), ib = z - head * per_head;
		double kvhead = floor(head / q->g), heads = q->B * q->H, kvheads = q->B * q->Hkv;
		bool more_blocks_same_kv = ib < per_head - 1 || fmod(head, q->g) < q->g - 1;
		bool earlier_same_kv = ib > 0 || fmod(head, q->g) > 0;
		double row0 = head * q->N + ib * q->Br; /* global row of the block's first row */
		double nr = fmin(q->Br, q->N - ib * q->Br); /* rows of this block */
		double q_after = (rows - row0 - nr) * q->rq;
		double o_before = row0 * q->rq;
		double kv_later = (kvheads - 1 - kvhead) * q->N * q->rq;
		double kv_earlier = kvhead * q->N * q->rq;

		(void)heads;

		for (double i = 0; i < nr; i++) {
			for (double jb = 0; jb < q->Tc; jb++) {
				double seg = fmin(q->Bc, q->N - jb * q->Bc) * q->s / q->L;
				double U1 = (nr - 1 - i) * jb * q->Sseg;
				double U2 = i * fmax(q->Srow - (jb + 1) * q->Sseg, 0);
				double k_after =
					kv_later + (more_blocks_same_kv ? q->N * q->rq
									: (q->Tc - 1 - jb) * q->kb);
				double v_before =
					kv_earlier + (earlier_same_kv ? q->N * q->rq : jb * q->kb);
				double g1 = q->Sall - 1 - U1 + q_after + k_after + q->tq + q->tk +
					    q->trow + sep * (row0 + i) * q->Srow;
				double g2 = q->Sall - 1 - U2 + v_before + o_before + q->tv + q->ts +
					    q->to + sep * (rows - row0 - i - 1) * q->Srow;
				double end = (Z - 1 - z) * q->Br * q->Srow;

				if (!c->softmax_separate) {
					struct step st[] = { { ST, INFINITY, 1 },
							     { LD, g1, 1 },
							     { ST, G_P, 1 },
							     { LD, g2, 1 } };

					seq(arr(r, "S"), q, seg, st, 4, end);
				} else {
					struct step st[] = { { ST, INFINITY, 1 }, { LD, g1, 1 } };
					struct step pt[] = { { ST, INFINITY, 1 }, { LD, g2, 1 } };

					seq(arr(r, "S"), q, seg, st, 2, INFINITY);
					seq(arr(r, "P"), q, seg, pt, 2, end);
				}
			}
		}
	}
}

static void
naive(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	/* scores: per (query block ib, key block jb): K block, Kt, then for each query row its
	 * Qt row, every Kt row and its S segment; K and V distances in naive_gap_k/v. */
	double G_P = q->Srow - 1 + q->trow;
	double tile_lines[] = { q->tq, q->tk, q->tv, q->ts, q->to, q->trow };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "V_tile",
						  "S_tile", "O_tile", "row_tile" };

	once(arr(r, "Q"), q, q->Qall, LD, INFINITY);
	kv_reads(arr(r, "K"), q, naive_gap_k);
	kv_reads(arr(r, "V"), q, naive_gap_v);
	once(arr(r, "O"), q, q->Oall, ST, q->Oall / 2);
	naive_scores_matrix(r, c, q, G_P);
	tiles(r, q, tile_names, tile_lines, 6,
	      q->tq + q->tk + q->kb + q->Br * q->Sseg + q->tv + q->ts + q->to);
}

/* ---- flash2 ---- */

/* Number of key blocks query block ib uses. */
static double
flash_kblocks(const struct attn_config *c, uint64_t ib)
{
	uint64_t r_end = (ib + 1) * c->Br < c->N ? (ib + 1) * c->Br : c->N;

	return c->causal ? (double)attn_blocks(r_end, c->Bc) : (double)attn_blocks(c->N, c->Bc);
}

/* ---- lines of byte ranges ---- */

/* Lines of [a, b) in lines of L bytes (0 when empty). */
static double
span(uint64_t a, uint64_t b, uint64_t L)
{
	return b > a ? (double)((b - 1) / L - a / L + 1) : 0;
}

/* Lines of [a0, a1) and [b0, b1) together, a1 <= b0: a line both reach is counted once. */
static double
span2(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1, uint64_t L)
{
	double n = span(a0, a1, L) + span(b0, b1, L);

	if (a1 > a0 && b1 > b0 && (a1 - 1) / L == b0 / L)
		n -= 1;
	return n;
}

/* Does a range starting at byte a begin inside a line that holds bytes before it? */
static bool
shares_line(uint64_t a, uint64_t L)
{
	return a % L != 0;
}

/* ---- flash2 ---- */

/*
 * flash2, line by line. A unit is one query block of one head (its Q block loaded into Qt,
 * its key blocks streamed, its O rows and logsumexp stored at the end); units run in address
 * order: batch, head, query block. Every array is counted in whole lines of its own bytes:
 *
 * Q, O, lse: each unit touches its own rows, once (Q loaded, O and lse stored, O row i then
 *   lse[i]). The only line a unit can find already cached is its first, when the previous
 *   unit's rows end inside it: then it hits if the lines the previous unit touched after it
 *   (its K and V, O and lse rows, or this unit's Q and K and V before O's and lse's first
 *   store) number fewer than C. Stored lines are read for ownership under write-allocate and
 *   written once per time they are missed (evicted dirty, or by the final flush).
 * K, V: a kv head's passes (each query block of each head of its group reads the key rows it
 *   uses, K block then V block) re-read a line when the distinct lines touched since its last
 *   touch reach C; see kv_pass() for the windows.
 */
struct f2 {
	const struct attn_config *c;
	const struct q *q;
	uint64_t L, RB, N, Br, Bc, Tr, BH;
	double C, tl; /* cache lines; tile lines always in use (0 in scratch) */
};

/* Rows of K (and V) query block ib reads: whole key blocks up to its last (causal) row. */
static uint64_t
f2_kr(const struct f2 *f, uint64_t ib)
{
	uint64_t end = ib * f->Br + f->Br < f->N ? ib * f->Br + f->Br : f->N;
	uint64_t kr;

	if (!f->c->causal)
		return f->N;
	kr = (end + f->Bc - 1) / f->Bc * f->Bc;
	return kr < f->N ? kr : f->N;
}

/* Bytes of row r of head hh (over batches) in Q or O, in lse, and of kv head kk in K or V. */
static uint64_t
f2_row(const struct f2 *f, uint64_t hh, uint64_t r)
{
	return (hh * f->N + r) * f->RB;
}

static uint64_t
f2_lse(const struct f2 *f, uint64_t hh, uint64_t r)
{
	return (hh * f->N + r) * 4;
}

/* Lines of Q (or O) rows [r0, r1) of head hh, of lse, of K (or V) rows of kv head kk. */
static double
f2_q(const struct f2 *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return span(f2_row(f, hh, r0), f2_row(f, hh, r1), f->L);
}

static double
f2_l(const struct f2 *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return span(f2_lse(f, hh, r0), f2_lse(f, hh, r1), f->L);
}

static double
f2_kv(const struct f2 *f, uint64_t kk, uint64_t r0, uint64_t r1)
{
	return span(f2_row(f, kk, r0), f2_row(f, kk, r1), f->L);
}

/* The rows of unit (hh, ib): first and end. */
static uint64_t
f2_r0(const struct f2 *f, uint64_t ib)
{
	return ib * f->Br;
}

static uint64_t
f2_r1(const struct f2 *f, uint64_t ib)
{
	return ib * f->Br + f->Br < f->N ? ib * f->Br + f->Br : f->N;
}

/* Lines unit (hh, ib) touches in K and V. */
static double
f2_unit_kv(const struct f2 *f, uint64_t hh, uint64_t ib)
{
	uint64_t kk = hh / f->c->heads * f->c->kv_heads +
		      hh % f->c->heads / (f->c->heads / f->c->kv_heads);

	return 2 * f2_kv(f, kk, 0, f2_kr(f, ib));
}

/* Misses of the K (or, is_v, V) lines a pass of kv head kk re-reads from blocks
 * [jb_from, jb_to), which an earlier pass covering key rows [0, kr_prev) read last. A pass
 * reads its rows in address order, K block then V block; so between a line's touches come
 * every other line of its own array in [0, kr_prev) (after it in the earlier pass, before it
 * in this one), and of the other array all but the blocks the line reaches past its first
 * block jb (to jb_b: a K line sees V blocks [0, jb) and [jb_b, ...), a V line K blocks
 * [0, jb] and (jb_b, ...)), plus `other` (the Q, O and lse lines and tiles between). */
static double
f2_rereads(const struct f2 *f, uint64_t kk, uint64_t jb_from, uint64_t jb_to, uint64_t kr_prev,
	   double other, bool is_v)
{
	const uint64_t L = f->L, base = f2_row(f, kk, 0), end_prev = f2_row(f, kk, kr_prev);
	double own = f2_kv(f, kk, 0, kr_prev) - 1, hi = own + f2_kv(f, kk, 0, kr_prev) + other;
	double block_lines = (double)(f->Bc * f->RB / L) + 2, misses = 0;

	if (jb_from >= jb_to || hi < f->C)
		return 0;
	/* A line reaches at most into the next block or two: if even then every window fills
	 * the cache, every line is read again. */
	if (hi - 2 * block_lines - 2 >= f->C)
		return span(f2_row(f, kk, jb_from * f->Bc),
			    f2_row(f, kk, jb_to * f->Bc < f->N ? jb_to * f->Bc : f->N), L) -
		       (jb_from > 0 && shares_line(f2_row(f, kk, jb_from * f->Bc), L));
	for (uint64_t jb = jb_from; jb < jb_to; jb++) {
		uint64_t s = f2_row(f, kk, jb * f->Bc);
		uint64_t e = f2_row(f, kk, (jb + 1) * f->Bc < f->N ? (jb + 1) * f->Bc : f->N);
		/* block 0's first line is its own, even where the previous kv head's rows end
		 * in it: no pass of this head reads it earlier */
		uint64_t first = s / L + (jb > 0 && shares_line(s, L) ? 1 : 0), last = (e - 1) / L;

		if (first > last)
			continue; /* the block's lines all belong to an earlier block */
		for (int k = 0; k < 2; k++) {
			/* k = 0: the lines inside the block; k = 1: its last line, which may
			 * reach into later blocks of the earlier pass */
			double n = k == 0 ? (double)(last - first) : 1;
			uint64_t reach = (last + 1) * L < end_prev ? (last + 1) * L : end_prev;
			uint64_t jb_b = k == 0 ? jb : ((reach - 1 - base) / f->RB) / f->Bc;
			/* the other array's lines: [base, a_end) and [b_start, end_prev) */
			uint64_t a_end = f2_row(f, kk, (is_v ? jb + 1 : jb) * f->Bc);
			uint64_t b_start = f2_row(f, kk, (is_v ? jb_b + 1 : jb_b) * f->Bc);

			if (n <= 0)
				continue;
			if (a_end > end_prev)
				a_end = end_prev;
			if (b_start > end_prev)
				b_start = end_prev;
			if (b_start < a_end)
				b_start = a_end;
			if (own + span2(base, a_end, b_start, end_prev, L) + other >= f->C)
				misses += n;
		}
	}
	return misses;
}

/* A line that K blocks jb and jb + 1 share is touched twice in one pass, V block jb between:
 * a second miss when those lines (with the tiles) fill the cache; likewise a V line, K block
 * jb + 1 between. Only a cache of about a block can see this. Adds the misses of every pass of
 * kv head kk (each query block of each head of its group reads the boundaries below its last
 * block). */
static void
f2_block_edges(const struct f2 *f, uint64_t kk, double *k, double *v)
{
	uint64_t Tc = (f->N + f->Bc - 1) / f->Bc, g = f->c->heads / f->c->kv_heads;
	double *pk, *pv;

	if ((double)(f->Bc * f->RB / f->L) + 2 + f->tl < f->C || Tc < 2)
		return;
	/* pk[n], pv[n]: misses at the boundaries below block n */
	pk = xzalloc(Tc * sizeof(*pk));
	pv = xzalloc(Tc * sizeof(*pv));
	for (uint64_t jb = 0; jb + 1 < Tc; jb++) {
		uint64_t a = jb * f->Bc, b = a + f->Bc, e = b + f->Bc < f->N ? b + f->Bc : f->N;
		bool shared = shares_line(f2_row(f, kk, b), f->L);

		pk[jb + 1] = pk[jb] + (shared && f2_kv(f, kk, a, b) + f->tl >= f->C);
		pv[jb + 1] = pv[jb] + (shared && f2_kv(f, kk, b, e) + f->tl >= f->C);
	}
	for (uint64_t ib = 0; ib < f->Tr; ib++) {
		uint64_t n = (f2_kr(f, ib) + f->Bc - 1) / f->Bc;

		*k += (double)g * pk[n - 1];
		*v += (double)g * pv[n - 1];
	}
	free(pk);
	free(pv);
}

/* K and V reads of kv head kk: every line once, then the re-reads of each pass. */
static void
f2_kv_head(const struct f2 *f, uint64_t kk, double *k_reads, double *v_reads)
{
	const uint64_t Hkv = f->c->kv_heads, g = f->c->heads / Hkv;
	const uint64_t hh0 = kk / Hkv * f->c->heads + kk % Hkv * g; /* the group's first head */
	double k = f2_kv(f, kk, 0, f->N), v = k;

	/* The head's first line may hold the previous kv head's last row: still cached when
	 * this head starts unless the lines between (V's last block, or K's first, and the
	 * unit boundary's O, lse and Q) fill the cache. */
	if (kk > 0 && shares_line(f2_row(f, kk, 0), f->L)) {
		uint64_t last_block = (f->N - 1) / f->Bc * f->Bc, hp = hh0 - 1;
		double between = f2_q(f, hp, f2_r0(f, f->Tr - 1), f->N) +
				 f2_l(f, hp, f2_r0(f, f->Tr - 1), f->N) +
				 f2_q(f, hh0, 0, f2_r1(f, 0)) + f->tl;

		if (f2_kv(f, kk - 1, last_block, f->N) + between < f->C)
			k -= 1;
		if (f2_kv(f, kk, 0, f->Bc < f->N ? f->Bc : f->N) + between < f->C)
			v -= 1;
	}
	f2_block_edges(f, kk, &k, &v);
	for (uint64_t j = 0; j < g; j++) {
		uint64_t hh = hh0 + j;

		for (uint64_t ib = 0; ib < f->Tr; ib++) {
			uint64_t n_now = (f2_kr(f, ib) + f->Bc - 1) / f->Bc;
			uint64_t n_same = ib > 0 ? (f2_kr(f, ib - 1) + f->Bc - 1) / f->Bc : 0;
			double q_now = f2_q(f, hh, f2_r0(f, ib), f2_r1(f, ib));

			/* Blocks the previous query block of this head read. */
			if (n_same > 0) {
				double other = f2_q(f, hh, f2_r0(f, ib - 1), f2_r1(f, ib - 1)) +
					       f2_l(f, hh, f2_r0(f, ib - 1), f2_r1(f, ib - 1)) +
					       q_now + f->tl;

				k += f2_rereads(f, kk, 0, n_same, f2_kr(f, ib - 1), other, false);
				v += f2_rereads(f, kk, 0, n_same, f2_kr(f, ib - 1), other, true);
			}
			/* Blocks new to this head: last read by the previous head of the group in
			 * its last query block (for the group's first head, read for the first
			 * time: counted above). Between: the rest of that head's last block, this
			 * head's query blocks up to ib and their O and lse rows. */
			if (j > 0 && n_now > n_same) {
				uint64_t last0 = f2_r0(f, f->Tr - 1);
				double other = span(f2_row(f, hh - 1, last0),
						    f2_row(f, hh, f2_r0(f, ib)), f->L) + /* O */
					       span(f2_lse(f, hh - 1, last0),
						    f2_lse(f, hh, f2_r0(f, ib)), f->L) + /* lse */
					       f2_q(f, hh, 0, f2_r1(f, ib)) +
					       f->tl;

				k += f2_rereads(f, kk, n_same, n_now, f->N, other, false);
				v += f2_rereads(f, kk, n_same, n_now, f->N, other, true);
			}
		}
	}
	*k_reads += k;
	*v_reads += v;
}

/* Q, O and lse: each unit's rows once; the first line again where the previous unit's rows
 * end inside it and the lines between fill the cache. O and lse are stored (O row, then its
 * logsumexp, row by row): each miss reads for ownership under write-allocate and is written
 * back once. Returns nothing; adds to r. */
static void
f2_rows(struct formula_result *r, const struct f2 *f)
{
	double q_lines = 0, o_lines = 0, l_lines = 0;
	/* Two logsumexp values of one line are an O row apart: far, if a row fills the cache. */
	bool lse_each = (double)(f->RB / f->L) + f->tl >= f->C;

	for (uint64_t hh = 0; hh < f->BH; hh++) {
		for (uint64_t ib = 0; ib < f->Tr; ib++) {
			uint64_t r0 = f2_r0(f, ib), r1 = f2_r1(f, ib);
			double qn = f2_q(f, hh, r0, r1), ln = f2_l(f, hh, r0, r1);
			double kv = f2_unit_kv(f, hh, ib);

			q_lines += qn;
			o_lines += qn;
			l_lines += lse_each ? (double)(r1 - r0) : ln;
			if (hh == 0 && ib == 0)
				continue;
			{
				/* the previous unit, and its rows' lines */
				uint64_t ph = ib ? hh : hh - 1, pb = ib ? ib - 1 : f->Tr - 1;
				double p_o = f2_q(f, ph, f2_r0(f, pb), f2_r1(f, pb));
				double p_l = f2_l(f, ph, f2_r0(f, pb), f2_r1(f, pb));
				double p_kv = f2_unit_kv(f, ph, pb);
				double first_o = f2_q(f, hh, r0, r0 + 1);

				if (shares_line(f2_row(f, hh, r0), f->L)) {
					if (p_kv + p_o + p_l + f->tl < f->C)
						q_lines -= 1;
					if (1 + qn + kv + f->tl < f->C)
						o_lines -= 1;
				}
				if (!lse_each && shares_line(f2_lse(f, hh, r0), f->L) &&
				    qn + kv + first_o + f->tl < f->C)
					l_lines -= 1;
			}
		}
	}
	arr(r, "Q")->read_bytes += q_lines * (double)f->L;
	{
		struct formula_array *o = arr(r, "O"), *l = arr(r, "lse");
		double L = (double)f->L;

		o->read_bytes += (f->q->rfo ? o_lines : 0) * L;
		o->rfo_bytes += (f->q->rfo ? o_lines : 0) * L;
		o->write_bytes += o_lines * L;
		l->read_bytes += (f->q->rfo ? l_lines : 0) * L;
		l->rfo_bytes += (f->q->rfo ? l_lines : 0) * L;
		l->write_bytes += l_lines * L;
	}
}

/* O and lse lines still cached and dirty at the end: among the last C distinct lines the run
 * touched (the tiles, in use to the end, then each unit backwards: its O and lse rows, its K
 * and V lines not already counted for a later unit of the same kv head, its Q rows). The final
 * flush writes them; without it they are never written. Where the cache ends inside one
 * unit's O and lse rows, they share it in proportion. */
static void
f2_resident(const struct f2 *f, double *o_res, double *l_res)
{
	uint64_t kk_seen = UINT64_MAX, kr_seen = 0;
	double room = f->C - f->tl;

	*o_res = *l_res = 0;
	for (uint64_t u = f->BH * f->Tr; u-- > 0 && room > 0;) {
		uint64_t hh = u / f->Tr, ib = u % f->Tr, r0 = f2_r0(f, ib), r1 = f2_r1(f, ib);
		uint64_t kk = hh / f->c->heads * f->c->kv_heads +
			      hh % f->c->heads / (f->c->heads / f->c->kv_heads);
		uint64_t kr = f2_kr(f, ib);
		double o = f2_q(f, hh, r0, r1), l = f2_l(f, hh, r0, r1);

		/* a first line shared with the next unit was counted there */
		if (u + 1 < f->BH * f->Tr && shares_line(f2_row(f, hh, r1), f->L))
			o -= 1;
		if (u + 1 < f->BH * f->Tr && shares_line(f2_lse(f, hh, r1), f->L))
			l -= 1;
		if (o + l <= room) {
			*o_res += o;
			*l_res += l;
		} else {
			/* The cache ends inside this unit's rows: walk them back, lse[r] then O
			 * row r, each line once. */
			double left = room;

			for (uint64_t rr = r1; rr-- > r0 && left > 0;) {
				uint64_t la = f2_lse(f, hh, rr) / f->L, lb = f2_lse(f, hh, rr + 1);
				uint64_t oa = f2_row(f, hh, rr), ob = f2_row(f, hh, rr + 1);
				bool later = rr + 1 < r1 || u + 1 < f->BH * f->Tr;

				/* a line the next row (or unit) starts in was counted with it */
				if (!(later && shares_line(lb, f->L) && (lb / f->L) == la)) {
					*l_res += 1;
					left -= 1;
				}
				if (left <= 0)
					break;
				{
					double n = span(oa, ob, f->L) -
						   (later && shares_line(ob, f->L) ? 1 : 0);

					n = n < left ? n : left;
					*o_res += n;
					left -= n;
				}
			}
		}
		room -= o + l;
		/* K and V: the lines of this kv head beyond those a later unit touched (and its
		 * last line, where the next kv head's rows begin in it, counted with those) */
		if (kk != kk_seen) {
			if (kk_seen != UINT64_MAX && shares_line(f2_row(f, kk_seen, 0), f->L))
				room += 2;
			kk_seen = kk;
			kr_seen = 0;
		}
		if (kr > kr_seen) {
			room -= 2 * (f2_kv(f, kk, 0, kr) - f2_kv(f, kk, 0, kr_seen)) -
				(kr_seen > 0 && shares_line(f2_row(f, kk, kr_seen), f->L) ? 2 : 0);
			kr_seen = kr;
		}
		room -= f2_q(f, hh, r0, r1) -
			(u + 1 < f->BH * f->Tr && shares_line(f2_row(f, hh, r1), f->L) ? 1 : 0);
	}
}

static void
flash2(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	double tile_lines[] = { q->tq, q->tk, q->tv, q->ts, q->to, q->tm, q->tm };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "V_tile", "S_tile",
						  "O_tile", "m_tile", "l_tile" };
	struct f2 f = { .c = c, .q = q };
	double k = 0, v = 0, o_res, l_res;
	struct formula_array *o, *l;

	f.L = (uint64_t)q->L;
	f.RB = c->d * dtype_bytes(c->dtype);
	f.N = c->N;
	f.Br = c->Br < c->N ? c->Br : c->N;
	f.Bc = c->Bc < c->N ? c->Bc : c->N;
	f.Tr = attn_blocks(c->N, c->Br);
	f.BH = c->batch * c->heads;
	f.C = q->C;
	f.tl = q->tq + q->tk + q->tv + q->ts + q->to + 2 * q->tm;
	f2_rows(r, &f);
	for (uint64_t kk = 0; kk < c->batch * c->kv_heads; kk++)
		f2_kv_head(&f, kk, &k, &v);
	arr(r, "K")->read_bytes += k * q->L;
	arr(r, "V")->read_bytes += v * q->L;
	f2_resident(&f, &o_res, &l_res);
	o = arr(r, "O");
	l = arr(r, "lse");
	if (q->flush) {
		o->flush_bytes += o_res * q->L;
		l->flush_bytes += l_res * q->L;
	} else {
		o->write_bytes -= o_res * q->L;
		l->write_bytes -= l_res * q->L;
	}
	tiles(r, q, tile_names, tile_lines, 7, f.tl + 2 * q->kb);
}

/* ---- flash1 ---- */

/*
 * flash1, line by line. After init (O, m and l of every head stored row by row: O row i, then
 * m[i], then l[i]), each head runs its key blocks in order: K block jb, V block jb, then a step
 * for each query block ib still active (causal: from fa(jb) = jb B_c / B_r on): load Q, O, m
 * and l of block ib, fold the key block in (tiles), store O, m and l back. A(jb) = the rows of
 * the active blocks, [fa(jb) B_r, N).
 *
 * Between a Q, O, m or l line's touches at key blocks jb - 1 and jb come every other line of
 * A(jb) of those four arrays, and K and V block jb (base - 1 below); a line two blocks share
 * misses the other arrays' lines of one block (f1_edge()). The first load of O, m and l after
 * init sees every O, m and l line and the earlier heads' data; K and V are read once per head,
 * their block edges twice where a step of A(jb - 1) fills the cache, and again by each further
 * head of a group after the whole of the previous head.
 */

static uint64_t
f1_first(const struct f2 *f, uint64_t jb)
{
	return f->c->causal ? jb * f->Bc / f->Br : 0;
}

/* Q, O, m and l lines of head hh rows [r0, r1): Q and O share a geometry, m and l too. */
static double
f1_qoml(const struct f2 *f, uint64_t hh, uint64_t r0, uint64_t r1)
{
	return 2 * f2_q(f, hh, r0, r1) + 2 * f2_l(f, hh, r0, r1);
}

/* The same from row ra of head ha to row rb of head hb (contiguous in all four arrays). */
static double
f1_qoml_span(const struct f2 *f, uint64_t ha, uint64_t ra, uint64_t hb, uint64_t rb)
{
	return 2 * span(f2_row(f, ha, ra), f2_row(f, hb, rb), f->L) +
	       2 * span(f2_lse(f, ha, ra), f2_lse(f, hb, rb), f->L);
}

static double
f1_kvb(const struct f2 *f, uint64_t kk, uint64_t jb)
{
	uint64_t e = (jb + 1) * f->Bc < f->N ? (jb + 1) * f->Bc : f->N;

	return f2_kv(f, kk, jb * f->Bc, e);
}

enum { F1_Q, F1_O, F1_M, F1_L };

/* Lines of array a (F1_*) of block ib of head hh. */
static double
f1_blk(const struct f2 *f, int a, uint64_t hh, uint64_t ib)
{
	return a <= F1_O ? f2_q(f, hh, f2_r0(f, ib), f2_r1(f, ib))
			 : f2_l(f, hh, f2_r0(f, ib), f2_r1(f, ib));
}

/* Lines of array x (F1_*) of head hh in rows [ra, N) but block b (-1: none). */
static double
f1_rows_but(const struct f2 *f, int x, uint64_t hh, uint64_t ra, int64_t b)
{
	uint64_t (*at)(const struct f2 *, uint64_t, uint64_t) = x <= F1_O ? f2_row : f2_lse;

	if (b < 0)
		return span(at(f, hh, ra), at(f, hh, f->N), f->L);
	return span2(at(f, hh, ra), at(f, hh, f2_r0(f, (uint64_t)b)),
		     at(f, hh, f2_r1(f, (uint64_t)b)), at(f, hh, f->N), f->L);
}

/* The Q, O, m and l lines between a key block's touch of a line of array a that blocks ib - 1
 * and ib share and the next key block's: every line of A but the line itself and, of the
 * other arrays, the block the step order leaves out (see the header). */
static double
f1_edge_window(const struct f2 *f, int a, uint64_t hh, uint64_t ib, uint64_t ra)
{
	/* missing[a][x]: which block of array x the window of an edge of array a lacks:
	 * 0 none, 1 block ib - 1, 2 block ib */
	static const int missing[4][4] = {
		{ 0, 1, 1, 1 }, /* Q */
		{ 2, 0, 1, 1 }, /* O */
		{ 2, 2, 0, 1 }, /* m */
		{ 2, 2, 2, 0 }, /* l */
	};
	double d = 0;

	for (int x = F1_Q; x <= F1_L; x++) {
		int m = missing[a][x];

		d += f1_rows_but(f, x, hh, ra, m == 0 ? -1 : (int64_t)(m == 1 ? ib - 1 : ib)) -
		     (x == a ? 1 : 0);
	}
	return d;
}

/* Lines a step touches of array a between two touches of a line blocks ib - 1 and ib share,
 * at one key block (the step of ib - 1 ends it, the step of ib starts it again). */
static double
f1_step_edge(const struct f2 *f, int a, uint64_t hh, uint64_t ib)
{
	switch (a) {
	case F1_Q:
		return f1_blk(f, F1_O, hh, ib - 1) + 2 * f1_blk(f, F1_M, hh, ib - 1);
	case F1_O:
		return 2 * f1_blk(f, F1_M, hh, ib - 1) + f1_blk(f, F1_Q, hh, ib);
	case F1_M:
		return f1_blk(f, F1_M, hh, ib - 1) + f1_blk(f, F1_Q, hh, ib) +
		       f1_blk(f, F1_O, hh, ib);
	default:
		return f1_blk(f, F1_Q, hh, ib) + f1_blk(f, F1_O, hh, ib) + f1_blk(f, F1_M, hh, ib);
	}
}

/* f1_rows_at() line by line, for blocks of under two lines, where a line can hold rows of
 * many blocks b1 .. b2: between its last touch at key block jb - 1 (in step b2) and its first
 * at jb (step b1) come every other line of its array in A, and of each other array the rows of
 * A but blocks b1 .. b2 (block b1 too where that array is loaded after this one, block b2 too
 * where it is stored before this one's store, or is Q). */
static double
f1_rows_at_by_line(const struct f2 *f, int a, uint64_t hh, uint64_t jb, uint64_t kk)
{
	uint64_t (*at)(const struct f2 *, uint64_t, uint64_t) = a <= F1_O ? f2_row : f2_lse;
	uint64_t rowb = a <= F1_O ? f->RB : 4, fa = f1_first(f, jb), ra = fa * f->Br;
	uint64_t first = at(f, hh, ra) / f->L, last = (at(f, hh, f->N) - 1) / f->L;
	uint64_t base = at(f, hh, 0);
	double own = span(at(f, hh, ra), at(f, hh, f->N), f->L) - 1;
	double kv = 2 * f1_kvb(f, kk, jb) + f->tl, misses = 0;

	for (uint64_t ln = first; ln <= last; ln++) {
		uint64_t lo_b = ln * f->L > at(f, hh, ra) ? ln * f->L : at(f, hh, ra);
		uint64_t hi_b =
			(ln + 1) * f->L < at(f, hh, f->N) ? (ln + 1) * f->L : at(f, hh, f->N);
		uint64_t b1 = (lo_b - base) / rowb / f->Br, b2 = (hi_b - 1 - base) / rowb / f->Br;
		double d = own + kv;

		for (int x = F1_Q; x <= F1_L; x++) {
			uint64_t (*xat)(const struct f2 *, uint64_t, uint64_t) =
				x <= F1_O ? f2_row : f2_lse;
			/* loads go Q, O, m, l; stores O, m, l after all loads */
			bool before = x < a, after = a == F1_Q || (x > a && x != F1_Q);
			uint64_t x0 = before ? f2_r1(f, b1) : f2_r0(f, b1);
			uint64_t x1 = after ? f2_r0(f, b2) : f2_r1(f, b2);

			if (x == a)
				continue;
			if (x0 >= x1)
				d += span(xat(f, hh, ra), xat(f, hh, f->N), f->L);
			else
				d += span2(xat(f, hh, ra), xat(f, hh, x0), xat(f, hh, x1),
					   xat(f, hh, f->N), f->L);
		}
		if (d >= f->C)
			misses += 1;
	}
	return misses;
}

/* Misses of array a's lines of head hh at key block jb >= 1, last touched at jb - 1: the lines
 * of A(jb); an edge between two active blocks misses a block of the others (f1_edge_less()). */
static double
f1_rows_at(const struct f2 *f, int a, uint64_t hh, uint64_t jb, uint64_t kk)
{
	uint64_t fa = f1_first(f, jb), ra = fa * f->Br;
	double base = f1_qoml(f, hh, ra, f->N) + 2 * f1_kvb(f, kk, jb) + f->tl;
	double misses = a <= F1_O ? f2_q(f, hh, ra, f->N) : f2_l(f, hh, ra, f->N);
	/* a window lacks at most the rows of the blocks one line holds, of each array */
	uint64_t rows = f->L / (f->RB < 4 ? f->RB : 4) + 1 + 2 * f->Br;
	double most_less =
		4 * (double)(rows * f->RB / f->L + 2) + 4 * (double)(rows * 4 / f->L + 2);

	if (base - 1 < f->C)
		return 0; /* no interior line misses; an edge misses even less */
	if (base - 1 - most_less >= f->C)
		return misses;
	if (f->Br * (a <= F1_O ? f->RB : 4) < 2 * f->L)
		return f1_rows_at_by_line(f, a, hh, jb, kk);
	for (uint64_t ib = fa + 1; ib < f->Tr; ib++) {
		uint64_t at = a <= F1_O ? f2_row(f, hh, f2_r0(f, ib)) : f2_lse(f, hh, f2_r0(f, ib));

		if (shares_line(at, f->L) &&
		    f1_edge_window(f, a, hh, ib, ra) + 2 * f1_kvb(f, kk, jb) + f->tl < f->C)
			misses -= 1;
	}
	return misses;
}

/* Within key block jb, a line two active blocks share is touched by both steps: a second miss
 * where the step between fills the cache (caches of about a block). */
static double
f1_step_edges(const struct f2 *f, int a, uint64_t hh, uint64_t jb)
{
	double misses = 0, most = 2 * (double)(f->Br * f->RB / f->L + 2) +
				  2 * (double)(f->Br * 4 / f->L + 2) + f->tl;

	if (most < f->C)
		return 0;
	for (uint64_t ib = f1_first(f, jb) + 1; ib < f->Tr; ib++) {
		uint64_t at = a <= F1_O ? f2_row(f, hh, f2_r0(f, ib)) : f2_lse(f, hh, f2_r0(f, ib));

		if (shares_line(at, f->L) && f1_step_edge(f, a, hh, ib) + f->tl >= f->C)
			misses += 1;
	}
	return misses;
}

/* Re-reads by head hh of kv head kk's lines (head hh - 1 read them last), line by line, for
 * key blocks of under two lines: a K line holding rows of blocks b1 .. b2 sees every other K
 * line, V but blocks b1 .. b2 - 1, head hh - 1's steps from block b2 on and head hh's steps
 * before block b1 (a V line: K but blocks b1 + 1 .. b2). */
static void
f1_kv_rereads_by_line(const struct f2 *f, uint64_t kk, uint64_t hh, double all, double *k,
		      double *v)
{
	uint64_t base = f2_row(f, kk, 0), end = f2_row(f, kk, f->N);

	for (uint64_t ln = base / f->L; ln <= (end - 1) / f->L; ln++) {
		uint64_t lo = ln * f->L > base ? ln * f->L : base;
		uint64_t hi = (ln + 1) * f->L < end ? (ln + 1) * f->L : end;
		uint64_t b1 = (lo - base) / f->RB / f->Bc, b2 = (hi - 1 - base) / f->RB / f->Bc;
		double steps = f1_qoml_span(f, hh - 1, f1_first(f, b2) * f->Br,
					    b1 > 0 ? hh : hh - 1, f->N) +
			       f->tl;
		uint64_t k0 = b1 * f->Bc,
			 k1 = b2 * f->Bc; /* V blocks b1 .. b2 - 1: rows [k0, k1) */
		uint64_t v0 = (b1 + 1) * f->Bc,
			 v1 = (b2 + 1) * f->Bc < f->N ? (b2 + 1) * f->Bc : f->N;

		if (all - 1 +
			    (k0 < k1 ? span2(base, f2_row(f, kk, k0), f2_row(f, kk, k1), end, f->L)
				     : all) +
			    steps >=
		    f->C)
			*k += 1;
		if (all - 1 +
			    (v0 < v1 ? span2(base, f2_row(f, kk, v0), f2_row(f, kk, v1), end, f->L)
				     : all) +
			    steps >=
		    f->C)
			*v += 1;
	}
}

/* K and V reads of kv head kk: once per head of its group (each reads every key block in
 * order), an edge two blocks share a second time where the step of A(jb - 1) between (with V's
 * block, or K's) fills the cache; a further head re-reads the lines whose window (the rest of
 * the previous head, this head up to the block) fills it. */
static void
f1_kv_head(const struct f2 *f, uint64_t kk, double *k_reads, double *v_reads)
{
	const uint64_t Hkv = f->c->kv_heads, g = f->c->heads / Hkv;
	const uint64_t hh0 = kk / Hkv * f->c->heads + kk % Hkv * g;
	const uint64_t Tc = (f->N + f->Bc - 1) / f->Bc;
	double all = f2_kv(f, kk, 0, f->N), k = all, v = all;

	/* the first line, where the previous kv head's rows end in it */
	if (kk > 0 && shares_line(f2_row(f, kk, 0), f->L)) {
		double steps = f1_qoml(f, hh0 - 1, f1_first(f, Tc - 1) * f->Br, f->N) + f->tl;

		if (f1_kvb(f, kk - 1, Tc - 1) + steps < f->C)
			k -= 1;
		if (f1_kvb(f, kk, 0) + steps < f->C)
			v -= 1;
	}
	for (uint64_t j = 0; j < g; j++) {
		uint64_t hh = hh0 + j;

		for (uint64_t jb = 1; jb < Tc; jb++) {
			if (!shares_line(f2_row(f, kk, jb * f->Bc), f->L))
				continue;
			{
				double steps =
					f1_qoml(f, hh, f1_first(f, jb - 1) * f->Br, f->N) + f->tl;

				if (f1_kvb(f, kk, jb - 1) + steps >= f->C)
					k += 1;
				if (f1_kvb(f, kk, jb) + steps >= f->C)
					v += 1;
			}
		}
		if (j == 0)
			continue;
		/* re-reads by head hh of the lines head hh - 1 read */
		if (f->Bc * f->RB < 2 * f->L) {
			f1_kv_rereads_by_line(f, kk, hh, all, &k, &v);
			continue;
		}
		for (uint64_t jb = 0; jb < Tc; jb++) {
			uint64_t s = f2_row(f, kk, jb * f->Bc);
			double rest = f1_qoml_span(f, hh - 1, f1_first(f, jb) * f->Br,
						   jb > 0 ? hh : hh - 1, jb > 0 ? f->N : f->N) +
				      f->tl;
			double d = 2 * all - 1 + rest;
			/* block jb's own lines; the first is the previous block's where they share
			 * it */
			double own =
				f1_kvb(f, kk, jb) - (jb > 0 && shares_line(s, f->L) ? 1 : 0) -
				(jb + 1 < Tc && shares_line(f2_row(f, kk, (jb + 1) * f->Bc), f->L)
					 ? 1
					 : 0);

			if (d < f->C)
				continue;
			k += own;
			v += own;
			/* a shared first line, touched last at block jb (head hh - 1) and first at
			 * jb - 1 (head hh): its window lacks the other array's block jb - 1 (or jb)
			 * and, at jb = 1, this head's steps */
			if (jb > 0 && shares_line(s, f->L)) {
				double edge = 2 * all - 1 +
					      f1_qoml_span(f, hh - 1, f1_first(f, jb) * f->Br,
							   jb > 1 ? hh : hh - 1, f->N) +
					      f->tl;

				if (edge - f1_kvb(f, kk, jb - 1) >= f->C)
					k += 1;
				if (edge - f1_kvb(f, kk, jb) >= f->C)
					v += 1;
			}
		}
	}
	*k_reads += k;
	*v_reads += v;
}

/* f1_first_loads() line by line: a line of O, m or l holding rows rlo .. rhi of head hh, stored
 * by init at row rhi and loaded first by step b = block(rlo) of key block 0. Between come: of
 * its own array every other line; of the arrays init stores after it (at row rhi and on) the
 * lines of rows from rhi; of the arrays the step loads before it the rows up to block b's end,
 * of those after it up to block b's start; Q up to block b's end; K and V read so far. The
 * line this head shares with the previous one is counted here as a miss (the caller decides
 * it). */
static double
f1_first_loads_by_line(const struct f2 *f, int a, uint64_t hh, uint64_t kk)
{
	uint64_t (*at)(const struct f2 *, uint64_t, uint64_t) = a <= F1_O ? f2_row : f2_lse;
	uint64_t rowb = a <= F1_O ? f->RB : 4;
	uint64_t kv_end = hh > 0 ? (hh - 1) / f->c->heads * f->c->kv_heads +
					   (hh - 1) % f->c->heads / (f->c->heads / f->c->kv_heads) +
					   1
				 : 0;
	uint64_t kv_to = f2_row(f, kk, f->Bc);
	double kv = 2 * span(0, kv_to > f2_row(f, kv_end, 0) ? kv_to : f2_row(f, kv_end, 0), f->L);
	uint64_t first = at(f, hh, 0) / f->L, last = (at(f, hh, f->N) - 1) / f->L;
	double misses = shares_line(at(f, hh, 0), f->L) ? 1 : 0;

	for (uint64_t ln = first + (shares_line(at(f, hh, 0), f->L) ? 1 : 0); ln <= last; ln++) {
		/* rows as global indices (head * N + row): a line can end in the next head */
		uint64_t rlo = ln * f->L / rowb - hh * f->N, rhi = ((ln + 1) * f->L - 1) / rowb;
		uint64_t b = rlo / f->Br;

		if (rhi >= f->BH * f->N)
			rhi = f->BH * f->N - 1;
		double d = span(0, f2_row(f, hh, f2_r1(f, b)), f->L) + kv + f->tl; /* Q */

		for (int x = F1_O; x <= F1_L; x++) {
			uint64_t (*xat)(const struct f2 *, uint64_t, uint64_t) =
				x <= F1_O ? f2_row : f2_lse;
			uint64_t all = xat(f, f->BH, 0);
			/* init stores O row i, m[i], l[i]: after this line, rows from rhi (x after
			 * a) or past rhi; the step loads x before a up to block b's end */
			uint64_t from = x > a ? rhi : rhi + 1;
			uint64_t upto = hh * f->N + (x < a ? f2_r1(f, b) : f2_r0(f, b));

			if (x == a)
				d += span(0, all, f->L) - 1;
			else if (upto >= from)
				d += span(0, all, f->L);
			else
				d += span2(0, xat(f, 0, upto), xat(f, 0, from), all, f->L);
		}
		if (d >= f->C)
			misses += 1;
	}
	return misses;
}

/* Array a's lines of head hh that the first step of each block (key block 0) misses, last
 * touched by init (O, m, l) or new (Q). Between init's store of a line and its first load: the
 * rest of init (every O, m and l line after it), the earlier heads (all their lines), this
 * head's blocks up to it. The line a head shares with the previous head was last touched by
 * that head's last step instead. */
static double
f1_first_loads(const struct f2 *f, int a, uint64_t hh, uint64_t kk)
{
	double lines = a <= F1_O ? f2_q(f, hh, 0, f->N) : f2_l(f, hh, 0, f->N);
	uint64_t at = a <= F1_O ? f2_row(f, hh, 0) : f2_lse(f, hh, 0);
	bool first_block = true; /* block 0's lines are among those counted */

	if (a != F1_Q) {
		double O = span(0, f2_row(f, f->BH, 0), f->L),
		       ml = span(0, f2_lse(f, f->BH, 0), f->L);
		/* K and V of the earlier heads' kv heads, and this head's block 0 */
		uint64_t kv_end =
			hh > 0 ? (hh - 1) / f->c->heads * f->c->kv_heads +
					 (hh - 1) % f->c->heads / (f->c->heads / f->c->kv_heads) + 1
			       : 0;
		double kv = 2 * span(0, f2_row(f, kv_end, 0), f->L) +
			    (kk >= kv_end ? 2 * f1_kvb(f, kk, 0) : 0);
		double earlier_q = span(0, f2_row(f, hh, 0), f->L);
		double hi = O + 2 * ml + earlier_q + f2_q(f, hh, 0, f->N) + kv + f->tl;
		double lo = O - 1 + 2 * ml - 2 * (double)(f->Br * 4 / f->L + 2) + earlier_q + kv +
			    f->tl;

		if (hi < f->C) {
			return 0;
		} else if (lo < f->C) {
			/* near the cache size: decide line by line */
			lines = f1_first_loads_by_line(f, a, hh, kk);
			first_block = true;
		}
		if (lines == 0)
			return 0;
	}
	/* the line shared with the previous head: last touched by its last step (where block 0
	 * misses at all) */
	if (hh > 0 && first_block && shares_line(at, f->L)) {
		uint64_t last = f->Tr - 1;
		double kv = 2 * f1_kvb(f, kk, 0) + f->tl;
		double d = a == F1_Q ? f1_blk(f, F1_O, hh - 1, last) +
					       2 * f1_blk(f, F1_M, hh - 1, last)
			   : a == F1_O ? 2 * f1_blk(f, F1_M, hh - 1, last) + f1_blk(f, F1_Q, hh, 0)
			   : a == F1_M ? f1_blk(f, F1_M, hh - 1, last) + f1_blk(f, F1_Q, hh, 0) +
						 f1_blk(f, F1_O, hh, 0)
				       : f1_blk(f, F1_Q, hh, 0) + f1_blk(f, F1_O, hh, 0) +
						 f1_blk(f, F1_M, hh, 0);

		if (d + kv < f->C)
			lines -= 1;
	}
	return lines;
}

/* The kv head head hh reads. */
static uint64_t
f1_kv_of(const struct f2 *f, uint64_t hh)
{
	return hh / f->c->heads * f->c->kv_heads +
	       hh % f->c->heads / (f->c->heads / f->c->kv_heads);
}

/* O, m and l lines dirty and cached at the end (every one's last touch is a store): among the
 * last C distinct lines, walking back through the last steps. The K and V lines more recent
 * than a step of key block jb are those of the later blocks and heads (all of its kv head's
 * where a later head of the group reads them again). */
static double
f1_resident(const struct f2 *f, int a)
{
	const uint64_t Tc = (f->N + f->Bc - 1) / f->Bc;
	double used = f->tl, res = 0;
	uint64_t kv_hi = 0;

	for (uint64_t hh = f->BH; hh-- > 0;) {
		uint64_t kk = f1_kv_of(f, hh);
		bool again = hh + 1 < f->BH && f1_kv_of(f, hh + 1) == kk;
		uint64_t lo = f->Tr; /* blocks [lo, Tr) already counted for this head */

		if (hh + 1 == f->BH)
			kv_hi = f2_row(f, kk, f->N);
		for (uint64_t jb = Tc; jb-- > 0;) {
			uint64_t fa = f1_first(f, jb);
			uint64_t kv_lo =
				again ? f2_row(f, kk, 0)
				      : f2_row(f, kk, jb + 1 < Tc ? (jb + 1) * f->Bc : f->N);
			double kv = kv_lo < kv_hi ? 2 * span(kv_lo, kv_hi, f->L) : 0;

			if (used + kv >= f->C)
				return res;
			for (uint64_t ib = lo; ib-- > fa;) {
				/* a step stores O, then m, then l: l most recent */
				static const int order[] = { F1_L, F1_M, F1_O, F1_Q };

				for (int k = 0; k < 4; k++) {
					int x = order[k];
					uint64_t end = x <= F1_O ? f2_row(f, hh, f2_r1(f, ib))
								 : f2_lse(f, hh, f2_r1(f, ib));
					double n = f1_blk(f, x, hh, ib) -
						   ((ib + 1 < f->Tr || hh + 1 < f->BH) &&
								    shares_line(end, f->L)
							    ? 1
							    : 0);
					double room = f->C - used - kv;

					if (room <= 0)
						return res;
					if (x == a)
						res += n < room ? n : room;
					used += n;
				}
			}
			if (fa < lo)
				lo = fa;
		}
	}
	return res;
}

static void
flash1(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	double tile_lines[] = { q->tq, q->tk, q->tv, q->ts, q->to, q->tm, q->tm };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "V_tile", "S_tile",
						  "O_tile", "m_tile", "l_tile" };
	static const char *const names[] = { "Q", "O", "m", "l" };
	struct f2 f = { .c = c, .q = q };
	uint64_t Tc;
	double loads[4] = { 0, 0, 0, 0 }, store_rfo[4] = { 0, 0, 0, 0 }, k = 0, v = 0, init_o,
	       init_ml;

	f.L = (uint64_t)q->L;
	f.RB = c->d * dtype_bytes(c->dtype);
	f.N = c->N;
	f.Br = c->Br < c->N ? c->Br : c->N;
	f.Bc = c->Bc < c->N ? c->Bc : c->N;
	f.Tr = attn_blocks(c->N, c->Br);
	f.BH = c->batch * c->heads;
	f.C = q->C;
	f.tl = q->tq + q->tk + q->tv + q->ts + q->to + 2 * q->tm;
	Tc = attn_blocks(c->N, c->Bc);
	/* init: every O line, and every m and l line, stored once (each m and l value apart
	 * where an O row between fills the cache) */
	init_o = span(0, f2_row(&f, f.BH, 0), f.L);
	init_ml = (double)(f.RB / f.L) + 1 + f.tl >= f.C ? (double)(f.BH * f.N)
							 : span(0, f2_lse(&f, f.BH, 0), f.L);
	for (uint64_t hh = 0; hh < f.BH; hh++) {
		uint64_t kk =
			hh / c->heads * c->kv_heads + hh % c->heads / (c->heads / c->kv_heads);

		for (int a = F1_Q; a <= F1_L; a++) {
			loads[a] += f1_first_loads(&f, a, hh, kk);
			for (uint64_t jb = 0; jb < Tc; jb++) {
				if (jb > 0)
					loads[a] += f1_rows_at(&f, a, hh, jb, kk);
				loads[a] += f1_step_edges(&f, a, hh, jb);
			}
		}
	}
	for (uint64_t kk = 0; kk < c->batch * c->kv_heads; kk++)
		f1_kv_head(&f, kk, &k, &v);
	arr(r, "Q")->read_bytes += loads[F1_Q] * q->L;
	/* A step loads its O, m and l block, then stores it: where the block and the others'
	 * blocks between fill the cache, every store misses again (a read for ownership; the
	 * load missed too, so no extra write). */
	for (uint64_t hh = 0; hh < f.BH && q->rfo; hh++)
		for (uint64_t jb = 0; jb < Tc; jb++)
			for (uint64_t ib = f1_first(&f, jb); ib < f.Tr; ib++) {
				double o = f1_blk(&f, F1_O, hh, ib), m = f1_blk(&f, F1_M, hh, ib);

				if (o - 1 + 2 * m + f.tl < f.C && m - 1 + m + o + f.tl < f.C)
					break; /* the blocks are alike: none further misses either
						*/
				if (o - 1 + 2 * m + f.tl >= f.C)
					store_rfo[F1_O] += o;
				if (m - 1 + m + o + f.tl >= f.C) {
					store_rfo[F1_M] += m;
					store_rfo[F1_L] += m;
				}
			}
	for (int a = F1_O; a <= F1_L; a++) {
		struct formula_array *x = arr(r, names[a]);
		double init = a == F1_O ? init_o : init_ml, rfo = q->rfo ? init + store_rfo[a] : 0;
		double res = f1_resident(&f, a);

		/* a load that misses finds the line evicted dirty: written, then read */
		x->read_bytes += (loads[a] + rfo) * q->L;
		x->rfo_bytes += rfo * q->L;
		x->write_bytes += (init + loads[a] - (q->flush ? 0 : res)) * q->L;
		x->flush_bytes += (q->flush ? res : 0) * q->L;
	}
	arr(r, "K")->read_bytes += k * q->L;
	arr(r, "V")->read_bytes += v * q->L;
	tiles(r, q, tile_names, tile_lines, 7, f.tl + 2 * q->kb + q->qb + q->qb);
}

/* ---- proj ---- */

/* One product C = A W per batch: A is N x K (row blocks of B_r rows, d-wide slices), W is
 * K x n (column blocks of B_c columns), C is N x n. The loop order is row block ib, column
 * block jb, slice k; C's block is stored after its last slice. */
struct product {
	const char *a, *w, *c;
	double K, n;
};

static void
proj(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	double Dm = q->H * q->d, Dkv = q->Hkv * q->d, s = q->s, L = q->L;
	double tiles_all = q->tq + q->tk + q->ts;
	double tile_lines[] = { q->tq, q->tk, q->ts };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "S_tile" };
	const struct product prods[4] = {
		{ "x", "W_Q", "Q", Dm, Dm },
		{ "x", "W_K", "K", Dm, Dkv },
		{ "x", "W_V", "V", Dm, Dkv },
		{ "O", "W_O", "y", Dm, Dm },
	};
	double blocks = q->B * q->Tr; /* row blocks over all batches */

	for (int m = 0; m < 4; m++) {
		const struct product *p = &prods[m];
		double Tn = ceil(p->n / q->Bc), Ks = ceil(p->K / q->d);
		double a_block = q->Br * p->K * s / L, a_slice = q->Br * q->d * s / L;
		double w_all = p->K * p->n * s / L, w_slice = q->d * q->Bc * s / L;
		double c_row = q->Br * p->n * s / L; /* one row of C blocks */
		double a_lines = q->B * q->N * p->K * s / L;
		struct formula_array *A = arr(r, p->a), *W = arr(r, p->w);

		/* A: a line of block ib comes back at the next column block after the rest of the
		 * block, one column block of W (K B_c) and the C block stored. */
		{
			double G_A = a_block - 1 + p->K * q->Bc * s / L + q->Br * q->Bc * s / L +
				     tiles_all;
			bool shared = m > 0 && strcmp(prods[m - 1].a, p->a) == 0;

			/* First use in this product: new, or (x after the previous product) after
			 * the rest of that product and this one's start; averaged over blocks. */
			for (double ib = 0; ib < blocks; ib++) {
				double first = INFINITY;

				if (shared) {
					const struct product *pp = &prods[m - 1];
					double w_prev = pp->K * pp->n * s / L;
					double last = ib == blocks - 1;

					first = q->B * q->N * p->K * s / L - 1 +
						(last ? w_prev / 2 : w_prev) +
						(ib > 0 ? w_all : w_all / 2) +
						(blocks - 1 - ib) * q->Br * pp->n * s / L +
						ib * q->Br * p->n * s / L + tiles_all;
				}
				{
					struct step st[2] = { { LD, first, 1 },
							      { LD, G_A, Tn - 1 } };

					seq(A, q, a_lines / blocks, st, 2, INFINITY);
				}
			}
		}
		/* W: a line of column block jb, slice k comes back at the next row block after
		 * every other W line, the C blocks of one row, and the A lines between: the rest of
		 * block ib (all of it unless jb is the last column block) and of block ib + 1 the
		 * slices up to k (all of it unless jb is the first). */
		for (double jb = 0; jb < Tn; jb++) {
			for (double k = 0; k < Ks; k++) {
				double x_between =
					(jb < Tn - 1 ? a_block : (Ks - 1 - k) * a_slice) +
					(jb > 0 ? a_block : (k + 1) * a_slice);
				double G_W = w_all - 1 + x_between + c_row + tiles_all;
				struct step st[2] = { { LD, INFINITY, 1 },
						      { LD, G_W, blocks - 1 } };

				seq(W, q,
				    w_slice * (fmin(q->Bc, p->n - jb * q->Bc) / q->Bc) *
					    (fmin(q->d, p->K - k * q->d) / q->d),
				    st, 2, INFINITY);
			}
		}
		once(arr(r, p->c), q, q->B * q->N * p->n * s / L, ST,
		     q->B * q->N * p->n * s / L / 2);
	}
	(void)c;
	tiles(r, q, tile_names, tile_lines, 3,
	      q->tq + q->tk + q->ts + q->Br * q->d * s / L + q->d * q->Bc * s / L);
}

/* ---- no cache: every access moves its own bytes ---- */

static void
add(struct formula_result *r, const char *name, double rd, double wr)
{
	struct formula_array *a = arr(r, name);

	a->read_bytes += rd;
	a->write_bytes += wr;
}

static void
no_cache(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	double s = q->s, N = q->N, d = q->d, bh = q->B * q->H;
	double head = N * d * s, S = N * N * s, vec = N * 4;
	uint64_t Tr = attn_blocks(c->N, c->Br);

	switch (c->kernel) {
	case ATTN_NAIVE:
		add(r, "Q", bh * head, 0);
		add(r, "K", bh * q->Tr * head, 0);
		add(r, "V", bh * q->Tr * head, 0);
		add(r, "O", 0, bh * head);
		add(r, "S", bh * (c->softmax_separate ? S : 2 * S),
		    bh * (c->softmax_separate ? S : 2 * S));
		if (c->softmax_separate)
			add(r, "P", bh * S, bh * S);
		break;
	case ATTN_FLASH2: {
		double krows = 0;

		/* Each query block reads its key blocks' rows (the last block may be short). */
		for (uint64_t ib = 0; ib < Tr; ib++)
			krows += fmin(flash_kblocks(c, ib) * q->Bc, N);
		add(r, "Q", bh * head, 0);
		add(r, "K", bh * krows * d * s, 0);
		add(r, "V", bh * krows * d * s, 0);
		add(r, "O", 0, bh * head);
		add(r, "lse", 0, bh * vec);
		break;
	}
	case ATTN_FLASH1: {
		double qrows = 0;
		uint64_t Tc = attn_blocks(c->N, c->Bc);

		for (uint64_t jb = 0; jb < Tc; jb++) {
			uint64_t ib0 = c->causal ? (jb * c->Bc) / c->Br : 0;

			qrows += (double)c->N - (double)(ib0 * c->Br);
		}
		add(r, "Q", bh * qrows * d * s, 0);
		add(r, "O", bh * qrows * d * s, bh * (head + qrows * d * s));
		add(r, "m", bh * qrows * 4, bh * (vec + qrows * 4));
		add(r, "l", bh * qrows * 4, bh * (vec + qrows * 4));
		add(r, "K", bh * head, 0);
		add(r, "V", bh * head, 0);
		break;
	}
	default: {
		double Dm = q->H * d, Dkv = q->Hkv * d, rows = q->B * N;
		double tq = ceil(Dm / q->Bc), tkv = ceil(Dkv / q->Bc);

		/* x is read once per column block of each of the three input products. */
		add(r, "x", rows * Dm * s * (tq + 2 * tkv), 0);
		add(r, "W_Q", q->B * q->Tr * Dm * Dm * s, 0);
		add(r, "W_K", q->B * q->Tr * Dm * Dkv * s, 0);
		add(r, "W_V", q->B * q->Tr * Dm * Dkv * s, 0);
		add(r, "W_O", q->B * q->Tr * Dm * Dm * s, 0);
		add(r, "O", rows * Dm * s * tq, 0);
		add(r, "Q", 0, rows * Dm * s);
		add(r, "K", 0, rows * Dkv * s);
		add(r, "V", 0, rows * Dkv * s);
		add(r, "y", 0, rows * Dm * s);
		break;
	}
	}
}

/* ---- lab formulas and regimes ---- */

double
formula_lab(const struct attn_config *c)
{
	double N = (double)c->N, d = (double)c->d, s = dtype_bytes(c->dtype);
	double heads = (double)c->batch * (double)c->heads;

	switch (c->kernel) {
	case ATTN_NAIVE:
		return heads * (12 * N * d + 16 * N * N) * s / 4;
	case ATTN_FLASH2:
		return heads * 8 * N * d * (1 + N / (double)c->Br) * s / 4;
	default:
		return 0;
	}
}

static void
regime(struct formula_result *r, const struct attn_config *c, const struct formula_machine *m,
       const struct q *q)
{
	struct formula_regime *g = &r->regime;
	double kv_bytes = 2 * q->N * q->d * q->s, S_bytes = q->Sall * q->L;
	char kv[32], S[32], C[32];

	snprintf(kv, sizeof(kv), "%.3g MiB", kv_bytes / 1048576);
	snprintf(S, sizeof(S), "%.3g MiB", S_bytes / 1048576);
	snprintf(C, sizeof(C), "%.3g MiB", m->capacity_bytes / 1048576);
	g->within_assumptions = false;
	if (c->kernel == ATTN_NAIVE) {
		double G_K = naive_gap_k(q, q->Br, q->Br, 0);
		double G_S1 = q->Sall - 1;

		if (m->no_cache)
			snprintf(g->text, sizeof(g->text),
				 "K/V fit in cache fails: no cache holds K and V between query "
				 "blocks, so each is read T_r = %.0f times, not once",
				 q->Tr);
		else if (G_K >= q->C)
			snprintf(
				g->text, sizeof(g->text),
				"K/V fit in cache fails: K, V and a block row of S (%.3g MiB) do not "
				"fit in %s, so K and V are read T_r = %.0f times, not once",
				G_K * q->L / 1048576, C, q->Tr);
		else if (G_S1 < q->C)
			snprintf(
				g->text, sizeof(g->text),
				"S spills to DRAM fails: S and P (%s) fit in %s and never reach DRAM "
				"between passes",
				S, C);
		else if (m->rfo && c->softmax_separate)
			snprintf(g->text, sizeof(g->text),
				 "no read-for-ownership fails: write-allocate reads S and P before "
				 "writing them (+2 N^2 s)");
		else {
			g->within_assumptions = true;
			snprintf(g->text, sizeof(g->text),
				 "K/V stay in cache (%s), S spills to DRAM (%s > %s)%s", kv, S, C,
				 m->rfo ? "; write-allocate adds S's read for ownership (N^2 s)"
					: "");
		}
	} else if (c->kernel == ATTN_FLASH2) {
		double G = flash2_gap(q, q->Br, q->Br, 0);

		if (c->causal)
			snprintf(
				g->text, sizeof(g->text),
				"all blocks computed fails: causal skips the masked key blocks the "
				"lab formula counts (about half of K and V)");
		else if (!m->no_cache && G < q->C)
			snprintf(
				g->text, sizeof(g->text),
				"K/V re-read per query block fails: K and V (%s) stay in %s, so they "
				"are read once, not N/B_r = %.0f times",
				kv, C, q->N / q->Br);
		else {
			g->within_assumptions = true;
			snprintf(
				g->text, sizeof(g->text),
				"K/V re-read from DRAM for each of the N/B_r = %.0f query blocks%s",
				q->N / q->Br,
				m->no_cache ? " (no cache)"
					    : ", since they do not fit in the cache");
		}
	} else {
		snprintf(g->text, sizeof(g->text), "the lab has no formula for %s",
			 attn_kernel_name(c->kernel));
	}
}

void
formula_machine_from_spec(const struct spec *s, bool flush, struct formula_machine *m)
{
	const struct cache_config *c = &s->cache;

	memset(m, 0, sizeof(*m));
	m->tiles_in_scratch = s->tiles_in_scratch;
	m->flush = flush;
	if (c->levels == 0) {
		m->no_cache = true;
		m->line_bytes = 1;
		return;
	}
	m->capacity_bytes = (double)c->level[c->levels - 1].size_bytes;
	m->line_bytes = (double)c->level[c->levels - 1].line_bytes;
	m->rfo = c->level[0].alloc == CACHE_ALLOC_FETCH;
}

int
formula_eval(const struct attn_config *c, const struct formula_machine *m,
	     struct formula_result *out)
{
	struct q q;

	memset(out, 0, sizeof(*out));
	setup(&q, c, m);
	if (m->no_cache) {
		q.L = 1;
		no_cache(out, c, &q);
	} else {
		switch (c->kernel) {
		case ATTN_NAIVE:
			naive(out, c, &q);
			break;
		case ATTN_FLASH1:
			flash1(out, c, &q);
			break;
		case ATTN_FLASH2:
			flash2(out, c, &q);
			break;
		default:
			proj(out, c, &q);
			break;
		}
	}
	for (unsigned i = 0; i < out->narrays; i++) {
		out->read_bytes += out->arrays[i].read_bytes;
		out->write_bytes += out->arrays[i].write_bytes;
		out->rfo_bytes += out->arrays[i].rfo_bytes;
		out->flush_bytes += out->arrays[i].flush_bytes;
	}
	out->lab_bytes = formula_lab(c);
	out->flops = attn_flops(c);
	regime(out, c, m, &q);
	return 0;
}

const struct formula_array *
formula_array(const struct formula_result *r, const char *name)
{
	for (unsigned i = 0; i < r->narrays; i++)
		if (strcmp(r->arrays[i].name, name) == 0)
			return &r->arrays[i];
	return NULL;
}
