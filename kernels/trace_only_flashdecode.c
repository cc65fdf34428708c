/*
 * flashdecode, trace-only (kernels/flashdecode.c computes; kernels/trace_only.h says how this
 * form counts the same): the same splits and query blocks, each block's tile work one
 * to_flash_block() with tiles in scratch.
 */

#include <stdlib.h>

#include "base/util.h"
#include "kernels/trace_only.h"

/* Query block r0 (nr rows) of head (b, h) of x->c (attn_decode_view()) against key blocks
 * [jb0, jb1): flashdecode.c's split_block(). */
static void
split_block(struct to_run *x, struct attn_data *d, uint64_t b, uint64_t h, uint64_t r0, uint64_t nr,
	    uint64_t jb0, uint64_t jb1, const uint64_t *k_acc, const uint64_t *v_acc)
{
	const struct attn_config *c = x->c;
	const uint64_t N = c->N, Nk = attn_nkv(c), D = c->d, Bc = c->Bc;
	/* to_flash_block_reports() reads d->cfg's mask: the shift keeps packed rows unmasked */
	const uint64_t off = attn_decode_shift(c), kvh = h / (c->heads / c->kv_heads);
	const enum attn_dtype dt = c->dtype;

	to_tile_load(x, TO_QT, d->Qt, D, head_row(d->Q, b, h, c->heads, N, D, r0, dt), D, nr, D,
		     dt);
	if (x->bulk) {
		to_zip(x, TO_MT, d->mt, nr, CACHE_OP_STORE);
		to_zip(x, TO_LT, d->lt, nr, CACHE_OP_STORE);
	} else {
		TR_ZIP(x->t, nr, TR_OUT(d->mt), TR_OUT(d->lt));
	}
	to_zip(x, TO_OT, d->Ot, nr * D, CACHE_OP_STORE);
	for (uint64_t c0 = jb0 * Bc; c0 < jb1 * Bc; c0 += Bc) {
		uint64_t nc = Nk - c0 < Bc ? Nk - c0 : Bc;

		to_kv_tiles_load(x, d, b, kvh, c0, nc);
		if (x->bulk)
			to_flash_block(x, nr, nc, r0 + off, c0, 1, k_acc, v_acc);
		else
			to_flash_block_reports(x, d, nr, nc, r0 + off, c0, 1);
	}
}

void
attn_trace_only_flashdecode_splits(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config dv = attn_decode_view(&d->cfg), *c = &dv;
	const uint64_t N = c->N, D = c->d, Br = c->Br, Bc = c->Bc, S = attn_splits(c);
	const uint64_t per = attn_split_blocks(c), tc = attn_blocks(attn_nkv(c), Bc);
	const enum attn_dtype dt = c->dtype;
	uint64_t *k_acc = xzalloc((Bc + 1) * sizeof(*k_acc));
	uint64_t *v_acc = xzalloc((Bc + 1) * sizeof(*v_acc));
	struct to_run x;

	TR_PHASE(t, "splits");
	to_begin(&x, d, t);
	x.c = c;
	to_prefix(&x, k_acc, d->Kt, D, Bc, D, CACHE_OP_LOAD);
	to_prefix(&x, v_acc, d->Vt, D, Bc, D, CACHE_OP_LOAD);
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t bh = b * c->heads + h;

			for (uint64_t s = 0; s < S; s++) {
				float *lse =
					S == 1 ? d->lse + bh * N : d->lseacc + (bh * S + s) * N;
				float *oacc = S == 1 ? NULL : d->Oacc + (bh * S + s) * N * D;

				for (uint64_t r0 = 0; r0 < N; r0 += Br) {
					uint64_t nr = N - r0 < Br ? N - r0 : Br;
					uint64_t jb0 = s * per, jb1 = (s + 1) * per;
					uint64_t vis =
						c->causal ? attn_blocks(r0 + nr + attn_kv_offset(c),
									Bc)
							  : tc;

					vis = vis < tc ? vis : tc;
					jb1 = jb1 < vis ? jb1 : vis;
					if (jb0 >= jb1) {
						for (uint64_t i = 0; i < nr; i++) {
							TR_ZIP(t, D, TR_OUT(oacc + (r0 + i) * D));
							TR_STORE_ELEM(t, &lse[r0 + i]);
						}
						continue;
					}
					split_block(&x, d, b, h, r0, nr, jb0, jb1, k_acc, v_acc);
					for (uint64_t i = 0; i < nr; i++) {
						const float *orow = d->Ot + i * D;
						void *dst = S == 1 ? (void *)head_row(d->O, b, h,
										      c->heads, N,
										      D, r0 + i, dt)
								   : (void *)(oacc + (r0 + i) * D);

						to_get(&x, TO_LT, &d->lt[i]);
						to_scale_row(&x, TO_OT, orow, D);
						to_row_store(&x, TO_OT, dst, orow, D,
							     S == 1 ? dt : ATTN_FP32);
						to_get(&x, TO_MT, &d->mt[i]);
						TR_STORE_ELEM(t, &lse[r0 + i]);
					}
				}
			}
		}
	}
	to_end(&x);
	free(k_acc);
	free(v_acc);
}

void
attn_trace_only_flashdecode_combine(struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config dv = attn_decode_view(&d->cfg), *c = &dv;
	const uint64_t N = c->N, D = c->d, S = attn_splits(c);
	const enum attn_dtype dt = c->dtype;
	struct to_run x;

	if (S == 1)
		return;
	TR_PHASE(t, "combine");
	to_begin(&x, d, t);
	x.c = c;
	for (uint64_t b = 0; b < c->batch; b++) {
		for (uint64_t h = 0; h < c->heads; h++) {
			uint64_t bh = b * c->heads + h;

			for (uint64_t i = 0; i < N; i++) {
				for (uint64_t s = 0; s < S; s++) {
					TR_LOAD_ELEM(t, &d->lseacc[(bh * S + s) * N + i]);
					to_put(&x, TO_ROW, &d->row[s]);
				}
				for (uint64_t s = 0; s < S; s++)
					to_get(&x, TO_ROW, &d->row[s]);
				TR_STORE_ELEM(t, &d->lse[bh * N + i]);
				to_zip(&x, TO_OT, d->Ot, D, CACHE_OP_STORE);
				for (uint64_t s = 0; s < S; s++) {
					const float *o = d->Oacc + ((bh * S + s) * N + i) * D;

					to_get(&x, TO_ROW, &d->row[s]);
					if (x.bulk) {
						TR_ZIP(t, D, TR_IN(o));
						to_scale_row(&x, TO_OT, d->Ot, D);
					} else {
						TR_ZIP(t, D, TR_IN(d->Ot), TR_IN(o), TR_OUT(d->Ot));
					}
				}
				to_row_store(&x, TO_OT, head_row(d->O, b, h, c->heads, N, D, i, dt),
					     d->Ot, D, dt);
			}
		}
	}
	to_end(&x);
}

void
attn_trace_only_flashdecode(struct attn_data *d, struct trace_ctx *t)
{
	attn_declare_traced(d, t);
	attn_trace_only_flashdecode_splits(d, t);
	attn_trace_only_flashdecode_combine(d, t);
}
