/*
 * Naive attention, trace-only (kernels/naive.c computes; kernels/trace_only.h says how this
 * form counts the same): each pass makes the computing pass's reports without the values.
 * With tiles in scratch, a block's dot products and axpys are tallied in closed form and each
 * query row's run of score stores goes to the model through trace_run().
 */

#include <stdlib.h>

#include "base/util.h"
#include "kernels/trace_only.h"

void
attn_trace_only_naive_scores(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const unsigned s = dtype_bytes(dt);
	uint64_t *k_acc = xzalloc((Bc + 1) * sizeof(*k_acc));
	struct to_run x;

	TR_PHASE(t, "scores");
	to_begin(&x, d, t);
	to_prefix(&x, k_acc, d->Kt, D, Bc, D, CACHE_OP_LOAD);
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;

			for (uint64_t r0 = 0; r0 < N; r0 += Br) {
				uint64_t nr = N - r0 < Br ? N - r0 : Br;

				to_tile_load(&x, TO_QT, d->Qt, D,
					     head_row(d->Q, b, h, c->heads, N, D, r0, dt), D, nr, D,
					     dt);
				for (uint64_t c0 = 0; c0 < Nk; c0 += Bc) {
					uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

					to_tile_load(
						&x, TO_KT, d->Kt, D,
						head_row(d->K, b, kvh, c->kv_heads, Nk, D, c0, dt),
						D, nc, D, dt);
					if (x.bulk) {
						/* dot(Qt row i, Kt row j) for every i, j */
						to_rows(&x, &x.sum, TO_QT, d->Qt, D, nr, D,
							CACHE_OP_LOAD, nc);
						to_add(&x.sum, TO_KT, CACHE_OP_LOAD, nr * k_acc[nc],
						       nr * nc * D * sizeof(float));
						/* the block's rows of score stores, one run each */
						trace_run_rows(t,
							       head_row(d->S, b, h, c->heads, N, Nk,
									r0, dt) +
								       c0 * s,
							       s, nc, nr, Nk * s, CACHE_OP_STORE);
						continue;
					}
					for (uint64_t i = 0; i < nr; i++) {
						char *srow = head_row(d->S, b, h, c->heads, N, Nk,
								      r0 + i, dt);

						for (uint64_t j = 0; j < nc; j++) {
							TR_ZIP(t, D, TR_IN(d->Qt + i * D),
							       TR_IN(d->Kt + j * D));
							TR_STORE(t, srow + (c0 + j) * s, s);
						}
					}
				}
			}
		}
	}
	to_end(&x);
	free(k_acc);
}

void
attn_trace_only_naive_softmax(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c);
	const enum attn_dtype dt = c->dtype;
	struct to_run x;

	TR_PHASE(t, "softmax");
	to_begin(&x, d, t);
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			for (uint64_t i = 0; i < N; i++) {
				const char *srow = head_row(d->S, b, h, c->heads, N, Nk, i, dt);
				char *prow = head_row(d->P, b, h, c->heads, N, Nk, i, dt);
				/* the causal mask aligned at the end */
				uint64_t lim = c->causal ? i + 1 + (Nk - N) : Nk;

				to_tile_load(&x, TO_ROW, d->row, Nk, srow, Nk, 1, Nk, dt);
				/* the max, then the sum of exponentials */
				to_zip(&x, TO_ROW, d->row, lim, CACHE_OP_LOAD);
				to_zip(&x, TO_ROW, d->row, lim, CACHE_OP_LOAD);
				to_row_store(&x, TO_ROW, prow, d->row, Nk, dt);
			}
		}
	}
	to_end(&x);
}

void
attn_trace_only_naive_av(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const unsigned s = dtype_bytes(dt);
	uint64_t *v_acc = xzalloc((Bc + 1) * sizeof(*v_acc));
	struct to_run x;

	TR_PHASE(t, "av");
	to_begin(&x, d, t);
	to_prefix(&x, v_acc, d->Vt, D, Bc, D, CACHE_OP_LOAD);
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;

			for (uint64_t r0 = 0; r0 < N; r0 += Br) {
				uint64_t nr = N - r0 < Br ? N - r0 : Br;

				to_zip(&x, TO_OT, d->Ot, nr * D, CACHE_OP_STORE);
				for (uint64_t c0 = 0; c0 < Nk; c0 += Bc) {
					uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

					to_tile_load(&x, TO_ST, d->St, Bc,
						     head_row(d->P, b, h, c->heads, N, Nk, r0, dt) +
							     c0 * s,
						     Nk, nr, nc, dt);
					to_tile_load(
						&x, TO_VT, d->Vt, D,
						head_row(d->V, b, kvh, c->kv_heads, Nk, D, c0, dt),
						D, nc, D, dt);
					if (x.bulk) {
						/* get(St[i][j]), then axpy(Ot row i, Vt row j)
						 * for every i, j */
						to_add(&x.sum, TO_ST, CACHE_OP_LOAD, nr * nc,
						       nr * nc * sizeof(float));
						to_rows(&x, &x.sum, TO_OT, d->Ot, D, nr, D,
							CACHE_OP_LOAD, nc);
						to_rows(&x, &x.sum, TO_OT, d->Ot, D, nr, D,
							CACHE_OP_STORE, nc);
						to_add(&x.sum, TO_VT, CACHE_OP_LOAD, nr * v_acc[nc],
						       nr * nc * D * sizeof(float));
						continue;
					}
					for (uint64_t i = 0; i < nr; i++)
						for (uint64_t j = 0; j < nc; j++) {
							TR_LOAD_ELEM(t, &d->St[i * Bc + j]);
							TR_ZIP(t, D, TR_IN(d->Ot + i * D),
							       TR_IN(d->Vt + j * D),
							       TR_OUT(d->Ot + i * D));
						}
				}
				for (uint64_t i = 0; i < nr; i++)
					to_row_store(
						&x, TO_OT,
						head_row(d->O, b, h, c->heads, N, D, r0 + i, dt),
						d->Ot + i * D, D, dt);
			}
		}
	}
	to_end(&x);
	free(v_acc);
}

void
attn_trace_only_naive(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare_traced(d, t);
	attn_trace_only_naive_scores(d, t);
	attn_trace_only_naive_softmax(d, t);
	attn_trace_only_naive_av(d, t);
}
