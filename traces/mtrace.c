/* The memsim trace reader (traces/mtrace.h); its writer is mtrace_writer.c. */

#include "traces/mtrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "traces/reader_impl.h"

/* ---- reader ---- */

/* Decoding works on a pointer into the input buffer with at least CHUNK bytes ahead unless
 * the stream ends; a record never exceeds CHUNK bytes except control records with strings,
 * which take the slow path. */
#define CHUNK 64

static bool
get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (p >= end)
			return false;
		b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return true;
		}
	}
	return false;
}

/* Slow-path reads straight from the input, refilling as needed. */
static bool
in_varint(struct input *in, uint64_t *out)
{
	const uint8_t *p, *end;

	input_fill(in, 10);
	p = in->buf + in->pos;
	end = in->buf + in->len;
	if (!get_varint(&p, end, out))
		return false;
	in->pos = (size_t)(p - in->buf);
	return true;
}

static bool
in_bytes(struct input *in, void *dst, size_t n)
{
	if (input_fill(in, n) < n)
		return false;
	memcpy(dst, in->buf + in->pos, n);
	in->pos += n;
	return true;
}

static char *
in_str(struct input *in, bool *ok)
{
	uint64_t n;
	char *s;

	*ok = false;
	if (!in_varint(in, &n) || n > 65536)
		return NULL;
	s = xzalloc(n + 1);
	if (!in_bytes(in, s, n)) {
		free(s);
		return NULL;
	}
	*ok = true;
	return s;
}

static bool
read_array_decl(struct trace_reader *r)
{
	struct trace_array a;
	bool ok;
	char *name = in_str(&r->in, &ok);
	uint8_t space;

	if (!ok)
		return false;
	memset(&a, 0, sizeof(a));
	snprintf(a.name, sizeof(a.name), "%s", name);
	free(name);
	if (!in_varint(&r->in, &a.base) || !in_varint(&r->in, &a.bytes) ||
	    !in_bytes(&r->in, &space, 1) || space > TRACE_SPACE_TILE)
		return false;
	a.space = (enum trace_space)space;
	if (r->narrays == r->arrays_cap) {
		r->arrays_cap = r->arrays_cap ? r->arrays_cap * 2 : 16;
		r->arrays = xrealloc(r->arrays, r->arrays_cap * sizeof(*r->arrays));
	}
	r->arrays[r->narrays++] = a;
	return true;
}

static bool
read_phase_decl(struct trace_reader *r)
{
	bool ok;
	char *name = in_str(&r->in, &ok);

	if (!ok)
		return false;
	if (r->nphases == CACHE_MAX_PHASES) {
		free(name);
		reader_fail(r, "%s: declares more than %d phases", r->in.path, CACHE_MAX_PHASES);
		return false;
	}
	if (r->nphases == r->phases_cap) {
		r->phases_cap = r->phases_cap ? r->phases_cap * 2 : 16;
		r->phases = xrealloc(r->phases, r->phases_cap * sizeof(*r->phases));
	}
	r->phases[r->nphases++] = name;
	return true;
}

int
mtrace_read_header(struct trace_reader *r)
{
	uint8_t magic[8], v[4];
	uint64_t n;
	bool ok;

	if (!in_bytes(&r->in, magic, 8) || memcmp(magic, MTRACE_MAGIC, 8) != 0)
		return (int)reader_fail(r, "%s: not a memsim trace (bad magic)", r->in.path);
	if (!in_bytes(&r->in, v, 4))
		goto truncated;
	r->version =
		(unsigned)v[0] | (unsigned)v[1] << 8 | (unsigned)v[2] << 16 | (unsigned)v[3] << 24;
	if (r->version != MTRACE_VERSION)
		return (int)reader_fail(r,
					"%s: memsim trace format version %u; this memsim reads %u",
					r->in.path, r->version, MTRACE_VERSION);
	r->tool_version = in_str(&r->in, &ok);
	if (!ok)
		goto truncated;
	r->command = in_str(&r->in, &ok);
	if (!ok)
		goto truncated;
	if (!in_varint(&r->in, &n) || n > 1u << 20)
		goto truncated;
	for (uint64_t i = 0; i < n; i++)
		if (!read_array_decl(r))
			goto truncated;
	if (!in_varint(&r->in, &n) || n > 1u << 20)
		goto truncated;
	for (uint64_t i = 0; i < n; i++)
		if (!read_phase_decl(r))
			goto truncated;
	for (int i = 0; i < MTRACE_SLOTS; i++)
		r->slot_size[i] = 4;
	return 0;
truncated:
	return (int)reader_fail(r, "%s: header is truncated or garbled", r->in.path);
}

