#pragma once

/*
 * What the producer's and the slices' sides of a feed share (sim/cache_feed.c, sim/cache_feed.h):
 * the events in the rings, the rings, and the feed itself.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sim/cache_internal.h"
#include "sim/cache_run.h"

/* Events are struct cache_ref: an access (CACHE_OP_LOAD .. CACHE_OP_IFETCH) of size x count
 * bytes, or a header below and the events after it that carry its fields. */
enum {
	EV_MERGED = CACHE_OP_COUNT, /* addr, size, count the op; then addr bytes, size count */
	EV_ARRAY,                   /* addr base; then addr bytes; then the name */
	EV_PHASE,                   /* then the name */
	EV_SET_PHASE,               /* addr the phase */
	EV_HITS,                    /* addr loads; then addr stores: L1 hits the producer kept */
	EV_BELOW, /* addr, size a request below the levels above a one-pass model's swept one;
		   * then addr count | req << 32 | flags << 40 (cache_feed_attach_below()) */
	EV_RUN,   /* addr, size n, count op | kind << 2 | line_shift << 4 of a struct cache_run;
		   * then addr stride, size rows, kind elem (cache_feed_run()) */
};

/* Events a name takes (CACHE_NAME_MAX bytes). */
#define NAME_EVS (CACHE_NAME_MAX / sizeof(struct cache_ref))

#define FEED_BATCH 4096 /* events a batch: 64 KiB (larger and smaller measured slower) */
#define FEED_RING 8
/* Accesses a batch's runs may hold before it goes: a run of rows is two events but may carry
 * hundreds of a slice's accesses, and a batch of 4096 such would keep its slice busy for long
 * while the others run dry. About what flash2's tiles put in a batch on 8 threads. */
#define FEED_BATCH_WORK 65536

struct batch {
	struct cache_ref ev[FEED_BATCH];
	unsigned n;
	bool full; /* published, not yet consumed */
};

/* The chunks of 2^shift bytes a slice owns: those whose class, index & mask, is in the
 * pattern bits (sim/cache_run.h). */
struct owned {
	unsigned shift;
	uint64_t mask;
	cache_classes bits;
	struct cache_run_memo *memo; /* the slice's */
};

struct slice {
	struct cache_feed *f;
	struct cache *c;
	struct batch *ring;
	struct batch *cur;   /* being filled: ring[head % FEED_RING] */
	uint64_t head;       /* batches published */
	pthread_cond_t more; /* a batch published, or the end */
	bool waits;          /* the slice waits for more */
	cache_classes owned; /* its classes of chunks (struct owned's bits) */
	struct cache_run_memo memo;
	uint64_t work; /* accesses of the runs in the batch being filled */
	double idle_s; /* waiting for a batch (MEMSIM_FEED_TIMES) */
};

struct cache_feed {
	struct cache *model;
	unsigned k, started, shift;
	/* Chunks fall in classes, index & mask (a power of two of them, k or more); owner[c] is
	 * the slice that simulates class c. */
	uint64_t mask;
	uint8_t owner[CACHE_CLASSES_MAX];
	struct slice *sl;
	pthread_t *tid;
	/* The caller's thread simulates slice 0 itself, a batch at a time (caller_slice). */
	bool caller;
	bool fast0;
	struct cache_fast_l1 v0;
	bool done, flush, producer_waits;
	/* Wall seconds (MEMSIM_FEED_TIMES): since the start, the caller's thread waiting for room
	 * and simulating its slice's batches. */
	double t0, room_s, caller_s;
	pthread_mutex_t mu;
	pthread_cond_t room;
	/* The hit filter (see Notes): per L1 set, (line << 1) | dirty of the line known to be in
	 * its slot 0, or NONE; NULL where it does not apply. */
	uint64_t *filt, filt_mask;
	unsigned l1_shift;
	uint64_t hits[2]; /* loads and stores it kept, not yet sent */
};

#define NONE UINT64_MAX

/* A slice's thread: consumes its ring until the feed ends, then flushes where asked. */
void *feed_slice_main(void *arg);
/* The caller's slice's batch being filled, simulated on the caller's thread and emptied. */
void feed_consume_caller(struct cache_feed *f);
