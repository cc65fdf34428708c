/* The cache model's configuration: the policies' names and the checks of a configuration. */

#include <errno.h>
#include <stdio.h>

#include "base/util.h"
#include "sim/cache_internal.h"

static const char *repl_names[] = { "lru", "fifo", "random", "plru" };
static const char *write_names[] = { "wb", "wt" };
static const char *alloc_names[] = { "wa", "nwa", "wv" };
static const char *incl_names[] = { "nine", "incl", "excl" };

const char *
cache_repl_str(enum cache_repl r)
{
	return repl_names[r];
}

const char *
cache_write_str(enum cache_write_policy w)
{
	return write_names[w];
}

const char *
cache_alloc_str(enum cache_alloc_policy a)
{
	return alloc_names[a];
}

const char *
cache_inclusion_str(enum cache_inclusion i)
{
	return incl_names[i];
}

/* ---- validation ---- */

static int
check_geometry(const struct cache_level_config *l, char *err, size_t errlen)
{
	uint64_t lines, ways, sets;

	if (l->line_bytes == 0 || !is_pow2(l->line_bytes)) {
		snprintf(err, errlen, "%s: line size %u is not a power of two", l->name,
			 l->line_bytes);
		return -EINVAL;
	}
	if (l->size_bytes == 0) {
		snprintf(err, errlen, "%s: size is zero", l->name);
		return -EINVAL;
	}
	if (l->line_bytes > l->size_bytes) {
		snprintf(err, errlen, "%s: line (%u B) is larger than the cache (%llu B)", l->name,
			 l->line_bytes, (unsigned long long)l->size_bytes);
		return -EINVAL;
	}
	if (l->size_bytes % l->line_bytes) {
		snprintf(err, errlen, "%s: size %llu B is not a whole number of %u B lines",
			 l->name, (unsigned long long)l->size_bytes, l->line_bytes);
		return -EINVAL;
	}
	lines = l->size_bytes / l->line_bytes;
	if (lines > MAX_LINES) {
		snprintf(err, errlen, "%s: %llu lines is more than memsim simulates (%llu)",
			 l->name, (unsigned long long)lines, (unsigned long long)MAX_LINES);
		return -EINVAL;
	}
	ways = l->fully_assoc ? lines : l->assoc;
	if (ways == 0) {
		snprintf(err, errlen, "%s: associativity is zero", l->name);
		return -EINVAL;
	}
	if (ways > lines || lines % ways) {
		snprintf(err, errlen, "%s: %llu ways do not divide the %llu lines", l->name,
			 (unsigned long long)ways, (unsigned long long)lines);
		return -EINVAL;
	}
	sets = lines / ways;
	if (!is_pow2(sets)) {
		snprintf(err, errlen, "%s: %llu sets (size / (ways x line)) is not a power of two",
			 l->name, (unsigned long long)sets);
		return -EINVAL;
	}
	if (l->repl == CACHE_REPL_PLRU && !is_pow2(ways)) {
		snprintf(err, errlen, "%s: plru needs a power-of-two number of ways, not %llu",
			 l->name, (unsigned long long)ways);
		return -EINVAL;
	}
	return 0;
}

/* The largest line of the data levels and I1, as a shift (set sampling's chunk). */
unsigned
cache_chunk_shift(const struct cache_config *cfg)
{
	unsigned s = 0;

	for (unsigned i = 0; i < cfg->levels; i++)
		if (log2_u64(cfg->level[i].line_bytes) > s)
			s = log2_u64(cfg->level[i].line_bytes);
	if (cfg->has_icache && log2_u64(cfg->icache.line_bytes) > s)
		s = log2_u64(cfg->icache.line_bytes);
	return s;
}

/* A level's sets in chunks of 2^chunk bytes: the chunk indices that share none of its sets. */
static uint64_t
sets_in_chunks(const struct cache_level_config *l, unsigned chunk)
{
	uint64_t lines = l->size_bytes / l->line_bytes;
	uint64_t sets = lines / (l->fully_assoc ? lines : l->assoc);

	return sets >> (chunk - log2_u64(l->line_bytes));
}

uint64_t
cache_sample_classes(const struct cache_config *cfg)
{
	unsigned chunk = cache_chunk_shift(cfg);
	uint64_t classes = UINT64_MAX;

	if (cfg->sample_sets <= 1 || cfg->levels == 0)
		return 0;
	for (unsigned i = 0; i < cfg->levels; i++)
		if (sets_in_chunks(&cfg->level[i], chunk) < classes)
			classes = sets_in_chunks(&cfg->level[i], chunk);
	if (cfg->has_icache && sets_in_chunks(&cfg->icache, chunk) < classes)
		classes = sets_in_chunks(&cfg->icache, chunk);
	return classes / cfg->sample_sets;
}

/* Set sampling keeps 1 set in k of a level only when its set index holds the chunk's bits
 * that pick the residue: sets >= k x (chunk / line). */