static long
control_record(struct trace_reader *r, uint8_t h, struct cache_ref *ev, bool *emitted)
{
	uint64_t a, b;

	*emitted = false;
	switch (h & 0x1f) {
	case MTRACE_CTRL_PHASE:
		if (!in_varint(&r->in, &a))
			break;
		if (a >= r->nphases)
			return reader_fail(r, "%s: record %llu switches to undeclared phase %llu",
					   r->in.path, (unsigned long long)r->records,
					   (unsigned long long)a);
		ev->kind = TRACE_EV_PHASE;
		ev->addr = a;
		ev->size = 0;
		ev->count = 1;
		*emitted = true;
		return 0;
	case MTRACE_CTRL_ARRAY:
		if (!read_array_decl(r))
			break;
		ev->kind = TRACE_EV_ARRAY;
		ev->addr = r->narrays - 1;
		ev->size = 0;
		ev->count = 1;
		*emitted = true;
		return 0;
	case MTRACE_CTRL_DECLARE_PHASE:
		if (!read_phase_decl(r))
			break;
		return 0;
	case MTRACE_CTRL_END:
		if (!in_varint(&r->in, &a) || !in_varint(&r->in, &b))
			break;
		/* The end record counts itself among the records. */
		if (a != r->records || b != r->accesses)
			return reader_fail(r,
					   "%s: end record says %llu records and %llu accesses, "
					   "but %llu and %llu were read",
					   r->in.path, (unsigned long long)a, (unsigned long long)b,
					   (unsigned long long)r->records,
					   (unsigned long long)r->accesses);
		if (input_fill(&r->in, 1) != 0)
			return reader_fail(r, "%s: data after the end record", r->in.path);
		r->done = true;
		return 0;
	default:
		return reader_fail(r, "%s: record %llu has unknown control type %u", r->in.path,
				   (unsigned long long)r->records + 1, h & 0x1f);
	}
	return reader_fail(r, "%s: truncated in record %llu", r->in.path,
			   (unsigned long long)r->records);
}

/* Decodes the long access record whose header h is at p, updating the slot state; returns
 * the byte after it, or NULL after recording an error (records = records read before it). */
static inline const uint8_t *
long_record(struct trace_reader *r, const uint8_t *p, const uint8_t *end, uint64_t *addr,
	    uint32_t *ssize, uint64_t records, struct cache_ref *e)
{
	uint8_t h = *p;
	const uint8_t *q = p + 1;
	unsigned s = (h >> 3) & 3;
	uint64_t zig, size = ssize[s], count = 1, a;

	if ((h & 1) || !get_varint(&q, end, &zig) || ((h & 4) && !get_varint(&q, end, &size)) ||
	    ((h & 2) && !get_varint(&q, end, &count))) {
		reader_fail(r, "%s: record %llu is %s", r->in.path, (unsigned long long)records + 1,
			    (h & 1) ? "garbled (reserved bit set)" : "truncated");
		return NULL;
	}
	if (size == 0 || size > TRACE_MAX_ACCESS_BYTES || count == 0 || count > MAX_COUNT) {
		reader_fail(r,
			    "%s: record %llu has size %llu and count %llu (sizes 1 to %u, counts "
			    "1 to %u)",
			    r->in.path, (unsigned long long)records + 1, (unsigned long long)size,
			    (unsigned long long)count, TRACE_MAX_ACCESS_BYTES, MAX_COUNT);
		return NULL;
	}
	a = addr[s] + ((zig >> 1) ^ -(zig & 1));
	if (a > UINT64_MAX - size + 1) {
		reader_fail(r, "%s: record %llu wraps the address space", r->in.path,
			    (unsigned long long)records + 1);
		return NULL;
	}
	addr[s] = a;
	ssize[s] = (uint32_t)size;
	e->addr = a;
	e->size = (uint32_t)size;
	e->kind = (h >> 5) & 3;
	e->count = (uint16_t)count;
	return q;
}

