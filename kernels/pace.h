#pragma once

/*
 * The progress line of a traced kernel run (base/progress.h): which array each phase of each
 * kernel walks forward through, and in what units, read by the tracing layer (trace_pace()).
 * Kept here, beside the kernels' loop orders, not in their bodies.
 */

#include "kernels/attn.h"
#include "sim/trace.h"

/* Starts the progress task of d's kernel on t (a no-op unless progress is on); end it with
 * progress_end() once the kernel returns. */
void attn_pace(const struct attn_data *d, struct trace_ctx *t);
