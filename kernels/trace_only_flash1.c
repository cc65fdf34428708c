/*
 * FlashAttention-1, trace-only (kernels/flash1.c computes; kernels/trace_only.h says how this
 * form counts the same). With tiles in scratch only Q, K, V, O, m and l reach the model; each
 * block's tile work is one to_flash_block().
 */

#include <stdlib.h>

#include "base/util.h"
#include "kernels/trace_only.h"

void
attn_trace_only_flash1_init(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d;
	const enum attn_dtype dt = c->dtype;

	TR_PHASE(t, "init");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			const float *m = d->m + (b * c->heads + h) * N,
				    *l = d->l + (b * c->heads + h) * N;

			for (uint64_t i = 0; i < N; i++) {
				TR_ZIP(t, D,
				       TR_OUT_N(head_row(d->O, b, h, c->heads, N, D, i, dt),
						dtype_bytes(dt)));
				TR_STORE_ELEM(t, &m[i]);
				TR_STORE_ELEM(t, &l[i]);
			}
		}
	}
}

void
attn_trace_only_flash1_tile(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	uint64_t *k_acc = xzalloc((Bc + 1) * sizeof(*k_acc));
	uint64_t *v_acc = xzalloc((Bc + 1) * sizeof(*v_acc));
	struct to_run x;

	TR_PHASE(t, "flash_tile");
	to_begin(&x, d, t);
	to_prefix(&x, k_acc, d->Kt, D, Bc, D, CACHE_OP_LOAD);
	to_prefix(&x, v_acc, d->Vt, D, Bc, D, CACHE_OP_LOAD);
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;
			float *m = d->m + (b * c->heads + h) * N,
			      *l = d->l + (b * c->heads + h) * N;

			for (uint64_t c0 = 0; c0 < N; c0 += Bc) {
				uint64_t nc = N - c0 < Bc ? N - c0 : Bc;

				to_tile_load(&x, TO_KT, d->Kt, D,
					     head_row(d->K, b, kvh, c->kv_heads, N, D, c0, dt), D,
					     nc, D, dt);
				to_tile_load(&x, TO_VT, d->Vt, D,
					     head_row(d->V, b, kvh, c->kv_heads, N, D, c0, dt), D,
					     nc, D, dt);
				for (uint64_t r0 = 0; r0 < N; r0 += Br) {
					uint64_t nr = N - r0 < Br ? N - r0 : Br;

					/* every query of this block precedes every key */
					if (c->causal && r0 + nr <= c0)
						continue;
					to_tile_load(&x, TO_QT, d->Qt, D,
						     head_row(d->Q, b, h, c->heads, N, D, r0, dt),
						     D, nr, D, dt);
					to_tile_load(&x, TO_OT, d->Ot, D,
						     head_row(d->O, b, h, c->heads, N, D, r0, dt),
						     D, nr, D, dt);
					to_tile_load(&x, TO_MT, d->mt, 0, m + r0, 0, 1, nr,
						     ATTN_FP32);
					to_tile_load(&x, TO_LT, d->lt, 0, l + r0, 0, 1, nr,
						     ATTN_FP32);
					if (x.bulk)
						to_flash_block(&x, nr, nc, r0, c0, 2, k_acc, v_acc);
					else
						to_flash_block_reports(&x, d, nr, nc, r0, c0, 2);
					for (uint64_t i = 0; i < nr; i++)
						to_row_store(&x, TO_OT,
							     head_row(d->O, b, h, c->heads, N, D,
								      r0 + i, dt),
							     d->Ot + i * D, D, dt);
					to_row_store(&x, TO_MT, m + r0, d->mt, nr, ATTN_FP32);
					to_row_store(&x, TO_LT, l + r0, d->lt, nr, ATTN_FP32);
				}
			}
		}
	}
	to_end(&x);
	free(k_acc);
	free(v_acc);
}

void
attn_trace_only_flash1(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare_traced(d, t);
	attn_trace_only_flash1_init(d, t);
	attn_trace_only_flash1_tile(d, t);
}
