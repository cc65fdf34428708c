/*
 * Decoding and simulating memsim traces in one pass (traces/reader.h,
 * trace_reader_simulate()), for a write-back L1 the model lets a caller settle inline
 * (cache_fast_l1_slice()). Repeat records go period by period; a period that touches the same
 * lines as the one before, all of them still in L1, hits throughout and leaves L1 as it
 * found it (the same lines touched in the same order, the same stores), so such periods are
 * counted without being simulated.
 */

#include <string.h>

#include "base/util.h"
#include "traces/mtrace_impl.h"

/* The accesses the fused loop settled, not yet counted. */
struct fused_counts {
	uint64_t accesses, bytes, stores, store_bytes;
	/* Of the accesses, a slice's left to the other slices (v->slice_mask). */
	uint64_t other, other_bytes, other_stores, other_store_bytes;
};

/* The state of the fused loop: the slots, and the accesses it settled, not yet counted. */
struct fused {
	uint64_t addr[MTRACE_SLOTS];
	uint32_t ssize[MTRACE_SLOTS];
	/* By a short record's low six bits (slot, delta): the step (dddd - 8) x slot size, so
	 * the loop adds a looked-up step instead of multiplying. */
	int64_t step[MTRACE_SLOTS * 16];
	struct fused_counts n;
	struct cache_fast_misses misses; /* settled by cache_fast_l2_hit() */
};

/* Fills the steps of slot s from its size. */
static void
set_steps(struct fused *f, unsigned s)
{
	for (int d = 0; d < 16; d++)
		f->step[s * 16 + d] = (int64_t)(d - 8) * (int64_t)f->ssize[s];
}

/* Settles a load or store (op 1) of size bytes at a, inside line, in f and L1 (with g's
 * geometry, constants where the caller's are); a slice of a split run (sliced) counts another
 * slice's access as the other slices'. Counts the stores, not the access. */
static ALWAYS_INLINE void
fused_access(struct fused *f, struct cache *c, const struct cache_fast_l1 *g, uint64_t a,
	     uint64_t size, uint64_t op, uint64_t line, const bool sliced)
{
	uint64_t *set = cache_fast_set(g, line);

	/* A miss that L2 serves with a clean L1 victim settles inline; a store of a whole line
	 * needs no fetch, so it takes the model's path. */
	if (sliced && cache_fast_other_slice(g, a)) {
		/* Another slice's: the line lies inside one chunk. */
		f->n.other++;
		f->n.other_bytes += size;
		f->n.other_stores += op;
		f->n.other_store_bytes += op * size;
	} else if (!cache_fast_hit_recent(set, line, (unsigned)op) &&
		   !cache_fast_hit_older(g, set, line, (unsigned)op) &&
		   !(g->l2_tags && size != (UINT64_C(1) << g->line_shift) &&
		     cache_fast_l2_hit(g, set, line, (unsigned)op, &f->misses)))
		cache_fast_miss(c, a, (uint32_t)size, (unsigned)op);
	if (op) {
		f->n.stores++;
		f->n.store_bytes += size;
	}
}

/* Decodes and simulates records from p while they are loads or stores of the slot's size
 * inside one line, whether they hit L1 or miss (a miss goes to cache_fast_miss()); returns
 * where it stopped: at limit, or at a record it did not consume (a control record, an
 * instruction fetch, a long record with a size or count field, an access that straddles
 * lines, a record that is garbled). *records counts what it consumed.
 * Callers pass L1's line_shift and ways, as constants where they can: with a constant
 * geometry the compiler turns the set lookup into a few shifts and masks. The hot values
 * stay in registers and the slot addresses in a local array, which stores to the tags cannot
 * alias; stores, rare in traces, are counted in memory. A slice of a split run (sliced, a
 * constant) simulates the accesses in its chunks and counts the others in f->n.other... */
