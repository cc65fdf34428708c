#pragma once

/* Reading a whole file in a test. */

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes with a NUL after them (caller frees), and their count in *len when len is
 * not NULL; NULL (and *len = -1) when it cannot be read. */
static inline char *
slurp(const char *path, long *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (len)
		*len = -1;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	if (len)
		*len = n;
	return buf;
}

/* As slurp(), but "" for a file that cannot be read. */
static inline char *
slurp_text(const char *path)
{
	char *s = slurp(path, NULL);

	return s ? s : calloc(1, 1);
}
