#pragma once

/*
 * The cache model's accounting: which array an address lies in, and DRAM traffic counted in
 * its (phase, array) cell (cache_dram_transfer(), both at once, is in cache.c). Static inline, for
 * the model's files: every miss to DRAM passes here (not an interface: sim/cache.h is).
 */

#include <stdbool.h>
#include <stdint.h>

#include "sim/cache_internal.h"

/* ---- accounting ---- */

static inline unsigned
find_array(struct cache *c, uint64_t addr)
{
	const struct array *a = &c->arrays[c->last_array];

	if (c->last_array && addr - a->base < a->len)
		return c->last_array;
	/* Loops walk two or three arrays in turn: the one before the last is the next guess. */
	a = &c->arrays[c->prev_array];
	if (c->prev_array && addr - a->base < a->len) {
		unsigned i = c->prev_array;

		c->prev_array = c->last_array;
		c->last_array = i;
		return i;
	}
	for (unsigned i = c->narrays; i-- > 1;) {
		a = &c->arrays[i];
		if (addr - a->base < a->len) {
			c->prev_array = c->last_array;
			c->last_array = i;
			return i;
		}
	}
	return 0;
}

static inline void
traffic_add(struct cache_traffic *t, uint64_t bytes, bool write, unsigned flags)
{
	if (write) {
		t->write_bytes += bytes;
		if (flags & F_FLUSH)
			t->flush_write_bytes += bytes;
	} else {
		t->read_bytes += bytes;
		if (flags & F_RFO)
			t->rfo_bytes += bytes;
		if (flags & F_FLUSH)
			t->flush_read_bytes += bytes;
	}
}

/* cache_dram_transfer() of an address in array a. */
static inline void
array_transfer(struct cache *c, unsigned a, uint64_t bytes, bool write, unsigned flags)
{
	struct phase *p = &c->phases[c->cur_phase];

	/* Only the (phase, array) cell: the totals are summed from the cells when asked for. */
	traffic_add(&p->per_array[a], bytes, write, flags);
}
