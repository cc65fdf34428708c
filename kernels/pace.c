/*
 * Which array paces each phase (kernels/pace.h). Every kernel loops over batch and heads
 * outermost, and the arrays are [batch][heads][rows][...], so the furthest line of the array
 * a phase walks once per head tells the blocks done. A kv head's K is walked once per head of
 * its group; proj's query-key-value phase walks x three times (Q, K, V). Weights are the
 * phases' shares of the accesses, roughly.
 */

#include "kernels/pace.h"

#include "base/progress.h"

/* Phase k of the plan: array a of `bytes`, walked `passes` times a region at a time. */
static void
set(struct trace_pace *p, const void *a, uint64_t bytes, uint64_t region, unsigned passes,
    uint64_t unit, double weight, const char *name)
{
	*p = (struct trace_pace){ .p = a,
				  .bytes = bytes,
				  .region_bytes = region,
				  .passes = passes,
				  .unit_bytes = unit,
				  .weight = weight,
				  .unit = name };
}

void
attn_pace(const struct attn_data *d, struct trace_ctx *t)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t s = dtype_bytes(c->dtype), B = c->batch, H = c->heads, N = c->N, D = c->d,
		       Nk = attn_nkv(c), Dm = H * D, Dkv = c->kv_heads * D;
	const uint64_t rows = B * H * N; /* query rows, all heads */
	const uint64_t kv = B * c->kv_heads * attn_kv_rows(c) * D * s, kv_head = Nk * D * s;
	const unsigned group = (unsigned)(H / c->kv_heads);
	struct trace_pace p[TRACE_PACE_MAX];

	if (!progress_enabled())
		return;
	progress_begin(attn_kernel_name(c->kernel));
	switch (c->kernel) {
	case ATTN_NAIVE:
		set(&p[0], d->S, rows * Nk * s, 0, 1, c->Br * Nk * s, 2.0 * D, "row blocks");
		set(&p[1], d->S, rows * Nk * s, 0, 1, c->Br * Nk * s, 4, "row blocks");
		set(&p[2], d->P, rows * Nk * s, 0, 1, c->Br * Nk * s, 3.0 * D, "row blocks");
		trace_pace(t, p, 3);
		break;
	case ATTN_FLASH1:
		/* the tile phase: per head, one walk of its K (a kv head's K once per head of
		 * its group) */
		set(&p[0], d->O, rows * D * s, 0, 1, N * D * s, 1, "heads");
		set(&p[1], d->K, kv, kv_head, group, c->Bc * D * s, (double)Nk, "key blocks");
		trace_pace(t, p, 2);
		break;
	case ATTN_FLASH2:
		set(&p[0], d->Q, rows * D * s, 0, 1, c->Br * D * s, 1, "query blocks");
		trace_pace(t, p, 1);
		break;
	case ATTN_FLASHDECODE:
		/* the splits walk K, each head its kv head's; paged K is read in the block
		 * table's order, so there the heads' partial outputs tell */
		if (!c->kv_page)
			set(&p[0], d->K, kv, kv_head, group, c->Bc * D * s, (double)Nk,
			    "key blocks");
		else if (d->Oacc)
			set(&p[0], d->Oacc, rows * attn_splits(c) * D * 4, 0, 1, N * D * 4,
			    (double)Nk, "splits");
		else
			set(&p[0], d->O, rows * D * s, 0, 1, N * D * s, (double)Nk, "heads");
		set(&p[1], d->O, rows * D * s, 0, 1, D * s, (double)attn_splits(c), "rows");
		trace_pace(t, p, 2);
		break;
	default:
		set(&p[0], d->x, B * N * Dm * s, 0, 3, c->Br * Dm * s, (double)(Dm + 2 * Dkv),
		    "row blocks");
		set(&p[1], d->y, B * N * Dm * s, 0, 1, c->Br * Dm * s, (double)Dm, "row blocks");
		trace_pace(t, p, 2);
		break;
	}
}
