/*
 * Notes:
 *  - The sums of squares are taken over the buckets at the end, not per transfer: the hot
 *    path (a sampled run's DRAM transfers) pays one multiply and one add.
 *  - The error is judged on the DRAM bytes alone. Level misses are counted in the same sets,
 *    but their error is not bounded by this judgement; docs/speed-notes.md gives what was
 *    measured for them.
 */

#include "sim/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/util.h"

void
sample_units_init(struct sample_units *u, unsigned chunk_shift)
{
	u->bytes = xzalloc(((size_t)1 << SAMPLE_BUCKET_BITS) * sizeof(*u->bytes));
	u->chunk_shift = chunk_shift;
}

void
sample_units_finish(struct sample_units *u)
{
	free(u->bytes);
	u->bytes = NULL;
}

void
sample_units_spread(const struct sample_units *u, struct sample_spread *out)
{
	double sum = 0, squares = 0;

	memset(out, 0, sizeof(*out));
	if (!u->bytes)
		return;
	for (size_t b = 0; b < (size_t)1 << SAMPLE_BUCKET_BITS; b++) {
		uint64_t y = u->bytes[b];

		if (!y)
			continue;
		out->bytes += y;
		out->chunks++;
		sum += (double)y;
		squares += (double)y * (double)y;
	}
	if (squares > 0)
		out->effective_chunks = sum * sum / squares;
}

void
sample_judge(const struct cache_sample *s, struct sample_judgement *out)
{
	double k = s->sample_sets, pct = 100 * SAMPLE_ERROR_BOUND;

	memset(out, 0, sizeof(*out));
	if (s->sample_sets <= 1)
		return;
	if (s->refs == 0 && s->cached_bytes > 0) {
		out->verdict = SAMPLE_EMPTY;
		out->estimated_error = 1;
		snprintf(out->reason, sizeof(out->reason),
			 "--sample-sets %u: no access reached the sampled sets (1 in %u): every "
			 "count would be estimated 0 where an exact run counts a miss at least; "
			 "use a smaller K or no sampling",
			 s->sample_sets, s->sample_sets);
		return;
	}
	if (s->dram_bytes == 0 || s->dram_effective_chunks <= 0) {
		/* Nothing moved, or nothing reached the caches at all (then nothing is off). */
		out->estimated_error = s->refs ? 1 : 0;
		if (s->refs) {
			out->verdict = SAMPLE_TOO_SMALL;
			snprintf(out->reason, sizeof(out->reason),
				 "--sample-sets %u: the sampled sets moved no DRAM bytes, so the "
				 "estimate 0 may be off by all of the exact count; use a smaller K "
				 "or no sampling",
				 s->sample_sets);
		}
		return;
	}
	out->estimated_error =
		SAMPLE_STANDARD_ERRORS * sqrt((1 - 1 / k) / s->dram_effective_chunks);
	if (out->estimated_error <= SAMPLE_ERROR_BOUND)
		return;
	out->verdict = SAMPLE_TOO_SMALL;
	snprintf(out->reason, sizeof(out->reason),
		 "--sample-sets %u: the sampled DRAM bytes come from %.1f effective chunks (%llu "
		 "chunks): estimated error %.0f%%, over the %.0f%% bound; use a smaller K or no "
		 "sampling",
		 s->sample_sets, s->dram_effective_chunks, (unsigned long long)s->dram_chunks,
		 100 * out->estimated_error, pct);
}

const char *
sample_verdict_str(enum sample_verdict v)
{
	static const char *names[] = { "ok", "too_small", "empty" };

	return names[v];
}
