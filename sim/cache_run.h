#pragma once

/*
 * A run of accesses in rows, as the tracing layer reports a tile or a matrix row: rows rows
 * stride bytes apart, n elements of elem bytes each from addr, in order. A feed model
 * (sim/drive/feed.h) hands one as a single event to every slice that owns a chunk of it, and
 * each slice cuts out the lines in its own chunks, so the producer no longer walks the lines.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sim/cache.h"

enum cache_run_kind {
	CACHE_RUN_ELEMS,  /* every element an access of its own (trace_access() each) */
	CACHE_RUN_MERGED, /* every element, the elements of a line merged into one access */
};

struct cache_run {
	uint64_t addr, stride; /* the first row, and the bytes from a row to the next */
	uint32_t elem, n, rows;
	uint8_t op;         /* CACHE_OP_LOAD or CACHE_OP_STORE */
	uint8_t kind;       /* enum cache_run_kind */
	uint8_t line_shift; /* the lines of CACHE_RUN_MERGED */
};

/* Whether r's elements never straddle a line: elem a power of two no larger than a line,
 * addr and stride multiples of it, and at least one element and row. */
bool cache_run_aligned(const struct cache_run *r);

/* Chunks of a run split by set fall in classes, chunk index & mask (mask + 1 a power of two
 * up to CACHE_CLASSES_MAX). A pattern of classes has bit j set for class j & mask, repeated
 * over all its bits: a chunk is in it where bit index & (CACHE_CLASSES_MAX - 1) is set. */
typedef unsigned __int128 cache_classes;
#define CACHE_CLASSES_ALL (~(cache_classes)0)

/* The most pieces of a row a struct cache_run_memo keeps. */
#define CACHE_RUN_MEMO_PIECES 256

/* One slice's pieces of the last long row it walked (rows that follow each other, taken as one)
 * as offsets from its first byte: a row at the same place in the round of classes, of the
 * same length, has the same, so they are given again without walking its chunks. */
struct cache_run_memo {
	uint64_t at, len; /* the row's first byte modulo the round of classes' bytes; bytes */
	unsigned shifts;  /* chunk and line shifts, + 1 (0: nothing kept) */
	unsigned n;
	uint32_t off[CACHE_RUN_MEMO_PIECES], bytes[CACHE_RUN_MEMO_PIECES];
};

/* The classes of the chunks of 2^chunk_shift bytes that r touches: a slice whose pattern
 * shares no bit with it gets nothing of r. */
cache_classes cache_run_classes(const struct cache_run *r, unsigned chunk_shift);
/* The accesses of r (aligned) in the chunks of 2^chunk_shift bytes in the classes `owned`, in
 * order, to c: what c gets of r as one slice of a run split by set (CACHE_CLASSES_ALL with
 * mask 0: every chunk). memo, zeroed before the first call, may be NULL. */
void cache_access_run(struct cache *c, const struct cache_run *r, unsigned chunk_shift,
		      uint64_t mask, cache_classes owned, struct cache_run_memo *memo);
