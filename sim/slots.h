#pragma once

/*
 * Moving a cache set's slots by one place, inline (cache_sets.h's set operations and
 * cache.h's inline L1 path both use them).
 */

#include <stdint.h>
#include <string.h>

/* Set slots move by one place on LRU hits, installs and removals. Sets are short, and a libc
 * memmove call costs more than the move, so the moves are fixed-size copies that the compiler
 * keeps inline as a few vector loads and stores: blocks of 8 slots, then two copies that may
 * overlap for the rest. Each copy loads all its slots before it stores any, so a block may
 * overlap its own destination; blocks go in the order that leaves their sources unwritten.
 * (A plain loop of slot moves costs about four instructions a slot, and one the compiler
 * recognises as a copy becomes a memmove call.) */

/* s[1 .. n] = s[0 .. n-1] */
static inline void
slots_up(uint64_t *s, uint32_t n)
{
	/* The top 8 first: what is left below them stays unwritten. */
	for (; n > 8; n -= 8) {
		uint64_t a[8];

		memcpy(a, s + n - 8, sizeof(a));
		memcpy(s + n - 7, a, sizeof(a));
	}
	if (n >= 4) {
		uint64_t a[4], b[4];

		memcpy(a, s, sizeof(a));
		memcpy(b, s + n - 4, sizeof(b));
		memcpy(s + 1, a, sizeof(a));
		memcpy(s + n - 3, b, sizeof(b));
	} else if (n >= 2) {
		uint64_t a[2], b[2];

		memcpy(a, s, sizeof(a));
		memcpy(b, s + n - 2, sizeof(b));
		memcpy(s + 1, a, sizeof(a));
		memcpy(s + n - 1, b, sizeof(b));
	} else if (n == 1) {
		s[1] = s[0];
	}
}

/* s[0 .. n-1] = s[1 .. n] */
static inline void
slots_down(uint64_t *s, uint32_t n)
{
	/* The bottom 8 first: what is left above them stays unwritten. */
	for (; n > 8; n -= 8, s += 8) {
		uint64_t a[8];

		memcpy(a, s + 1, sizeof(a));
		memcpy(s, a, sizeof(a));
	}
	if (n >= 4) {
		uint64_t a[4], b[4];

		memcpy(a, s + 1, sizeof(a));
		memcpy(b, s + n - 3, sizeof(b));
		memcpy(s, a, sizeof(a));
		memcpy(s + n - 4, b, sizeof(b));
	} else if (n >= 2) {
		uint64_t a[2], b[2];

		memcpy(a, s + 1, sizeof(a));
		memcpy(b, s + n - 1, sizeof(b));
		memcpy(s, a, sizeof(a));
		memcpy(s + n - 2, b, sizeof(b));
	} else if (n == 1) {
		s[0] = s[1];
	}
}
