/*
 * Notes:
 *  - The sums of squares are taken over the buckets and classes at the end, not per
 *    transfer: the hot path (a sampled run's DRAM transfers) pays one multiply and two adds.
 *  - The error is judged on the DRAM bytes alone. Level misses are counted in the same sets,
 *    but their error is not bounded by this judgement; docs/speed-notes.md gives what was
 *    measured for them.
 *  - The access part is not a standard error: it is how far the estimate would be off were
 *    DRAM bytes proportional to the bytes accessed, so it is taken as it is.
 */

#include "sim/drive/sample.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"

void
sample_units_init(struct sample_units *u, unsigned chunk_shift, unsigned kbits, uint64_t classes)
{
	u->bytes = xzalloc(((size_t)1 << SAMPLE_BUCKET_BITS) * sizeof(*u->bytes));
	u->chunk_shift = chunk_shift;
	u->classes = xzalloc((size_t)classes * sizeof(*u->classes));
	u->class_mask = classes - 1;
	u->class_shift = chunk_shift + kbits;
}

void
sample_units_finish(struct sample_units *u)
{
	free(u->bytes);
	free(u->classes);
	u->bytes = NULL;
	u->classes = NULL;
}

/* s^2 / mean^2 of the n counts y, s^2 over n - 1; 0 under two counts or a mean of 0. */
static double
rel_variance(const uint64_t *y, uint64_t n)
{
	double sum = 0, dev = 0, mean;

	if (n < 2)
		return 0;
	for (uint64_t i = 0; i < n; i++)
		sum += (double)y[i];
	mean = sum / (double)n;
	if (mean <= 0)
		return 0;
	for (uint64_t i = 0; i < n; i++)
		dev += ((double)y[i] - mean) * ((double)y[i] - mean);
	return dev / (double)(n - 1) / (mean * mean);
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
	out->classes = u->class_mask + 1;
	out->class_rel_variance = rel_variance(u->classes, out->classes);
}

double
sample_t975(unsigned df)
{
	/* df 1 to 30 from the table; above, the Cornish-Fisher expansion in 1 / df, within
	 * 0.0001 of the quantile there. */
	static const double table[] = { 12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469,
					2.3646,  2.3060, 2.2622, 2.2281, 2.2010, 2.1788,
					2.1604,  2.1448, 2.1314, 2.1199, 2.1098, 2.1009,
					2.0930,  2.0860, 2.0796, 2.0739, 2.0687, 2.0639,
					2.0595,  2.0555, 2.0518, 2.0484, 2.0452, 2.0423 };
	double z = 1.959964, v = df, z2 = z * z;

	if (df == 0)
		return INFINITY;
	if (df <= sizeof(table) / sizeof(table[0]))
		return table[df - 1];
	return z + z * (z2 + 1) / (4 * v) + z * ((5 * z2 + 16) * z2 + 3) / (96 * v * v) +
	       z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * v * v * v);
}

/* k times the share of `all` bytes that were `sampled`: 1 for a representative sample; 1 too
 * when there were none. */
static double
share(double k, uint64_t sampled, uint64_t all)
{
	return all ? k * (double)sampled / (double)all : 1;
}

/* The parts of s's estimated error (sample_error_parts); s moved DRAM bytes. */
static void
error_parts(const struct cache_sample *s, struct sample_error_parts *p)
{
	double k = s->sample_sets, fpc = 1 - 1 / k;

	p->chunks = SAMPLE_STANDARD_ERRORS * sqrt(fpc / s->dram_effective_chunks);
	p->set_classes = 0;
	if (s->set_classes >= 2)
		p->set_classes = sample_t975((unsigned)(s->set_classes - 1)) *
				 sqrt(fpc * s->class_rel_variance / (double)s->set_classes);
	p->loads = fabs(1 - share(k, s->sampled_read_bytes, s->cached_read_bytes));
	p->stores = fabs(1 - share(k, s->sampled_write_bytes, s->cached_write_bytes));
}

/* The reason of a sample too small, from its largest part. */
static void
too_small_reason(const struct cache_sample *s, const struct sample_judgement *j, char *buf,
		 size_t len)
{
	const struct sample_error_parts *p = &j->parts;
	double k = s->sample_sets, pct = 100 * SAMPLE_ERROR_BOUND, e = 100 * j->estimated_error;
	int n;

	if (p->loads >= j->estimated_error) {
		n = snprintf(buf, len,
			     "--sample-sets %u: the sampled sets saw %.0f%% of their share of the "
			     "bytes loaded (lines used often lie outside them, or in them)",
			     s->sample_sets,
			     100 * share(k, s->sampled_read_bytes, s->cached_read_bytes));
	} else if (p->stores >= j->estimated_error) {
		n = snprintf(buf, len,
			     "--sample-sets %u: the sampled sets saw %.0f%% of their share of the "
			     "bytes stored (lines used often lie outside them, or in them)",
			     s->sample_sets,
			     100 * share(k, s->sampled_write_bytes, s->cached_write_bytes));
	} else if (p->set_classes >= j->estimated_error) {
		n = snprintf(buf, len,
			     "--sample-sets %u: the DRAM bytes of the %llu sampled set classes "
			     "differ (sets that conflict)",
			     s->sample_sets, (unsigned long long)s->set_classes);
	} else {
		n = snprintf(buf, len,
			     "--sample-sets %u: the sampled DRAM bytes come from %.1f effective "
			     "chunks (%llu chunks)",
			     s->sample_sets, s->dram_effective_chunks,
			     (unsigned long long)s->dram_chunks);
	}
	if (n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 ": estimated error %.0f%%, over the %.0f%% bound; use a smaller K or no "
			 "sampling",
			 e, pct);
}

void
sample_judge(const struct cache_sample *s, struct sample_judgement *out)
{
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
	error_parts(s, &out->parts);
	out->estimated_error = fmax(fmax(out->parts.chunks, out->parts.set_classes),
				    fmax(out->parts.loads, out->parts.stores));
	if (out->estimated_error <= SAMPLE_ERROR_BOUND)
		return;
	out->verdict = SAMPLE_TOO_SMALL;
	too_small_reason(s, out, out->reason, sizeof(out->reason));
}
