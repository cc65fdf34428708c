#pragma once

/*
 * UTF-8 and the bytes that are not: text a user or a plugin gave (paths, --param values,
 * names) may hold any byte, and what memsim writes must still be one printable line for a
 * person and valid UTF-8 for a program.
 *
 * JSON's rule, in one place (utf8_json_escape() on every text memsim prints, the unescape on
 * every text it parses): valid UTF-8 is kept as it is; each byte of a string that is not part
 * of a valid sequence is written as the escape \udcXX (XX the byte, 80 to ff), as Python's
 * os.fsdecode() (PEP 383, "surrogateescape") names it. The text is then ASCII where the
 * bytes were, json.loads() gives the string os.fsdecode() gives, and reading maps the escape
 * back to the byte, so names and paths round-trip.
 */

#include <stdbool.h>
#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 sequence at s, of at most n bytes, or 0: a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, or cut short. */
size_t utf8_sequence(const unsigned char *s, size_t n);

/* Whether the NUL-terminated s is valid UTF-8. */
bool utf8_valid(const char *s);

/* s (at most n bytes, up to a NUL) as one printable line in out (outlen bytes, always
 * NUL-terminated): control characters (a newline too), DEL, C1 controls and bytes that are
 * not UTF-8 as \xNN, printable ASCII and valid UTF-8 as they are; a character or escape that
 * does not fit is left out whole. Returns out. */
char *utf8_printable(const char *s, size_t n, char *out, size_t outlen);

/* JSON text (as cJSON prints it: bytes >= 0x80 only inside strings) with every byte that is
 * not UTF-8 written as \udcXX. Caller frees with free(). */
char *utf8_json_escape(const char *text);

/* The NUL-terminated JSON text of len bytes with every \udcXX escape (80 to ff, not the low
 * half of a surrogate pair) turned back into its byte, in place. Returns the new length. */
size_t utf8_json_unescape(char *text, size_t len);
