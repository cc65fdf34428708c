/*
 * The repeat record of memsim traces (traces/mtrace.h): parsing it and emitting its accesses.
 * Period t of a body record's access lies at its first period's address plus (t - 1) steps,
 * its slot's net step over the body, so the periods after the first cost an add and a store
 * an access, with no bytes to decode.
 */

#include <stddef.h>
#include <string.h>

#include "traces/mtrace_impl.h"

/* Decodes body record i (header at p) into rep->ref[i]; returns the byte after it, or NULL
 * after recording an error. */
static const uint8_t *
body_record(struct trace_reader *r, const uint8_t *p, const uint8_t *end, uint64_t *addr,
	    uint32_t *ssize, struct mtrace_repeat *rep, unsigned i)
{
	uint64_t records = r->records + i; /* read before this one */
	uint8_t h;

	if (p >= end) {
		reader_fail(r, "%s: record %llu is truncated", r->in.path,
			    (unsigned long long)records + 1);
		return NULL;
	}
	h = *p;
	if ((h & 0xe0) == 0xe0) {
		reader_fail(r, "%s: record %llu, in the body of repeat record %llu, is no access",
			    r->in.path, (unsigned long long)records + 1,
			    (unsigned long long)r->records);
		return NULL;
	}
	if (h & 0x80)
		return long_record(r, p, end, addr, ssize, records, &rep->ref[i]);
	if (!short_record(h, addr, ssize, &rep->ref[i])) {
		reader_fail(r, "%s: record %llu wraps the address space", r->in.path,
			    (unsigned long long)records + 1);
		return NULL;
	}
	return p + 1;
}

const uint8_t *
mtrace_repeat_parse(struct trace_reader *r, const uint8_t *p, const uint8_t *end, uint64_t *addr,
		    uint32_t *ssize, struct mtrace_repeat *rep)
{
	uint64_t len, periods, start[MTRACE_SLOTS], step[MTRACE_SLOTS], per_period = 0;
	uint8_t slot[MTRACE_REPEAT_MAX_RECORDS];

	if (!get_varint(&p, end, &len) || !get_varint(&p, end, &periods)) {
		reader_fail(r, "%s: record %llu is truncated", r->in.path,
			    (unsigned long long)r->records);
		return NULL;
	}
	if (len < 1 || len > MTRACE_REPEAT_MAX_RECORDS || periods < 2 ||
	    periods > MTRACE_REPEAT_MAX_PERIODS) {
		reader_fail(r,
			    "%s: record %llu repeats %llu records %llu times (1 to %u records, 2 "
			    "to %llu times)",
			    r->in.path, (unsigned long long)r->records, (unsigned long long)len,
			    (unsigned long long)periods, MTRACE_REPEAT_MAX_RECORDS,
			    (unsigned long long)MTRACE_REPEAT_MAX_PERIODS);
		return NULL;
	}
	memcpy(start, addr, sizeof(start));
	for (unsigned i = 0; i < len; i++) {
		slot[i] = (uint8_t)((*p & 0x80 ? *p >> 3 : *p >> 4) & 3);
		p = body_record(r, p, end, addr, ssize, rep, i);
		if (!p)
			return NULL;
		per_period += rep->ref[i].count;
	}
	for (unsigned s = 0; s < MTRACE_SLOTS; s++)
		step[s] = addr[s] - start[s];
	for (unsigned i = 0; i < len; i++) {
		rep->step[i] = step[slot[i]];
		if (!mtrace_steps_fit(rep->ref[i].addr, rep->ref[i].size, rep->step[i],
				      periods - 1)) {
			reader_fail(r, "%s: repeat record %llu wraps the address space",
				    r->in.path, (unsigned long long)r->records);
			return NULL;
		}
		/* Emitting a period adds the step first. */
		rep->ref[i].addr -= rep->step[i];
	}
	for (unsigned s = 0; s < MTRACE_SLOTS; s++)
		addr[s] += (periods - 1) * step[s];
	rep->len = (unsigned)len;
	rep->pos = 0;
	rep->left = periods;
	r->records += len;
	r->accesses += periods * per_period;
	return p;
}

/* An access as one 16-byte value: its address, then its size, kind and count as they lie in
 * struct cache_ref. Emitting adds the step to the address lane and stores the whole. */
typedef uint64_t ref_lanes __attribute__((vector_size(16)));

/* Emits periods whole periods of rep's len records into out. Each record's access is held in
 * a vector (ref_lanes), so that an access costs one add and one 16-byte store; the addresses
 * go back to rep at the end. */
static size_t
emit_periods(struct mtrace_repeat *rep, struct cache_ref *out, uint64_t periods)
{
	_Static_assert(sizeof(struct cache_ref) == sizeof(ref_lanes) &&
			       offsetof(struct cache_ref, addr) == 0,
		       "struct cache_ref is an address and 8 bytes of the rest");
	const unsigned len = rep->len;
	ref_lanes cur[MTRACE_REPEAT_MAX_RECORDS], step[MTRACE_REPEAT_MAX_RECORDS];
	size_t n = 0;

	for (unsigned i = 0; i < len; i++) {
		memcpy(&cur[i], &rep->ref[i], sizeof(cur[i]));
		step[i] = (ref_lanes){ rep->step[i], 0 };
	}
	if (len == 1) {
		/* A single stream: one access a period. */
		for (uint64_t t = 0; t < periods; t++, n++) {
			cur[0] += step[0];
			memcpy(&out[n], &cur[0], sizeof(cur[0]));
		}
	} else if (len == 2) {
		/* Two interleaved streams, the commonest loop body. */
		ref_lanes a = cur[0], b = cur[1];

		for (uint64_t t = 0; t < periods; t++, n += 2) {
			a += step[0];
			b += step[1];
			memcpy(&out[n], &a, sizeof(a));
			memcpy(&out[n + 1], &b, sizeof(b));
		}
		cur[0] = a;
		cur[1] = b;
	} else {
		for (uint64_t t = 0; t < periods; t++)
			for (unsigned i = 0; i < len; i++, n++) {
				cur[i] += step[i];
				memcpy(&out[n], &cur[i], sizeof(cur[i]));
			}
	}
	for (unsigned i = 0; i < len; i++)
		rep->ref[i].addr = cur[i][0];
	return n;
}

size_t
mtrace_repeat_emit(struct mtrace_repeat *rep, struct cache_ref *out, size_t max)
{
	const unsigned len = rep->len;
	size_t n = 0;

	/* Whole periods while they fit, then one access at a time. */
	if (rep->pos == 0 && max >= len) {
		uint64_t whole = max / len;

		if (whole > rep->left)
			whole = rep->left;
		n = emit_periods(rep, out, whole);
		rep->left -= whole;
	}
	while (n < max && rep->left) {
		unsigned i = rep->pos;

		rep->ref[i].addr += rep->step[i];
		out[n++] = rep->ref[i];
		if (++rep->pos == len) {
			rep->pos = 0;
			rep->left--;
		}
	}
	return n;
}