/* Decodes a short record (header h) into e, updating the slot; false if it wraps. */
static inline bool
short_record(uint8_t h, uint64_t *addr, const uint32_t *ssize, struct cache_ref *e)
{
	unsigned s = (h >> 4) & 3;
	uint32_t size = ssize[s];
	uint64_t a = addr[s] + (uint64_t)((int64_t)(h & 15) - 8) * size;

	if (__builtin_expect(a > UINT64_MAX - size + 1, 0))
		return false;
	addr[s] = a;
	e->addr = a;
	e->size = size;
	e->kind = h >> 6;
	e->count = 1;
	return true;
}

/* Handles the control record at the input position after a fast loop stopped on it. Returns
 * 1 if it produced an event in *ev, 0 if not, -1 on error. */
static long
after_fast_loop(struct trace_reader *r, struct cache_ref *ev)
{
	struct input *in = &r->in;
	bool emitted;
	uint8_t h = in->buf[in->pos];

	in->pos++;
	r->records++;
	if (control_record(r, h, ev, &emitted) < 0)
		return -1;
	return emitted;
}

long
mtrace_decode(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	struct input *in = &r->in;
	size_t n = 0;

	while (n < max && !r->done) {
		const uint8_t *p, *end, *limit;
		uint64_t addr[MTRACE_SLOTS], records = r->records, accesses = r->accesses;
		uint32_t ssize[MTRACE_SLOTS];
		bool at_control = false;

		input_fill(in, 2 * CHUNK);
		if (in->pos == in->len)
			return reader_fail(r, "%s: truncated after record %llu (no end record)",
					   in->path, (unsigned long long)r->records);
		p = in->buf + in->pos;
		end = in->buf + in->len;
		/* Fast loop over the bytes that surely hold whole access records, with the
		 * slots and counters in locals so they stay in registers. */
		limit = end - (in->eof ? 0 : CHUNK);
		memcpy(addr, r->slot_addr, sizeof(addr));
		memcpy(ssize, r->slot_size, sizeof(ssize));
		while (n < max && p < limit) {
			uint8_t h = *p;

			if (!(h & 0x80)) {
				if (!short_record(h, addr, ssize, &buf[n])) {
					in->pos = (size_t)(p - in->buf);
					return reader_fail(
						r, "%s: record %llu wraps the address space",
						in->path, (unsigned long long)records + 1);
				}
				p++;
				n++;
				records++;
				accesses++;
			} else if ((h & 0xe0) == 0xe0) {
				at_control = true;
				break;
			} else {
				p = long_record(r, p, end, addr, ssize, records, &buf[n]);
				if (!p)
					return -1;
				accesses += buf[n].count;
				n++;
				records++;
			}
		}
		memcpy(r->slot_addr, addr, sizeof(addr));
		memcpy(r->slot_size, ssize, sizeof(ssize));
		r->records = records;
		r->accesses = accesses;
		in->pos = (size_t)(p - in->buf);
		if (at_control) {
			long got = after_fast_loop(r, &buf[n]);

			if (got < 0)
				return -1;
			/* A control event ends the batch, so a caller can act on it before any
			 * later access. */
			if (got > 0)
				return (long)n + 1;
		}
	}
	return (long)n;
}

/* The state of the fused loop: the slots, and the accesses it settled, not yet counted. */
struct fused {
	uint64_t addr[MTRACE_SLOTS];
	uint32_t ssize[MTRACE_SLOTS];
	/* By a short record's low six bits (slot, delta): the step (dddd - 8) x slot size, so
	 * the loop adds a looked-up step instead of multiplying. */
	int64_t step[MTRACE_SLOTS * 16];
	uint64_t accesses, bytes, stores, store_bytes;
	struct cache_fast_misses misses; /* settled by cache_fast_l2_hit() */
	/* Of the accesses, a slice's left to the other slices (v->slice_mask). */
	uint64_t other, other_bytes, other_stores, other_store_bytes;
};

