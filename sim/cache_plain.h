#pragma once

/*
 * The miss path of plain levels (struct level's `plain`): LRU in ordered slots, write-back,
 * write-allocate, neither inclusive nor exclusive, no write-validate, no quiet write-backs,
 * lines as large as the plain level below, if any, and nothing but plain levels below. For
 * them, cache.c's level_ref()/level_read()/level_write()/allocate() reduce to what is here:
 * a whole line goes down at a time, nothing below hands a dirty line up, a victim keeps its
 * slot until the new line takes it. The same steps in the same order, so the same counters,
 * without the tests and arguments of the general path. Static inline, for cache.c alone
 * (not an interface: sim/cache.h is).
 */

#include <stdint.h>

#include "sim/cache_internal.h"
#include "sim/cache_sets.h"

static inline void plain_read(struct cache *c, struct level *L, uint64_t line, unsigned flags);
static inline void plain_writeback(struct cache *c, struct level *L, uint64_t line, unsigned flags);

/* A whole line of plain level L to what lies below it: line_below() for plain levels. Only what
 * a driver puts below the last level (c->drive->below) may answer RES_DIRTY. */
static inline unsigned
plain_below(struct cache *c, const struct level *L, uint64_t line, bool write, unsigned flags)
{
	uint64_t addr = line << L->line_shift;

	if (L->lower) {
		if (write)
			plain_writeback(c, L->lower, line, flags);
		else
			plain_read(c, L->lower, line, flags);
		return 0;
	}
	return c->drive->below(c, addr, L->cfg.line_bytes, write ? REQ_WRITEBACK : REQ_READ, 1,
			       flags);
}

/* allocate() at a plain level: the victim is the last slot, the fetch (when `fetch`) goes
 * below, the line is installed at the front, then the victim is written back if dirty. */
static ALWAYS_INLINE void
plain_allocate(struct cache *c, struct level *L, uint64_t *set, uint64_t line, bool dirty,
	       bool fetch, unsigned flags)
{
	uint64_t victim = set[L->ways - 1];

	if (victim != TAG_INVALID)
		L->st.evictions++;
	if (fetch) {
		dirty |= plain_below(c, L, line, false, flags & (F_RFO | F_IFETCH | F_FLUSH)) &
			 RES_DIRTY;
		L->st.fills++;
	}
	slots_up(set, L->ways - 1);
	set[0] = (line << 1) | (dirty ? 1 : 0);
	if (victim != TAG_INVALID && (victim & 1)) {
		L->st.writebacks++;
		if (flags & F_FLUSH)
			L->st.flush_writebacks++;
		plain_below(c, L, victim >> 1, true, flags & F_FLUSH);
	}
}

/* touch() at a plain level: slot w's line moves to the front. */
static ALWAYS_INLINE void
plain_touch(uint64_t *set, uint32_t w)
{
	uint64_t e = set[w];

	slots_up(set, w);
	set[0] = e;
}

/* level_ref(REQ_READ) of a whole line at plain level L, from the level above. */
static inline void
plain_read(struct cache *c, struct level *L, uint64_t line, unsigned flags)
{
	uint64_t *set = L->tags + (line & L->set_mask) * L->ways;
	int w = scan_way(set, L->ways, line);

	L->st.reads++;
	if (w >= 0) {
		plain_touch(set, (uint32_t)w);
		return;
	}
	L->st.read_misses++;
	if (flags & F_RFO)
		L->st.rfo_misses++;
	if (flags & F_IFETCH)
		L->st.ifetch_misses++;
	plain_allocate(c, L, set, line, false, true, flags);
}

/* level_ref(REQ_WRITEBACK) of a whole line at plain level L: a hit marks it dirty and most
 * recent; a miss allocates it dirty without a fetch (the write covers the line). */
static inline void
plain_writeback(struct cache *c, struct level *L, uint64_t line, unsigned flags)
{
	uint64_t *set = L->tags + (line & L->set_mask) * L->ways;
	int w = scan_way(set, L->ways, line);

	L->st.writes++;
	if (w >= 0) {
		plain_touch(set, (uint32_t)w);
		set[0] |= 1;
		return;
	}
	L->st.write_misses++;
	plain_allocate(c, L, set, line, true, false, flags | F_RFO);
}

/* cache_fast_miss() at a plain L1: a load or store of [addr, addr + size) inside one line
 * that the set does not hold, counted as an access already. */
static inline void
plain_miss(struct cache *c, struct level *L, uint64_t *set, uint64_t line, uint32_t size,
	   unsigned op)
{
	if (op) {
		L->st.write_misses++;
		plain_allocate(c, L, set, line, true, size != L->cfg.line_bytes, F_RFO);
	} else {
		L->st.read_misses++;
		plain_allocate(c, L, set, line, false, true, 0);
	}
}
