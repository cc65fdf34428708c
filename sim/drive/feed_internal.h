#pragma once

/*
 * What the producer's and the slices' sides of a feed share (sim/drive/feed.c, sim/drive/feed.h):
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
		   * then addr count | req << 32 | flags << 40 (cache_feed_below()) */
	EV_RUN,   /* addr, size n, count op | kind << 2 | line_shift << 4 of a struct cache_run;
		   * then addr stride, size rows, kind elem (cache_feed_run()) */
};

/* Events a name takes (CACHE_NAME_MAX bytes). */
#define NAME_EVS (CACHE_NAME_MAX / sizeof(struct cache_ref))

#define FEED_BATCH 4096 /* events a batch: 64 KiB */
#define FEED_RING 8
/* Accesses a batch's runs may hold before it goes: a run of rows is two events but may carry
 * hundreds of a slice's accesses, and a batch of 4096 such would keep its slice busy for long
 * while the others run dry. About what flash2's tiles put in a batch on 8 threads. */
#define FEED_BATCH_WORK 65536

/* Slices a thread, where the sets and memory allow: a thread on a slow core then holds half
 * its share at a time, and the others take the rest. More cost each slice's share of every run
 * of rows. */
#define FEED_SLICES_A_THREAD 2
/* The slices' models together take no more than this, or than one a thread. */
#define FEED_MODELS_BYTES (UINT64_C(1) << 30)
#define FEED_SLICES_MAX CACHE_CLASSES_MAX

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
	struct batch *cur; /* being filled: ring[head % FEED_RING] */
	uint64_t head;     /* batches published */
	uint64_t tail;     /* batches simulated: ring[tail % FEED_RING] is the next */
	bool busy;         /* a thread simulates its next batch, or flushes it */
	bool flushed;
	bool fast; /* the inline L1 path applies (v) */
	struct cache_fast_l1 v;
	struct owned own; /* its chunks; own.memo is &memo */
	struct cache_run_memo memo;
	uint64_t work; /* accesses of the runs in the batch being filled */
};

/* A slice thread's own figures. */
struct worker {
	struct cache_feed *f;
	double idle_s; /* waiting for a batch (cache_feed_measure()'s times) */
};

struct cache_feed {
	struct cache *model;
	/* k slices, more than the threads where memory allows, so that a thread on a slow core
	 * holds up no other: a thread takes whichever slice is furthest behind, one batch at a
	 * time, and each slice's batches are simulated in order, by one thread at a time. */
	unsigned k, threads, started, shift;
	uint64_t mask; /* chunk index & mask: the slice that owns it */
	struct slice *sl;
	struct worker *w;
	pthread_t *tid;
	/* The caller's thread is one of the threads: one fewer slice thread. */
	bool caller;
	bool done, flush, producer_waits, hold;
	unsigned idle; /* slice threads waiting for a batch */
	/* Wall seconds (cache_feed_measure()'s times): since the start, the caller's thread
	 * waiting for room and simulating batches itself. */
	double t0, room_s, help_s;
	pthread_mutex_t mu;
	pthread_cond_t room, more;
	/* The hit filter (see Notes): per L1 set, (line << 1) | dirty of the line known to be in
	 * its slot 0, or NONE; NULL where it does not apply. */
	uint64_t *filt, filt_mask;
	unsigned l1_shift;
	uint64_t hits[2]; /* loads and stores it kept, not yet sent */
};

#define NONE UINT64_MAX

/* A slice thread: simulates batches of any slice until the feed ends and all are done, then
 * flushes slices where asked. */
void *feed_slice_main(void *arg);
/* With f->mu held: the slice whose next batch a thread may simulate, furthest behind (prefer
 * on a tie), marked busy; or NULL. */
struct slice *feed_take(struct cache_feed *f, const struct slice *prefer);
/* With f->mu held, s taken: simulates s's next batch without the lock and gives s back. */
void feed_simulate(struct cache_feed *f, struct slice *s);
/* With f->mu held, the input ended: a slice to flush, taken; or NULL. */
struct slice *feed_take_flush(struct cache_feed *f);
/* With f->mu held, s taken: flushes s's model without the lock and gives s back. */
void feed_flush_slice(struct cache_feed *f, struct slice *s);
