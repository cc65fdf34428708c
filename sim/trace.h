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
#include "sim/trace_types.h"
#include "sim/util.h"

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
	int merge;     /* 0 when merging is not exact or while recording: all take the slow path */
	int zip_lines; /* TR_ZIP reports lines, not elements (see trace_zip()) */
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
 * Where a run stands, read off the addresses it reaches, for the progress line (sim/progress.h):
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
 * (sim/cache_feed.h) gets them as one event that every slice cuts. */
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

static inline void
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

/* The accesses trace_zip() counts for a stream of n elements of elem bytes from address a that
 * lies wholly in a scratch array: one per line it spans, a store's lines two each (its first
 * element, then the rest) once it has more elements than lines; every element when TR_ZIP
 * reports elements. Callers that tally scratch loops in bulk count with this too. */
static inline uint64_t
trace_zip_scratch_accesses(const struct trace_ctx *t, uint64_t a, uint64_t n, uint64_t elem,
			   enum cache_op op)
{
	uint64_t lines;

	if (!t->zip_lines || n == 0)
		return n;
	lines = ((a + n * elem - 1) >> t->line_shift) - (a >> t->line_shift) + 1;
	return op == CACHE_OP_STORE && n > lines ? 2 * lines : lines;
}

/*
 * Reports a loop of n iterations whose iteration k touches element k of each stream, in
 * stream order (loads before the stores of the same iteration, as the code reads). Each
 * stream's lines are reported once, at the iteration that first reaches them: a load as the
 * rest of the line, a store as its first element and then the rest, so a write-allocate
 * cache fetches the line as for a CPU's scalar stores and a write-validate one sees every
 * byte written. Per cache set this is the sequence of lines the loop touches, less
 * repeated touches of lines already present. Under LRU or FIFO with 4 ways or more that gives
 * the same misses, fills and write-backs as touching every element when each stream's rows
 * are whole lines (the kernels' fp32 rows with d a multiple of 16); rows that share lines can
 * differ in the recency order of two resident lines of a set (under 1% of the misses,
 * tests/test-trace-layer.c). A fully associative L1 (however spelled) gets every element,
 * the order the exact formulas count. With fewer ways (two streams ping-ponging in one set),
 * tree-PLRU (every hit moves its state), random replacement (one generator for all sets, so
 * the order of misses across sets matters), and while recording a trace for replays under
 * other caches, every element is reported instead. Lines are L1's (64 B without a cache). At most
 * TRACE_ZIP_MAX streams.
 */
static inline void
trace_zip(struct trace_ctx *t, uint64_t n, const struct trace_stream *s, unsigned ns)
{
	uint64_t next[TRACE_ZIP_MAX] = { 0 }, k = 0;
	const uint64_t line = UINT64_C(1) << t->line_shift;

	if (ns > TRACE_ZIP_MAX)
		ns = TRACE_ZIP_MAX;
	/* A stream wholly in a scratch array never reaches the model: its bytes in one go, its
	 * accesses counted as the line-by-line report below would make them. */
	for (unsigned i = 0; i < ns; i++) {
		uint64_t a = (uint64_t)(uintptr_t)s[i].p, len = n * s[i].elem;

		if (n && a - t->scratch_lo < t->scratch_len &&
		    a + len - 1 - t->scratch_lo < t->scratch_len) {
			uint64_t acc = trace_zip_scratch_accesses(t, a, n, s[i].elem,
								  (enum cache_op)s[i].op);

			if (trace_scratch(t, a, acc, len, (enum cache_op)s[i].op)) {
				struct trace_stream rest[TRACE_ZIP_MAX];
				unsigned m = 0;

				for (unsigned j = 0; j < ns && m < TRACE_ZIP_MAX; j++)
					if (j != i)
						rest[m++] = s[j];
				if (m)
					trace_zip(t, n, rest, m);
				return;
			}
		}
	}
	if (!t->zip_lines) {
		for (k = 0; k < n; k++)
			for (unsigned i = 0; i < ns; i++)
				trace_access(t, (const char *)s[i].p + k * s[i].elem, s[i].elem,
					     (enum cache_op)s[i].op);
		return;
	}
	while (k < n) {
		uint64_t kn = n;

		for (unsigned i = 0; i < ns; i++) {
			if (next[i] == k) {
				uint64_t a = (uint64_t)(uintptr_t)s[i].p + k * s[i].elem;
				uint64_t rest = line - (a & (line - 1));
				uint64_t e =
					k + (is_pow2(s[i].elem)
						     ? (rest + s[i].elem - 1) >> log2_u64(s[i].elem)
						     : (rest + s[i].elem - 1) / s[i].elem);

				if (e > n)
					e = n;
				uint64_t bytes = (e - k) * s[i].elem;
				enum cache_op op = (enum cache_op)s[i].op;

				if (bytes > rest)
					bytes = rest; /* a straddling last element */
				if (op == CACHE_OP_STORE && bytes > s[i].elem) {
					/* The first element alone, as a scalar store: a
					 * write-allocate miss fetches the line. */
					trace_access(t, (const void *)(uintptr_t)a, s[i].elem, op);
					a += s[i].elem;
					bytes -= s[i].elem;
				}
				trace_access(t, (const void *)(uintptr_t)a, bytes, op);
				next[i] = e;
			}
			if (next[i] < kn)
				kn = next[i];
		}
		k = kn;
	}
}

/* A TR_ZIP of one stream (n elements of elem bytes from a row) for each of `rows` rows stride
 * bytes apart from p, in order; a feed model gets them as one event that every slice cuts. */
void trace_zip_rows(struct trace_ctx *t, const void *p, uint32_t elem, uint64_t n, uint64_t rows,
		    uint64_t stride, enum cache_op op);

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