/* Fills the steps of slot s from its size. */
static void
set_steps(struct fused *f, unsigned s)
{
	for (int d = 0; d < 16; d++)
		f->step[s * 16 + d] = (int64_t)(d - 8) * (int64_t)f->ssize[s];
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
 * constant) simulates the accesses in its chunks and counts the others in f->other... */
static ALWAYS_INLINE const uint8_t *
fused_loop(struct fused *f, struct cache *c, const struct cache_fast_l1 *v, const uint8_t *p,
	   const uint8_t *limit, const uint8_t *end, uint64_t *records, const unsigned shift,
	   const uint64_t ways, const bool sliced)
{
	/* The geometry as constants, for cache_fast_hit_older() too. */
	const struct cache_fast_l1 g = { v->tags,    v->set_mask,    ways,       shift, v->lru,
					 v->l2_tags, v->l2_set_mask, v->l2_ways, 0,     0,
					 0 };
	const unsigned slice_shift = v->slice_shift;
	const uint64_t slice_mask = v->slice_mask, slice_residue = v->slice_residue;
	const uint64_t line_bytes = UINT64_C(1) << shift;
	const uint8_t *const start = p;
	uint64_t addr[MTRACE_SLOTS], bytes = 0, long_bytes = 0;

	memcpy(addr, f->addr, sizeof(addr));
	while (p < limit) {
		const uint8_t *next = p + 1;
		uint8_t h = *p;
		unsigned s;
		uint64_t op, size, a, line, *set;

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
		set = cache_fast_set(&g, line);
		/* A miss that L2 serves with a clean L1 victim settles inline; a store of a
		 * whole line needs no fetch, so it takes the model's path. */
		if (sliced && ((a >> slice_shift) & slice_mask) != slice_residue) {
			/* Another slice's: the line lies inside one chunk. */
			f->other++;
			f->other_bytes += size;
			f->other_stores += op;
			f->other_store_bytes += op * size;
		} else if (!cache_fast_hit_recent(set, line, (unsigned)op) &&
			   !cache_fast_hit_older(&g, set, line, (unsigned)op) &&
			   !(g.l2_tags && size != line_bytes &&
			     cache_fast_l2_hit(&g, set, line, (unsigned)op, &f->misses)))
			cache_fast_miss(c, a, (uint32_t)size, (unsigned)op);
		if (op) {
			f->stores++;
			f->store_bytes += size;
		}
		addr[s] = a;
		bytes += size;
		p = next;
	}
	memcpy(f->addr, addr, sizeof(addr));
	/* One record per byte, but for the varint bytes of long records. */
	*records += (uint64_t)(p - start) - long_bytes;
	f->accesses += (uint64_t)(p - start) - long_bytes;
	f->bytes += bytes;
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
	uint64_t acc = f->accesses - f->other, st = f->stores - f->other_stores;
	uint64_t bytes = f->bytes - f->other_bytes,
		 st_bytes = f->store_bytes - f->other_store_bytes;

	cache_count_fast(c, acc - st, st, bytes - st_bytes, st_bytes);
	if (f->other)
		cache_count_fast_other(c, f->other - f->other_stores, f->other_stores,
				       f->other_bytes - f->other_store_bytes, f->other_store_bytes);
	cache_count_fast_misses(c, &f->misses);
	f->accesses = f->bytes = f->stores = f->store_bytes = 0;
	f->other = f->other_bytes = f->other_stores = f->other_store_bytes = 0;
}

long
mtrace_simulate(struct trace_reader *r, struct cache *c, const struct cache_fast_l1 *v,
		struct cache_ref *ctl)
{
	struct input *in = &r->in;

	while (!r->done) {
		const uint8_t *p, *end, *limit;
		struct fused f = { .accesses = 0 };
		uint64_t records = r->records, accesses = r->accesses;
		bool at_control = false;
		struct cache_ref e;

		input_fill(in, 2 * CHUNK);
		if (in->pos == in->len)
			return reader_fail(r, "%s: truncated after record %llu (no end record)",
					   in->path, (unsigned long long)r->records);
		p = in->buf + in->pos;
		end = in->buf + in->len;
		limit = end - (in->eof ? 0 : CHUNK);
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
			long got = after_fast_loop(r, ctl);

			if (got != 0)
				return got;
		}
	}
	return 0;
}
