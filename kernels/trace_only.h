#pragma once

/*
 * Trace-only kernels (traced build only; for data from attn_data_create_trace_only()): each
 * kernel's loops making the reports its computing form makes, with no arithmetic and no value
 * read or written. The arrays are address space nobody may touch; only addresses are formed.
 *
 * Two forms, chosen per run by where the tiles are:
 *  - tiles in memory (CPU presets, or while recording a trace): every report the computing
 *    kernel makes, one by one and in its order (the tile accesses reach the model too);
 *  - tiles in scratch (GPU presets, lab): the reports of memory arrays, in the same order as
 *    the computing kernel's, and the tile accesses tallied instead, per block in closed form
 *    (one access an element, as trace_zip() counts a scratch stream, and one per get/put),
 *    and added to the model once per phase (trace_scratch_add()).
 *    That is exact: a scratch access never reaches the cache model nor changes how the
 *    tracing layer merges memory accesses, and the model keeps scratch counts only as sums
 *    (per array and in the processor's totals, not per phase), which no order changes.
 *
 * Runs of element stores (naive's S) go through trace_run(), exact as n single reports.
 *
 * The one place a computing kernel's reports depend on values: flash1 and flash2 skip the rest
 * of a query row's block when its row maximum is -inf. With finite inputs (attn_data_fill())
 * a score is -inf only where the causal mask hides it, so here a row is skipped when every
 * key of the block is masked.
 *
 * The helpers and types here carry the prefix to_ (trace-only); the kernels, attn_trace_only_.
 */

#include <stdbool.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "kernels/tile.h"
#include "sim/trace.h"

/* The tiles, in the order of attn_data's tile pointers. */
enum to_tile { TO_QT, TO_KT, TO_VT, TO_ST, TO_OT, TO_ROW, TO_MT, TO_LT, TO_TILES };

/* Scratch accesses tallied per tile: [tile][0] loads, [tile][1] stores. */
struct to_tally {
	uint64_t ops[TO_TILES][2];
	uint64_t bytes[TO_TILES][2];
};

/* One trace-only phase in progress. */
struct to_run {
	struct trace_ctx *t;
	const struct attn_config *c;
	bool bulk; /* every tile in scratch: tile accesses are tallied, not reported */
	float *tile[TO_TILES];
	struct to_tally sum;
	/* to_flash_block()'s last block without a masked key: most blocks repeat it */
	struct {
		bool valid;
		uint64_t nr, nc;
		unsigned scales;
		struct to_tally t;
	} memo;
};

/* Starts a phase of d's kernel on t, after its arrays are declared: bulk when every tile d has
 * lies in a scratch array. */
void to_begin(struct to_run *x, struct attn_data *d, struct trace_ctx *t);
/* Adds the tallied scratch accesses to the model (x->sum is cleared). */
void to_end(struct to_run *x);

/* Adds src's tallies to dst's. */
void to_tally_add(struct to_tally *dst, const struct to_tally *src);

/* The flash kernels' tile work for one block of nr query rows from r0 (their position among
 * the keys under the causal mask: the row plus N_kv - N) against nc keys from c0, tallied into
 * x->sum: per query row, score_row(), then (unless every key is masked) the online-softmax update
 * with `scales` scale_row() passes over the output row (flash2 1, flash1 2: it normalizes at every
 * step). k_acc[m] and v_acc[m] are the accesses of TR_ZIP streams over key rows 0 .. m-1 of K_tile
 * and V_tile (to_prefix()). */
void to_flash_block(struct to_run *x, uint64_t nr, uint64_t nc, uint64_t r0, uint64_t c0,
		    unsigned scales, const uint64_t *k_acc, const uint64_t *v_acc);

/* The same block's tile work, every report of it one by one and in the computing kernel's order
 * (tiles in memory): `scales` 2 for flash1 (m and l read first, O normalized at the end),
 * 1 for flash2 and flashdecode (l read and written after P V). */
void to_flash_block_reports(struct to_run *x, struct attn_data *d, uint64_t nr, uint64_t nc,
			    uint64_t r0, uint64_t c0, unsigned scales);

static ALWAYS_INLINE void
to_add(struct to_tally *s, enum to_tile k, enum cache_op op, uint64_t ops, uint64_t bytes)
{
	s->ops[k][op] += ops;
	s->bytes[k][op] += bytes;
}

