#pragma once

/*
 * The tracing layer that kernels are written against.
 *
 * A kernel declares its arrays (name, address range, memory space) and phases, and reports
 * every load and store with TR_LOAD / TR_STORE (one element) or TR_LOAD_SPAN / TR_STORE_SPAN
 * (a contiguous range, split into the lines it touches by the cache model). Compiled with
 * MEMSIM_NATIVE defined, every TR_* macro compiles to nothing, so the same kernel source
 * gives the native build (timing, PAPI, Cachegrind) and the traced build.
 *
 * In the traced build the accesses go to a live cache model, to a trace file, or both.
 * Consecutive accesses of one kind to the line just accessed are merged before they reach
 * the model when that is exact (cache_merge_is_exact(): a write-back, write-allocate L1, where
 * such a repeat is a hit that changes no state); the merged count keeps hit totals exact.
 * Traces are written unmerged, since a replay may use other lines and policies.
 *
 * Address ranges are half-open: [p, p + bytes).
 */

#include <stddef.h>
#include <stdint.h>

#include "sim/cache.h"
#include "traces/mtrace.h"
#include "traces/reader.h"

#define TRACE_MAX_MERGE 65535u

struct trace_state;

/* The merge state is public so the per-access check inlines into kernels; everything else
 * lives behind `state`. Fields are owned by sim/trace.c. */
struct trace_ctx {
	uint64_t pend_line; /* line of the pending merged access; UINT64_MAX when none */
	uint64_t pend_addr; /* the first access of the run */
	uint32_t pend_size;
	uint32_t pend_count;
	uint64_t pend_bytes;
	uint32_t pend_op;
	unsigned line_shift;
	int merge; /* 0 when merging is not exact or while recording: all take the slow path */
	struct trace_state *state;
};

/* Creates a context feeding cache c and/or writer w (either may be NULL, not both); neither is
 * owned. tiles_in_scratch places TRACE_SPACE_TILE arrays in scratch. Caller frees with
 * trace_ctx_destroy(), which first hands over any pending merged access. */
struct trace_ctx *trace_ctx_create(struct cache *c, struct mtrace_writer *w, int tiles_in_scratch);
void trace_ctx_destroy(struct trace_ctx *t);

/* Hands the pending merged access to the model; call before reading its counters. */
void trace_flush(struct trace_ctx *t);

/* Declares an array; returns 0 or a negative errno (too many arrays). */
int trace_array(struct trace_ctx *t, const char *name, const void *p, size_t bytes,
		enum trace_space space);
/* Starts a phase (declared on first use). */
void trace_phase(struct trace_ctx *t, const char *name);

void trace_access_slow(struct trace_ctx *t, uint64_t addr, size_t bytes, enum cache_op op);

static inline void
trace_access(struct trace_ctx *t, const void *p, size_t bytes, enum cache_op op)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	uint64_t line = a >> t->line_shift;

	if (t->merge && line == t->pend_line && op == t->pend_op &&
	    ((a + bytes - 1) >> t->line_shift) == line && t->pend_count < TRACE_MAX_MERGE) {
		t->pend_count++;
		t->pend_bytes += bytes;
		return;
	}
	trace_access_slow(t, a, bytes, op);
}

#ifdef MEMSIM_NATIVE
#define TR_UNUSED(x) ((void)sizeof(x))
#define TR_ARRAY(t, name, p, bytes, space) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_PHASE(t, name) TR_UNUSED(t)
#define TR_LOAD(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_STORE(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_LOAD_SPAN(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_STORE_SPAN(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#else
#define TR_ARRAY(t, name, p, bytes, space) trace_array((t), (name), (p), (bytes), (space))
#define TR_PHASE(t, name) trace_phase((t), (name))
#define TR_LOAD(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_LOAD)
#define TR_STORE(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_STORE)
#define TR_LOAD_SPAN(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_LOAD)
#define TR_STORE_SPAN(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_STORE)
#endif

/* One element through a typed pointer. */
#define TR_LOAD_ELEM(t, p) TR_LOAD((t), (p), sizeof(*(p)))
#define TR_STORE_ELEM(t, p) TR_STORE((t), (p), sizeof(*(p)))
