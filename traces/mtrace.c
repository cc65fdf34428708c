/* The memsim trace reader (traces/mtrace.h); its writer is mtrace_writer.c. */

#include "traces/mtrace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "traces/mtrace_impl.h"

/* ---- reader ---- */

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
	/* Version 2 adds the repeat record; everything else reads as in version 1. */
	if (r->version < 1 || r->version > MTRACE_VERSION)
		return (int)reader_fail(r,
					"%s: memsim trace format version %u; this memsim reads 1 to %u",
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

struct mtrace_repeat *
mtrace_repeat_state(struct trace_reader *r)
{
	if (!r->rep)
		r->rep = xzalloc(sizeof(*r->rep));
	return r->rep;
}

/* A repeat record at the input position (after its header byte): parsed into r->rep, whose
 * accesses the caller emits. */
static long
repeat_record(struct trace_reader *r)
{
	struct input *in = &r->in;
	const uint8_t *p;

	input_fill(in, MTRACE_REPEAT_MAX_BYTES);
	p = mtrace_repeat_parse(r, in->buf + in->pos, in->buf + in->len, r->slot_addr,
				r->slot_size, mtrace_repeat_state(r));
	if (!p)
		return -1;
	in->pos = (size_t)(p - in->buf);
	return 0;
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
		/* Version 1 has no repeat record. */
		if ((h & 0x1f) == MTRACE_CTRL_REPEAT && r->version >= 2)
			return repeat_record(r);
		return reader_fail(r, "%s: record %llu has unknown control type %u", r->in.path,
				   (unsigned long long)r->records + 1, h & 0x1f);
	}
	return reader_fail(r, "%s: truncated in record %llu", r->in.path,
			   (unsigned long long)r->records);
}

long
mtrace_after_fast_loop(struct trace_reader *r, struct cache_ref *ev)
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
		const uint8_t *p = NULL, *end = NULL, *limit = NULL;
		uint64_t addr[MTRACE_SLOTS], records, accesses;
		uint32_t ssize[MTRACE_SLOTS];
		bool at_control = false;

		if (r->rep && r->rep->left) {
			n += mtrace_repeat_emit(r->rep, buf + n, max - n);
			continue;
		}
		records = r->records;
		accesses = r->accesses;
		if (mtrace_window(r, &p, &end, &limit))
			return -1;
		/* Fast loop over the bytes that surely hold whole access records, with the
		 * slots and counters in locals so they stay in registers. */
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
			} else if (h == (0xe0 | MTRACE_CTRL_REPEAT) && r->version >= 2 &&
				   (in->eof || (size_t)(end - p) >= MTRACE_REPEAT_MAX_BYTES)) {
				/* A repeat in the buffer: parsed here, with the slots in locals. */
				r->records = records + 1;
				r->accesses = accesses;
				p = mtrace_repeat_parse(r, p + 1, end, addr, ssize, mtrace_repeat_state(r));
				if (!p)
					return -1;
				n += mtrace_repeat_emit(r->rep, buf + n, max - n);
				records = r->records;
				accesses = r->accesses;
				if (r->rep->left)
					break;
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
			long got = mtrace_after_fast_loop(r, &buf[n]);

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

