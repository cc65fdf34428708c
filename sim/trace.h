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

#include "base/util.h"
#include "sim/cache.h"
#include "sim/trace_types.h"

#define TRACE_MAX_MERGE 65535u

struct trace_state;

/* The merge state and the L1 fast path are public so the per-access check inlines into
 * kernels; everything else lives behind `state`. Fields are owned by sim/trace.c. */
struct trace_ctx {
	/* Live L1 fast path (cache_fast_l1()): a load or store inside one line settles here,
	 * with a hit on its set's most recent slot fully inline. Counts wait in fast_ops and
	 * fast_bytes until trace_flush(). */
	int fast;
	unsigned line_shift;
	struct cache_fast_l1 l1;
	uint64_t fast_ops[2], fast_bytes[2];
	/* Merging, where the fast path does not apply. */
	uint64_t pend_line; /* line of the pending merged access; UINT64_MAX when none */
	uint64_t pend_addr; /* the first access of the run */
	uint32_t pend_size;
	uint32_t pend_count;
	uint64_t pend_bytes;
	uint32_t pend_op;
	int merge; /* 0 when merging is not exact or while recording: all take the slow path */
	/* Scratch arrays are counted here, never sent to the model: [scratch_lo, +scratch_len)
	 * spans them all (0 long while recording, when every access goes to the writer). */
	uint64_t scratch_lo, scratch_len;
	/* Progress (trace_pace()): accesses in [pace_lo, pace_lo + pace_len) that reach the
	 * out-of-line paths count pace_tick down; 0 long when no progress is shown. */
	uint64_t pace_lo, pace_len;
	uint32_t pace_tick;
	struct trace_state *state;
};

/* Where a recording context sends what the kernel declares and does, unmerged. The tracing
 * layer knows a trace file only through this; traces/mtrace.h gives one for memsim's format.
 * array and phase return the new index (>= 0) or a negative errno. */
struct trace_sink {
	void *ctx;
	int (*array)(void *ctx, const char *name, uint64_t base, uint64_t bytes,
		     enum trace_space space);
	int (*phase)(void *ctx, const char *name);
	void (*set_phase)(void *ctx, int phase);
	void (*access)(void *ctx, enum trace_event_kind kind, uint64_t addr, uint32_t size,
		       uint32_t count);
};

/* Creates a context feeding cache c and/or sink (either may be NULL, not both); neither is
 * owned, *sink is copied. tiles_in_scratch places TRACE_SPACE_TILE arrays in scratch. Caller
 * frees with trace_ctx_destroy(), which first hands over any pending merged access. */
struct trace_ctx *trace_ctx_create(struct cache *c, const struct trace_sink *sink,
				   int tiles_in_scratch);
void trace_ctx_destroy(struct trace_ctx *t);

/*
 * Where a run stands, read off the addresses it reaches, for the progress line (base/progress.h):
 * one entry per phase, in the order the kernel starts them, naming the array its accesses walk
 * forward through (the first access to each new line of it reaches the tracing layer's
 * out-of-line path, which compares the address with one range, so the cost is nil when off). A
 * phase's fraction is the furthest unit of the array reached; changes no count.
 */
struct trace_pace {
	const void *p; /* the array [p, p + bytes); NULL: the phase moves by phases alone */
	uint64_t bytes;
	uint64_t region_bytes; /* the part one head walks (0: all of it) ... */
	unsigned passes;       /* ... this many times in a row (GQA's heads of one K; proj's x) */
	uint64_t unit_bytes;   /* one unit of work in a walk: a query block's rows, a head's */
	double weight;         /* the phase's share of the run, relative to the others' */
	const char *unit;      /* static: "query blocks", "heads" */
};

#define TRACE_PACE_MAX 4

/* Reports progress (progress_report()) as the phases of pace[0 .. n) run; n <= TRACE_PACE_MAX,
 * and is a no-op unless progress is on (progress_enabled()). */
void trace_pace(struct trace_ctx *t, const struct trace_pace *pace, unsigned n);
/* The countdown's end: where the access at addr puts the run. */
void trace_paced(struct trace_ctx *t, uint64_t addr);

static ALWAYS_INLINE void
trace_pace_check(struct trace_ctx *t, uint64_t addr)
{
	if (addr - t->pace_lo < t->pace_len && --t->pace_tick == 0)
		trace_paced(t, addr);
}

/* Hands the pending merged access to the model; call before reading its counters. */
void trace_flush(struct trace_ctx *t);

/* Declares an array; returns 0 or a negative errno (too many arrays). */
int trace_array(struct trace_ctx *t, const char *name, const void *p, size_t bytes,
		enum trace_space space);
/* Starts a phase (declared on first use, found again in O(1)). Returns 0, or -ENOSPC past
 * CACHE_MAX_PHASES phases (the current phase then stays). */
int trace_phase(struct trace_ctx *t, const char *name);

void trace_access_slow(struct trace_ctx *t, uint64_t addr, size_t bytes, enum cache_op op);
/* An access inside the scratch span: counted against its scratch array and true, or false
 * for an address between scratch arrays. n accesses of bytes in all. */
bool trace_scratch(struct trace_ctx *t, uint64_t addr, uint64_t n, uint64_t bytes,
		   enum cache_op op);

/* True when [p, p + bytes) lies inside one declared scratch array (never while recording). */
bool trace_scratch_holds(const struct trace_ctx *t, const void *p, size_t bytes);
/* For callers that tally scratch accesses in bulk: adds `accesses` loads or stores of `bytes`
 * in all to the scratch array holding p, as that many trace_scratch() calls would. Returns
 * false, counting nothing, when p lies in no scratch array. */
