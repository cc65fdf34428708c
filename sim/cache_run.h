#pragma once

/*
 * A run of accesses in rows, as the tracing layer reports a tile or a matrix row: rows rows
 * stride bytes apart, n elements of elem bytes each from addr, in order. A feed model
 * (sim/cache_feed.h) hands one to every slice as a single event, and each slice cuts out the
 * lines in its own chunks, so the producer no longer walks the lines.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sim/cache.h"

enum cache_run_kind {
	CACHE_RUN_ELEMS,  /* every element an access of its own (trace_access() each) */
	CACHE_RUN_MERGED, /* every element, the elements of a line merged into one access */
	CACHE_RUN_LINES,  /* TR_ZIP's lines: a load per line, a store as its first element and the
			   * rest (sim/trace.h trace_zip()) */
};

struct cache_run {
	uint64_t addr, stride; /* the first row, and the bytes from a row to the next */
	uint32_t elem, n, rows;
	uint8_t op;         /* CACHE_OP_LOAD or CACHE_OP_STORE */
	uint8_t kind;       /* enum cache_run_kind */
	uint8_t line_shift; /* the lines of CACHE_RUN_MERGED and CACHE_RUN_LINES */
};

/* Whether r's elements never straddle a line: elem a power of two no larger than a line,
 * addr and stride multiples of it, and at least one element and row. */
bool cache_run_aligned(const struct cache_run *r);

/* The accesses of one row of r starting at a (the processor's count of them). */
uint64_t cache_run_row_accesses(const struct cache_run *r, uint64_t a);

/* The accesses of all of r: the sum of its rows' cache_run_row_accesses(). */
uint64_t cache_run_accesses(const struct cache_run *r);

/* The classes of the chunks of 2^chunk_shift bytes that r touches, as a pattern over chunk
 * index & 63 (bit j: some chunk of r has index & 63 = j), as cache_access_run()'s owned: a
 * slice whose pattern shares no bit with it gets nothing of r. */
uint64_t cache_run_classes(const struct cache_run *r, unsigned chunk_shift);
/* The accesses of r (aligned) in the chunks of 2^chunk_shift bytes that `owned` marks, in
 * order, to c: what c gets of r as one slice of a run split by set. The chunks fall in mask + 1
 * classes (a power of two up to 64), index & mask; owned has bit j set where class j & mask is
 * c's, the pattern repeated over all 64 bits (~0 with mask 0: every chunk). */
void cache_access_run(struct cache *c, const struct cache_run *r, unsigned chunk_shift,
		      uint64_t mask, uint64_t owned);
