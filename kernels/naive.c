/*
 * Naive attention: three passes over memory, like the three kernels a framework launches.
 *
 *  scores   for each block of B_r query rows (copied to tile Qt) and each block of B_c key rows
 *           (copied to tile Kt): S[i][j] = Qt[i] . Kt[j] / sqrt(d), stored element by element.
 * S is [N][N_kv] per head (N queries, N_kv keys; the causal mask aligned at the end: row i
 * sees keys up to i + N_kv - N).
 *
 *  softmax  for each row: the row of S is read into the fp32 row tile; its max and the sum of
 *           exponentials are taken over the row tile; P[i][j] = exp(S[i][j] - max) / sum (0
 *           above the diagonal when causal) is stored element by element over S (or into a
 *           separate P).
 *  av       for each block of B_r query rows: Ot = 0; for each block of B_c key rows, the
 *           block of P is copied into tile St and V's rows into tile Vt, and Ot[i] += St[i][j]
 * Vt[j]; then Ot is stored to O. Heads run one after another (batch, then head); S holds every
 * head's scores.
 *
 * Each pass is a function of its own (attn_naive_scores, _softmax, _av), so one phase can be
 * timed alone (attn_run_native_phase()); attn_naive runs the three in order.
 *
 * This loop order is written three times (docs/architecture.md, "Kernel twins"): here, compiled
 * native and traced; its trace-only twin kernels/trace_only_naive.c; its exact formula
 * analysis/formula_naive.c and formula_naive_segments.c. tests/test-trace-only.c holds the twin to
 * this kernel's counters bit for bit; tests/test-formulas.c (test_exact_vs_simulation,
 * test_exact_nkv) the formula to its bytes.
 */

#include <math.h>

#include "kernels/tile.h"

void
attn_naive_scores(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const float scale = 1.0f / sqrtf((float)D);

	TR_PHASE(t, "scores");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;

			for (uint64_t r0 = 0; r0 < N; r0 += Br) {
				uint64_t nr = N - r0 < Br ? N - r0 : Br;

				tile_load(t, d->Qt, D, head_row(d->Q, b, h, c->heads, N, D, r0, dt),
					  D, nr, D, dt);
				for (uint64_t c0 = 0; c0 < Nk; c0 += Bc) {
					uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

					tile_load(
						t, d->Kt, D,
						head_row(d->K, b, kvh, c->kv_heads, Nk, D, c0, dt),
						D, nc, D, dt);
					for (uint64_t i = 0; i < nr; i++) {
						char *srow = head_row(d->S, b, h, c->heads, N, Nk,
								      r0 + i, dt);

						for (uint64_t j = 0; j < nc; j++)
							elem_store(t, srow, c0 + j,
								   dot(t, d->Qt + i * D,
								       d->Kt + j * D,
								       D) * scale,
								   dt);
					}
				}
			}
		}
	}
}

void
attn_naive_softmax(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c);
	const enum attn_dtype dt = c->dtype;

	TR_PHASE(t, "softmax");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			for (uint64_t i = 0; i < N; i++) {
				const char *srow = head_row(d->S, b, h, c->heads, N, Nk, i, dt);
				char *prow = head_row(d->P, b, h, c->heads, N, Nk, i, dt);
				/* the causal mask aligned at the end */
				uint64_t lim = c->causal ? i + 1 + (Nk - N) : Nk;
				float mx = -INFINITY, sum = 0;

				tile_load(t, d->row, Nk, srow, Nk, 1, Nk, dt);
				for (uint64_t j = 0; j < lim; j++)
					mx = d->row[j] > mx ? d->row[j] : mx;
				TR_ZIP(t, lim, TR_IN(d->row));
				for (uint64_t j = 0; j < lim; j++)
					sum += attn_exp(d->row[j] - mx);
				TR_ZIP(t, lim, TR_IN(d->row));
				for (uint64_t j = 0; j < Nk; j++)
					dtype_store(prow, j,
						    j < lim ? attn_exp(d->row[j] - mx) / sum : 0.0f,
						    dt);
				TR_ZIP(t, Nk, TR_IN(d->row), TR_OUT_N(prow, dtype_bytes(dt)));
			}
		}
	}
}

void
attn_naive_av(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Br = c->Br, Bc = c->Bc;
	const uint64_t group = c->heads / c->kv_heads;
	const enum attn_dtype dt = c->dtype;
	const unsigned s = dtype_bytes(dt);

	TR_PHASE(t, "av");
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t kvh = h / group;

			for (uint64_t r0 = 0; r0 < N; r0 += Br) {
				uint64_t nr = N - r0 < Br ? N - r0 : Br;

				zero(t, d->Ot, nr * D);
				for (uint64_t c0 = 0; c0 < Nk; c0 += Bc) {
					uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

					tile_load(t, d->St, Bc,
						  head_row(d->P, b, h, c->heads, N, Nk, r0, dt) +
							  c0 * s,
						  Nk, nr, nc, dt);
					tile_load(
						t, d->Vt, D,
						head_row(d->V, b, kvh, c->kv_heads, Nk, D, c0, dt),
						D, nc, D, dt);
					for (uint64_t i = 0; i < nr; i++)
						for (uint64_t j = 0; j < nc; j++)
							axpy(t, d->Ot + i * D,
							     get(t, &d->St[i * Bc + j]),
							     d->Vt + j * D, D);
				}
				for (uint64_t i = 0; i < nr; i++)
					row_store(t,
						  head_row(d->O, b, h, c->heads, N, D, r0 + i, dt),
						  d->Ot + i * D, D, dt);
			}
		}
	}
}

void
attn_naive(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare(d, t);
	attn_naive_scores(d, t);
	attn_naive_softmax(d, t);
	attn_naive_av(d, t);
}
