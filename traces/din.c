/*
 * Dinero IV's "din" text format: one reference per line, "LABEL ADDRESS [anything]", both in
 * hex (an optional 0x is accepted), the rest of the line a comment. Labels: 0 data read,
 * 1 data write, 2 instruction fetch, 3 "misc" (Dinero IV treats it as a read; so does memsim).
 * As Dinero IV does (dinfmt.c), every reference is 4 bytes at the address rounded down to a
 * multiple of 4. Labels 4 and 5 (copy-back and invalidate escapes) are refused.
 */

#include <string.h>

#include "base/util.h"
#include "traces/reader_impl.h"

/* A hex digit's value plus one; 0 for any other byte (NUL included). A table lookup per
 * character instead of isxdigit(), isdigit() and tolower(): each of those read the locale's
 * tables through a libc call, and together they were half of a din replay's time. */
static const uint8_t hex_digit[256] = {
	['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
	['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
	['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Reads the hex number at s (an optional 0x first); returns where it stopped. The line is
 * NUL-terminated (input_line()), and NUL is not a digit, so the loop cannot pass its end. */
static const char *
hex_field(const char *s, const char *end, uint64_t *out, size_t *digits)
{
	const char *first;
	uint64_t v = 0;
	unsigned d;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	first = s;
	for (; (d = hex_digit[(unsigned char)*s]) != 0; s++)
		v = (v << 4) | (d - 1);
	*out = v;
	*digits = (size_t)(s - first);
	return s;
}

/* The usual line, "L ADDR\n": a label 0-3, one space, 1 to 16 hex digits (0x allowed), read
 * straight from the input buffer, without input_line()'s search for the newline and its
 * bookkeeping. Returns false, consuming nothing, for any other line (blank, commented, tabs,
 * '\r', garbled, or one that may run past the bytes read so far): din_decode() then reads it
 * the full way, which gives the same reference for every line accepted here. Such a line is
 * at most 21 bytes, far from input_line()'s length limit. */
static bool
quick_line(struct input *in, struct cache_ref *e)
{
	const uint8_t *p = in->buf + in->pos;
	uint64_t v = 0;
	unsigned label = hex_digit[p[0]], d, i;

	/* The longest such line, "L 0x" and 16 digits and '\n', must lie in the bytes read. */
	if (in->len - in->pos < 21 || label == 0 || label > 4 || p[1] != ' ')
		return false;
	p += 2;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (i = 0; i < 16 && (d = hex_digit[p[i]]) != 0; i++)
		v = (v << 4) | (d - 1);
	if (i == 0 || p[i] != '\n')
		return false;
	in->pos = (size_t)(p + i + 1 - in->buf);
	e->addr = v & ~UINT64_C(3);
	e->size = 4;
	e->kind = (uint16_t)(label == 4 ? TRACE_EV_LOAD : label - 1);
	e->count = 1;
	return true;
}

long
din_decode(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	size_t n = 0;

	while (n < max) {
		size_t len, digits;
		bool too_long;
		char *line;
		const char *p, *end;
		uint64_t label, addr;

		if (quick_line(&r->in, &buf[n])) {
			r->records++;
			n++;
			continue;
		}
		line = input_line(&r->in, &len, &too_long);
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
