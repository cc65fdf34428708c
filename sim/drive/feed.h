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

#include "sim/cache.h"
#include "sim/cache_run.h"

struct cache_feed;

/* Builds the slice models of cfg (cache_feed_slices_for() of them) and the feed model, and
 * starts `threads` threads (2 .. cache_slices_max(cfg)) to simulate the slices; with
 * caller_thread one fewer: the caller's thread is one of them (for a producer with little work
 * of its own, such as a trace-only kernel whose tiles are scratch). A thread takes whichever
 * slice is furthest behind, a batch at a time; the caller's thread simulates batches too where
 * a ring it fills is full, and at the end. Returns NULL with a one-line message in err when
 * memory is short or a thread cannot start. */
struct cache_feed *cache_feed_start(const struct cache_config *cfg, unsigned threads,
				    bool caller_thread, char *err, size_t errlen);

/* The slices a feed of cfg on `threads` threads (a power of two the config splits by) has:
 * FEED_SLICES_A_THREAD a thread (or MEMSIM_FEED_SLICES_A_THREAD, a power of two, to
 * measure), as many as the levels' sets allow (cache_classes_max()) and while their models
 * take 1 GiB or less; never fewer than the threads. A slice owns the chunks whose index modulo
 * the slices is its own. */
unsigned cache_feed_slices_for(const struct cache_config *cfg, unsigned threads);

/* The slices of f (cache_feed_slices_for(), fewer where their models did not fit). */
unsigned cache_feed_slices(const struct cache_feed *f);

/* While held, the slice threads take no batch: the caller's thread simulates every batch
 * itself, as rings fill and at the end. The counts are the same (for tests). */
void cache_feed_hold(struct cache_feed *f, bool hold);

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

/* Makes one-pass model c (cache_create_onepass() of cfg for sizes[0 .. n) of level `level`
 * with method how, not yet accessed) run its sizes on `threads` threads (2 ..
 * cache_onepass_slices_max()), one slice each: c simulates the levels above the swept one
 * itself, on the caller's thread, and hands what leaves them, in order, to the slice that owns
 * its chunk, whose one-pass model counts its sets for every size. Arrays and phases go to
 * every slice.
 * Returns 0, or -ENOMEM with a one-line message in err (c unchanged). */
int cache_feed_attach_below(struct cache *c, const struct cache_config *cfg, unsigned level,
			    const uint64_t *sizes, unsigned n, enum cache_onepass how,
			    unsigned threads, char *err, size_t errlen);
/* Ends it (after the caller's cache_flush(c), with flush): each thread flushes its sizes'
 * models, and they are added into c's, which then holds what one thread's pass would, counter
 * for counter (cache_onepass_take()). Returns 0, or with a message in err -ENOMEM where a
 * thread's stack pass ran out of memory, -1 otherwise. */
int cache_feed_detach_below(struct cache *c, bool flush, char *err, size_t errlen);
/* Stops the threads and frees f, for a producer that failed. */
void cache_feed_abort(struct cache_feed *f);