static ALWAYS_INLINE const uint8_t *
fused_loop(struct fused *f, struct cache *c, const struct cache_fast_l1 *v, const uint8_t *p,
	   const uint8_t *limit, const uint8_t *end, uint64_t *records, const unsigned shift,
	   const uint64_t ways, const bool sliced)
{
	/* The geometry as constants, for cache_fast_hit_older() too. */
	const struct cache_fast_l1 g = { v->tags,    v->set_mask,    ways,
					 shift,      v->lru,         v->l2_tags,
					 v->l2_set_mask, v->l2_ways, v->slice_shift,
					 v->slice_mask,  v->slice_residue };
	const uint8_t *const start = p;
	uint64_t addr[MTRACE_SLOTS], bytes = 0, long_bytes = 0;

	memcpy(addr, f->addr, sizeof(addr));
	while (p < limit) {
		const uint8_t *next = p + 1;
		uint8_t h = *p;
		unsigned s;
		uint64_t op, size, a, line;

		if (!(h & 0x80)) {
			s = (h >> 4) & 3;
			op = h >> 6;
			a = addr[s] + (uint64_t)f->step[h & 0x3f];
		} else {
			uint64_t zig;

			/* A long load or store without size and count fields: a far jump of a
			 * slot, as a column walk makes. Anything else is for the caller. */
			if ((h & 0xc7) != 0x80 || !get_varint(&next, end, &zig))
				break;
			s = (h >> 3) & 3;
			op = (h >> 5) & 1;
			a = addr[s] + ((zig >> 1) ^ -(zig & 1));
			long_bytes += (uint64_t)(next - p) - 1;
		}
		size = f->ssize[s];
		line = a >> shift;
		/* An access that wraps the address space straddles too: its wrapped end lies far
		 * below its start. The record is left to the caller, varint bytes included. */
		if (((a + size - 1) >> shift) != line) {
			long_bytes -= (uint64_t)(next - p) - 1;
			break;
		}
		fused_access(f, c, &g, a, size, op, line, sliced);
		addr[s] = a;
		bytes += size;
		p = next;
	}
	memcpy(f->addr, addr, sizeof(addr));
	/* One record per byte, but for the varint bytes of long records. */
	*records += (uint64_t)(p - start) - long_bytes;
	f->n.accesses += (uint64_t)(p - start) - long_bytes;
	f->n.bytes += bytes;
	return p;
}

/* fused_loop() for the usual L1 geometry, 64-byte lines and 8 ways, and for any other. */
static LINE_ALIGNED const uint8_t *
fused_run_64x8(struct fused *f, struct cache *c, const struct cache_fast_l1 *v, const uint8_t *p,
	       const uint8_t *limit, const uint8_t *end, uint64_t *records)
{
	return fused_loop(f, c, v, p, limit, end, records, 6, 8, false);
}

static LINE_ALIGNED const uint8_t *
fused_run_any(struct fused *f, struct cache *c, const struct cache_fast_l1 *v, const uint8_t *p,
	      const uint8_t *limit, const uint8_t *end, uint64_t *records)
{
	return fused_loop(f, c, v, p, limit, end, records, v->line_shift, v->ways, false);
}

/* The two for a slice of a split run. */
static LINE_ALIGNED const uint8_t *
fused_slice_64x8(struct fused *f, struct cache *c, const struct cache_fast_l1 *v, const uint8_t *p,
		 const uint8_t *limit, const uint8_t *end, uint64_t *records)
{
	return fused_loop(f, c, v, p, limit, end, records, 6, 8, true);
}

static LINE_ALIGNED const uint8_t *
fused_slice_any(struct fused *f, struct cache *c, const struct cache_fast_l1 *v, const uint8_t *p,
		const uint8_t *limit, const uint8_t *end, uint64_t *records)
{
	return fused_loop(f, c, v, p, limit, end, records, v->line_shift, v->ways, true);
}

/* Adds the accesses the fused loop settled to the model's counters and clears them. */
static void
count_fused(struct cache *c, struct fused *f)
{
	uint64_t acc = f->n.accesses - f->n.other, st = f->n.stores - f->n.other_stores;
	uint64_t bytes = f->n.bytes - f->n.other_bytes,
		 st_bytes = f->n.store_bytes - f->n.other_store_bytes;

	cache_count_fast(c, acc - st, st, bytes - st_bytes, st_bytes);
	if (f->n.other)
		cache_count_fast_other(c, f->n.other - f->n.other_stores, f->n.other_stores,
				       f->n.other_bytes - f->n.other_store_bytes, f->n.other_store_bytes);
	cache_count_fast_misses(c, &f->misses);
	memset(&f->n, 0, sizeof(f->n));
}

