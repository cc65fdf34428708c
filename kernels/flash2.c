/*
 * FlashAttention-2 loop order. For each block of B_r query rows (tile Qt), the running max
 * (mt), sum (lt) and output (Ot) start empty; each block of B_c key rows is copied to tiles Kt
 * and Vt, the scores go to tile St, and the online softmax rescales Ot and adds P V. O and
 * the logsumexp m + log l are written once per query row. Causal: key blocks that start past
 * the block's last query row are skipped; inside the diagonal block the mask is applied.
 */

#include <math.h>
#include <string.h>

#include "kernels/tile.h"

void
KERNEL(attn_flash2)(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const float scale = 1.0f / sqrtf((float)D);

	KERNEL(attn_declare)(d, t);
	TR_PHASE(t, "flash_tile");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;

			for (uint64_t r0 = 0; r0 < N; r0 += Br) {
				uint64_t nr = N - r0 < Br ? N - r0 : Br;
				uint64_t kend = c->causal ? r0 + nr : N;

				tile_load(t, d->Qt, D, head_row(d->Q, b, h, c->heads, N, D, r0, dt),
					  D, nr, D, dt);
				for (uint64_t i = 0; i < nr; i++) {
					d->mt[i] = -INFINITY;
					d->lt[i] = 0;
				}
				memset(d->Ot, 0, nr * D * sizeof(float));
				TR_STORE_SPAN(t, d->mt, nr * sizeof(float));
				TR_STORE_SPAN(t, d->lt, nr * sizeof(float));
				TR_STORE_SPAN(t, d->Ot, nr * D * sizeof(float));
				for (uint64_t c0 = 0; c0 < kend; c0 += Bc) {
					uint64_t nc = N - c0 < Bc ? N - c0 : Bc;

					tile_load(t, d->Kt, D,
						  head_row(d->K, b, kvh, c->kv_heads, N, D, c0, dt),
						  D, nc, D, dt);
					tile_load(t, d->Vt, D,
						  head_row(d->V, b, kvh, c->kv_heads, N, D, c0, dt),
						  D, nc, D, dt);
					for (uint64_t i = 0; i < nr; i++) {
						uint64_t qi = r0 + i;
						float *srow = d->St + i * Bc, *orow = d->Ot + i * D;
						float rmax, mnew, alpha, psum = 0;

						rmax = score_row(t, srow, d->Qt + i * D, d->Kt, D,
								 nc, c0, qi, c->causal, scale);
						/* every key of this block masked */
						if (rmax == -INFINITY)
							continue;
						TR_LOAD(t, &d->mt[i], sizeof(float));
						TR_LOAD(t, &d->lt[i], sizeof(float));
						mnew = d->mt[i] > rmax ? d->mt[i] : rmax;
						alpha = expf(d->mt[i] - mnew);
						TR_LOAD_SPAN(t, srow, nc * sizeof(float));
						TR_LOAD_SPAN(t, orow, D * sizeof(float));
						for (uint64_t k = 0; k < D; k++)
							orow[k] *= alpha;
						for (uint64_t j = 0; j < nc; j++) {
							float p = expf(srow[j] - mnew);

							psum += p;
							TR_LOAD_SPAN(t, d->Vt + j * D,
								     D * sizeof(float));
							axpy(orow, p, d->Vt + j * D, D);
						}
						TR_STORE_SPAN(t, orow, D * sizeof(float));
						d->lt[i] = d->lt[i] * alpha + psum;
						d->mt[i] = mnew;
						TR_STORE(t, &d->mt[i], sizeof(float));
						TR_STORE(t, &d->lt[i], sizeof(float));
					}
				}
				TR_LOAD_SPAN(t, d->lt, nr * sizeof(float));
				TR_LOAD_SPAN(t, d->mt, nr * sizeof(float));
				for (uint64_t i = 0; i < nr; i++) {
					float *orow = d->Ot + i * D;
					float inv = 1.0f / d->lt[i];
					float *lse = d->lse + (b * c->heads + h) * N + r0 + i;

					TR_LOAD_SPAN(t, orow, D * sizeof(float));
					for (uint64_t k = 0; k < D; k++)
						orow[k] *= inv;
					row_store(t,
						  head_row(d->O, b, h, c->heads, N, D, r0 + i, dt),
						  orow, D, dt);
					*lse = d->mt[i] + logf(d->lt[i]);
					TR_STORE(t, lse, sizeof(float));
				}
			}
		}
	}
}
