#pragma once

/*
 * How far set sampling's estimate (cache_config.sample_sets, sim/cache.h) can be trusted,
 * judged from what the sampled sets saw.
 *
 * Sampling keeps the chunks (the largest line of any level) whose index is
 * CACHE_SAMPLE_RESIDUE(k) modulo k, and multiplies their counts by k. Were the chunks dealt
 * into the k classes at random, the estimate of a total to which chunk c contributes y_c
 * would have the relative variance k (1 - 1/k) sum(y_c^2) / sum(y_c)^2 over all chunks, which
 * the sampled chunks estimate as (1 - 1/k) / m, with m = sum(y)^2 / sum(y^2) over them: the
 * sample's effective number of chunks (as many as there are when each moved as many bytes,
 * fewer when a few moved most). The model records each sampled chunk's DRAM bytes for this
 * (struct sample_units), and an estimate is judged by its DRAM bytes, the quantity memsim
 * reports; level misses are not judged.
 *
 * The classes are not dealt at random: arrays are aligned and swept in order. A streamed array
 * lands evenly in them (better than chance), while sets that conflict differently can make a
 * class differ by more than chance. On 3,024 sampled runs (tools/sampling-error.sh, K = 2 to
 * 64, docs/speed-notes.md) every estimate whose SAMPLE_STANDARD_ERRORS standard errors stayed
 * within SAMPLE_ERROR_BOUND was within 8% of the exact DRAM bytes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/cache.h"

/* The relative error of DRAM bytes that the documentation states for an estimate: a larger
 * estimated error makes the sample too small. */
#define SAMPLE_ERROR_BOUND 0.10
/* The error estimated is this many standard errors of the random-chunk model. */
#define SAMPLE_STANDARD_ERRORS 2.0

/* Chunks are hashed into 2^SAMPLE_BUCKET_BITS buckets; chunks sharing a bucket count as one,
 * which can only lower m (raise the error): m stays under about 2^SAMPLE_BUCKET_BITS, an
 * error floor of 0.8% at two standard errors, far below the bound. */
#define SAMPLE_BUCKET_BITS 16

/* DRAM bytes per chunk of the sampled sets, hashed into buckets. */
struct sample_units {
	uint64_t *bytes;      /* 2^SAMPLE_BUCKET_BITS buckets; NULL when not sampling */
	unsigned chunk_shift; /* log2 of the chunk's bytes */
};

/* Sets u up for chunks of 2^chunk_shift bytes, every bucket zero. Free with
 * sample_units_finish(). */
void sample_units_init(struct sample_units *u, unsigned chunk_shift);
/* Frees the buckets; u may also be zeroed memory sample_units_init() never saw. */
void sample_units_finish(struct sample_units *u);

/* Counts bytes moved to or from DRAM for the chunk holding addr. */
static inline void
sample_units_add(struct sample_units *u, uint64_t addr, uint64_t bytes)
{
	/* Fibonacci hashing: the chunks of aligned arrays, whose indices differ in high bits
	 * only, spread over the buckets. */
	uint64_t h = (addr >> u->chunk_shift) * UINT64_C(0x9E3779B97F4A7C15);

	u->bytes[h >> (64 - SAMPLE_BUCKET_BITS)] += bytes;
}

/* How the bytes spread over chunks. */
struct sample_spread {
	uint64_t bytes;          /* sum over the chunks */
	uint64_t chunks;         /* buckets holding bytes: the chunks, but for shared buckets */
	double effective_chunks; /* sum(y)^2 / sum(y^2); 0 without bytes */
};

/* Sums u's buckets into *out (all zero for a u that never sampled). */
void sample_units_spread(const struct sample_units *u, struct sample_spread *out);

enum sample_verdict {
	SAMPLE_OK = 0,    /* estimated error within SAMPLE_ERROR_BOUND */
	SAMPLE_TOO_SMALL, /* estimated error above it */
	SAMPLE_EMPTY,     /* no access reached the sampled sets, though some reached the caches:
			     every count is estimated 0 where an exact run counts a miss at least */
};

struct sample_judgement {
	enum sample_verdict verdict;
	/* Relative error of the DRAM bytes, SAMPLE_STANDARD_ERRORS standard errors; 1 (the
	 * estimate 0 may be off by all of the exact count) when the sample moved no DRAM bytes. */
	double estimated_error;
	char reason[256]; /* one line, "" for SAMPLE_OK */
};

/* Judges the sample s (cache_sample_get()); s->sample_sets 1 (not sampled) is SAMPLE_OK with
 * error 0. */
void sample_judge(const struct cache_sample *s, struct sample_judgement *out);

/* "ok", "too_small", "empty". */
const char *sample_verdict_str(enum sample_verdict v);
