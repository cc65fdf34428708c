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
 * Paged K/V (--kv-page P): each key block first reads its pages' block-table entries. Where a
 *   row is whole lines (d s a multiple of L) every K and V line holds one (page, token, kv
 *   head) row, so paging only relabels lines: a fully associative LRU cache sees the unpaged
 *   reuse, with the block-table lines added to every window (f2_bt()); the table's own misses
 *   are f2_block_table()'s. Rows narrower than a line are shared by the heads of one token
 *   (or by tokens of two pages): an estimate (formula_scope.c).
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/formula_kernels.h"
#include "base/util.h"

/* Rows of K (and V) query block ib reads: whole key blocks up to its last (causal) row's
 * position, N_kv - N past it. */
static uint64_t
f2_kr(const struct flash_geometry *f, uint64_t ib)
{
	uint64_t end = (ib * f->Br + f->Br < f->N ? ib * f->Br + f->Br : f->N) + f->off;
	uint64_t kr;

	if (!f->c->causal)
		return f->Nk;
	kr = (end + f->Bc - 1) / f->Bc * f->Bc;
	return kr < f->Nk ? kr : f->Nk;
}

/* Paged: pages holding key rows [0, kr) (the entries a pass reading them reads); 0 unpaged. */
static uint64_t
f2_pg(const struct flash_geometry *f, uint64_t kr)
{
	return f->P ? (kr + f->P - 1) / f->P : 0;
}

/* Paged: lines of block-table entries [e0, e1) of batch b (int32, [batch][np]); 0 unpaged. */
static double
f2_bt(const struct flash_geometry *f, uint64_t b, uint64_t e0, uint64_t e1)
{
	return f->P ? span((b * f->np + e0) * 4, (b * f->np + e1) * 4, f->L) : 0;
}

/* Lines unit (hh, ib) touches in K and V, and in the block table. */
static double
f2_unit_kv(const struct flash_geometry *f, uint64_t hh, uint64_t ib)
{
	uint64_t kk = hh / f->c->heads * f->c->kv_heads +
		      hh % f->c->heads / (f->c->heads / f->c->kv_heads);

	return 2 * flash_kv_lines(f, kk, 0, f2_kr(f, ib)) +
	       f2_bt(f, hh / f->c->heads, 0, f2_pg(f, f2_kr(f, ib)));
}

/* Misses of the K (or, is_v, V) lines a pass of kv head kk re-reads from blocks
 * [jb_from, jb_to), which an earlier pass covering key rows [0, kr_prev) read last. A pass
 * reads its rows in address order, K block then V block; so between a line's touches come
 * every other line of its own array in [0, kr_prev) (after it in the earlier pass, before it
 * in this one), and of the other array all but the blocks the line reaches past its first
 * block jb (to jb_b: a K line sees V blocks [0, jb) and [jb_b, ...), a V line K blocks
 * [0, jb] and (jb_b, ...)), plus `other` (the Q, O and lse lines and tiles between). */
