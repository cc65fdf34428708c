#pragma once

/*
 * A run split by set over threads, fed by one producer (replay --threads, run --threads):
 * the producer drives a feed model (cache_feed_model()) as it would a model of its own, once.
 * The feed model counts the processor's accesses and scratch bytes itself; every access that
 * would reach its levels goes, cut at chunk bounds (the largest line of any level), into a
 * ring of fixed-size batches of the slice that owns the chunk (chunk index modulo the slices:
 * cache_feed_slices()), and arrays and phases into every ring; the threads simulate the
 * slices' batches. The counts are the one-thread run's, exactly (sim/drive/feed.c,
 * sim/drive/slice.c say why), whichever thread simulated which batch.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/cache.h"
#include "sim/cache_run.h"

struct cache_feed;

/* Measurement knobs of the process, set before any feed starts (cli/main.c sets them from
 * MEMSIM_FEED_SLICES_A_THREAD and MEMSIM_FEED_TIMES): the slices a feed takes a thread where
 * the sets and memory allow (a power of two from 1 to CACHE_CLASSES_MAX; 0: the default), and
 * where each feed says at its end where its wall time went (NULL: nowhere, the default).
 * Returns 0, or -EINVAL (nothing changed) for slices_a_thread out of range. */
int cache_feed_measure(unsigned slices_a_thread, FILE *times);

/* Builds the slice models of cfg (cache_feed_slices() says how many) and the feed model, and
 * starts `threads` threads (2 .. cache_slices_max(cfg)) to simulate the slices; with
 * caller_thread one fewer: the caller's thread is one of them (for a producer with little work
 * of its own, such as a trace-only kernel whose tiles are scratch). A thread takes whichever
 * slice is furthest behind, a batch at a time; the caller's thread simulates batches too where
 * a ring it fills is full, and at the end. Returns NULL with a one-line message in err when
 * memory is short or a thread cannot start. */
struct cache_feed *cache_feed_start(const struct cache_config *cfg, unsigned threads,
				    bool caller_thread, char *err, size_t errlen);

/* The slices of f: FEED_SLICES_A_THREAD a thread (cache_feed_measure()), as many as the
 * levels' sets allow and while their models take 1 GiB or less, fewer where they did not fit;
 * never fewer than the threads. A slice owns the chunks whose index modulo the slices is its
 * own. */
unsigned cache_feed_slices(const struct cache_feed *f);

/* The model to drive: cache_access(), cache_access_merged(), cache_access_refs(),
 * cache_scratch_add(), cache_add_array(), cache_add_phase() and cache_set_phase() act on it as
 * on a model of cfg, and its processor counts are kept (cache_cpu()). It holds no lines:
 * nothing else may be called on it. Borrowed; valid until the feed ends. */
struct cache *cache_feed_model(struct cache_feed *f);

/* Whether c is a feed model. */
bool cache_is_feed(const struct cache *c);

/* cache_access(model, addr, size, op, 1), cheaper for a load or store inside one chunk: for the
 * tracing layer, which hands a feed model its accesses unmerged. */
void cache_feed_access(struct cache *model, uint64_t addr, uint32_t size, enum cache_op op);
/* For loads and stores (stores[i]) of sizes[i] bytes at addrs[i], each inside one L1 line, just
 * fed in this order: when the hit filter knows each line is in slot 0 of its set (dirty for a
 * store), the same accesses repeated count times more are its hits, as cache_feed_access()
 * would keep each: counts them and returns true. Otherwise changes nothing: false. */
bool cache_feed_repeats_kept(struct cache *model, const uint64_t *addrs, const uint32_t *sizes,
			     const bool *stores, unsigned n, uint32_t count);

/* The accesses of run r (sim/cache_run.h) to model, as one event to every slice it touches, which
 * cuts out its own lines: true when so handed out (and counted as the processor's), false when r
 * should go access by access (its elements straddle lines, it lies in one chunk, or part of it
 * may be scratch). */
bool cache_feed_run(struct cache *model, const struct cache_run *r);

/* Ends the input: each slice flushes (with flush) on a thread, then the slices are summed,
 * slice 0 first. *out is the whole run's model (caller destroys). Frees f; returns 0, or with
 * a message in err (nothing is left then) -ENOMEM when a one-pass slice ran out of memory,
 * -1 otherwise. */
int cache_feed_finish(struct cache_feed *f, bool flush, struct cache **out, char *err,
		      size_t errlen);

/* Stops the threads and frees f, for a producer that failed. */
void cache_feed_abort(struct cache_feed *f);

/*
 * For a one-pass model's sizes on slice threads (sim/drive/onepass.c): the slices' models made
 * by make(ctx) (each of model_bytes, for the message), one a thread, no feed model and no hit
 * filter: the producer's own model simulates the levels above the swept one and sends what
 * leaves them with cache_feed_below(). Returns NULL with a one-line message in err when memory
 * is short or a thread cannot start.
 */
struct cache_feed *cache_feed_start_models(const struct cache_config *cfg, unsigned threads,
					   struct cache *(*make)(void *ctx), void *ctx,
					   uint64_t model_bytes, char *err, size_t errlen);
/* A request (enum req of sim/cache_internal.h) leaving the producer's last level, to the slice
 * that owns its chunk, whose model takes it below its own levels. */
void cache_feed_below(struct cache_feed *f, uint64_t addr, uint64_t size, unsigned req,
		      uint32_t count, unsigned flags);
/* An array, a phase, a phase switch: to every slice, in order with the requests. */
void cache_feed_array(struct cache_feed *f, const char *name, uint64_t base, uint64_t bytes);
void cache_feed_phase(struct cache_feed *f, const char *name);
void cache_feed_set_phase(struct cache_feed *f, int phase);
/* Ends the input and waits for the threads (each slice flushed first with flush); the slices'
 * models are then cache_feed_slice_model(f, 0 .. cache_feed_slices(f) - 1), borrowed until
 * cache_feed_free(f). */
void cache_feed_stop(struct cache_feed *f, bool flush);
struct cache *cache_feed_slice_model(const struct cache_feed *f, unsigned i);
void cache_feed_free(struct cache_feed *f);
