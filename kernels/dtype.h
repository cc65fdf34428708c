#pragma once

/*
 * Storage types of the attention kernels: fp32, fp16 (IEEE binary16, _Float16) and bf16
 * (bfloat16, kept as uint16_t). Kernels compute in fp32; these convert rows at the edges.
 * Conversions round to nearest even.
 */

#include <stdint.h>
#include <string.h>

#include "base/util.h"

enum attn_dtype {
	ATTN_FP32 = 0,
	ATTN_FP16,
	ATTN_BF16,
};

static ALWAYS_INLINE unsigned
dtype_bytes(enum attn_dtype t)
{
	return t == ATTN_FP32 ? 4 : 2;
}

static ALWAYS_INLINE uint16_t
float_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN stays a (quiet) NaN */
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1); /* round to nearest even */
	return (uint16_t)(u >> 16);
}

static ALWAYS_INLINE float
bf16_to_float(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Element i of a row of type t, as fp32. */
static ALWAYS_INLINE float
dtype_load(const void *row, uint64_t i, enum attn_dtype t)
{
	switch (t) {
	case ATTN_FP16:
		return (float)((const _Float16 *)row)[i];
	case ATTN_BF16:
		return bf16_to_float(((const uint16_t *)row)[i]);
	default:
		return ((const float *)row)[i];
	}
}

static ALWAYS_INLINE void
dtype_store(void *row, uint64_t i, float v, enum attn_dtype t)
{
	switch (t) {
	case ATTN_FP16:
		((_Float16 *)row)[i] = (_Float16)v;
		break;
	case ATTN_BF16:
		((uint16_t *)row)[i] = float_to_bf16(v);
		break;
	default:
		((float *)row)[i] = v;
		break;
	}
}

