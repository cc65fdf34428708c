#pragma once

/*
 * A kernel's values on several threads (run --threads, issue 24): the native build of d's
 * kernel cut into units that share no output, each unit run as a view of d's arrays (batch
 * 1, its heads, tiles of its own), units handed out in order to the threads. A unit is one
 * batch element's group of query heads on one KV head; with paged K/V (the pool interleaves
 * KV heads) or proj (whose products mix heads) one batch element. Each unit does the
 * arithmetic the whole kernel does for its heads, in the same order, so the outputs are the
 * whole kernel's bit for bit (tests/test-attn-split.c).
 */

#include "kernels/attn.h"

struct attn_native_split;

/* Units of work d's config splits into. */
uint64_t attn_native_units(const struct attn_config *c);

/* Starts d's kernel natively on min(threads, units) threads (at least 1) and returns at once;
 * NULL with a one-line message in err when threads or memory cannot be had. d must hold values
 * and outlive attn_native_split_join(). */
struct attn_native_split *attn_native_split_start(struct attn_data *d, unsigned threads, char *err,
						  size_t errlen);
/* Threads the split runs on. */
unsigned attn_native_split_threads(const struct attn_native_split *s);
/* Waits for the threads and frees s. Returns 0 when d's outputs hold the kernel's values, or
 * -ENOMEM when no thread could allocate its tiles (some units were not run). */
int attn_native_split_join(struct attn_native_split *s);
