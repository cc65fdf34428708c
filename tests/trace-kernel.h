#pragma once

#include <stddef.h>

#include "sim/trace.h"

void tk_matmul_native(struct trace_ctx *t, const float *a, const float *b, float *c, float *tile,
		      size_t n);
void tk_matmul_traced(struct trace_ctx *t, const float *a, const float *b, float *c, float *tile,
		      size_t n);