static int
check_sampling_level(const struct cache_level_config *l, unsigned chunk, uint32_t k, char *err,
		     size_t errlen)
{
	uint64_t lines = l->size_bytes / l->line_bytes;
	uint64_t sets = lines / (l->fully_assoc ? lines : l->assoc);
	uint64_t need = (uint64_t)k << (chunk - log2_u64(l->line_bytes));

	if (l->fully_assoc || sets == 1) {
		snprintf(err, errlen,
			 "--sample-sets %u: %s is fully associative (one set): there are no sets "
			 "to sample",
			 k, l->name);
		return -EINVAL;
	}
	if (sets < need) {
		snprintf(err, errlen,
			 "--sample-sets %u: %s has %llu sets; sampling 1 set in %u needs %llu or "
			 "more",
			 k, l->name, (unsigned long long)sets, k, (unsigned long long)need);
		return -EINVAL;
	}
	return 0;
}

static int
check_sampling(const struct cache_config *cfg, char *err, size_t errlen)
{
	uint32_t k = cfg->sample_sets;
	unsigned chunk;
	int rc;

	if (k <= 1)
		return 0;
	chunk = cache_chunk_shift(cfg); /* every line size checked by now */
	if (!is_pow2(k) || k > (UINT32_C(1) << 20)) {
		snprintf(err, errlen, "--sample-sets %u: not a power of two from 2 to 2^20", k);
		return -EINVAL;
	}
	if (cfg->levels == 0) {
		snprintf(err, errlen, "--sample-sets %u: no cache, no sets to sample", k);
		return -EINVAL;
	}
	for (unsigned i = 0; i < cfg->levels; i++)
		if ((rc = check_sampling_level(&cfg->level[i], chunk, k, err, errlen)))
			return rc;
	if (cfg->has_icache)
		return check_sampling_level(&cfg->icache, chunk, k, err, errlen);
	return 0;
}

int
cache_config_validate(const struct cache_config *cfg, char *err, size_t errlen)
{
	int rc;

	if (cfg->levels > CACHE_MAX_LEVELS) {
		snprintf(err, errlen, "%u cache levels; at most %d are supported", cfg->levels,
			 CACHE_MAX_LEVELS);
		return -EINVAL;
	}
	for (unsigned i = 0; i < cfg->levels; i++) {
		const struct cache_level_config *l = &cfg->level[i];
		const struct cache_level_config *up = i ? &cfg->level[i - 1] : NULL;

		if ((rc = check_geometry(l, err, errlen)))
			return rc;
		if (!up && l->inclusion != CACHE_INCL_NINE) {
			snprintf(err, errlen, "%s: '%s' needs a level above it", l->name,
				 cache_inclusion_str(l->inclusion));
			return -EINVAL;
		}
		if (!up && l->quiet_writebacks) {
			snprintf(err, errlen, "%s: 'quietwb' needs a level above it", l->name);
			return -EINVAL;
		}
		if (l->inclusion == CACHE_INCL_EXCLUSIVE) {
			if (up->line_bytes != l->line_bytes) {
				snprintf(
					err, errlen,
					"%s: 'excl' needs the same line size as %s (%u B, not %u B)",
					l->name, up->name, up->line_bytes, l->line_bytes);
				return -EINVAL;
			}
			if (up->write == CACHE_WRITE_THROUGH) {
				snprintf(err, errlen,
					 "%s: 'excl' below a write-through %s is not supported",
					 l->name, up->name);
				return -EINVAL;
			}
			if (l->quiet_writebacks) {
				snprintf(err, errlen, "%s: 'excl' and 'quietwb' do not combine",
					 l->name);
				return -EINVAL;
			}
		}
		if (l->inclusion == CACHE_INCL_INCLUSIVE) {
			for (unsigned j = 0; j < i; j++) {
				if (cfg->level[j].line_bytes > l->line_bytes) {
					snprintf(err, errlen,
						 "%s: 'incl' needs lines at least as large as %s's",
						 l->name, cfg->level[j].name);
					return -EINVAL;
				}
			}
			if (cfg->has_icache && i >= 1 && cfg->icache.line_bytes > l->line_bytes) {
				snprintf(err, errlen,
					 "%s: 'incl' needs lines at least as large as I1's",
					 l->name);
				return -EINVAL;
			}
		}
	}
	if (cfg->has_icache) {
		const struct cache_level_config *l = &cfg->icache;

		if ((rc = check_geometry(l, err, errlen)))
			return rc;
		if (l->inclusion != CACHE_INCL_NINE || l->quiet_writebacks) {
			snprintf(err, errlen, "I1: inclusion and write-back words do not apply");
			return -EINVAL;
		}
		if (cfg->levels == 0) {
			snprintf(err, errlen, "I1 needs an L1 beside it");
			return -EINVAL;
		}
		if (cfg->levels >= 2 && cfg->level[1].inclusion == CACHE_INCL_EXCLUSIVE) {
			snprintf(err, errlen, "L2: 'excl' with an I1 above is not supported");
			return -EINVAL;
		}
	}
	/* Last: it takes every level's line size, so an I1 with no line must be refused first. */
	return check_sampling(cfg, err, errlen);
}
