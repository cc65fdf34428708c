#pragma once

/*
 * For tests that compare two models counter for counter: every level's counts, DRAM traffic in
 * total, per array, per phase and per phase and array, every phase's level counts, the
 * processor's operations and bytes, scratch bytes per array.
 */

#include <stdbool.h>
#include <string.h>

#include "sim/cache.h"
#include "tests/unit.h"

/* Prints the first counter that differs; returns whether all are equal. */
static bool
words_equal(const char *what, const void *a, const void *b, size_t bytes)
{
	const uint64_t *p = a, *q = b;

	for (size_t k = 0; k < bytes / sizeof(uint64_t); k++)
		if (p[k] != q[k]) {
			print_message("# %s, word %zu: %llu against %llu\n", what, k,
				      (unsigned long long)p[k], (unsigned long long)q[k]);
			return false;
		}
	return true;
}

static bool
same_counters(struct cache *x, struct cache *y)
{
	char what[96];

	if (cache_level_count(x) != cache_level_count(y) ||
	    cache_array_count(x) != cache_array_count(y) ||
	    cache_phase_count(x) != cache_phase_count(y))
		return false;
	for (unsigned i = 0; i < cache_level_count(x); i++) {
		snprintf(what, sizeof(what), "level %u", i);
		if (!words_equal(what, cache_level_stats(x, i), cache_level_stats(y, i),
				 sizeof(struct cache_level_stats)))
			return false;
	}
	if (!words_equal("dram", cache_dram(x), cache_dram(y), sizeof(struct cache_traffic)) ||
	    !words_equal("cpu", cache_cpu(x), cache_cpu(y), sizeof(struct cache_cpu_stats)))
		return false;
	for (unsigned a = 0; a < cache_array_count(x); a++) {
		snprintf(what, sizeof(what), "array %s", cache_array_name(x, a));
		if (strcmp(cache_array_name(x, a), cache_array_name(y, a)) ||
		    !words_equal(what, cache_array_traffic(x, a), cache_array_traffic(y, a),
				 sizeof(struct cache_traffic)) ||
		    !words_equal(what, cache_array_scratch(x, a), cache_array_scratch(y, a),
				 2 * sizeof(uint64_t)))
			return false;
	}
	for (unsigned p = 0; p < cache_phase_count(x); p++) {
		snprintf(what, sizeof(what), "phase %s", cache_phase_name(x, p));
		if (strcmp(cache_phase_name(x, p), cache_phase_name(y, p)) ||
		    !words_equal(what, cache_phase_traffic(x, p), cache_phase_traffic(y, p),
				 sizeof(struct cache_traffic)))
			return false;
		for (unsigned i = 0; i < cache_level_count(x); i++)
			if (!words_equal(what, cache_phase_level_stats(x, p, i),
					 cache_phase_level_stats(y, p, i),
					 sizeof(struct cache_level_stats)))
				return false;
		for (unsigned a = 0; a < cache_array_count(x); a++)
			if (!words_equal(what, cache_phase_array_traffic(x, p, a),
					 cache_phase_array_traffic(y, p, a),
					 sizeof(struct cache_traffic)))
				return false;
	}
	return true;
}

