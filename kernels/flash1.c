/*
 * FlashAttention-1 loop order. O, the running max m and sum l start in memory (O = 0,
 * m = -inf, l = 0). The outer loop takes a block of B_c key rows (tiles Kt, Vt); the inner
 * loop takes each block of B_r query rows (tile Qt), reads its rows of O, m and l, folds this
 * key block in with the online softmax, and writes O, m and l back. O stays normalized after
 * every step, as in the paper's Algorithm 1. Causal: query blocks that end before the key
 * block starts are skipped; inside, the mask is applied.
 *
 * The phases "init" (attn_flash1_init) and "flash_tile" (attn_flash1_tile) are functions of
 * their own, so one can be run alone (attn_run_native_phase()).
 *
 * This loop order is written three times (docs/architecture.md, "Kernel twins"): here, compiled
 * native and traced; its trace-only twin kernels/trace_only_flash1.c; its exact formula
 * analysis/formula_flash1.c. tests/test-trace-only.c holds the twin to this kernel's counters bit
 * for bit; tests/test-formulas.c (test_exact_vs_simulation) the formula to its bytes.
 */

#include <math.h>

#include "kernels/tile.h"

void
attn_flash1_init(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d;
	const enum attn_dtype dt = c->dtype;

	TR_PHASE(t, "init");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			float *m = d->m + (b * c->heads + h) * N,
			      *l = d->l + (b * c->heads + h) * N;

			for (uint64_t i = 0; i < N; i++) {
				char *orow = head_row(d->O, b, h, c->heads, N, D, i, dt);

				for (uint64_t k = 0; k < D; k++)
					dtype_store(orow, k, 0, dt);
				TR_ZIP(t, D, TR_OUT_N(orow, dtype_bytes(dt)));
				put(t, &m[i], -INFINITY);
				put(t, &l[i], 0);
			}
		}
	}
}

void
attn_flash1_tile(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const float scale = 1.0f / sqrtf((float)D);

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

					/* every query of this block precedes every key */
					if (c->causal && r0 + nr <= c0)
						continue;
					tile_load(t, d->Qt, D,
						  head_row(d->Q, b, h, c->heads, N, D, r0, dt), D,
						  nr, D, dt);
					tile_load(t, d->Ot, D,
						  head_row(d->O, b, h, c->heads, N, D, r0, dt), D,
						  nr, D, dt);
					tile_load(t, d->mt, 0, m + r0, 0, 1, nr, ATTN_FP32);
					tile_load(t, d->lt, 0, l + r0, 0, 1, nr, ATTN_FP32);
					for (uint64_t i = 0; i < nr; i++) {
						float *srow = d->St + i * Bc, *orow = d->Ot + i * D;
						float rmax, mold, lold, mnew, lnew, alpha, psum = 0;

						rmax = score_row(t, srow, d->Qt + i * D, d->Kt, D,
								 nc, c0, r0 + i, c->causal, scale);
						if (rmax == -INFINITY)
							continue;
						mold = get(t, &d->mt[i]);
						lold = get(t, &d->lt[i]);
						mnew = mold > rmax ? mold : rmax;
						for (uint64_t j = 0; j < nc; j++) {
							srow[j] = attn_exp(srow[j] - mnew);
							psum += srow[j];
						}
						TR_ZIP(t, nc, TR_IN(srow), TR_OUT(srow));
						alpha = lold * attn_exp(mold - mnew);
						lnew = alpha + psum;
						/* O = (l_old e^(m_old - m_new) O + P V) / l_new */
						scale_row(t, orow, alpha, D);
						for (uint64_t j = 0; j < nc; j++)
							axpy(t, orow, get(t, &srow[j]),
							     d->Vt + j * D, D);
						scale_row(t, orow, 1.0f / lnew, D);
						put(t, &d->mt[i], mnew);
						put(t, &d->lt[i], lnew);
					}
					for (uint64_t i = 0; i < nr; i++)
						row_store(t,
							  head_row(d->O, b, h, c->heads, N, D,
								   r0 + i, dt),
							  d->Ot + i * D, D, dt);
					row_store(t, m + r0, d->mt, nr, ATTN_FP32);
					row_store(t, l + r0, d->lt, nr, ATTN_FP32);
				}
			}
		}
	}
}

void
attn_flash1(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare(d, t);
	attn_flash1_init(d, t);
	attn_flash1_tile(d, t);
}