/* The accesses trace_zip() counts for a TR_ZIP stream of n fp32 elements of a tile from p:
 * one an element. */
static ALWAYS_INLINE uint64_t
to_acc(const struct to_run *x, const float *p, uint64_t n, enum cache_op op)
{
	(void)x;
	(void)p;
	(void)op;
	return n;
}

/* Tallies `times` TR_ZIP streams over nrows rows of a tile, row r from p + r stride, n
 * elements each. */
static inline void
to_rows(struct to_run *x, struct to_tally *s, enum to_tile k, const float *p, uint64_t stride,
	uint64_t nrows, uint64_t n, enum cache_op op, uint64_t times)
{
	uint64_t acc = 0;

	for (uint64_t r = 0; r < nrows; r++)
		acc += to_acc(x, p + r * stride, n, op);
	to_add(s, k, op, times * acc, times * nrows * n * sizeof(float));
}

/* sum[m] = the accesses of TR_ZIP streams over rows 0 .. m-1 of a tile (row j from
 * p + j stride, n elements), for m = 0 .. nrows. */
static inline void
to_prefix(struct to_run *x, uint64_t *sum, const float *p, uint64_t stride, uint64_t nrows,
	  uint64_t n, enum cache_op op)
{
	sum[0] = 0;
	for (uint64_t j = 0; j < nrows; j++)
		sum[j + 1] = sum[j] + to_acc(x, p + j * stride, n, op);
}

/* A TR_ZIP of one tile stream alone (n elements from p). */
static ALWAYS_INLINE void
to_zip(struct to_run *x, enum to_tile k, const float *p, uint64_t n, enum cache_op op)
{
	if (x->bulk)
		to_add(&x->sum, k, op, to_acc(x, p, n, op), n * sizeof(float));
	else if (op == CACHE_OP_LOAD)
		TR_ZIP(x->t, n, TR_IN(p));
	else
		TR_ZIP(x->t, n, TR_OUT(p));
}

/* scale_row()'s reports: a tile row read and written. */
static ALWAYS_INLINE void
to_scale_row(struct to_run *x, enum to_tile k, const float *p, uint64_t n)
{
	if (x->bulk) {
		to_add(&x->sum, k, CACHE_OP_LOAD, to_acc(x, p, n, CACHE_OP_LOAD),
		       n * sizeof(float));
		to_add(&x->sum, k, CACHE_OP_STORE, to_acc(x, p, n, CACHE_OP_STORE),
		       n * sizeof(float));
	} else {
		TR_ZIP(x->t, n, TR_IN(p), TR_OUT(p));
	}
}

/* get() and put(): one element of a tile. */
static ALWAYS_INLINE void
to_get(struct to_run *x, enum to_tile k, const float *p)
{
	if (x->bulk)
		to_add(&x->sum, k, CACHE_OP_LOAD, 1, sizeof(float));
	else
		TR_LOAD_ELEM(x->t, p);
}

static ALWAYS_INLINE void
to_put(struct to_run *x, enum to_tile k, const float *p)
{
	if (x->bulk)
		to_add(&x->sum, k, CACHE_OP_STORE, 1, sizeof(float));
	else
		TR_STORE_ELEM(x->t, p);
}

/* tile_load()'s reports: nr memory rows src_stride elements apart, n elements each, into
 * tile k. */
static inline void
to_tile_load(struct to_run *x, enum to_tile k, const float *tile, uint64_t tile_stride,
	     const void *src, uint64_t src_stride, uint64_t nr, uint64_t n, enum attn_dtype dt)
{
	unsigned s = dtype_bytes(dt);

	if (x->bulk) {
		/* the rows' loads as one run: a feed model's slices cut it themselves */
		trace_run_rows(x->t, src, s, n, nr, src_stride * s, CACHE_OP_LOAD);
		to_rows(x, &x->sum, k, tile, tile_stride, nr, n, CACHE_OP_STORE, 1);
		return;
	}
	for (uint64_t r = 0; r < nr; r++) {
		const char *row = (const char *)src + r * src_stride * s;

		TR_ZIP(x->t, n, TR_IN_N(row, s), TR_OUT(tile + r * tile_stride));
	}
}

/* kv_pages_read() and kv_tile_load() of K and V for key rows [c0, c0 + nc) of batch b, kv
 * head kvh: the block-table entries' reports (their values from d->pages, the arena's copy
 * holding none), then each tile's rows, one run per page (or one run unpaged). */
