/*
 * The projections, trace-only (kernels/proj.c computes; kernels/trace_only.h says how this form
 * counts the same). With tiles in scratch only x, the weights and the products reach the model;
 * a slice's axpys are tallied in closed form.
 */

#include <stdlib.h>

#include "base/util.h"
#include "kernels/trace_only.h"

/* proj.c's matmul(): C[b] = A[b] W for every batch, A N x K, W K x ncols. */
static void
matmul(struct to_run *x, struct attn_data *d, const struct operand *A, const void *W, uint64_t K,
       uint64_t ncols, const struct operand *C)
{
	struct trace_ctx *t = x->t;
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d, Br = c->Br, Bc = c->Bc;
	const enum attn_dtype dt = c->dtype;
	const unsigned s = dtype_bytes(dt);

	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t r0 = 0; r0 < N; r0 += Br) {
			uint64_t nr = N - r0 < Br ? N - r0 : Br;

			for (uint64_t c0 = 0; c0 < ncols; c0 += Bc) {
				uint64_t nc = ncols - c0 < Bc ? ncols - c0 : Bc;

				to_zip(x, TO_ST, d->St, nr * Bc, CACHE_OP_STORE);
				for (uint64_t k0 = 0; k0 < K; k0 += D) {
					uint64_t nk = K - k0 < D ? K - k0 : D;

					for (uint64_t i = 0; i < nr; i++)
						to_tile_load(x, TO_QT, d->Qt + i * D, D,
							     operand_at(A, b, r0 + i, k0, N, D, dt),
							     0, 1, nk, dt);
					to_tile_load(x, TO_KT, d->Kt, Bc,
						     (const char *)W + (k0 * ncols + c0) * s, ncols,
						     nk, nc, dt);
					if (x->bulk) {
						/* get(Qt[i][k]), then axpy(St row i, Kt row k)
						 * for every i, k */
						to_add(&x->sum, TO_QT, CACHE_OP_LOAD, nr * nk,
						       nr * nk * sizeof(float));
						to_rows(x, &x->sum, TO_ST, d->St, Bc, nr, nc,
							CACHE_OP_LOAD, nk);
						to_rows(x, &x->sum, TO_ST, d->St, Bc, nr, nc,
							CACHE_OP_STORE, nk);
						to_rows(x, &x->sum, TO_KT, d->Kt, Bc, nk, nc,
							CACHE_OP_LOAD, nr);
						continue;
					}
					for (uint64_t i = 0; i < nr; i++)
						for (uint64_t k = 0; k < nk; k++) {
							TR_LOAD_ELEM(t, &d->Qt[i * D + k]);
							TR_ZIP(t, nc, TR_IN(d->St + i * Bc),
							       TR_IN(d->Kt + k * Bc),
							       TR_OUT(d->St + i * Bc));
						}
				}
				for (uint64_t i = 0; i < nr; i++) {
					for (uint64_t j = 0; j < nc;) {
						uint64_t col = c0 + j;
						uint64_t run = C->heads ? D - col % D : nc - j;

						if (run > nc - j)
							run = nc - j;
						to_row_store(
							x, TO_ST,
							operand_at(C, b, r0 + i, col, N, D, dt),
							d->St + i * Bc + j, run, dt);
						j += run;
					}
				}
			}
		}
	}
}

void
attn_trace_only_proj_qkv(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t Dm = c->heads * c->d, Dkv = c->kv_heads * c->d;
	struct operand x = { d->x, false, 0, Dm };
	struct operand q = { d->Q, true, c->heads, Dm };
	struct operand k = { d->K, true, c->kv_heads, Dkv }, v = { d->V, true, c->kv_heads, Dkv };
	struct to_run r;

	TR_PHASE(t, "qkv_proj");
	to_begin(&r, d, t);
	matmul(&r, d, &x, d->Wq, Dm, Dm, &q);
	matmul(&r, d, &x, d->Wk, Dm, Dkv, &k);
	matmul(&r, d, &x, d->Wv, Dm, Dkv, &v);
	to_end(&r);
}

void
attn_trace_only_proj_out(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t Dm = c->heads * c->d;
	struct operand y = { d->y, false, 0, Dm }, o = { d->O, true, c->heads, Dm };
	struct to_run r;

	TR_PHASE(t, "out_proj");
	to_begin(&r, d, t);
	matmul(&r, d, &o, d->Wo, Dm, Dm, &y);
	to_end(&r);
}

void
attn_trace_only_proj(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare_traced(d, t);
	attn_trace_only_proj_qkv(d, t);
	attn_trace_only_proj_out(d, t);
}
