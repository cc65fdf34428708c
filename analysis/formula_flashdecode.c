/*
 * flashdecode, by array. At S = 1 the kernel is flash2 access for access (the split runs
 * flash2's loop over every key block and writes O and lse itself; the combine does nothing), so
 * its exact formula is flash2's. At S > 1 there is no exact line-by-line formula yet: every
 * access is counted once, as with no cache (K and V once per head, split and query block, Q
 * once per split and query block, the partial O and logsumexp written by the splits and read
 * by the combine), and formula_scope() calls the result an estimate. Without a cache that
 * count is exact at every S.
 */

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

void
formula_flashdecode_accesses(struct formula_result *r, const struct attn_config *c)
{
	const uint64_t S = attn_splits(c), N = c->N, Br = c->Br;
	const double bh = (double)c->batch * (double)c->heads, d = (double)c->d;
	const double s = dtype_bytes(c->dtype), n = (double)N, sp = (double)S;
	double qrows = 0, krows = 0;

	for (uint64_t sidx = 0; sidx < S; sidx++)
		for (uint64_t r0 = 0; r0 < N; r0 += Br) {
			uint64_t r1 = r0 + Br < N ? r0 + Br : N, k = split_rows(c, sidx, r1);

			krows += (double)k;
			qrows += k ? (double)(r1 - r0) : 0;
		}
	arr(r, "Q")->read_bytes += bh * qrows * d * s;
	arr(r, "K")->read_bytes += bh * krows * d * s;
	arr(r, "V")->read_bytes += bh * krows * d * s;
	arr(r, "O")->write_bytes += bh * n * d * s;
	arr(r, "lse")->write_bytes += bh * n * 4;
	if (S > 1) {
		struct formula_array *o = arr(r, "O_accum"), *l = arr(r, "lse_accum");

		/* every split's rows written (empty ones 0 and -inf), all read by the combine */
		o->write_bytes += bh * sp * n * d * 4;
		o->read_bytes += bh * sp * n * d * 4;
		l->write_bytes += bh * sp * n * 4;
		l->read_bytes += bh * sp * n * 4;
	}
}

void
formula_flashdecode(struct formula_result *r, const struct attn_config *c, const struct q *q)
{
	if (attn_splits(c) == 1) {
		formula_flash2(r, c, q);
		return;
	}
	formula_flashdecode_accesses(r, c);
}
