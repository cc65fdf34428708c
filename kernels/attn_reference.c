/*
 * The double-precision reference a run's outputs are checked against (kernels/attn.h:
 * attn_check()), moved out of kernels/attn.c.
 */

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "kernels/attn.h"

static double
at(const void *base, uint64_t i, enum attn_dtype t)
{
	return (double)dtype_load(base, i, t);
}

static void
compare(struct attn_error *e, double out, double ref)
{
	double diff = fabs(out - ref);

	e->checked++;
	if (!isfinite(out)) {
		e->nonfinite++;
		return;
	}
	if (diff > e->max_abs)
		e->max_abs = diff;
	if (fabs(ref) > e->max_ref)
		e->max_ref = fabs(ref);
}

static double
unit_roundoff(enum attn_dtype t)
{
	return t == ATTN_FP16 ? 0x1p-11 : t == ATTN_BF16 ? 0x1p-8 : 0;
}

/* Reference O for one (b, h); returns max |score| seen. */
static double
ref_head(const struct attn_data *d, uint64_t b, uint64_t h, struct attn_error *e, double *vmax)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, kvh = h / (c->heads / c->kv_heads);
	const enum attn_dtype dt = c->dtype;
	const uint64_t qoff = (b * c->heads + h) * N * D;
	double *sc = xzalloc(Nk * sizeof(double)), *o = xzalloc(D * sizeof(double));
	double smax = 0, scale = 1.0 / sqrt((double)D);

	for (uint64_t i = 0; i < N; i++) {
		/* the causal mask aligned at the end: row i sees keys up to i + N_kv - N */
		uint64_t lim = c->causal ? i + 1 + (Nk - N) : Nk;
		double mx = -INFINITY, sum = 0;

		for (uint64_t j = 0; j < lim; j++) {
			double s = 0;

			for (uint64_t k = 0; k < D; k++)
				s += at(d->Q, qoff + i * D + k, dt) *
				     at(d->K, attn_kv_row(c, d->pages, b, kvh, j) + k, dt);
			sc[j] = s * scale;
			mx = sc[j] > mx ? sc[j] : mx;
			smax = fabs(sc[j]) > smax ? fabs(sc[j]) : smax;
		}
		for (uint64_t j = 0; j < lim; j++)
			sum += exp(sc[j] - mx);
		memset(o, 0, D * sizeof(double));
		for (uint64_t j = 0; j < lim; j++) {
			double p = exp(sc[j] - mx) / sum;

			for (uint64_t k = 0; k < D; k++) {
				double v = at(d->V, attn_kv_row(c, d->pages, b, kvh, j) + k, dt);

				o[k] += p * v;
				*vmax = fabs(v) > *vmax ? fabs(v) : *vmax;
			}
		}
		for (uint64_t k = 0; k < D; k++)
			compare(e, at(d->O, qoff + i * D + k, dt), o[k]);
		if (c->kernel == ATTN_FLASH2 || c->kernel == ATTN_FLASHDECODE) {
			/* The logsumexp stays fp32: relative 1e-5. */
			double lse = mx + log(sum),
			       got = (double)d->lse[(b * c->heads + h) * N + i];

			e->checked++;
			if (!isfinite(got))
				e->nonfinite++;
			else if (fabs(got - lse) > 1e-5 * (fabs(lse) > 1 ? fabs(lse) : 1))
				e->lse_bad++;
		}
	}
	free(sc);
	free(o);
	return smax;
}

/* Reference of one product C = A W for proj, compared with the kernel's C. */
static void
ref_matmul(const struct attn_data *d, const void *A, bool a_split, uint64_t a_heads, const void *W,
	   uint64_t K, uint64_t ncols, const void *C, bool c_split, uint64_t c_heads,
	   struct attn_error *e)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t N = c->N, D = c->d;
	const enum attn_dtype dt = c->dtype;

	for (uint64_t b = 0; b < c->batch; b++)
		for (uint64_t n = 0; n < N; n++)
			for (uint64_t j = 0; j < ncols; j++) {
				double acc = 0;
				uint64_t ci = c_split ? ((b * c_heads + j / D) * N + n) * D + j % D
						      : (b * N + n) * ncols + j;

				for (uint64_t k = 0; k < K; k++) {
					uint64_t ai =
						a_split ? ((b * a_heads + k / D) * N + n) * D +
								  k % D
							: (b * N + n) * K + k;

					acc += at(A, ai, dt) * at(W, k * ncols + j, dt);
				}
				compare(e, at(C, ci, dt), acc);
			}
}

struct attn_error
attn_check(const struct attn_data *d)
{
	const struct attn_config *c = &d->cfg;
	struct attn_error e = { 0 };
	double smax = 0, vmax = 0, u = unit_roundoff(c->dtype);

	assert(!d->trace_only); /* no values to check */

	if (c->kernel == ATTN_PROJ) {
		uint64_t Dm = c->heads * c->d, Dkv = c->kv_heads * c->d;

		ref_matmul(d, d->x, false, 0, d->Wq, Dm, Dm, d->Q, true, c->heads, &e);
		ref_matmul(d, d->x, false, 0, d->Wk, Dm, Dkv, d->K, true, c->kv_heads, &e);
		ref_matmul(d, d->x, false, 0, d->Wv, Dm, Dkv, d->V, true, c->kv_heads, &e);
		ref_matmul(d, d->O, true, c->heads, d->Wo, Dm, Dm, d->y, false, 0, &e);
		/* Stored once, after an fp32 accumulation. */
		e.bound = 1e-5 + u * e.max_ref;
	} else {
		for (uint64_t b = 0; b < c->batch; b++)
			for (uint64_t h = 0; h < c->heads; h++) {
				double s = ref_head(d, b, h, &e, &vmax);

				smax = s > smax ? s : smax;
			}
		switch (c->kernel) {
		case ATTN_NAIVE:
			/* S and P are stored in the dtype: a score error u |s| perturbs each
			 * probability by up to 2 u smax (numerator and sum), P's own rounding
			 * adds u, and O's store u again: |dO| <= u vmax (2 smax + 2). */
			e.bound = 1e-5 + u * vmax * (2 * smax + 2);
			break;
		case ATTN_FLASH1:
			/* O is stored in the dtype after each of the T_c key blocks and read
			 * back; each store errs by u |O| <= u vmax. */
			e.bound = 1e-5 + u * vmax * (double)(attn_blocks(attn_nkv(c), c->Bc) + 1);
			break;
		default:
			/* Everything stays fp32 until O's single store (flashdecode: its partial
			 * O and logsumexp are fp32 too). */
			e.bound = 1e-5 + u * e.max_ref;
			break;
		}
	}
	e.pass = e.nonfinite == 0 && e.lse_bad == 0 && e.max_abs <= e.bound;
	return e;
}
