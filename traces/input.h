#pragma once

/*
 * Buffered reading of a trace file or stdin in large blocks, for the trace readers: the whole
 * file is never held in memory.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct input {
	int fd;
	bool owns_fd;
	bool eof;
	int error; /* errno of a failed read, or 0 */
	uint8_t *buf;
	size_t cap;
	size_t pos, len;   /* unread bytes are buf[pos .. len) */
	uint64_t consumed; /* bytes before buf[0] in the stream */
	uint64_t size;     /* bytes of a regular file, for the progress line; 0: not known */
	char *path;        /* for messages; "stdin" for "-" */
	bool quiet;        /* no progress reports (a replay thread beside the one that reports) */
};

/* Opens path ("-" for stdin). Returns 0 or a negative errno. */
int input_open(struct input *in, const char *path);
void input_close(struct input *in);

/* Makes at least `need` unread bytes available unless the stream ends first (need <= cap: a
 * full buffer would read nothing and take that for the end). Returns the number of unread
 * bytes. */
size_t input_fill(struct input *in, size_t need);

/* Returns the next line without its '\n' (and '\r'), NUL-terminated in place, with its length
 * in *len; NULL at end of input. A last line without '\n' is returned too. A line longer than
 * half the buffer (512 KiB), '\n' not counted, is cut there and flagged by *too_long, wherever
 * it is and however the reads fall. */
char *input_line(struct input *in, size_t *len, bool *too_long);
