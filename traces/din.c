/*
 * Dinero IV's "din" text format: one reference per line, "LABEL ADDRESS [anything]", both in
 * hex (an optional 0x is accepted), the rest of the line a comment. Labels: 0 data read,
 * 1 data write, 2 instruction fetch, 3 "misc" (Dinero IV treats it as a read; so does memsim).
 * As Dinero IV does (dinfmt.c), every reference is 4 bytes at the address rounded down to a
 * multiple of 4. Labels 4 and 5 (copy-back and invalidate escapes) are refused.
 */

#include <ctype.h>
#include <string.h>

#include "sim/util.h"
#include "traces/reader_impl.h"

static const char *
hex_field(const char *s, const char *end, uint64_t *out, size_t *digits)
{
	uint64_t v = 0;
	size_t n = 0;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end && isxdigit((unsigned char)*s); s++, n++) {
		unsigned char c = (unsigned char)*s;

		v = (v << 4) | (unsigned)(isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
	}
	*out = v;
	*digits = n;
	return s;
}

long
din_decode(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	size_t n = 0;

	while (n < max) {
		size_t len, digits;
		bool too_long;
		char *line = input_line(&r->in, &len, &too_long);
		const char *p, *end;
		uint64_t label, addr;

		if (!line)
			break;
		r->records++;
		if (too_long)
			return reader_fail(r, "%s:%llu: line too long", r->in.path,
					   (unsigned long long)r->records);
		p = line;
		end = line + len;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end) {
			r->skipped++;
			continue;
		}
		p = hex_field(p, end, &label, &digits);
		if (digits == 0 || digits > 8 || p == end || (*p != ' ' && *p != '\t'))
			return reader_fail(
				r, "%s:%llu: bad label in '%.40s' (expected 'LABEL ADDRESS')",
				r->in.path, (unsigned long long)r->records, line);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		p = hex_field(p, end, &addr, &digits);
		if (digits == 0 || digits > 16 || (p < end && *p != ' ' && *p != '\t'))
			return reader_fail(r, "%s:%llu: bad address in '%.40s'", r->in.path,
					   (unsigned long long)r->records, line);
		if (label > 3)
			return reader_fail(
				r,
				"%s:%llu: din label %llu is not supported (0 read, 1 write, "
				"2 instruction fetch, 3 misc)",
				r->in.path, (unsigned long long)r->records,
				(unsigned long long)label);
		buf[n].addr = addr & ~UINT64_C(3);
		buf[n].size = 4;
		buf[n].kind = (uint16_t)(label == 3 ? TRACE_EV_LOAD : label);
		buf[n].count = 1;
		n++;
	}
	return (long)n;
}
