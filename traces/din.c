/*
 * Dinero IV's "din" text format: one reference per line, "LABEL ADDRESS [anything]", both in
 * hex (an optional 0x is accepted), the rest of the line a comment. Labels: 0 data read,
 * 1 data write, 2 instruction fetch, 3 "misc" (Dinero IV treats it as a read; so does memsim).
 * As Dinero IV does (dinfmt.c), every reference is 4 bytes at the address rounded down to a
 * multiple of 4. Labels 4 and 5 (copy-back and invalidate escapes) are refused.
 * Lines of the usual form "L ADDR\n" (label 0-3, one space, 1 to 16 digits) are decoded 16 digits
 * at once by quick_lines(); any other line (blanks, tabs, comments, '\r', errors) takes the full
 * parse in din_decode(), which alone words the messages, so both give the same results.
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

/* 16 bytes as vectors of bytes and of 16-bit, 32-bit and 64-bit lanes (GCC's vector
 * extensions: SSE2 on x86-64, NEON on arm64, plain code elsewhere). */
typedef uint8_t u8x16 __attribute__((vector_size(16)));
typedef uint16_t u16x8 __attribute__((vector_size(16)));
typedef uint32_t u32x4 __attribute__((vector_size(16)));
typedef uint64_t u64x2 __attribute__((vector_size(16)));

/* Merges neighbouring values of bits bits each, in lanes of twice that, into one value, the
 * one earlier in memory the higher: which half of a lane that one lies in is the host's. */
#define LANE_MASK(bits) ((UINT64_C(1) << 2 * (bits)) - 1)
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define MERGE_LANES(x, bits) ((((x) << (bits)) | ((x) >> 2 * (bits))) & LANE_MASK(bits))
#else
#define MERGE_LANES(x, bits) ((((x) >> (bits)) | (x)) & LANE_MASK(bits))
#endif

/* 0xff in each byte of c that is an ASCII hex digit, 0 in the others; 'A'-'F' test as 'a'-'f'
 * (| 0x20), the digits without it. */
static ALWAYS_INLINE u8x16
hex_bytes(u8x16 c)
{
	return (u8x16)((u8x16)(c - '0') < 10) | (u8x16)((u8x16)((c | 0x20) - 'a') < 6);
}

/* The number that the hex digits at p spell, if every byte in the lanes that need holds
 * (0xff, lanes in memory order) is an ASCII hex digit: up to 16 digits, p[0] the top one, in
 * the top bits of *out, and what follows them below, for the caller to shift away. Reads 16
 * bytes from p. */
static ALWAYS_INLINE bool
hex16(const uint8_t *p, u64x2 need, uint64_t *out)
{
	u8x16 c, ok, nib;
	u16x8 h;
	u32x4 w;
	u64x2 v;

	memcpy(&c, p, sizeof(c));
	ok = hex_bytes(c);
	v = (u64x2)ok & need;
	if ((v[0] ^ need[0]) | (v[1] ^ need[1]))
		return false;
	/* A digit's value is its low nibble, plus 9 for a letter (bit 6 set); then neighbours
	 * merge into bytes, 16-bit and 32-bit values. */
	nib = (c & 0x0f) + ((c >> 6) & 1) * 9;
	h = (u16x8)nib;
	h = MERGE_LANES(h, 4);
	w = (u32x4)h;
	w = MERGE_LANES(w, 8);
	v = (u64x2)w;
	v = MERGE_LANES(v, 16);
	*out = v[0] << 32 | v[1];
	return true;
}

/* The layout of a usual line "L ADDR\n" (quick_line()): the fast path expects each line to
 * have the one before it. */
struct shape {
	size_t len;     /* bytes, '\n' included; 0: no usual line */
	bool hex_0x;    /* 0x before the digits */
	u64x2 need;     /* hex16()'s lanes: the digits' */
	unsigned shift; /* bits of hex16()'s value past the last digit */
};