static double
f2_rereads(const struct flash_geometry *f, uint64_t kk, uint64_t jb_from, uint64_t jb_to,
	   uint64_t kr_prev, double other, bool is_v)
{
	const uint64_t L = f->L, base = flash_kv_byte(f, kk, 0),
		       end_prev = flash_kv_byte(f, kk, kr_prev);
	double own = flash_kv_lines(f, kk, 0, kr_prev) - 1,
	       hi = own + flash_kv_lines(f, kk, 0, kr_prev) + other;
	double block_lines = (double)(f->Bc * f->RB / L) + 2, misses = 0;

	if (jb_from >= jb_to || hi < f->C)
		return 0;
	/* A line reaches at most into the next block or two: if even then every window fills
	 * the cache, every line is read again. */
	if (hi - 2 * block_lines - 2 >= f->C)
		return span(flash_kv_byte(f, kk, jb_from * f->Bc),
			    flash_kv_byte(f, kk, jb_to * f->Bc < f->Nk ? jb_to * f->Bc : f->Nk),
			    L) -
		       (jb_from > 0 && shares_line(flash_kv_byte(f, kk, jb_from * f->Bc), L));
	for (uint64_t jb = jb_from; jb < jb_to; jb++) {
		uint64_t s = flash_kv_byte(f, kk, jb * f->Bc);
		uint64_t e =
			flash_kv_byte(f, kk, (jb + 1) * f->Bc < f->Nk ? (jb + 1) * f->Bc : f->Nk);
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
			uint64_t a_end = flash_kv_byte(f, kk, (is_v ? jb + 1 : jb) * f->Bc);
			uint64_t b_start = flash_kv_byte(f, kk, (is_v ? jb_b + 1 : jb_b) * f->Bc);

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
f2_block_edges(const struct flash_geometry *f, uint64_t kk, double *k, double *v)
{
	uint64_t Tc = (f->Nk + f->Bc - 1) / f->Bc, g = f->c->heads / f->c->kv_heads;
	double *pk, *pv;

	if ((double)(f->Bc * f->RB / f->L) + 2 + f->tl < f->C || Tc < 2)
		return;
	/* pk[n], pv[n]: misses at the boundaries below block n */
	pk = xzalloc(Tc * sizeof(*pk));
	pv = xzalloc(Tc * sizeof(*pv));
	for (uint64_t jb = 0; jb + 1 < Tc; jb++) {
		uint64_t a = jb * f->Bc, b = a + f->Bc, e = b + f->Bc < f->Nk ? b + f->Bc : f->Nk;
		bool shared = shares_line(flash_kv_byte(f, kk, b), f->L);

		pk[jb + 1] = pk[jb] + (shared && flash_kv_lines(f, kk, a, b) + f->tl >= f->C);
		pv[jb + 1] = pv[jb] + (shared && flash_kv_lines(f, kk, b, e) + f->tl >= f->C);
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
f2_kv_head(const struct flash_geometry *f, uint64_t kk, double *k_reads, double *v_reads)
{
	const uint64_t Hkv = f->c->kv_heads, g = f->c->heads / Hkv;
	const uint64_t hh0 = kk / Hkv * f->c->heads + kk % Hkv * g; /* the group's first head */
	const uint64_t b = kk / Hkv;
	double k = flash_kv_lines(f, kk, 0, f->Nk), v = k;

	/* The head's first line may hold the previous kv head's last row: still cached when
	 * this head starts unless the lines between (V's last block, or K's first, and the
	 * unit boundary's O, lse and Q) fill the cache. */
	if (kk > 0 && shares_line(flash_kv_byte(f, kk, 0), f->L)) {
		uint64_t last_block = (f->Nk - 1) / f->Bc * f->Bc, hp = hh0 - 1;
		double between = flash_qo_lines(f, hp, flash_first_row(f, f->Tr - 1), f->N) +
				 flash_lse_lines(f, hp, flash_first_row(f, f->Tr - 1), f->N) +
				 flash_qo_lines(f, hh0, 0, flash_end_row(f, 0)) + f->tl;

		if (flash_kv_lines(f, kk - 1, last_block, f->Nk) + between < f->C)
			k -= 1;
		if (flash_kv_lines(f, kk, 0, f->Bc < f->Nk ? f->Bc : f->Nk) + between < f->C)
			v -= 1;
	}
	f2_block_edges(f, kk, &k, &v);
	for (uint64_t j = 0; j < g; j++) {
		uint64_t hh = hh0 + j;

		for (uint64_t ib = 0; ib < f->Tr; ib++) {
			uint64_t n_now = (f2_kr(f, ib) + f->Bc - 1) / f->Bc;
			uint64_t n_same = ib > 0 ? (f2_kr(f, ib - 1) + f->Bc - 1) / f->Bc : 0;
			double q_now =
				flash_qo_lines(f, hh, flash_first_row(f, ib), flash_end_row(f, ib));

			/* Blocks the previous query block of this head read. */
			if (n_same > 0) {
				/* paged: the table's entries of every block the earlier pass
				 * read (after the line there, up to it here) */
				double other = flash_qo_lines(f, hh, flash_first_row(f, ib - 1),
							      flash_end_row(f, ib - 1)) +
					       flash_lse_lines(f, hh, flash_first_row(f, ib - 1),
							       flash_end_row(f, ib - 1)) +
					       q_now + f->tl +
					       f2_bt(f, b, 0, f2_pg(f, f2_kr(f, ib - 1)));

				k += f2_rereads(f, kk, 0, n_same, f2_kr(f, ib - 1), other, false);
				v += f2_rereads(f, kk, 0, n_same, f2_kr(f, ib - 1), other, true);
			}
			/* Blocks new to this head: last read by the previous head of the group in
			 * its last query block (for the group's first head, read for the first
			 * time: counted above). Between: the rest of that head's last block, this
			 * head's query blocks up to ib and their O and lse rows. */
			if (j > 0 && n_now > n_same) {
				uint64_t last0 = flash_first_row(f, f->Tr - 1);
				double other = span(flash_qo_byte(f, hh - 1, last0),
						    flash_qo_byte(f, hh, flash_first_row(f, ib)),
						    f->L) + /* O */
					       span(flash_lse_byte(f, hh - 1, last0),
						    flash_lse_byte(f, hh, flash_first_row(f, ib)),
						    f->L) + /* lse */
					       flash_qo_lines(f, hh, 0, flash_end_row(f, ib)) +
					       f->tl + f2_bt(f, b, 0, f->np);

				k += f2_rereads(f, kk, n_same, n_now, f->Nk, other, false);
				v += f2_rereads(f, kk, n_same, n_now, f->Nk, other, true);
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
f2_rows(struct formula_result *r, const struct flash_geometry *f)
{
	double q_lines = 0, o_lines = 0, l_lines = 0;
	/* Two logsumexp values of one line are an O row apart: far, if a row fills the cache. */
	bool lse_each = (double)(f->RB / f->L) + f->tl >= f->C;

	for (uint64_t hh = 0; hh < f->BH; hh++) {
		for (uint64_t ib = 0; ib < f->Tr; ib++) {
			uint64_t r0 = flash_first_row(f, ib), r1 = flash_end_row(f, ib);
			double qn = flash_qo_lines(f, hh, r0, r1),
			       ln = flash_lse_lines(f, hh, r0, r1);
			double kv = f2_unit_kv(f, hh, ib);

			q_lines += qn;
			o_lines += qn;
			l_lines += lse_each ? (double)(r1 - r0) : ln;
			if (hh == 0 && ib == 0)
				continue;
			{
				/* the previous unit, and its rows' lines */
				uint64_t ph = ib ? hh : hh - 1, pb = ib ? ib - 1 : f->Tr - 1;
				double p_o = flash_qo_lines(f, ph, flash_first_row(f, pb),
							    flash_end_row(f, pb));
				double p_l = flash_lse_lines(f, ph, flash_first_row(f, pb),
							     flash_end_row(f, pb));
				double p_kv = f2_unit_kv(f, ph, pb);
				double first_o = flash_qo_lines(f, hh, r0, r0 + 1);

				if (shares_line(flash_qo_byte(f, hh, r0), f->L)) {
					if (p_kv + p_o + p_l + f->tl < f->C)
						q_lines -= 1;
					if (1 + qn + kv + f->tl < f->C)
						o_lines -= 1;
				}
				if (!lse_each && shares_line(flash_lse_byte(f, hh, r0), f->L) &&
				    qn + kv + first_o + f->tl < f->C)
					l_lines -= 1;
			}
		}
	}
	formula_array_named(r, "Q")->read_bytes += q_lines * (double)f->L;
	{
		struct formula_array *o = formula_array_named(r, "O"),
				     *l = formula_array_named(r, "lse");
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
f2_resident(const struct flash_geometry *f, double *o_res, double *l_res)
{
	uint64_t kk_seen = UINT64_MAX, kr_seen = 0, b_seen = UINT64_MAX, pg_seen = 0;
	double room = f->C - f->tl;

	*o_res = *l_res = 0;
	for (uint64_t u = f->BH * f->Tr; u-- > 0 && room > 0;) {
		uint64_t hh = u / f->Tr, ib = u % f->Tr, r0 = flash_first_row(f, ib),
			 r1 = flash_end_row(f, ib);
		uint64_t kk = hh / f->c->heads * f->c->kv_heads +
			      hh % f->c->heads / (f->c->heads / f->c->kv_heads);
		uint64_t kr = f2_kr(f, ib);
		double o = flash_qo_lines(f, hh, r0, r1), l = flash_lse_lines(f, hh, r0, r1);

		/* a first line shared with the next unit was counted there */
		if (u + 1 < f->BH * f->Tr && shares_line(flash_qo_byte(f, hh, r1), f->L))
			o -= 1;
		if (u + 1 < f->BH * f->Tr && shares_line(flash_lse_byte(f, hh, r1), f->L))
			l -= 1;
		if (o + l <= room) {
			*o_res += o;
			*l_res += l;
		} else {
			/* The cache ends inside this unit's rows: walk them back, lse[r] then O
			 * row r, each line once. */
			double left = room;

			for (uint64_t rr = r1; rr-- > r0 && left > 0;) {
				uint64_t la = flash_lse_byte(f, hh, rr) / f->L,
					 lb = flash_lse_byte(f, hh, rr + 1);
				uint64_t oa = flash_qo_byte(f, hh, rr),
					 ob = flash_qo_byte(f, hh, rr + 1);
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
			if (kk_seen != UINT64_MAX &&
			    shares_line(flash_kv_byte(f, kk_seen, 0), f->L))
				room += 2;
			kk_seen = kk;
			kr_seen = 0;
		}
		if (kr > kr_seen) {
			room -= 2 * (flash_kv_lines(f, kk, 0, kr) -
				     flash_kv_lines(f, kk, 0, kr_seen)) -
				(kr_seen > 0 && shares_line(flash_kv_byte(f, kk, kr_seen), f->L)
					 ? 2
					 : 0);
			kr_seen = kr;
		}
		/* paged: the batch's table lines beyond a later unit's (a line the next batch's
		 * entries share was counted with those) */
		if (f->P && hh / f->c->heads != b_seen) {
			if (b_seen != UINT64_MAX && shares_line(b_seen * f->np * 4, f->L))
				room += 1;
			b_seen = hh / f->c->heads;
			pg_seen = 0;
		}
		if (f->P && f2_pg(f, kr) > pg_seen) {
			room -= f2_bt(f, b_seen, 0, f2_pg(f, kr)) - f2_bt(f, b_seen, 0, pg_seen);
			pg_seen = f2_pg(f, kr);
		}
		room -= flash_qo_lines(f, hh, r0, r1) -
			(u + 1 < f->BH * f->Tr && shares_line(flash_qo_byte(f, hh, r1), f->L) ? 1
											      : 0);
	}
}

/* Paged: the lines unit (hp, ibp) touched after its last touch of a block-table line (at
 * key block ep) up to the first touch in unit (hh, ib) (at block ta): the K and V blocks hp read
 * from ep on and the entries after ep's; the units between (of hh's head, reading rows below the
 * line's) and this unit's blocks before ta, with their entries; the O and lse rows of hp up to hh,
 * the Q rows after hp through hh; the tiles. */
static double
bt_window(const struct flash_geometry *f, uint64_t hp, uint64_t ibp, uint64_t ep, uint64_t hh,
	  uint64_t ib, uint64_t ta)
{
	const uint64_t H = f->c->heads, Hkv = f->c->kv_heads, g = H / Hkv;
	const uint64_t kkp = hp / H * Hkv + hp % H / g, kk = hh / H * Hkv + hh % H / g;
	const uint64_t krp = f2_kr(f, ibp);
	/* block ep's K and V rows come after its entries; the entries after, from block ep + 1 */
	const uint64_t from = ep * f->Bc, after = (ep + 1) * f->Bc;

	return 2 * flash_kv_lines(f, kkp, from, krp) +
	       (after < krp ? f2_bt(f, hp / H, after / f->P, f2_pg(f, krp)) : 0) +
	       2 * flash_kv_lines(f, kk, 0, ta * f->Bc) +
	       f2_bt(f, hh / H, 0, f2_pg(f, ta * f->Bc)) +
	       span(flash_qo_byte(f, hp, flash_first_row(f, ibp)),
		    flash_qo_byte(f, hh, flash_first_row(f, ib)), f->L) + /* O */
	       span(flash_lse_byte(f, hp, flash_first_row(f, ibp)),
		    flash_lse_byte(f, hh, flash_first_row(f, ib)), f->L) +
	       span(flash_qo_byte(f, hp, flash_end_row(f, ibp)),
		    flash_qo_byte(f, hh, flash_end_row(f, ib)), f->L) + /* Q */
	       f->tl;
}

/* Paged: the block table's misses. Each key block a unit reads first reads the entries of
 * the pages holding its rows. A table line (entries [ea, eb] of batch b, read by key blocks
 * [ta, tb]) misses at its first touch; within a unit, at the next block's touch when the
 * block between (its K and V lines, the tiles) fills the cache; at a unit's first touch when
 * bt_window() since the unit that read it last fills it: the previous query block of the head
 * if that one reached the line, else the previous head's last (it reads every key), else, for
 * a line the previous batch's entries share, that batch's last unit. */
static double
f2_block_table(const struct flash_geometry *f)
{
	const uint64_t H = f->c->heads, L = f->L, Bc = f->Bc, P = f->P, np = f->np;
	const uint64_t Tc = attn_blocks(f->Nk, Bc);
	double misses = 0, *edge = xzalloc((Tc + 1) * sizeof(*edge));

	/* edge[t]: misses of a line that blocks 0 .. t-1 each hand on to the next block */
	for (uint64_t t = 0; t < Tc; t++) {
		uint64_t r0 = t * Bc, r1 = r0 + Bc < f->Nk ? r0 + Bc : f->Nk;

		edge[t + 1] = edge[t] + (2 * flash_kv_lines(f, 0, r0, r1) + f->tl >= f->C);
	}
	for (uint64_t b = 0; b < f->c->batch; b++) {
		const uint64_t lo = b * np * 4 / L, hi = ((b + 1) * np * 4 - 1) / L;

		for (uint64_t ln = lo; ln <= hi; ln++) {
			uint64_t ea = ln * L / 4 > b * np ? ln * L / 4 - b * np : 0;
			uint64_t eb = (ln + 1) * L / 4 - b * np - 1 < np - 1
					      ? (ln + 1) * L / 4 - b * np - 1
					      : np - 1;
			uint64_t ta = ea * P / Bc;
			uint64_t tb =
				(eb * P + P - 1 < f->Nk - 1 ? eb * P + P - 1 : f->Nk - 1) / Bc;
			bool shared = b > 0 && ln == lo && shares_line(b * np * 4, L);

			for (uint64_t h = 0; h < H; h++) {
				for (uint64_t ib = 0; ib < f->Tr; ib++) {
					uint64_t hh = b * H + h, n = attn_blocks(f2_kr(f, ib), Bc);
					uint64_t last = tb < n - 1 ? tb : n - 1, hp, ibp, ep;

					if (ta >= n)
						continue;
					misses += edge[last] - edge[ta];
					if (ib > 0 && ta < attn_blocks(f2_kr(f, ib - 1), Bc)) {
						hp = hh;
						ibp = ib - 1;
						ep = tb < attn_blocks(f2_kr(f, ibp), Bc) - 1
							     ? tb
							     : attn_blocks(f2_kr(f, ibp), Bc) - 1;
					} else if (h > 0 || shared) {
						hp = hh - 1;
						ibp = f->Tr - 1;
						ep = h > 0 && tb < Tc - 1 ? tb : Tc - 1;
					} else {
						misses += 1; /* its first touch */
						continue;
					}
					misses += bt_window(f, hp, ibp, ep, hh, ib, ta) >= f->C;
				}
			}
		}
	}
	free(edge);
	return misses;
}

void
formula_flash2(struct formula_result *r, const struct attn_config *c,
	       const struct formula_geometry *q)
{
	double tile_lines[] = { q->tq, q->tk, q->tv, q->ts, q->to, q->tm, q->tm };
	static const char *const tile_names[] = { "Q_tile", "K_tile", "V_tile", "S_tile",
						  "O_tile", "m_tile", "l_tile" };
	struct flash_geometry f = flash_geometry_of(c, q);
	double k = 0, v = 0, o_res, l_res;
	struct formula_array *o, *l;

	f2_rows(r, &f);
	for (uint64_t kk = 0; kk < c->batch * c->kv_heads; kk++)
		f2_kv_head(&f, kk, &k, &v);
	formula_array_named(r, "K")->read_bytes += k * q->L;
	formula_array_named(r, "V")->read_bytes += v * q->L;
	if (c->kv_page)
		formula_array_named(r, "block_table")->read_bytes += f2_block_table(&f) * q->L;
	f2_resident(&f, &o_res, &l_res);
	o = formula_array_named(r, "O");
	l = formula_array_named(r, "lse");
	if (q->flush) {
		o->flush_bytes += o_res * q->L;
		l->flush_bytes += l_res * q->L;
	} else {
		o->write_bytes -= o_res * q->L;
		l->write_bytes -= l_res * q->L;
	}
	/* a step: a key and a value block against the query block, its output rows and lse */
	/* (paged: and the block's table entries) */
	formula_tiles(r, q, tile_names, tile_lines, 7,
		      f.tl + 2 * lines_at_most(q->kb) + 2 * lines_at_most(q->qb) +
			      lines_at_most(q->Br * 4 / q->L) +
			      (c->kv_page
				       ? lines_at_most((double)(q->Bc / c->kv_page + 2) * 4 / q->L)
				       : 0));
}
