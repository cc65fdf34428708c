/*
 * flashdecode, by array, on the loops attn_decode_view() gives (grouped-query decode packed:
 * a KV head's query heads as its query rows). At S = 1 the kernel is flash2 access for access
 * (the split runs flash2's loop over every key block and writes O and lse itself; the combine
 * does nothing), so its exact formula is flash2's. At S > 1:
 * - with no cache, every access is counted once (K and V once per head, split and query
 *   block, Q once per split and query block, the partial O and logsumexp written by the
 *   splits and read by the combine): exact;
 * - on a cache that holds every line the run touches (formula_flashdecode_footprint()),
 *   nothing is evicted and each line moves once: exact;
 * - on a fully associative LRU cache of any size, where each head's rows are one query block,
 *   and every row is whole lines (paged or not):
 *   line by line (analysis/formula_flashdecode_lru.c), exact;
 * - on a fully associative LRU cache of any size, with several query blocks a head or rows
 *   that are not whole lines (paged too: the pool's lines as the block table places them): the
 *   kernel's loops walked line by line (analysis/formula_flashdecode_walk.c), exact;
 * - elsewhere on a smaller cache the access count stands in, and formula_scope() calls it an
 *   estimate.
 */

#include <math.h>
#include <stdint.h>

#include "analysis/formula_kernels.h"

/* Key rows query block ib (rows [r0, r1)) reads in split s: whole blocks of the split up to
 * the block of its last row's position (causal), or none (FlashAttention's early exit). */
static uint64_t
split_rows(const struct attn_config *c, uint64_t s, uint64_t r1)
{
	uint64_t Nk = attn_nkv(c), tc = attn_blocks(Nk, c->Bc), per = attn_split_blocks(c);
	uint64_t jb0 = s * per, jb1 = (s + 1) * per;
	uint64_t vis = c->causal ? attn_blocks(r1 + attn_kv_offset(c), c->Bc) : tc;
	uint64_t end;

	vis = vis < tc ? vis : tc;
	jb1 = jb1 < vis ? jb1 : vis;
	if (jb0 >= jb1)
		return 0;
	end = jb1 * c->Bc < Nk ? jb1 * c->Bc : Nk;
	return end - jb0 * c->Bc;
}

/* Paged: the block-table entries query block ib (rows up to r1) reads in split s: each key
 * block's pages'. */
static uint64_t
split_entries(const struct attn_config *c, uint64_t s, uint64_t r1)
{
	uint64_t Nk = attn_nkv(c), P = c->kv_page, per = attn_split_blocks(c), n = 0;
	uint64_t jb0 = s * per, rows = split_rows(c, s, r1);

	for (uint64_t c0 = jb0 * c->Bc; c0 < jb0 * c->Bc + rows; c0 += c->Bc) {
		uint64_t end = c0 + c->Bc < Nk ? c0 + c->Bc : Nk;

		n += (end - 1) / P - c0 / P + 1;
	}
	return n;
}

void
formula_flashdecode_accesses(struct formula_result *r, const struct attn_config *c)
{
	const uint64_t S = attn_splits(c), N = c->N, Br = c->Br;
	const double bh = (double)c->batch * (double)c->heads, d = (double)c->d;
	const double s = dtype_bytes(c->dtype), n = (double)N, sp = (double)S;
	double qrows = 0, krows = 0, entries = 0;

	for (uint64_t sidx = 0; sidx < S; sidx++)
		for (uint64_t r0 = 0; r0 < N; r0 += Br) {
			uint64_t r1 = r0 + Br < N ? r0 + Br : N, k = split_rows(c, sidx, r1);

			krows += (double)k;
			qrows += k ? (double)(r1 - r0) : 0;
			entries += c->kv_page ? (double)split_entries(c, sidx, r1) : 0;
		}
	/* paged: every key block's entries, int32 */
	if (c->kv_page)
		formula_array_named(r, "block_table")->read_bytes += bh * entries * 4;
	formula_array_named(r, "Q")->read_bytes += bh * qrows * d * s;
	formula_array_named(r, "K")->read_bytes += bh * krows * d * s;
	formula_array_named(r, "V")->read_bytes += bh * krows * d * s;
	formula_array_named(r, "O")->write_bytes += bh * n * d * s;
	formula_array_named(r, "lse")->write_bytes += bh * n * 4;
	if (S > 1) {
		struct formula_array *o = formula_array_named(r, "O_accum"),
				     *l = formula_array_named(r, "lse_accum");

		/* every split's rows written (empty ones 0 and -inf), all read by the combine */
		o->write_bytes += bh * sp * n * d * 4;
		o->read_bytes += bh * sp * n * d * 4;
		l->write_bytes += bh * sp * n * 4;
		l->read_bytes += bh * sp * n * 4;
	}
}