/* Decodes the line at line into *e if it is a usual line of shape s: a label 0-3, one space,
 * 0x if s has it, hex digits where s has them, the newline at line[s.len - 1] (the digits hold
 * no newline, so that is the line's end). false for any other line or shape: the caller then
 * measures the line (line_shape()) or reads it the full way, which gives the same reference
 * for every line accepted here. Reads QUICK_LINE_MAX bytes from line. */
static ALWAYS_INLINE bool
quick_line(const uint8_t *line, const struct shape *s, struct cache_ref *e)
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
	uint64_t addr;

	if (label > 3 || line[s->len - 1] != '\n')
		return false;
	/* Without 0x in s, a line that has it fails below: 'x' is no digit. */
	if (s->hex_0x && (line[2] != '0' || (line[3] | 0x20) != 'x'))
		return false;
	if (!hex16(line + (s->hex_0x ? 4 : 2), s->need, &addr))
		return false;
	*e = ref[label];
	e->addr = (addr >> s->shift) & ~UINT64_C(3);
	return true;
}

/* The shape of the line at line if it is a usual line; else a shape quick_line() refuses for
 * it, or len 0 when its digits are not followed by a newline. Reads QUICK_LINE_MAX bytes from
 * line. Out of line: it runs only where a line's shape changes. */
static NOINLINE struct shape
line_shape(const uint8_t *line)
{
	struct shape s = { .hex_0x = line[2] == '0' && (line[3] | 0x20) == 'x' };
	const size_t digits_at = s.hex_0x ? 4 : 2;
	uint8_t is_hex[sizeof(u8x16)], need[sizeof(s.need)];
	u8x16 c, ok;
	size_t digits = 0;

	/* The digits run up to the first byte that is not one (hex_bytes(), as hex16() tests
	 * them), at most 16. */
	memcpy(&c, line + digits_at, sizeof(c));
	ok = hex_bytes(c);
	memcpy(is_hex, &ok, sizeof(is_hex));
	while (digits < sizeof(is_hex) && is_hex[digits])
		digits++;
	if (digits == 0 || line[digits_at + digits] != '\n')
		return (struct shape){ .len = 0 };
	s.len = digits_at + digits + 1;
	memset(need, 0, sizeof(need));
	memset(need, 0xff, digits);
	memcpy(&s.need, need, sizeof(need));
	s.shift = 4 * (unsigned)(16 - digits);
	return s;
}

/* Decodes up to max lines from line on while they have shape s into buf; returns how many.
 * The next line's start does not wait on this one's digits, only on s: the CPU overlaps the
 * lines. Out of line, so that the loop gets the registers to itself. */
static NOINLINE size_t
same_shape(const uint8_t *line, const struct shape *s, struct cache_ref *buf, size_t max)
{
	struct cache_ref *e = buf, *const e_end = buf + max;
	const struct shape k = *s;

	for (; e < e_end; e++, line += k.len)
		if (!quick_line(line, &k, e))
			break;
	return (size_t)(e - buf);
}

/* Decodes the usual lines (quick_line()) from the bytes read so far into buf, up to max; stops
 * at any other line and where fewer than QUICK_LINE_MAX bytes are left, for din_decode() to
 * read the full way (that one refills the buffer). Returns how many; consumes them. Lines
 * come in runs of one shape, each run measured at its first line. Locals, not in's fields,
 * carry the position: stores into buf could alias those. Out of line, so that din_decode()'s
 * full parse does not take registers from this loop. */
static NOINLINE size_t
quick_lines(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	const uint8_t *line = r->in.buf + r->in.pos;
	const uint8_t *const end = r->in.buf + r->in.len;
	size_t n = 0;

	while (n < max && end - line >= QUICK_LINE_MAX) {
		const struct shape s = line_shape(line);
		size_t run, fit;

		if (s.len == 0)
			break;
		/* The lines of this shape that leave QUICK_LINE_MAX bytes from their start. */
		fit = (size_t)(end - line - QUICK_LINE_MAX) / s.len + 1;
		if (fit > max - n)
			fit = max - n;
		run = same_shape(line, &s, buf + n, fit);
		if (run == 0) /* its shape, but not a usual line */
			break;
		n += run;
		line += run * s.len;
	}
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
