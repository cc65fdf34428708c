#pragma once

/*
 * Helpers shared by the kernels (compiled into both builds): moving rows between memory
 * arrays in the storage dtype and fp32 tiles, and dot products. Loads are traced as one span
 * per row; stores to memory arrays element by element, so a write-allocate cache sees the
 * read for ownership of a line's first store, as a CPU's scalar stores cause; stores into
 * tiles are traced as spans.
 */

#include <math.h>

#include "kernels/attn.h"
#include "sim/trace.h"

#ifdef MEMSIM_NATIVE
#define KERNEL(name) name##_native
#else
#define KERNEL(name) name##_traced
#endif

/* Element offset of row r of head h in batch b of a [batch][nh][N][d] array, in bytes. */
static inline char *
head_row(void *base, uint64_t b, uint64_t h, uint64_t nh, uint64_t N, uint64_t d, uint64_t r,
	 enum attn_dtype t)
{
	return (char *)base + (((b * nh + h) * N + r) * d) * dtype_bytes(t);
}

/* tile[r][0 .. n) = src row r, for r < nr; src rows are src_stride elements apart. */
static inline void
tile_load(struct trace_ctx *t, float *tile, uint64_t tile_stride, const void *src,
	  uint64_t src_stride, uint64_t nr, uint64_t n, enum attn_dtype dt)
{
	unsigned s = dtype_bytes(dt);

	for (uint64_t r = 0; r < nr; r++) {
		const char *row = (const char *)src + r * src_stride * s;
		float *dst = tile + r * tile_stride;

		TR_LOAD_SPAN(t, row, n * s);
		switch (dt) {
		case ATTN_FP16:
			for (uint64_t k = 0; k < n; k++)
				dst[k] = (float)((const _Float16 *)row)[k];
			break;
		case ATTN_BF16:
			for (uint64_t k = 0; k < n; k++)
				dst[k] = bf16_to_float(((const uint16_t *)row)[k]);
			break;
		default:
			memcpy(dst, row, n * sizeof(float));
			break;
		}
		TR_STORE_SPAN(t, dst, n * sizeof(float));
	}
}

/* dst[0 .. n) = src[0 .. n) in the storage dtype, one traced store per element. */
static inline void
row_store(struct trace_ctx *t, void *dst, const float *src, uint64_t n, enum attn_dtype dt)
{
	unsigned s = dtype_bytes(dt);

	switch (dt) {
	case ATTN_FP16:
		for (uint64_t k = 0; k < n; k++) {
			((_Float16 *)dst)[k] = (_Float16)src[k];
			TR_STORE(t, (char *)dst + k * s, s);
		}
		break;
	case ATTN_BF16:
		for (uint64_t k = 0; k < n; k++) {
			((uint16_t *)dst)[k] = float_to_bf16(src[k]);
			TR_STORE(t, (char *)dst + k * s, s);
		}
		break;
	default:
		for (uint64_t k = 0; k < n; k++) {
			((float *)dst)[k] = src[k];
			TR_STORE(t, (char *)dst + k * s, s);
		}
		break;
	}
}

/* One element of a memory array, stored and traced. */
static inline void
elem_store(struct trace_ctx *t, void *row, uint64_t i, float v, enum attn_dtype dt)
{
	unsigned s = dtype_bytes(dt);

	dtype_store(row, i, v, dt);
	TR_STORE(t, (char *)row + i * s, s);
}

/* Sum of a[k] * b[k]; four partial sums keep the FMA chain short. */
static inline float
dot(const float *a, const float *b, uint64_t n)
{
	float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	uint64_t k = 0;

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
static inline void
axpy(float *y, float a, const float *x, uint64_t n)
{
	for (uint64_t k = 0; k < n; k++)
		y[k] += a * x[k];
}

/*
 * The online-softmax kernels' score step: srow[j] = q . k_j * scale for the nc key rows of
 * the K tile (kt, rows d apart), -inf where the causal mask hides key c0 + j from query qi.
 * Returns the row maximum (-inf when every key is masked).
 */
static inline float
score_row(struct trace_ctx *t, float *srow, const float *q, const float *kt, uint64_t d,
	  uint64_t nc, uint64_t c0, uint64_t qi, bool causal, float scale)
{
	float rmax = -INFINITY;

	TR_LOAD_SPAN(t, q, d * sizeof(float));
	for (uint64_t j = 0; j < nc; j++) {
		float v = -INFINITY;

		TR_LOAD_SPAN(t, kt + j * d, d * sizeof(float));
		if (!causal || c0 + j <= qi)
			v = dot(q, kt + j * d, d) * scale;
		srow[j] = v;
		rmax = v > rmax ? v : rmax;
	}
	TR_STORE_SPAN(t, srow, nc * sizeof(float));
	return rmax;
}

/* Declares the kernel's memory arrays and tiles to the tracing layer. */
void KERNEL(attn_declare)(const struct attn_data *d, struct trace_ctx *t);

void KERNEL(attn_naive)(struct attn_data *d, struct trace_ctx *t);
void KERNEL(attn_flash1)(struct attn_data *d, struct trace_ctx *t);
void KERNEL(attn_flash2)(struct attn_data *d, struct trace_ctx *t);
void KERNEL(attn_proj)(struct attn_data *d, struct trace_ctx *t);