bool trace_scratch_add(struct trace_ctx *t, const void *p, uint64_t accesses, uint64_t bytes,
		       enum cache_op op);

/* n accesses of elem bytes each at p, p + elem, ..., p + (n - 1) elem, all inside one declared
 * array: counted exactly as n trace_access() calls in a row, with the work done once per line
 * where the model allows it (see sim/trace.c). */
void trace_run(struct trace_ctx *t, const void *p, uint32_t elem, uint64_t n, enum cache_op op);

/* trace_run() of each of `rows` rows stride bytes apart from p, in order; a feed model
 * (sim/drive/feed.h) gets them as one event that every slice cuts. */
void trace_run_rows(struct trace_ctx *t, const void *p, uint32_t elem, uint64_t n, uint64_t rows,
		    uint64_t stride, enum cache_op op);

/* n accesses in order, exactly as n trace_access() calls: access i is sizes[i] bytes (sizes
 * NULL: size) at addrs[i], a store where writes[i] != 0 (writes NULL: where write != 0).
 * Every size is 1 or more and no range wraps (the caller checks). */
void trace_access_batch(struct trace_ctx *t, size_t n, const uint64_t *addrs, const uint32_t *sizes,
			const uint8_t *writes, uint32_t size, int write);

/* The fast path's access that misses slot 0 of its set. */
void trace_access_older(struct trace_ctx *t, uint64_t addr, uint32_t bytes, unsigned op,
			uint64_t *set, uint64_t line);

static ALWAYS_INLINE void
trace_access(struct trace_ctx *t, const void *p, size_t bytes, enum cache_op op)
{
	uint64_t a = (uint64_t)(uintptr_t)p;
	uint64_t line = a >> t->line_shift;

	if (a - t->scratch_lo < t->scratch_len && trace_scratch(t, a, 1, bytes, op))
		return;
	if (t->fast && ((a + bytes - 1) >> t->line_shift) == line && bytes) {
		uint64_t *set = cache_fast_set(&t->l1, line);
		unsigned w = op == CACHE_OP_STORE;

		t->fast_ops[w]++;
		t->fast_bytes[w] += bytes;
		if (!cache_fast_hit_recent(set, line, w))
			trace_access_older(t, a, (uint32_t)bytes, w, set, line);
		return;
	}
	if (t->merge && line == t->pend_line && op == t->pend_op &&
	    ((a + bytes - 1) >> t->line_shift) == line && t->pend_count < TRACE_MAX_MERGE) {
		t->pend_count++;
		t->pend_bytes += bytes;
		return;
	}
	trace_access_slow(t, a, bytes, op);
}

/* One array a loop walks element by element (see TR_ZIP). */
struct trace_stream {
	const void *p;
	uint32_t elem; /* bytes per element */
	uint32_t op;   /* enum cache_op */
};

#define TRACE_ZIP_MAX 8

/*
 * Reports a loop of n iterations whose iteration k touches element k of each stream, in
 * stream order (loads before the stores of the same iteration, as the code reads): counted
 * exactly as those n x ns trace_access() calls, element by element, the order a recording
 * holds and a replay sees. The work is done once per line where that is provably the same
 * (see sim/trace.c). At most TRACE_ZIP_MAX streams.
 */
void trace_zip(struct trace_ctx *t, uint64_t n, const struct trace_stream *s, unsigned ns);

#ifdef MEMSIM_NATIVE
#define TR_UNUSED(x) ((void)sizeof(x))
#define TR_ARRAY(t, name, p, bytes, space) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_PHASE(t, name) TR_UNUSED(t)
#define TR_LOAD(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_STORE(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_LOAD_SPAN(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_STORE_SPAN(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_ZIP(t, n, ...) (TR_UNUSED(t), TR_UNUSED(n))
#else
#define TR_ARRAY(t, name, p, bytes, space) trace_array((t), (name), (p), (bytes), (space))
#define TR_PHASE(t, name) trace_phase((t), (name))
#define TR_LOAD(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_LOAD)
#define TR_STORE(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_STORE)
#define TR_LOAD_SPAN(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_LOAD)
#define TR_STORE_SPAN(t, p, bytes) trace_access((t), (p), (bytes), CACHE_OP_STORE)
#define TR_ZIP(t, n, ...)                                                                          \
	trace_zip((t), (n), (const struct trace_stream[]){ __VA_ARGS__ },                          \
		  sizeof((const struct trace_stream[]){ __VA_ARGS__ }) /                           \
			  sizeof(struct trace_stream))
#endif

/* Streams of TR_ZIP: a typed pointer, or an untyped one with its element size. */
#define TR_IN(p)                                                                                   \
	{                                                                                          \
		(p), sizeof(*(p)), CACHE_OP_LOAD                                                   \
	}
#define TR_OUT(p)                                                                                  \
	{                                                                                          \
		(p), sizeof(*(p)), CACHE_OP_STORE                                                  \
	}
#define TR_IN_N(p, elem)                                                                           \
	{                                                                                          \
		(p), (elem), CACHE_OP_LOAD                                                         \
	}
#define TR_OUT_N(p, elem)                                                                          \
	{                                                                                          \
		(p), (elem), CACHE_OP_STORE                                                        \
	}

/* One element through a typed pointer. */
#define TR_LOAD_ELEM(t, p) TR_LOAD((t), (p), sizeof(*(p)))
#define TR_STORE_ELEM(t, p) TR_STORE((t), (p), sizeof(*(p)))
