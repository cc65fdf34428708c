/* The exact formula of naive attention: see analysis/formulas.c for the method. */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "sim/util.h"

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
double
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
double
flash2_gap(const struct q *q, double nr_prev, double nr_next, double jb)
{
	(void)jb;
	return 2 * q->N * q->rq - 1 + nr_next * q->rq + nr_prev * (q->rq + 4 / q->L) + q->tq +
	       q->tk + q->tv + q->ts + q->to + 2 * q->tm;
}

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

void
formula_naive(struct formula_result *r, const struct attn_config *c, const struct q *q)
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