static inline void
to_kv_tiles_load(struct to_run *x, const struct attn_data *d, uint64_t b, uint64_t kvh, uint64_t c0,
		 uint64_t nc)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t D = c->d, P = c->kv_page, Nk = attn_nkv(c);
	const unsigned s = dtype_bytes(c->dtype);
	const void *base[2] = { d->K, d->V };
	const float *tile[2] = { d->Kt, d->Vt };
	const enum to_tile k[2] = { TO_KT, TO_VT };
	const int32_t *pages = P ? d->pages + b * attn_pages(c) : NULL;

	if (P)
		TR_ZIP(x->t, (c0 + nc - 1) / P - c0 / P + 1,
		       TR_IN_N(d->block_table + b * attn_pages(c) + c0 / P, sizeof(int32_t)));
	for (int a = 0; a < 2; a++) {
		if (!P) {
			to_tile_load(
				x, k[a], tile[a], D,
				head_row((void *)base[a], b, kvh, c->kv_heads, Nk, D, c0, c->dtype),
				D, nc, D, c->dtype);
			continue;
		}
		for (uint64_t j = c0; j < c0 + nc;) {
			uint64_t n = P - j % P < c0 + nc - j ? P - j % P : c0 + nc - j;
			uint64_t row =
				(((uint64_t)pages[j / P] * P + j % P) * c->kv_heads + kvh) * D;

			to_tile_load(x, k[a], tile[a] + (j - c0) * D, D,
				     (const char *)base[a] + row * s, c->kv_heads * D, n, D,
				     c->dtype);
			j += n;
		}
	}
}

/* row_store()'s reports: n elements of tile k from src to the memory row dst. */
static ALWAYS_INLINE void
to_row_store(struct to_run *x, enum to_tile k, void *dst, const float *src, uint64_t n,
	     enum attn_dtype dt)
{
	if (x->bulk) {
		trace_run_rows(x->t, dst, dtype_bytes(dt), n, 1, 0, CACHE_OP_STORE);
		to_add(&x->sum, k, CACHE_OP_LOAD, to_acc(x, src, n, CACHE_OP_LOAD),
		       n * sizeof(float));
	} else {
		TR_ZIP(x->t, n, TR_IN(src), TR_OUT_N(dst, dtype_bytes(dt)));
	}
}

/*
 * score_row()'s reports for query row qi of a block of nc keys from c0, tile form: a dot of
 * q with each unmasked key row of kt (d elements), then the score's put into srow. Returns
 * the number of unmasked keys (0: the computing kernel's row maximum is -inf).
 */
static inline uint64_t
to_score_row(struct to_run *x, const float *srow, const float *q, const float *kt, uint64_t d,
	     uint64_t nc, uint64_t c0, uint64_t qi, bool causal)
{
	uint64_t m = 0;

	for (uint64_t j = 0; j < nc; j++) {
		if (!causal || c0 + j <= qi) {
			TR_ZIP(x->t, d, TR_IN(q), TR_IN(kt + j * d));
			m++;
		}
		TR_STORE_ELEM(x->t, &srow[j]);
	}
	return m;
}

/* Keys of a block of nc from c0 that query qi sees: all, or under the causal mask those up to
 * qi (they come first). */
static ALWAYS_INLINE uint64_t
to_unmasked(uint64_t nc, uint64_t c0, uint64_t qi, bool causal)
{
	if (!causal)
		return nc;
	if (c0 > qi)
		return 0;
	return qi - c0 + 1 < nc ? qi - c0 + 1 : nc;
}

/* The kernels' trace-only forms, whole and by phase (named as attn_phase_name() lists them);
 * attn_run_traced() and attn_run_traced_phase() call them through these dispatchers. */
void attn_trace_only_dispatch(struct attn_data *d, struct trace_ctx *t);
int attn_trace_only_dispatch_phase(struct attn_data *d, struct trace_ctx *t, unsigned phase);

void attn_trace_only_naive(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_naive_scores(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_naive_softmax(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_naive_av(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_flash1(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_flash1_init(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_flash1_tile(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_flash2(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_proj(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_proj_qkv(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_proj_out(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_flashdecode(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_flashdecode_splits(struct attn_data *d, struct trace_ctx *t);
void attn_trace_only_flashdecode_combine(struct attn_data *d, struct trace_ctx *t);
