#pragma once

/*
 * exp() for the kernels' softmax, inline. A libm call per score would bring into the kernel's
 * innermost loop data accesses that are not the kernel's: libm's tables, the PLT's pointer to
 * expf and the registers spilled around every call. On a CPU they compete with the tiles for
 * L1, and a C-level trace cannot see them. CPU attention kernels use an inline polynomial for
 * the same reason (speed); so do these.
 *
 * exp(x) = 2^k exp(r), k = round(x / ln 2), r = x - k ln 2 (ln 2 split in two so r is exact),
 * exp(r) by Cephes' degree-6 minimax polynomial for |r| <= ln2 / 2: relative error below
 * one fp32 ulp (8.1e-8 seen, against exp() in double over [-87, 0] in tests/test-kernels.c).
 * Inputs below -87.3 (and -inf, a masked score) give 0, past 88 +inf; the kernels pass x <= 0.
 */

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/util.h"

static ALWAYS_INLINE float
attn_exp(float x)
{
	const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
	float r, rr, p, scale;
	int32_t k;
	uint32_t bits;

	if (!(x > -87.3f)) /* also NaN: never produced, kept finite */
		return 0.0f;
	if (x > 88.0f)
		return INFINITY;
	/* round to nearest; a conversion, not floorf(), so no libm call */
	k = (int32_t)(x * log2e + (x < 0 ? -0.5f : 0.5f));
	r = x - (float)k * ln2_hi;
	r = r - (float)k * ln2_lo;
	rr = r * r;
	p = 1.9875691500e-4f;
	p = p * r + 1.3981999507e-3f;
	p = p * r + 8.3334519073e-3f;
	p = p * r + 4.1665795894e-2f;
	p = p * r + 1.6666665459e-1f;
	p = p * r + 5.0000001201e-1f;
	p = p * rr + r + 1.0f;
	bits = (uint32_t)(k + 127) << 23;
	memcpy(&scale, &bits, sizeof(scale));
	return p * scale;
}
