#pragma once

/*
 * Helpers shared by the kernels (compiled into both builds): moving rows between memory
 * arrays in the storage dtype and fp32 tiles, dot products, row updates. Each helper does its
 * loop and reports it with one TR_ZIP naming the arrays the loop walks, in the order the loop
 * body touches them: per cache set the traced lines are those the native loop touches, in
 * the same order, so Cachegrind on the native build and memsim on the traced one see the
 * same line sequence (up to the compiler's spills and libm's tables). Stores are reported
 * element-sized: a write-allocate cache fetches the line (read for ownership) as it does for
 * a CPU's scalar stores. Every helper is always inlined, so the native kernel's accesses stay
 * inside the kernel's own function (what Cachegrind's per-function counts read).
 */

#include <math.h>

#include "base/util.h"
#include "kernels/attn.h"
#include "kernels/exp.h"
#include "kernels/names.h"
#include "sim/trace.h"

/* Element offset of row r of head h in batch b of a [batch][nh][N][d] array, in bytes. */
static ALWAYS_INLINE char *
head_row(void *base, uint64_t b, uint64_t h, uint64_t nh, uint64_t N, uint64_t d, uint64_t r,
	 enum attn_dtype t)
{
	return (char *)base + (((b * nh + h) * N + r) * d) * dtype_bytes(t);
}

/* An operand of proj's products: where row n, column j of a product lands, and where row n,
 * column k of its input is. */
struct operand {
	void *base;
	bool heads;  /* [batch][heads][N][d] split by head, else [batch][N][width] */
	uint64_t nh; /* heads of the split layout */
	uint64_t width;
};

static ALWAYS_INLINE char *
operand_at(const struct operand *o, uint64_t b, uint64_t n, uint64_t col, uint64_t N, uint64_t d,
	   enum attn_dtype dt)
{
	if (o->heads)
		return head_row(o->base, b, col / d, o->nh, N, d, n, dt) +
		       (col % d) * dtype_bytes(dt);
	return (char *)o->base + ((b * N + n) * o->width + col) * dtype_bytes(dt);
}

/* tile[r][0 .. n) = src row r, for r < nr; src rows are src_stride elements apart. A loop,
 * not memcpy: the kernel's accesses stay in its own function. */
static ALWAYS_INLINE void
tile_load(struct trace_ctx *t, float *tile, uint64_t tile_stride, const void *src,
	  uint64_t src_stride, uint64_t nr, uint64_t n, enum attn_dtype dt)
{
	unsigned s = dtype_bytes(dt);

	for (uint64_t r = 0; r < nr; r++) {
		const char *row = (const char *)src + r * src_stride * s;
		float *dst = tile + r * tile_stride;

		for (uint64_t k = 0; k < n; k++)
			dst[k] = dtype_load(row, k, dt);
		TR_ZIP(t, n, TR_IN_N(row, s), TR_OUT(dst));
	}
}

/* Paged K/V (cfg.kv_page = P): the block-table entries of the pages holding key rows
 * [c0, c0 + nc) of batch b, read into pages[0 ..) (one stream of int32 loads, as a kernel
 * reads them into registers when it loads a key block). Returns the first page's index. */
static ALWAYS_INLINE uint64_t
kv_pages_read(struct trace_ctx *t, const struct attn_data *d, uint64_t b, uint64_t c0, uint64_t nc,
	      int32_t *pages)
{
	const uint64_t P = d->cfg.kv_page, p0 = c0 / P, n = (c0 + nc - 1) / P - p0 + 1;
	const int32_t *row = d->block_table + b * attn_pages(&d->cfg) + p0;

	for (uint64_t i = 0; i < n; i++)
		pages[i] = row[i];
	TR_ZIP(t, n, TR_IN_N(row, sizeof(*row)));
	return p0;
}

/* tile_load() of key rows [c0, c0 + nc) of batch b, kv head kvh of K or V (base) into tile
 * (rows d apart): one run of rows unpaged; paged, one run per page, rows kv_heads x d apart,
 * at the physical pages pages[] names (from kv_pages_read(), the first for page p0). */
