#pragma once

/*
 * What the public interface (include/memsim/) stands on: its opaque structs over the
 * simulator's own (sim/, traces/). Internal: programs outside memsim see only the public
 * headers.
 */

#include <stdbool.h>
#include <stddef.h>

#include "sim/cache.h"
#include "sim/spec.h"
#include "sim/trace.h"
#include "traces/mtrace.h"

struct memsim_hierarchy {
	struct spec spec;
	struct cache *cache; /* never NULL: "none" has a model of no level */
	/* Traces feeding cache and not finished: their trace_ctx holds this model, so
	 * memsim_hierarchy_reset() refuses to replace it while any is. */
	unsigned live_traces;
};

struct memsim_trace {
	struct memsim_hierarchy *h; /* not owned; may be NULL (recording only) */
	struct trace_ctx *ctx;
	struct mtrace_writer *rec; /* the recording, or NULL */
	bool finished;
	bool live; /* counted in h->live_traces */
	/* The first access refused (its range wraps past 2^64), or "": memsim_trace_finish()
	 * reports it, and memsim's plugin runner after run(). */
	char error[128];
	/* The names memsim_array() declared: a name once a trace (the per-array counts are
	 * keyed by it). */
	char names[64][32];
	unsigned nnames;
};

/* Where a public function's message goes: err, or scratch when the caller gave no buffer (NULL
 * or 0 bytes), so that no layer below writes into one the caller did not give. */
static inline void
api_err_buffer(char **err, size_t *errlen, char *scratch, size_t scratch_len)
{
	if (!*err || *errlen == 0) {
		*err = scratch;
		*errlen = scratch_len;
	}
}