/* The bytes of each array flashdecode's S > 1 touches in full: Q and O, K and V, lse,
 * O_accum, lse_accum (every row of each is read or written: the last query block sees every
 * key, and every split writes its partial rows, an empty one 0 and -inf). */
static void
array_bytes(const struct attn_config *c, double b[8])
{
	const double bh = (double)c->batch * (double)c->heads, n = (double)c->N;
	const double d = (double)c->d, s = dtype_bytes(c->dtype), S = (double)attn_splits(c);
	const double kv = (double)c->batch * (double)c->kv_heads * (double)attn_nkv(c);

	b[0] = b[1] = bh * n * d * s; /* Q, O */
	b[2] = b[3] = kv * d * s;     /* K, V */
	b[4] = bh * n * 4;            /* lse */
	b[5] = bh * S * n * d * 4;    /* O_accum */
	b[6] = bh * S * n * 4;        /* lse_accum */
	/* paged: the block table, every entry read (K and V as unpaged where rows are whole
	 * lines: the pool's unused rows are never touched) */
	b[7] = (double)c->batch * (double)attn_pages(c) * 4;
}

double
formula_flashdecode_footprint(const struct attn_config *c, double line_bytes)
{
	double b[8], lines = 0;

	array_bytes(c, b);
	/* every array page-aligned: its own lines */
	for (int i = 0; i < 8; i++)
		lines += ceil(b[i] / line_bytes);
	return lines;
}

/* S > 1 where the cache holds every line the run touches: each line misses once. Q, K and V
 * are read; O, lse and the partial arrays are first stored (a read for ownership under
 * write-allocate), and the combine's loads of the partial arrays hit, under write-validate too
 * (every byte they read was stored before, and stays). Each stored line is dirty to the end:
 * written by the final flush, or never. */
static void
fits(struct formula_result *r, const struct attn_config *c, const struct formula_geometry *q)
{
	static const char *const names[8] = { "Q",   "O",       "K",         "V",
					      "lse", "O_accum", "lse_accum", "block_table" };
	double b[8];

	array_bytes(c, b);
	for (int i = 0; i < 8; i++) {
		struct formula_array *a;
		double bytes = ceil(b[i] / q->L) * q->L;

		if (b[i] == 0)
			continue; /* unpaged: no table */
		a = formula_array_named(r, names[i]);
		if (i == 0 || i == 2 || i == 3 || i == 7) {
			a->read_bytes += bytes;
			continue;
		}
		if (q->rfo) {
			a->read_bytes += bytes;
			a->rfo_bytes += bytes;
		}
		if (q->flush) {
			a->write_bytes += bytes;
			a->flush_bytes += bytes;
		}
	}
}

void
formula_flashdecode(struct formula_result *r, const struct attn_config *c,
		    const struct formula_geometry *q)
{
	if (attn_splits(c) == 1) {
		formula_flash2(r, c, q);
		return;
	}
	/* tiles in scratch: none of their lines in the windows */
	if (formula_flashdecode_lru_fits(c, q->L) &&
	    q->tq + q->tk + q->tv + q->ts + q->to + q->tm == 0) {
		formula_flashdecode_lru(r, c, q);
		return;
	}
	/* paged rows that share lines, and write-validate granules wider than the kernel's 4-byte
	 * stores: walked on a cache of any size */
	if ((q->C < formula_flashdecode_footprint(c, q->L) ||
	     (c->kv_page && (c->d * dtype_bytes(c->dtype)) % (uint64_t)q->L != 0) ||
	     (!q->rfo && q->L > 256)) &&
	    formula_flashdecode_walk_fits(c, q->L) &&
	    q->tq + q->tk + q->tv + q->ts + q->to + q->tm == 0) {
		formula_flashdecode_walk(r, c, q);
		return;
	}
	if (q->C >= formula_flashdecode_footprint(c, q->L)) {
		fits(r, c, q);
		return;
	}
	formula_flashdecode_accesses(r, c);
}