/* A repeat whose records are not all plain loads and stores: access by access. */
static void
repeat_by_model(struct cache *c, struct mtrace_repeat *rep)
{
	for (; rep->left; rep->left--, rep->pos = 0)
		for (unsigned i = rep->pos; i < rep->len; i++) {
			struct cache_ref *e = &rep->ref[i];

			e->addr += rep->step[i];
			cache_access(c, e->addr, e->size, (enum cache_op)e->kind, e->count);
		}
}

/* Whether a step moves an access by whole rounds of a split run's chunks (v->slice_mask + 1
 * of them), so that the access stays in the slice it is in. */
static bool
slice_round_step(const struct cache_fast_l1 *v, uint64_t step)
{
	return v->slice_mask && !(step & (((v->slice_mask + 1) << v->slice_shift) - 1));
}

/* Whether record i of rep belongs to another slice of a split run, inside one L1 line, and
 * will in every later period: this slice never sees it. */
static bool
stays_in_other_slice(const struct mtrace_repeat *rep, unsigned i, const struct cache_fast_l1 *v)
{
	uint64_t a = rep->ref[i].addr;

	return slice_round_step(v, rep->step[i]) && cache_fast_other_slice(v, a) &&
	       ((a + rep->ref[i].size - 1) >> v->line_shift) == (a >> v->line_shift);
}

/* How many of the next periods (at most left) touch, in this slice, the lines the last one
 * touched, each record inside its line; 0 where a record's next access moves to another
 * line. A record that stays in another slice (a split run's) touches none of them. */
static uint64_t
periods_on_same_lines(const struct mtrace_repeat *rep, const struct cache_fast_l1 *v, uint64_t left)
{
	const unsigned shift = v->line_shift;
	const uint64_t line_bytes = UINT64_C(1) << shift;
	uint64_t k = left;

	/* The usual answer first, without dividing: some record moves on at once. */
	for (unsigned i = 0; i < rep->len; i++) {
		uint64_t a = rep->ref[i].addr + rep->step[i];

		if (((a >> shift) != (rep->ref[i].addr >> shift) ||
		     ((a + rep->ref[i].size - 1) >> shift) != (a >> shift)) &&
		    !stays_in_other_slice(rep, i, v))
			return 0;
	}
	for (unsigned i = 0; i < rep->len && k; i++) {
		uint64_t off = rep->ref[i].addr & (line_bytes - 1), step = rep->step[i], n;

		if (step == 0 || stays_in_other_slice(rep, i, v))
			continue;
		if ((int64_t)step > 0)
			n = (line_bytes - rep->ref[i].size - off) / step;
		else
			n = off / (0 - step);
		if (n < k)
			k = n;
	}
	return k;
}

/* Whether L1 holds every line the last period touched in this slice. */
static bool
lines_held(const struct mtrace_repeat *rep, const struct cache_fast_l1 *v)
{
	for (unsigned i = 0; i < rep->len; i++) {
		uint64_t a = rep->ref[i].addr, line = a >> v->line_shift;
		const uint64_t *set = cache_fast_set(v, line);
		bool held = false;

		if (cache_fast_other_slice(v, a))
			continue;
		for (uint64_t w = 0; w < v->ways && !held; w++)
			held = (set[w] >> 1) == line;
		if (!held)
			return false;
	}
	return true;
}

/* Simulates one period of rep (from its first record) with g's geometry (constants where the
 * caller's are); returns whether every access was settled inline. */
static ALWAYS_INLINE bool
repeat_period(struct fused *f, struct cache *c, const struct cache_fast_l1 *g,
	      struct mtrace_repeat *rep, const bool sliced)
{
	bool inline_all = true;

	for (unsigned i = 0; i < rep->len; i++) {
		struct cache_ref *e = &rep->ref[i];
		uint64_t a = e->addr + rep->step[i], line = a >> g->line_shift;

		e->addr = a;
		if (((a + e->size - 1) >> g->line_shift) != line) {
			cache_access(c, a, e->size, (enum cache_op)e->kind, 1);
			inline_all = false;
			continue;
		}
		fused_access(f, c, g, a, e->size, e->kind, line, sliced);
		f->n.accesses++;
		f->n.bytes += e->size;
	}
	return inline_all;
}

