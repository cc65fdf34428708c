/*
 * UTF-8 and the bytes that are not: strict validation (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF), printable copies for messages, and JSON's escape rule
 * (base/utf8.h).
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/utf8.h"
#include "base/util.h"

size_t
utf8_sequence(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	if (s[0] < 0xc2 || s[0] > 0xf4 || n < len)
		return 0;
	/* The second byte's range rules out overlong forms, surrogates and past U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

bool
utf8_valid(const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t n = strlen(s), k;

	for (size_t i = 0; i < n; i += k)
		if ((k = utf8_sequence(c + i, n - i)) == 0)
			return false;
	return true;
}

char *
utf8_printable(const char *s, size_t n, char *out, size_t outlen)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t o = 0, k;

	if (outlen == 0)
		return out;
	n = strnlen(s, n);
	for (size_t i = 0; i < n; i += k) {
		k = utf8_sequence(c + i, n - i);
		/* C1 controls (U+0080 to U+009F): a terminal may act on them as on ESC. */
		if (k == 1 && (c[i] < ' ' || c[i] == 0x7f))
			k = 0;
		else if (k == 2 && c[i] == 0xc2 && c[i + 1] < 0xa0)
			k = 0;
		if (k == 0) {
			if (o + 4 >= outlen)
				break;
			snprintf(out + o, 5, "\\x%02x", c[i]);
			o += 4;
			k = 1;
			continue;
		}
		if (o + k >= outlen)
			break;
		memcpy(out + o, c + i, k);
		o += k;
	}
	out[o] = '\0';
	return out;
}

char *
utf8_json_escape(const char *text)
{
	const unsigned char *c = (const unsigned char *)text;
	size_t n = strlen(text), bad = 0, o = 0, k;
	char *out;

	for (size_t i = 0; i < n; i += k ? k : 1)
		bad += (k = utf8_sequence(c + i, n - i)) == 0;
	out = xzalloc(n + 5 * bad + 1);
	for (size_t i = 0; i < n; i += k) {
		k = utf8_sequence(c + i, n - i);
		if (k) {
			memcpy(out + o, c + i, k);
			o += k;
			continue;
		}
		snprintf(out + o, 7, "\\udc%02x", c[i]);
		o += 6;
		k = 1;
	}
	out[o] = '\0';
	return out;
}

static int
hex_digit(char h)
{
	return h >= '0' && h <= '9'   ? h - '0'
	       : h >= 'a' && h <= 'f' ? h - 'a' + 10
	       : h >= 'A' && h <= 'F' ? h - 'A' + 10
				      : -1;
}

/* The value of the 4 hex digits at h, or -1. */
static long
hex4(const char *h)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int d = hex_digit(h[i]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

size_t
utf8_json_unescape(char *text, size_t len)
{
	size_t i = 0, o = 0;
	bool after_high = false; /* the last escape was a surrogate pair's high half */

	while (i < len) {
		long v;

		if (text[i] != '\\' || i + 1 >= len) {
			text[o++] = text[i++];
			after_high = false;
			continue;
		}
		/* An escape: two characters, or six for \uXXXX. */
		v = text[i + 1] == 'u' && i + 6 <= len ? hex4(text + i + 2) : -1;
		if (v >= 0xdc80 && v <= 0xdcff && !after_high) {
			text[o++] = (char)(v & 0xff);
			i += 6;
			after_high = false;
			continue;
		}
		after_high = v >= 0xd800 && v <= 0xdbff;
		memmove(text + o, text + i, v >= 0 ? 6 : 2);
		o += v >= 0 ? 6 : 2;
		i += v >= 0 ? 6 : 2;
	}
	text[o] = '\0';
	return o;
}
