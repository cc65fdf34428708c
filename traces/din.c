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

/* The usual line's longest form, "L 0x" and 16 hex digits and '\n': the fast path reads
 * this many bytes from a line's start, whatever the line's length. */
#define QUICK_LINE_MAX 21

/* A byte in every lane of a 64-bit word: the constants of the 8-lane (SWAR) digit tests. */
#define LANES(b) (UINT64_C(0x0101010101010101) * (b))

/* The 8 bytes at p as a word whose lane i (bits 8i to 8i + 7) is p[i], on any host; written
 * out, not as a loop, so that compilers see one load. */
static inline uint64_t
load_lanes(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

/* 0x80 in each lane of w that holds an ASCII hex digit, 0 in the others. Each range test adds
 * to a lane's low 7 bits, so no carry reaches the next lane; a byte with its top bit set is no
 * digit. Lanes 'A'-'F' test as 'a'-'f' (| 0x20); the digits test without it. */
static inline uint64_t
hex_lanes(uint64_t w)
{
	const uint64_t low = w & LANES(0x7f), folded = low | LANES(0x20);
	const uint64_t digit = (low + LANES(0x80 - '0')) & ~(low + LANES(0x7f - '9'));
	const uint64_t letter = (folded + LANES(0x80 - 'a')) & ~(folded + LANES(0x7f - 'f'));

	return (digit | letter) & ~w & LANES(0x80);
}

/* w's first n lanes (1 to 8) moved up to the top, '0' digits in the lanes they leave: the
 * same number, now 8 digits long, with no byte of what follows them. */
static inline uint64_t
digits_on_top(uint64_t w, unsigned n)
{
	const unsigned shift = 8 * (8 - n);

	return w << shift | (LANES('0') & ~(~UINT64_C(0) << shift));
}

/* The number that the 8 hex digits in w spell, lane 0 the most significant. A digit's value is
 * its low nibble, plus 9 for a letter (bit 6 set); then each even lane takes its odd neighbour
 * as its low nibble, and two multiplies gather the four even lanes' bytes, most significant
 * first, into bits 32 to 63 (no partial product there overlaps another). */
static inline uint64_t
hex8_value(uint64_t w)
{
	uint64_t v = (w & LANES(0x0f)) + 9 * ((w >> 6) & LANES(1));

	v = (v << 4) + (v >> 8);
	return ((v & UINT64_C(0x000000ff000000ff)) * ((UINT64_C(1) << 56) + (1 << 8)) +
		((v >> 16) & UINT64_C(0x000000ff000000ff)) * ((UINT64_C(1) << 48) + 1)) >>
	       32;
}

/* Decodes line[0 .. len) into *e if it is the usual line "L ADDR\n": a label 0-3, one space,
 * 1 to 16 hex digits (0x allowed) and the newline at line[len - 1] (the digits hold no
 * newline, so that is the line's end). false for any other line (blank, commented, tabs,
 * '\r', garbled) or a wrong len: din_decode() then reads it the full way, which gives the same
 * reference for every line accepted here. Reads QUICK_LINE_MAX bytes from line. */
static ALWAYS_INLINE bool
quick_line(const uint8_t *line, size_t len, struct cache_ref *e)
{
	/* size, kind and count by label: Dinero's "misc" (3) is a read. */
	static const struct cache_ref ref[4] = {
		{ .size = 4, .kind = TRACE_EV_LOAD, .count = 1 },
		{ .size = 4, .kind = TRACE_EV_STORE, .count = 1 },
		{ .size = 4, .kind = TRACE_EV_IFETCH, .count = 1 },
		{ .size = 4, .kind = TRACE_EV_LOAD, .count = 1 },
	};
	/* The label and its space as one number: 0-3 for "0 " to "3 ", more for anything else. */
	const uint32_t label = (uint32_t)(line[0] | line[1] << 8) - ('0' | ' ' << 8);
	const uint8_t *q = line + 2;
	uint64_t w, addr;
	size_t digits;

	if (label > 3 || len < 4 || len > QUICK_LINE_MAX || line[len - 1] != '\n')
		return false;
	if (q[0] == '0' && (q[1] | 0x20) == 'x')
		q += 2;
	digits = (size_t)(line + len - 1 - q);
	if (digits == 0 || digits > 16)
		return false;
	w = load_lanes(q);
	if (digits <= 8) {
		w = digits_on_top(w, (unsigned)digits);
		if (hex_lanes(w) != LANES(0x80))
			return false;
		addr = hex8_value(w);
	} else {
		uint64_t w1 = digits_on_top(load_lanes(q + 8), (unsigned)(digits - 8));

		if ((hex_lanes(w) & hex_lanes(w1)) != LANES(0x80))
			return false;
		addr = hex8_value(w) << (4 * (digits - 8)) | hex8_value(w1);
	}
	*e = ref[label];
	e->addr = addr & ~UINT64_C(3);
	return true;
}

/* The length of the line at line, '\n' included, if it is a usual line (quick_line()); else
 * 0 or a length quick_line() refuses. Reads QUICK_LINE_MAX bytes from line. */
static inline size_t
usual_length(const uint8_t *line)
{
	const uint8_t *q = line + 2;
	uint64_t not0, not1;
	size_t digits;

	if (q[0] == '0' && (q[1] | 0x20) == 'x')
		q += 2;
	/* The digits run up to the first lane that is not one, in the first word or the next. */
	not0 = ~hex_lanes(load_lanes(q)) & LANES(0x80);
	not1 = ~hex_lanes(load_lanes(q + 8)) & LANES(0x80);
	if (not0)
		digits = (size_t)__builtin_ctzll(not0) / 8;
	else
		digits = 8 + (not1 ? (size_t)__builtin_ctzll(not1) / 8 : 8);
	return (size_t)(q + digits + 1 - line);
}

/* quick_line() for a line whose length differs from the one before: *len becomes its length.
 * Out of line, so that quick_lines()' loop stays small. */
static NOINLINE bool
quick_line_new_length(const uint8_t *line, size_t *len, struct cache_ref *e)
{
	*len = usual_length(line);
	return quick_line(line, *len, e);
}

/* Decodes the usual lines (quick_line()) from the bytes read so far into buf, up to max; stops
 * at any other line and where fewer than QUICK_LINE_MAX bytes are left, for din_decode() to
 * read the full way (that one refills the buffer). Returns how many; consumes them.
 * Each line is first tried at the length of the one before: the next line's start then does
 * not wait on this one's digits, the branch predictor carries it, and the CPU overlaps the
 * lines. Locals, not in's fields, carry the position: stores into buf could alias those. */
static size_t
quick_lines(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	const uint8_t *line = r->in.buf + r->in.pos;
	const uint8_t *const end = r->in.buf + r->in.len;
	size_t n = 0, len = 0;

	for (; n < max && end - line >= QUICK_LINE_MAX; n++, line += len)
		if (!quick_line(line, len, &buf[n]) && !quick_line_new_length(line, &len, &buf[n]))
			break;
	r->in.pos = (size_t)(line - r->in.buf);
	r->records += n;
	return n;
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

		n += quick_lines(r, buf + n, max - n);
		if (n == max)
			break;
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