/* What fused_access() and repeat_period() counted for the period just settled, all of it
 * inline: computed again from the records rather than kept from before the period, whose
 * copy would wait on the counters' stores every period. */
static struct fused_counts
period_counts(const struct mtrace_repeat *rep, const struct cache_fast_l1 *v, const bool sliced)
{
	struct fused_counts n = { .accesses = rep->len };

	for (unsigned i = 0; i < rep->len; i++) {
		const struct cache_ref *e = &rep->ref[i];
		const uint64_t op = e->kind == CACHE_OP_STORE;

		n.bytes += e->size;
		n.stores += op;
		n.store_bytes += op * e->size;
		if (sliced && cache_fast_other_slice(v, e->addr)) {
			n.other++;
			n.other_bytes += e->size;
			n.other_stores += op;
			n.other_store_bytes += op * e->size;
		}
	}
	return n;
}

/* Simulates all periods of rep, whose records are loads and stores of count 1. A period on
 * the lines of the one before, all still held, is counted as that one was. */
static ALWAYS_INLINE void
repeat_fused(struct fused *f, struct cache *c, const struct cache_fast_l1 *v,
	     struct mtrace_repeat *rep, const unsigned shift, const uint64_t ways, const bool sliced)
{
	const struct cache_fast_l1 g = { v->tags,	  v->set_mask,	 ways,
					 shift,		  v->lru,	 v->l2_tags,
					 v->l2_set_mask, v->l2_ways,	 v->slice_shift,
					 v->slice_mask,	  v->slice_residue };

	/* A record that steps a line or more a period never stays on its line; in a slice of a
	 * split run, one that stays in another slice throughout is no matter. */
	bool may_stay = true;

	for (unsigned i = 0; i < rep->len; i++)
		if (rep->step[i] >> shift && (0 - rep->step[i]) >> shift &&
		    !(sliced && stays_in_other_slice(rep, i, v)))
			may_stay = false;
	while (rep->left) {
		struct fused_counts one;
		uint64_t k;

		rep->left--;
		if (!repeat_period(f, c, &g, rep, sliced) || !rep->left || !may_stay)
			continue;
		k = periods_on_same_lines(rep, v, rep->left);
		if (!k || !lines_held(rep, v))
			continue;
		one = period_counts(rep, v, sliced);
		f->n.accesses += k * one.accesses;
		f->n.bytes += k * one.bytes;
		f->n.stores += k * one.stores;
		f->n.store_bytes += k * one.store_bytes;
		f->n.other += k * one.other;
		f->n.other_bytes += k * one.other_bytes;
		f->n.other_stores += k * one.other_stores;
		f->n.other_store_bytes += k * one.other_store_bytes;
		for (unsigned i = 0; i < rep->len; i++)
			rep->ref[i].addr += k * rep->step[i];
		rep->left -= k;
	}
}

/* repeat_fused() for the usual L1 geometry and for any other, whole or a slice of a split
 * run: one each, so that each inlines the L1 and L2 paths as fused_loop()'s callers do. */
static void
repeat_64x8(struct fused *f, struct cache *c, const struct cache_fast_l1 *v,
	    struct mtrace_repeat *rep)
{
	repeat_fused(f, c, v, rep, 6, 8, false);
}

static void
repeat_any(struct fused *f, struct cache *c, const struct cache_fast_l1 *v,
	   struct mtrace_repeat *rep)
{
	repeat_fused(f, c, v, rep, v->line_shift, v->ways, false);
}

static void
repeat_slice_64x8(struct fused *f, struct cache *c, const struct cache_fast_l1 *v,
		  struct mtrace_repeat *rep)
{
	repeat_fused(f, c, v, rep, 6, 8, true);
}

static void
repeat_slice(struct fused *f, struct cache *c, const struct cache_fast_l1 *v,
	     struct mtrace_repeat *rep)
{
	repeat_fused(f, c, v, rep, v->line_shift, v->ways, true);
}

