/*
 * FlashAttention-2, trace-only (kernels/flash2.c computes; kernels/trace_only.h says how this
 * form counts the same). With tiles in scratch only Q, K, V, O and lse reach the model; each
 * block's tile work is one to_flash_block().
 */

#include <stdlib.h>

#include "base/util.h"
#include "kernels/trace_only.h"

void
attn_trace_only_flash2(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t off = attn_kv_offset(c); /* the causal mask's shift: N_kv - N */
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	uint64_t *k_acc = xzalloc((Bc + 1) * sizeof(*k_acc));
	uint64_t *v_acc = xzalloc((Bc + 1) * sizeof(*v_acc));
	struct to_run x;

	attn_declare_traced(d, t);
	TR_PHASE(t, "flash_tile");
	to_begin(&x, d, t);
	to_prefix(&x, k_acc, d->Kt, D, Bc, D, CACHE_OP_LOAD);
	to_prefix(&x, v_acc, d->Vt, D, Bc, D, CACHE_OP_LOAD);
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;
			float *lse = d->lse + (b * c->heads + h) * N;

			for (uint64_t r0 = 0; r0 < N; r0 += Br) {
				uint64_t nr = N - r0 < Br ? N - r0 : Br;
				uint64_t kend = c->causal ? r0 + nr + off : Nk;

				to_tile_load(&x, TO_QT, d->Qt, D,
					     head_row(d->Q, b, h, c->heads, N, D, r0, dt), D, nr, D,
					     dt);
				/* m = -inf, l = 0 */
				if (x.bulk) {
					to_zip(&x, TO_MT, d->mt, nr, CACHE_OP_STORE);
					to_zip(&x, TO_LT, d->lt, nr, CACHE_OP_STORE);
				} else {
					TR_ZIP(t, nr, TR_OUT(d->mt), TR_OUT(d->lt));
				}
				to_zip(&x, TO_OT, d->Ot, nr * D, CACHE_OP_STORE);
				for (uint64_t c0 = 0; c0 < kend; c0 += Bc) {
					uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

					to_kv_tiles_load(&x, d, b, kvh, c0, nc);
					/* r0 + off: the block's first query row's position among
					 * the keys */
					if (x.bulk)
						to_flash_block(&x, nr, nc, r0 + off, c0, 1, k_acc,
							       v_acc);
					else
						to_flash_block_reports(&x, d, nr, nc, r0 + off, c0,
								       1);
				}
				/* O = O / l stored, lse = m + log l */
				for (uint64_t i = 0; i < nr; i++) {
					const float *orow = d->Ot + i * D;

					to_get(&x, TO_LT, &d->lt[i]);
					to_scale_row(&x, TO_OT, orow, D);
					to_row_store(
						&x, TO_OT,
						head_row(d->O, b, h, c->heads, N, D, r0 + i, dt),
						orow, D, dt);
					to_get(&x, TO_MT, &d->mt[i]);
					TR_STORE_ELEM(t, &lse[r0 + i]);
				}
			}
		}
	}
	to_end(&x);
	free(k_acc);
	free(v_acc);
}
