/*
 * FlashAttention-2's split-KV decoding (flash_fwd_splitkv_kernel, then
 * flash_fwd_splitkv_combine_kernel). Phase "splits": for each batch, head, split and query
 * block (FlashAttention's grid order: m_block fastest, then split, then batch x head), flash2's
 * loop over the split's key blocks, ending in a partial O (fp32) and logsumexp per query row.
 * A query block whose split holds no key it may see (a split past the last block, or past the
 * causal limit) loads nothing and writes 0 and -inf, as FlashAttention's early exit does; a row
 * that sees none of a non-empty split's keys gets O = 0 and lse = -inf (its normalize with
 * Split: inv_sum 1). Phase "combine": per query row, the S partial logsumexps (kept in the
 * lse tile, FlashAttention's sLSE), their logsumexp stored as the row's lse, then O = sum over
 * splits of exp(lse_s - lse) O_s stored in the storage dtype. At S = 1 the split writes O and
 * lse directly and there is no combine, as FlashAttention's Split = false. Both phases run
 * attn_decode_view(): grouped-query decode (N = 1) packs a KV head's query heads as its rows.
 * Paged K/V (--kv-page): as flash2, each key block's table entries, then its rows through them.
 *
 * This loop order is written three times (docs/architecture.md, "Kernel twins"): here, compiled
 * native and traced; its trace-only twin kernels/trace_only_flashdecode.c; its exact formula
 * analysis/formula_flashdecode.c, formula_flashdecode_lru.c and formula_flashdecode_walk.c. tests/test-trace-only.c holds the
 * twin to this kernel's counters bit for bit; tests/test-formulas.c (test_exact_flashdecode) the
 * formula to its bytes.
 */

#include <math.h>
#include <stdlib.h>

#include "kernels/tile.h"

/* Query block r0 (nr rows) of head (b, h) of c (attn_decode_view()) against key blocks
 * [jb0, jb1) (the caller's range, non-empty): flash2's block loop, leaving Ot, mt and lt for
 * the rows. */
static ALWAYS_INLINE void
split_block(struct attn_data *d, const struct attn_config *c, struct trace_ctx *t, uint64_t b,
	    uint64_t h, uint64_t r0, uint64_t nr, uint64_t jb0, uint64_t jb1, int32_t *pages)
{
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Bc = c->Bc;
	const uint64_t off = attn_decode_shift(c), kvh = h / (c->heads / c->kv_heads);
	const enum attn_dtype dt = c->dtype;
	const float scale = 1.0f / sqrtf((float)D);

	tile_load(t, d->Qt, D, head_row(d->Q, b, h, c->heads, N, D, r0, dt), D, nr, D, dt);
	for (uint64_t i = 0; i < nr; i++) {
		d->mt[i] = -INFINITY;
		d->lt[i] = 0;
	}
	TR_ZIP(t, nr, TR_OUT(d->mt), TR_OUT(d->lt));
	zero(t, d->Ot, nr * D);
	for (uint64_t c0 = jb0 * Bc; c0 < jb1 * Bc; c0 += Bc) {
		uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

		/* paged: the block's table entries, then its K and V rows through them */
		uint64_t p0 = c->kv_page ? kv_pages_read(t, d, b, c0, nc, pages) : 0;

		kv_tile_load(t, d, d->Kt, d->K, b, kvh, c0, nc, pages, p0);
		kv_tile_load(t, d, d->Vt, d->V, b, kvh, c0, nc, pages, p0);
		for (uint64_t i = 0; i < nr; i++) {
			float *srow = d->St + i * Bc, *orow = d->Ot + i * D;
			float rmax, mold, mnew, alpha, psum = 0;

			rmax = score_row(t, srow, d->Qt + i * D, d->Kt, D, nc, c0, r0 + i + off,
					 c->causal, scale);
			if (rmax == -INFINITY)
				continue; /* every key of this block masked */
			mold = get(t, &d->mt[i]);
			mnew = mold > rmax ? mold : rmax;
			alpha = attn_exp(mold - mnew);
			for (uint64_t j = 0; j < nc; j++) {
				srow[j] = attn_exp(srow[j] - mnew);
				psum += srow[j];
			}
			TR_ZIP(t, nc, TR_IN(srow), TR_OUT(srow));
			scale_row(t, orow, alpha, D);
			for (uint64_t j = 0; j < nc; j++)
				axpy(t, orow, get(t, &srow[j]), d->Vt + j * D, D);
			put(t, &d->lt[i], get(t, &d->lt[i]) * alpha + psum);
			put(t, &d->mt[i], mnew);
		}
	}
}

/* First key block past what query block r0 (nr rows) may see: all T_c, or under the causal
 * mask the block holding its last row's position. */
