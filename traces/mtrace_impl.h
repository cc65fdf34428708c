#pragma once

/* Internal to traces/: decoding memsim-format records (traces/mtrace.h), shared by the
 * decoder (mtrace.c) and the fused decode-and-simulate loop (mtrace_fused.c). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "traces/mtrace.h"
#include "traces/reader_impl.h"

/* Decoding works on a pointer into the input buffer with at least CHUNK bytes ahead unless
 * the stream ends; a record never exceeds CHUNK bytes except control records with strings,
 * and repeat records, which take the slow path. */
#define CHUNK 64

/* The longest repeat record: header, two varints and MTRACE_REPEAT_MAX_RECORDS records of
 * at most a header and three ten-byte varints. */
#define MTRACE_REPEAT_MAX_BYTES (1 + 2 * 10 + MTRACE_REPEAT_MAX_RECORDS * 31)

/* A repeat record being emitted: ref[i] is body record i's access as last emitted, step[i]
 * what its address gains a period (its slot's net step over the body). */
struct mtrace_repeat {
	unsigned len;  /* body records */
	unsigned pos;  /* the next record to emit within the period */
	uint64_t left; /* periods not yet emitted (the one under way counts) */
	struct cache_ref ref[MTRACE_REPEAT_MAX_RECORDS];
	uint64_t step[MTRACE_REPEAT_MAX_RECORDS];
};

static inline bool
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

/* Makes the next input bytes ready for a fast loop: *p the first, *end past the last, *limit
 * where records stop being surely whole (CHUNK before the end, unless the stream ends there).
 * Returns 0, or -1 with the error recorded where the stream ends without an end record. */
static inline int
mtrace_window(struct trace_reader *r, const uint8_t **p, const uint8_t **end,
	      const uint8_t **limit)
{
	struct input *in = &r->in;

	input_fill(in, 2 * CHUNK);
	if (in->pos == in->len)
		return (int)reader_fail(r, "%s: truncated after record %llu (no end record)",
					in->path, (unsigned long long)r->records);
	*p = in->buf + in->pos;
	*end = in->buf + in->len;
	*limit = *end - (in->eof ? 0 : CHUNK);
	return 0;
}

/* Whether an access at a, size bytes, stepping by step (signed) stays inside the address
 * space for periods more steps: the rule a repeat record must keep. */
static inline bool
mtrace_steps_fit(uint64_t a, uint32_t size, uint64_t step, uint64_t periods)
{
	uint64_t room;

	if (step == 0 || periods == 0)
		return true;
	if ((int64_t)step > 0) {
		room = UINT64_MAX - size + 1 - a;
		return room / step >= periods;
	}
	return a / (0 - step) >= periods;
}

/* Parses the repeat record whose header byte is before p (r->records counts it) up to end,
 * which must hold all of it or the stream's end: decodes the body's records against the slots
 * (addr, ssize), which it leaves as the last period leaves them, and sets rep up to emit all
 * periods, the body's first. Counts the body's records and all accesses in r. Returns the
 * byte after the record, or NULL after recording an error. */
const uint8_t *mtrace_repeat_parse(struct trace_reader *r, const uint8_t *p, const uint8_t *end,
				   uint64_t *addr, uint32_t *ssize, struct mtrace_repeat *rep);

/* r's repeat state, allocated with the first repeat record. */
struct mtrace_repeat *mtrace_repeat_state(struct trace_reader *r);

/* Emits up to max of rep's accesses into out, in order; returns how many. */
size_t mtrace_repeat_emit(struct mtrace_repeat *rep, struct cache_ref *out, size_t max);

/* Handles the control record at the input position after a fast loop stopped on it. Returns
 * 1 if it produced an event in *ev, 0 if not (a repeat record leaves its accesses in r->rep),
 * -1 on error. */
long mtrace_after_fast_loop(struct trace_reader *r, struct cache_ref *ev);
