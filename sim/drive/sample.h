#pragma once

/*
 * How far set sampling's estimate (cache_config.sample_sets, sim/cache.h) can be trusted,
 * judged from what the sampled sets saw. Its estimated error is the largest of three:
 *
 * - Chunks: were the chunks (the largest line of any level) dealt into the k classes at
 *   random, the relative variance of a total to which chunk c contributes y_c would be
 *   k (1 - 1/k) sum(y_c^2) / sum(y_c)^2, which the sampled chunks estimate as (1 - 1/k) / m,
 *   m = sum(y)^2 / sum(y^2) over them: the effective number of chunks (fewer than there are
 *   when a few moved most). SAMPLE_STANDARD_ERRORS of it.
 * - Set classes: chunks that share a set at some level are not independent (they conflict),
 *   so the unit sampled is a set class (cache_sample_classes()): the variance between the
 *   sampled classes' DRAM bytes, with Student's t for their number (two or more).
 * - Accesses: the processor's loads and stores are counted whole, so the share of them that
 *   reached the sampled sets is known. Small arrays (tiles, row statistics) that are used
 *   all the time sit at the start of their page, outside the sampled sets, or all in them;
 *   k times that share, off 1, is how far the estimate would be off were DRAM bytes to
 *   follow the accesses, and no spread of the sample shows it.
 *
 * The DRAM bytes, the quantity memsim reports, are judged; level misses are not.
 * tools/sampling-coverage.py measures how often the estimate covers the error, and
 * docs/model.md ("Set sampling's error") gives the result.
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
/* The address bits a chunk's bucket is keyed by (the kernels' arena alignment). */
#define SAMPLE_KEY_BITS 30

/* DRAM bytes per chunk of the sampled sets, hashed into buckets, and per set class. */
struct sample_units {
	uint64_t *bytes;      /* 2^SAMPLE_BUCKET_BITS buckets; NULL when not sampling */
	unsigned chunk_shift; /* log2 of the chunk's bytes */
	uint64_t *classes;    /* DRAM bytes per sampled set class (one in each run of k) */
	uint64_t class_mask;  /* the classes less 1: a power of two less 1 */
	unsigned class_shift; /* chunk_shift + log2 k: an address's run of k classes */
};

/* Sets u up for chunks of 2^chunk_shift bytes, 1 in 2^kbits of them kept, in `classes` set
 * classes (cache_sample_classes(), a power of two), every count zero. Free with
 * sample_units_finish(). */
void sample_units_init(struct sample_units *u, unsigned chunk_shift, unsigned kbits,
		       uint64_t classes);
/* Frees the buckets; u may also be zeroed memory sample_units_init() never saw. */
void sample_units_finish(struct sample_units *u);

/* Counts bytes moved to or from DRAM for the chunk holding addr. */
static inline void
sample_units_add(struct sample_units *u, uint64_t addr, uint64_t bytes)
{
	/* Fibonacci hashing: the chunks of aligned arrays, whose indices differ in high bits
	 * only, spread over the buckets. Of the address, its offset in 2^SAMPLE_KEY_BITS bytes:
	 * a run's arrays sit at the same addresses modulo 2^30 whatever ran before, not at the
	 * same addresses, and the buckets shared must be the same each run (chunks 2^30 bytes
	 * apart share one: fewer chunks counted, a wider error, never a narrower one). */
	uint64_t h = ((addr & ((UINT64_C(1) << SAMPLE_KEY_BITS) - 1)) >> u->chunk_shift) *
		     UINT64_C(0x9E3779B97F4A7C15);

	u->bytes[h >> (64 - SAMPLE_BUCKET_BITS)] += bytes;
	u->classes[(addr >> u->class_shift) & u->class_mask] += bytes;
}

/* How the bytes spread over chunks and set classes. */
struct sample_spread {
	uint64_t bytes;          /* sum over the chunks */
	uint64_t chunks;         /* buckets holding bytes: the chunks, but for shared buckets */
	double effective_chunks; /* sum(y)^2 / sum(y^2); 0 without bytes */
	uint64_t classes;        /* the sampled set classes, those without bytes too */
	/* s^2 / mean^2 of the classes' bytes, s^2 over classes - 1; 0 under two classes or
	 * without bytes */
	double class_rel_variance;
};

/* Sums u's buckets into *out (all zero for a u that never sampled). */
void sample_units_spread(const struct sample_units *u, struct sample_spread *out);

enum sample_verdict {
	SAMPLE_OK = 0,    /* estimated error within SAMPLE_ERROR_BOUND */
	SAMPLE_TOO_SMALL, /* estimated error above it */
	SAMPLE_EMPTY,     /* no access reached the sampled sets, though some reached the caches:
			     every count is estimated 0 where an exact run counts a miss at least */
};

/* The parts of the estimated error (relative, of the DRAM bytes), as the header comment says;
 * 0 where a part cannot be had (under two set classes, nothing loaded or stored). */
struct sample_error_parts {
	double chunks;      /* SAMPLE_STANDARD_ERRORS standard errors over chunks */
	double set_classes; /* Student's t (95%, two-sided) standard errors over set classes */
	double loads;       /* |1 - k x sampled / all| of the bytes loaded (and fetched) */
	double stores;      /* the same of the bytes stored */
};

struct sample_judgement {
	enum sample_verdict verdict;
	/* Relative error of the DRAM bytes: the largest of the parts; 1 (the estimate 0 may be
	 * off by all of the exact count) when the sample moved no DRAM bytes. */
	double estimated_error;
	struct sample_error_parts parts;
	char reason[256]; /* one line, "" for SAMPLE_OK */
};

/* Judges the sample s (cache_sample_get()); s->sample_sets 1 (not sampled) is SAMPLE_OK with
 * error 0. */
void sample_judge(const struct cache_sample *s, struct sample_judgement *out);

/* The 97.5% quantile of Student's t with df degrees of freedom (df >= 1): two-sided 95%. */
double sample_t975(unsigned df);

