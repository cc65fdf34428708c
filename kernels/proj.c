/*
 * The projections of an attention layer with D = heads * d and D_kv = kv_heads * d:
 *
 *  qkv_proj  Q = x W_Q, K = x W_K, V = x W_V, written head by head into [batch][heads][N][d]
 *  out_proj  y = concat(O) W_O, where concat(O)[n][h d + k] = O[h][n][k]
 *
 * Each product C = A W is blocked the same way: for each block of B_r rows of A and each block
 * of B_c columns of W, the tile Ct accumulates over d-wide slices of the inner dimension (the
 * slice of A in tile At = Qt, of W in tile Wt = Kt), then is stored.
 *
 * Each phase is a function of its own (attn_proj_qkv, attn_proj_out), so one can be timed
 * alone (attn_run_native_phase()); attn_proj runs both in order.
 *
 * This loop order is written three times (docs/architecture.md, "Kernel twins"): here, compiled
 * native and traced; its trace-only twin kernels/trace_only_proj.c; its exact formula
 * analysis/formula_proj.c, formula_proj_edges.c and formula_proj_lines.c. tests/test-trace-only.c
 * holds the twin to this kernel's counters bit for bit; tests/test-formulas.c
 * (test_exact_vs_simulation) the formula to its bytes.
 */

#include "kernels/tile.h"

/* C[b] = A[b] W for every batch: A is N x K, W is K x ncols (row-major, storage dtype). */
static ALWAYS_INLINE void
matmul(struct attn_data *d, struct trace_ctx *t, const struct operand *A, const void *W, uint64_t K,
       uint64_t ncols, const struct operand *C)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d, Br = c->Br, Bc = c->Bc;
	const enum attn_dtype dt = c->dtype;
	const unsigned s = dtype_bytes(dt);

	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t r0 = 0; r0 < N; r0 += Br) {
			uint64_t nr = N - r0 < Br ? N - r0 : Br;

			for (uint64_t c0 = 0; c0 < ncols; c0 += Bc) {
				uint64_t nc = ncols - c0 < Bc ? ncols - c0 : Bc;

				zero(t, d->St, nr * Bc);
				for (uint64_t k0 = 0; k0 < K; k0 += D) {
					uint64_t nk = K - k0 < D ? K - k0 : D;

					/* A's slice: rows r0.., columns k0 .. k0 + nk. */
					for (uint64_t i = 0; i < nr; i++)
						tile_load(t, d->Qt + i * D, D,
							  operand_at(A, b, r0 + i, k0, N, D, dt), 0,
							  1, nk, dt);
					tile_load(t, d->Kt, Bc,
						  (const char *)W + (k0 * ncols + c0) * s, ncols,
						  nk, nc, dt);
					for (uint64_t i = 0; i < nr; i++)
						for (uint64_t k = 0; k < nk; k++)
							axpy(t, d->St + i * Bc,
							     get(t, &d->Qt[i * D + k]),
							     d->Kt + k * Bc, nc);
				}
				for (uint64_t i = 0; i < nr; i++) {
					/* A run of columns never crosses a head in the split layout
					 * when B_c divides d; else store column runs per head. */
					for (uint64_t j = 0; j < nc;) {
						uint64_t col = c0 + j;
						uint64_t run = C->heads ? D - col % D : nc - j;

						if (run > nc - j)
							run = nc - j;
						row_store(t,
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
attn_proj_qkv(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t Dm = c->heads * c->d, Dkv = c->kv_heads * c->d;
	struct operand x = { d->x, false, 0, Dm };
	struct operand q = { d->Q, true, c->heads, Dm };
	struct operand k = { d->K, true, c->kv_heads, Dkv }, v = { d->V, true, c->kv_heads, Dkv };

	TR_PHASE(t, "qkv_proj");
	matmul(d, t, &x, d->Wq, Dm, Dm, &q);
	matmul(d, t, &x, d->Wk, Dm, Dkv, &k);
	matmul(d, t, &x, d->Wv, Dm, Dkv, &v);
}

void
attn_proj_out(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t Dm = c->heads * c->d;
	struct operand y = { d->y, false, 0, Dm }, o = { d->O, true, c->heads, Dm };

	TR_PHASE(t, "out_proj");
	matmul(d, t, &o, d->Wo, Dm, Dm, &y);
}

void
attn_proj(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare(d, t);
	attn_proj_qkv(d, t);
	attn_proj_out(d, t);
}