static ALWAYS_INLINE void
kv_tile_load(struct trace_ctx *t, const struct attn_data *d, float *tile, const void *base,
	     uint64_t b, uint64_t kvh, uint64_t c0, uint64_t nc, const int32_t *pages, uint64_t p0)
{
	const struct attn_config *c = &d->cfg;
	const uint64_t D = c->d, P = c->kv_page;
	const unsigned s = dtype_bytes(c->dtype);

	if (!P) {
		tile_load(t, tile, D,
			  head_row((void *)base, b, kvh, c->kv_heads, attn_nkv(c), D, c0, c->dtype),
			  D, nc, D, c->dtype);
		return;
	}
	for (uint64_t j = c0; j < c0 + nc;) {
		uint64_t n = P - j % P < c0 + nc - j ? P - j % P : c0 + nc - j;
		uint64_t row = (((uint64_t)pages[j / P - p0] * P + j % P) * c->kv_heads + kvh) * D;

		tile_load(t, tile + (j - c0) * D, D, (const char *)base + row * s, c->kv_heads * D,
			  n, D, c->dtype);
		j += n;
	}
}

/* dst[0 .. n) = src[0 .. n), dst a memory row in the storage dtype. */
static ALWAYS_INLINE void
row_store(struct trace_ctx *t, void *dst, const float *src, uint64_t n, enum attn_dtype dt)
{
	for (uint64_t k = 0; k < n; k++)
		dtype_store(dst, k, src[k], dt);
	TR_ZIP(t, n, TR_IN(src), TR_OUT_N(dst, dtype_bytes(dt)));
}

/* Element i of a memory row in the storage dtype = v. */
static ALWAYS_INLINE void
elem_store(struct trace_ctx *t, void *row, uint64_t i, float v, enum attn_dtype dt)
{
	unsigned s = dtype_bytes(dt);

	dtype_store(row, i, v, dt);
	TR_STORE(t, (char *)row + i * s, s);
}

/* One fp32 element, read or written. */
static ALWAYS_INLINE float
get(struct trace_ctx *t, const float *p)
{
	TR_LOAD_ELEM(t, p);
	return *p;
}

static ALWAYS_INLINE void
put(struct trace_ctx *t, float *p, float v)
{
	*p = v;
	TR_STORE_ELEM(t, p);
}

/* y[0 .. n) = 0 */
static ALWAYS_INLINE void
zero(struct trace_ctx *t, float *y, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		y[k] = 0;
	TR_ZIP(t, n, TR_OUT(y));
}

/* Sum of a[k] * b[k]; four partial sums keep the FMA chain short. */
static ALWAYS_INLINE float
dot(struct trace_ctx *t, const float *a, const float *b, uint64_t n)
{
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	uint64_t k = 0;

	TR_ZIP(t, n, TR_IN(a), TR_IN(b));
	for (; k + 4 <= n; k += 4) {
		s0 += a[k] * b[k];
		s1 += a[k + 1] * b[k + 1];
		s2 += a[k + 2] * b[k + 2];
		s3 += a[k + 3] * b[k + 3];
	}
	for (; k < n; k++)
		s0 += a[k] * b[k];
	return (s0 + s1) + (s2 + s3);
}

/* y[0 .. n) += a * x[0 .. n) */
static ALWAYS_INLINE void
axpy(struct trace_ctx *t, float *y, float a, const float *x, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		y[k] += a * x[k];
	TR_ZIP(t, n, TR_IN(y), TR_IN(x), TR_OUT(y));
}

/* y[0 .. n) *= a */
static ALWAYS_INLINE void
scale_row(struct trace_ctx *t, float *y, float a, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		y[k] *= a;
	TR_ZIP(t, n, TR_IN(y), TR_OUT(y));
}

/*
 * The online-softmax kernels' score step: srow[j] = q . k_j * scale for the nc key rows of
 * the K tile (kt, rows d apart), -inf where the causal mask hides key c0 + j from query qi.
 * Returns the row maximum (-inf when every key is masked).
 */
static ALWAYS_INLINE float
score_row(struct trace_ctx *t, float *srow, const float *q, const float *kt, uint64_t d,
	  uint64_t nc, uint64_t c0, uint64_t qi, bool causal, float scale)
{
	float rmax = -INFINITY;

	for (uint64_t j = 0; j < nc; j++) {
		float v = -INFINITY;

		if (!causal || c0 + j <= qi)
			v = dot(t, q, kt + j * d, d) * scale;
		put(t, &srow[j], v);
		rmax = v > rmax ? v : rmax;
	}
	return rmax;
}
