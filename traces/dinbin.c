/*
 * Dinero IV's binary input format (dineroIV -informat b; its reader is tracein_binary() in
 * binaryfmt.c): 8-byte records, each a little-endian 4-byte address, a little-endian 2-byte
 * size, a 1-byte access type and a byte of padding, ignored as Dinero IV ignores it. Types
 * are din's labels (din.c): 0 read, 1 write, 2 instruction fetch, 3 misc (a read); 4
 * copy-back and 5 invalidate are refused, as din.c refuses them, and so is any other. Unlike
 * din text the reference is taken as it is, size bytes at the address. Size 0 is refused:
 * Dinero IV allows it for copy-back and invalidate only (d4.h). A trailing partial record
 * is an error naming its byte offset (Dinero IV drops it silently). The format has no magic,
 * so it is never sniffed: it is read only when asked for by name.
 */

#include <string.h>

#include "traces/reader_impl.h"

#define RECORD_BYTES 8

/* The record at p, the r->records-th, at byte offset off; -1 with a message if refused. */
static long
decode_record(struct trace_reader *r, const uint8_t *p, uint64_t off, struct cache_ref *e)
{
	uint32_t addr =
		(uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	uint32_t size = (uint32_t)p[4] | (uint32_t)p[5] << 8;
	unsigned type = p[6];

	if (type > 3)
		return reader_fail(r,
				   "%s: record %llu (byte %llu): access type %u is not supported "
				   "(0 read, 1 write, 2 instruction fetch, 3 misc)",
				   r->in.path, (unsigned long long)r->records,
				   (unsigned long long)off, type);
	if (size == 0)
		return reader_fail(r,
				   "%s: record %llu (byte %llu): size 0 (Dinero IV allows it only "
				   "for copy-back and invalidate)",
				   r->in.path, (unsigned long long)r->records,
				   (unsigned long long)off);
	e->addr = addr;
	e->size = size;
	e->kind = (uint16_t)(type == 3 ? TRACE_EV_LOAD : type);
	e->count = 1;
	return 0;
}

long
dinbin_decode(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	size_t n = 0;

	while (n < max) {
		size_t avail = input_fill(&r->in, RECORD_BYTES);
		size_t whole = avail / RECORD_BYTES;

		if (avail == 0 || (whole == 0 && r->in.error))
			break; /* the end, or a read error trace_reader_read() names */
		if (whole == 0)
			return reader_fail(
				r, "%s: truncated record %llu at byte %llu: %zu of %d bytes",
				r->in.path, (unsigned long long)r->records + 1,
				(unsigned long long)(r->in.consumed + r->in.pos), avail,
				RECORD_BYTES);
		if (whole > max - n)
			whole = max - n;
		for (size_t i = 0; i < whole; i++, n++) {
			uint64_t off = r->in.consumed + r->in.pos;

			r->records++;
			if (decode_record(r, r->in.buf + r->in.pos, off, &buf[n]))
				return -1;
			r->in.pos += RECORD_BYTES;
		}
	}
	return (long)n;
}
