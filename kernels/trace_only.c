/*
 * The trace-only kernels' shared part: where a phase's tallies start and end, the flash
 * kernels' block in closed form and report by report, and picking the kernel
 * (kernels/trace_only.h says why the counts are exact).
 */

#include "kernels/trace_only.h"

#include <assert.h>
#include <errno.h>
#include <string.h>

void
to_begin(struct to_run *x, struct attn_data *d, struct trace_ctx *t)
{
	float *tiles[TO_TILES] = { d->Qt, d->Kt, d->Vt, d->St, d->Ot, d->row, d->mt, d->lt };

	memset(x, 0, sizeof(*x));
	x->t = t;
	x->c = &d->cfg;
	x->bulk = true;
	for (int k = 0; k < TO_TILES; k++) {
		x->tile[k] = tiles[k];
		/* Tiles are all in scratch or all in memory (the preset's tiles=); a tile in
		 * memory, or a trace being recorded, means every access is reported. */
		if (tiles[k] && !trace_scratch_holds(t, tiles[k], sizeof(float)))
			x->bulk = false;
	}
}

void
to_end(struct to_run *x)
{
	for (int k = 0; k < TO_TILES; k++)
		for (int op = 0; op < 2; op++) {
			bool ok;

			if (!x->sum.ops[k][op] && !x->sum.bytes[k][op])
				continue;
			ok = trace_scratch_add(x->t, x->tile[k], x->sum.ops[k][op],
					       x->sum.bytes[k][op], (enum cache_op)op);
			assert(ok); /* to_begin() found every tile in scratch */
			(void)ok;
		}
	memset(&x->sum, 0, sizeof(x->sum));
}

void
to_tally_add(struct to_tally *dst, const struct to_tally *src)
{
	for (int k = 0; k < TO_TILES; k++)
		for (int op = 0; op < 2; op++) {
			dst->ops[k][op] += src->ops[k][op];
			dst->bytes[k][op] += src->bytes[k][op];
		}
}

/* to_flash_block() into *s. */
static void
flash_block(struct to_run *x, struct to_tally *s, uint64_t nr, uint64_t nc, uint64_t r0,
	    uint64_t c0, unsigned scales, const uint64_t *k_acc, const uint64_t *v_acc)
{
	const uint64_t D = x->c->d, Bc = x->c->Bc, row = D * sizeof(float);
	const float *Qt = x->tile[TO_QT], *St = x->tile[TO_ST], *Ot = x->tile[TO_OT];

	for (uint64_t i = 0; i < nr; i++) {
		const float *srow = St + i * Bc, *orow = Ot + i * D;
		uint64_t m = to_unmasked(nc, c0, r0 + i, x->c->causal);

		/* score_row(): a dot with each unmasked key, a put of every score */
		to_add(s, TO_QT, CACHE_OP_LOAD, m * to_acc(x, Qt + i * D, D, CACHE_OP_LOAD),
		       m * row);
		to_add(s, TO_KT, CACHE_OP_LOAD, k_acc[m], m * row);
		to_add(s, TO_ST, CACHE_OP_STORE, nc, nc * sizeof(float));
		if (m == 0)
			continue;
		/* m and l read and written once each; P = exp(S - m) in place */
		to_add(s, TO_MT, CACHE_OP_LOAD, 1, sizeof(float));
		to_add(s, TO_MT, CACHE_OP_STORE, 1, sizeof(float));
		to_add(s, TO_LT, CACHE_OP_LOAD, 1, sizeof(float));
		to_add(s, TO_LT, CACHE_OP_STORE, 1, sizeof(float));
		to_add(s, TO_ST, CACHE_OP_LOAD, to_acc(x, srow, nc, CACHE_OP_LOAD),
		       nc * sizeof(float));
		to_add(s, TO_ST, CACHE_OP_STORE, to_acc(x, srow, nc, CACHE_OP_STORE),
		       nc * sizeof(float));
		/* the scale_row() passes and one axpy() per key, each reading and writing the
		 * output row; a get() of each probability; V's rows */
		to_add(s, TO_OT, CACHE_OP_LOAD, (scales + nc) * to_acc(x, orow, D, CACHE_OP_LOAD),
		       (scales + nc) * row);
		to_add(s, TO_OT, CACHE_OP_STORE, (scales + nc) * to_acc(x, orow, D, CACHE_OP_STORE),
		       (scales + nc) * row);
		to_add(s, TO_ST, CACHE_OP_LOAD, nc, nc * sizeof(float));
		to_add(s, TO_VT, CACHE_OP_LOAD, v_acc[nc], nc * row);
	}
}