static ALWAYS_INLINE uint64_t
visible_blocks(const struct attn_config *c, uint64_t r0, uint64_t nr)
{
	uint64_t tc = attn_blocks(attn_nkv(c), c->Bc);
	uint64_t lim = c->causal ? attn_blocks(r0 + nr + attn_kv_offset(c), c->Bc) : tc;

	return lim < tc ? lim : tc;
}

void
attn_flashdecode_splits(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config dv = attn_decode_view(&d->cfg), *c = &dv;
	const uint64_t N = c->N, D = c->d, Br = c->Br, S = attn_splits(c);
	const uint64_t per = attn_split_blocks(c);
	const enum attn_dtype dt = c->dtype;
	/* paged: a key block's physical pages (registers on a GPU; not traced) */
	int32_t *pages = c->kv_page ? xzalloc((c->Bc / c->kv_page + 2) * sizeof(*pages)) : NULL;

	TR_PHASE(t, "splits");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t bh = b * c->heads + h;

			for (uint64_t s = 0; s < S; s++) {
				/* S = 1: O and lse directly; else this split's partial rows */
				float *lse =
					S == 1 ? d->lse + bh * N : d->lseacc + (bh * S + s) * N;
				float *oacc = S == 1 ? NULL : d->Oacc + (bh * S + s) * N * D;

				for (uint64_t r0 = 0; r0 < N; r0 += Br) {
					uint64_t nr = N - r0 < Br ? N - r0 : Br;
					uint64_t jb0 = s * per, jb1 = (s + 1) * per;
					uint64_t vis = visible_blocks(c, r0, nr);

					jb1 = jb1 < vis ? jb1 : vis;
					if (jb0 >= jb1) {
						/* FlashAttention's early exit (never at S = 1) */
						for (uint64_t i = 0; i < nr; i++) {
							for (uint64_t k = 0; k < D; k++)
								oacc[(r0 + i) * D + k] = 0;
							TR_ZIP(t, D, TR_OUT(oacc + (r0 + i) * D));
							put(t, &lse[r0 + i], -INFINITY);
						}
						continue;
					}
					split_block(d, c, t, b, h, r0, nr, jb0, jb1, pages);
					/* flash2's order: at S = 1 the same reports */
					for (uint64_t i = 0; i < nr; i++) {
						float *orow = d->Ot + i * D;
						float li = get(t, &d->lt[i]), mi;

						/* a row that saw no key: O 0, lse -inf */
						scale_row(t, orow, li == 0 ? 1.0f : 1.0f / li, D);
						if (S == 1)
							row_store(t,
								  head_row(d->O, b, h, c->heads, N,
									   D, r0 + i, dt),
								  orow, D, dt);
						else
							row_store(t, oacc + (r0 + i) * D, orow, D,
								  ATTN_FP32);
						mi = get(t, &d->mt[i]);
						put(t, &lse[r0 + i],
						    li == 0 ? -INFINITY : mi + logf(li));
					}
				}
			}
		}
	}
	free(pages);
}

void
attn_flashdecode_combine(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config dv = attn_decode_view(&d->cfg), *c = &dv;
	const uint64_t N = c->N, D = c->d, S = attn_splits(c);
	const enum attn_dtype dt = c->dtype;

	if (S == 1)
		return; /* the split wrote O itself: no combine kernel runs */
	TR_PHASE(t, "combine");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t bh = b * c->heads + h;

			for (uint64_t i = 0; i < N; i++) {
				float mx = -INFINITY, sum = 0, lsum;

				for (uint64_t s = 0; s < S; s++) {
					float v = get(t, &d->lseacc[(bh * S + s) * N + i]);

					put(t, &d->row[s], v);
					mx = v > mx ? v : mx;
				}
				/* FlashAttention: max_scale 0 where every split is -inf */
				if (mx == -INFINITY)
					mx = 0;
				for (uint64_t s = 0; s < S; s++)
					sum += attn_exp(get(t, &d->row[s]) - mx);
				lsum = sum == 0 || sum != sum ? INFINITY : logf(sum) + mx;
				put(t, &d->lse[bh * N + i], lsum);
				zero(t, d->Ot, D);
				for (uint64_t s = 0; s < S; s++)
					axpy(t, d->Ot, attn_exp(get(t, &d->row[s]) - lsum),
					     d->Oacc + ((bh * S + s) * N + i) * D, D);
				row_store(t, head_row(d->O, b, h, c->heads, N, D, i, dt), d->Ot, D,
					  dt);
			}
		}
	}
}

void
attn_flashdecode(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare(d, t);
	attn_flashdecode_splits(d, t);
	attn_flashdecode_combine(d, t);
}