static void
repeat_whole(struct fused *f, struct cache *c, const struct cache_fast_l1 *v,
	     struct mtrace_repeat *rep)
{
	for (unsigned i = 0; i < rep->len; i++)
		if (rep->pos || rep->ref[i].kind > CACHE_OP_STORE || rep->ref[i].count != 1) {
			repeat_by_model(c, rep);
			return;
		}
	if (v->slice_mask && v->line_shift == 6 && v->ways == 8)
		repeat_slice_64x8(f, c, v, rep);
	else if (v->slice_mask)
		repeat_slice(f, c, v, rep);
	else if (v->line_shift == 6 && v->ways == 8)
		repeat_64x8(f, c, v, rep);
	else
		repeat_any(f, c, v, rep);
}

long
mtrace_simulate(struct trace_reader *r, struct cache *c, const struct cache_fast_l1 *v,
		struct cache_ref *ctl)
{
	struct input *in = &r->in;

	while (!r->done) {
		const uint8_t *p = NULL, *end = NULL, *limit = NULL;
		struct fused f = { .n.accesses = 0 };
		uint64_t records = r->records, accesses = r->accesses;
		bool at_control = false;
		struct cache_ref e;

		if (r->rep && r->rep->left) {
			/* Whole: the model's counters are right between calls. */
			repeat_whole(&f, c, v, r->rep);
			count_fused(c, &f);
			continue;
		}
		if (mtrace_window(r, &p, &end, &limit))
			return -1;
		memcpy(f.addr, r->slot_addr, sizeof(f.addr));
		memcpy(f.ssize, r->slot_size, sizeof(f.ssize));
		for (unsigned s = 0; s < MTRACE_SLOTS; s++)
			set_steps(&f, s);
		/* Decode and simulate in one pass: fused_loop() takes the loads and stores inside
		 * one line that need no size or count field, nearly all of them; the rest are
		 * decoded here and handed to the model. */
		while (p < limit) {
			uint64_t before = records;
			uint8_t h;

			if (v->slice_mask)
				p = (v->line_shift == 6 && v->ways == 8
					     ? fused_slice_64x8
					     : fused_slice_any)(&f, c, v, p, limit, end, &records);
			else
				p = (v->line_shift == 6 && v->ways == 8
					     ? fused_run_64x8
					     : fused_run_any)(&f, c, v, p, limit, end, &records);
			accesses += records - before;
			if (p >= limit)
				break;
			h = *p;
			if (!(h & 0x80)) {
				if (!short_record(h, f.addr, f.ssize, &e))
					break;
				p++;
			} else if (h == (0xe0 | MTRACE_CTRL_REPEAT) && r->version >= 2 &&
				   (in->eof || (size_t)(end - p) >= MTRACE_REPEAT_MAX_BYTES)) {
				/* A repeat in the buffer: parsed and simulated here. */
				r->records = records + 1;
				r->accesses = accesses;
				p = mtrace_repeat_parse(r, p + 1, end, f.addr, f.ssize,
							mtrace_repeat_state(r));
				if (!p)
					return -1;
				repeat_whole(&f, c, v, r->rep);
				records = r->records;
				accesses = r->accesses;
				for (unsigned s = 0; s < MTRACE_SLOTS; s++)
					set_steps(&f, s);
				continue;
			} else if ((h & 0xe0) == 0xe0) {
				at_control = true;
				break;
			} else {
				p = long_record(r, p, end, f.addr, f.ssize, records, &e);
				if (!p)
					return -1;
				/* A size field may have changed the slot's size. */
				if (h & 4)
					set_steps(&f, (h >> 3) & 3);
			}
			records++;
			accesses += e.count;
			cache_access(c, e.addr, e.size, (enum cache_op)e.kind, e.count);
		}
		count_fused(c, &f);
		memcpy(r->slot_addr, f.addr, sizeof(f.addr));
		memcpy(r->slot_size, f.ssize, sizeof(f.ssize));
		r->records = records;
		r->accesses = accesses;
		in->pos = (size_t)(p - in->buf);
		if (p < limit && !at_control)
			return reader_fail(r, "%s: record %llu wraps the address space", in->path,
					   (unsigned long long)records + 1);
		if (at_control) {
			long got = mtrace_after_fast_loop(r, ctl);

			if (got != 0)
				return got;
		}
	}
	return 0;
}