void
to_flash_block(struct to_run *x, uint64_t nr, uint64_t nc, uint64_t r0, uint64_t c0,
	       unsigned scales, const uint64_t *k_acc, const uint64_t *v_acc)
{
	/* With no key masked a block's tallies depend on nr and nc alone. */
	bool plain = to_unmasked(nc, c0, r0, x->c->causal) == nc;

	if (!plain) {
		flash_block(x, &x->sum, nr, nc, r0, c0, scales, k_acc, v_acc);
		return;
	}
	if (!x->memo.valid || x->memo.nr != nr || x->memo.nc != nc || x->memo.scales != scales) {
		memset(&x->memo.t, 0, sizeof(x->memo.t));
		flash_block(x, &x->memo.t, nr, nc, r0, c0, scales, k_acc, v_acc);
		x->memo.valid = true;
		x->memo.nr = nr;
		x->memo.nc = nc;
		x->memo.scales = scales;
	}
	to_tally_add(&x->sum, &x->memo.t);
}

void
to_flash_block_reports(struct to_run *x, struct attn_data *d, uint64_t nr, uint64_t nc, uint64_t r0,
		       uint64_t c0, unsigned scales)
{
	struct trace_ctx *t = x->t;
	const uint64_t D = d->cfg.d, Bc = d->cfg.Bc;

	for (uint64_t i = 0; i < nr; i++) {
		float *srow = d->St + i * Bc, *orow = d->Ot + i * D;

		if (to_score_row(x, srow, d->Qt + i * D, d->Kt, D, nc, c0, r0 + i, d->cfg.causal) ==
		    0)
			continue;
		TR_LOAD_ELEM(t, &d->mt[i]);
		if (scales == 2)
			TR_LOAD_ELEM(t, &d->lt[i]);
		/* P = exp(S - m) in place; O scaled by alpha, then one axpy per key */
		TR_ZIP(t, nc, TR_IN(srow), TR_OUT(srow));
		TR_ZIP(t, D, TR_IN(orow), TR_OUT(orow));
		for (uint64_t j = 0; j < nc; j++) {
			TR_LOAD_ELEM(t, &srow[j]);
			TR_ZIP(t, D, TR_IN(orow), TR_IN(d->Vt + j * D), TR_OUT(orow));
		}
		if (scales == 2) {
			/* flash1: O divided by the new l, then m and l written */
			TR_ZIP(t, D, TR_IN(orow), TR_OUT(orow));
			TR_STORE_ELEM(t, &d->mt[i]);
			TR_STORE_ELEM(t, &d->lt[i]);
		} else {
			/* flash2: l = alpha l + the row's sum, then m */
			TR_LOAD_ELEM(t, &d->lt[i]);
			TR_STORE_ELEM(t, &d->lt[i]);
			TR_STORE_ELEM(t, &d->mt[i]);
		}
	}
}

void
attn_trace_only_dispatch(struct attn_data *d, struct trace_ctx *t)
{
	switch (d->cfg.kernel) {
	case ATTN_NAIVE:
		attn_trace_only_naive(d, t);
		break;
	case ATTN_FLASH1:
		attn_trace_only_flash1(d, t);
		break;
	case ATTN_FLASH2:
		attn_trace_only_flash2(d, t);
		break;
	case ATTN_FLASHDECODE:
		attn_trace_only_flashdecode(d, t);
		break;
	default:
		attn_trace_only_proj(d, t);
		break;
	}
}

int
attn_trace_only_dispatch_phase(struct attn_data *d, struct trace_ctx *t, unsigned phase)
{
	/* As kernels/dispatch.c numbers them. */
	static void (*const phases[ATTN_KERNEL_COUNT][3])(struct attn_data *,
							  struct trace_ctx *) = {
		[ATTN_NAIVE] = { attn_trace_only_naive_scores, attn_trace_only_naive_softmax,
				 attn_trace_only_naive_av },
		[ATTN_FLASH1] = { attn_trace_only_flash1_init, attn_trace_only_flash1_tile, NULL },
		[ATTN_FLASH2] = { attn_trace_only_flash2, NULL, NULL },
		[ATTN_PROJ] = { attn_trace_only_proj_qkv, attn_trace_only_proj_out, NULL },
		[ATTN_FLASHDECODE] = { attn_trace_only_flashdecode_splits,
				       attn_trace_only_flashdecode_combine, NULL },
	};

	if ((unsigned)d->cfg.kernel >= ATTN_KERNEL_COUNT || phase >= 3 ||
	    !phases[d->cfg.kernel][phase])
		return -EINVAL;
	phases[d->cfg.kernel][phase](d, t);
	return 0;
}
