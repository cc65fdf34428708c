/*
 * FlashAttention-2 loop order. For each block of B_r query rows (tile Qt), the running max
 * (mt), sum (lt) and output (Ot) start empty; each block of B_c key rows is copied to tiles Kt
 * and Vt, the scores go to tile St, and the online softmax rescales Ot and adds P V. O and
 * the logsumexp m + log l are written once per query row. Causal: key blocks that start past
 * the block's last query row (at its position N_kv - N further on) are skipped; inside the
 * diagonal block the mask is applied. Paged K/V: each key block's block-table entries are
 * read as the block is loaded, then its K and V rows through them (kv_tile_load()).
 *
 * This loop order is written three times (docs/architecture.md, "Kernel twins"): here, compiled
 * native and traced; its trace-only twin kernels/trace_only_flash2.c; its exact formula
 * analysis/formula_flash2.c. tests/test-trace-only.c holds the twin to this kernel's counters bit
 * for bit; tests/test-formulas.c (test_exact_vs_simulation, test_exact_nkv, test_exact_paged) the
 * formula to its bytes.
 */

#include <math.h>
#include <stdlib.h>

#include "kernels/tile.h"

void
attn_flash2(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t off = attn_kv_offset(c); /* the causal mask's shift: N_kv - N */
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const float scale = 1.0f / sqrtf((float)D);
	/* paged: a key block's physical pages (registers on a GPU; not traced) */
	int32_t *pages = c->kv_page ? xzalloc((Bc / c->kv_page + 2) * sizeof(*pages)) : NULL;

	attn_declare(d, t);
	TR_PHASE(t, "flash_tile");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;
			float *lse = d->lse + (b * c->heads + h) * N;

			for (uint64_t r0 = 0; r0 < N; r0 += Br) {
				uint64_t nr = N - r0 < Br ? N - r0 : Br;
				uint64_t kend = c->causal ? r0 + nr + off : Nk;

				tile_load(t, d->Qt, D, head_row(d->Q, b, h, c->heads, N, D, r0, dt),
					  D, nr, D, dt);
				for (uint64_t i = 0; i < nr; i++) {
					d->mt[i] = -INFINITY;
					d->lt[i] = 0;
				}
				TR_ZIP(t, nr, TR_OUT(d->mt), TR_OUT(d->lt));
				zero(t, d->Ot, nr * D);
				for (uint64_t c0 = 0; c0 < kend; c0 += Bc) {
					uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

					uint64_t p0 =
						c->kv_page ? kv_pages_read(t, d, b, c0, nc, pages)
							   : 0;

					kv_tile_load(t, d, d->Kt, d->K, b, kvh, c0, nc, pages, p0);
					kv_tile_load(t, d, d->Vt, d->V, b, kvh, c0, nc, pages, p0);
					for (uint64_t i = 0; i < nr; i++) {
						float *srow = d->St + i * Bc, *orow = d->Ot + i * D;
						float rmax, mold, mnew, alpha, psum = 0;

						rmax = score_row(t, srow, d->Qt + i * D, d->Kt, D,
								 nc, c0, r0 + i + off, c->causal,
								 scale);
						/* every key of this block masked */
						if (rmax == -INFINITY)
							continue;
						mold = get(t, &d->mt[i]);
						mnew = mold > rmax ? mold : rmax;
						alpha = attn_exp(mold - mnew);
						/* P = exp(S - m) in place, then O = alpha O + P V
						 */
						for (uint64_t j = 0; j < nc; j++) {
							srow[j] = attn_exp(srow[j] - mnew);
							psum += srow[j];
						}
						TR_ZIP(t, nc, TR_IN(srow), TR_OUT(srow));
						scale_row(t, orow, alpha, D);
						for (uint64_t j = 0; j < nc; j++)
							axpy(t, orow, get(t, &srow[j]),
							     d->Vt + j * D, D);
						put(t, &d->lt[i], get(t, &d->lt[i]) * alpha + psum);
						put(t, &d->mt[i], mnew);
					}
				}
				for (uint64_t i = 0; i < nr; i++) {
					float *orow = d->Ot + i * D;
					float li = get(t, &d->lt[i]);

					scale_row(t, orow, 1.0f / li, D);
					row_store(t,
						  head_row(d->O, b, h, c->heads, N, D, r0 + i, dt),
						  orow, D, dt);
					put(t, &lse[r0 + i], get(t, &d->mt[i]) + logf(li));
				}
			}
		}
	}
	free(pages);
}
