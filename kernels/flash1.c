/*
 * FlashAttention-1 loop order. O, the running max m and sum l start in memory (O = 0,
 * m = -inf, l = 0). The outer loop takes a block of B_c key rows (tiles Kt, Vt); the inner
 * loop takes each block of B_r query rows (tile Qt), reads its rows of O, m and l, folds this
 * key block in with the online softmax, and writes O, m and l back. O stays normalized after
 * every step, as in the paper's Algorithm 1. Causal: query blocks that end before the key
 * block starts are skipped; inside, the mask is applied.
 */

#include <math.h>
#include <string.h>

#include "kernels/tile.h"

void
KERNEL(attn_flash1)(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const float scale = 1.0f / sqrtf((float)D);

	KERNEL(attn_declare)(d, t);
	TR_PHASE(t, "init");
	memset(d->Ot, 0, D * sizeof(float));
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			float *m = d->m + (b * c->heads + h) * N,
			      *l = d->l + (b * c->heads + h) * N;

			for (uint64_t i = 0; i < N; i++) {
				TR_LOAD_SPAN(t, d->Ot, D * sizeof(float));
				row_store(t, head_row(d->O, b, h, c->heads, N, D, i, dt), d->Ot, D,
					  dt);
				m[i] = -INFINITY;
				TR_STORE(t, &m[i], sizeof(float));
				l[i] = 0;
				TR_STORE(t, &l[i], sizeof(float));
			}
		}
	}

	TR_PHASE(t, "flash_tile");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;
			float *m = d->m + (b * c->heads + h) * N,
			      *l = d->l + (b * c->heads + h) * N;

			for (uint64_t c0 = 0; c0 < N; c0 += Bc) {
				uint64_t nc = N - c0 < Bc ? N - c0 : Bc;

				tile_load(t, d->Kt, D,
					  head_row(d->K, b, kvh, c->kv_heads, N, D, c0, dt), D, nc,
					  D, dt);
				tile_load(t, d->Vt, D,
					  head_row(d->V, b, kvh, c->kv_heads, N, D, c0, dt), D, nc,
					  D, dt);
				for (uint64_t r0 = 0; r0 < N; r0 += Br) {
					uint64_t nr = N - r0 < Br ? N - r0 : Br;

					if (c->causal && r0 + nr <= c0)
						continue; /* every query of this block precedes
							     every key */
					tile_load(t, d->Qt, D,
						  head_row(d->Q, b, h, c->heads, N, D, r0, dt), D,
						  nr, D, dt);
					tile_load(t, d->Ot, D,
						  head_row(d->O, b, h, c->heads, N, D, r0, dt), D,
						  nr, D, dt);
					TR_LOAD_SPAN(t, m + r0, nr * sizeof(float));
					TR_LOAD_SPAN(t, l + r0, nr * sizeof(float));
					memcpy(d->mt, m + r0, nr * sizeof(float));
					memcpy(d->lt, l + r0, nr * sizeof(float));
					TR_STORE_SPAN(t, d->mt, nr * sizeof(float));
					TR_STORE_SPAN(t, d->lt, nr * sizeof(float));
					for (uint64_t i = 0; i < nr; i++) {
						uint64_t qi = r0 + i;
						float *srow = d->St + i * Bc, *orow = d->Ot + i * D;
						float rmax, mnew, lnew, alpha, beta, psum = 0;

						rmax = score_row(t, srow, d->Qt + i * D, d->Kt, D,
								 nc, c0, qi, c->causal, scale);
						if (rmax == -INFINITY)
							continue;
						TR_LOAD(t, &d->mt[i], sizeof(float));
						TR_LOAD(t, &d->lt[i], sizeof(float));
						mnew = d->mt[i] > rmax ? d->mt[i] : rmax;
						TR_LOAD_SPAN(t, srow, nc * sizeof(float));
						for (uint64_t j = 0; j < nc; j++) {
							srow[j] = expf(srow[j] - mnew);
							psum += srow[j];
						}
						alpha = d->lt[i] * expf(d->mt[i] - mnew);
						lnew = alpha + psum;
						beta = 1.0f / lnew;
						TR_LOAD_SPAN(t, orow, D * sizeof(float));
						for (uint64_t k = 0; k < D; k++)
							orow[k] *= alpha;
						for (uint64_t j = 0; j < nc; j++) {
							TR_LOAD_SPAN(t, d->Vt + j * D,
								     D * sizeof(float));
							axpy(orow, srow[j], d->Vt + j * D, D);
						}
						for (uint64_t k = 0; k < D; k++)
							orow[k] *= beta;
						TR_STORE_SPAN(t, orow, D * sizeof(float));
						d->mt[i] = mnew;
						d->lt[i] = lnew;
						TR_STORE(t, &d->mt[i], sizeof(float));
						TR_STORE(t, &d->lt[i], sizeof(float));
					}
					for (uint64_t i = 0; i < nr; i++) {
						TR_LOAD_SPAN(t, d->Ot + i * D, D * sizeof(float));
						row_store(t,
							  head_row(d->O, b, h, c->heads, N, D,
								   r0 + i, dt),
							  d->Ot + i * D, D, dt);
					}
					TR_LOAD_SPAN(t, d->mt, nr * sizeof(float));
					TR_LOAD_SPAN(t, d->lt, nr * sizeof(float));
					for (uint64_t i = 0; i < nr; i++) {
						m[r0 + i] = d->mt[i];
						TR_STORE(t, &m[r0 + i], sizeof(float));
						l[r0 + i] = d->lt[i];
						TR_STORE(t, &l[r0 + i], sizeof(float));
					}
				}
			}
		}
	}
}
