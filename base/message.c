#include "base/message.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "base/util.h"

void
message_vline(const char *fmt, va_list ap)
{
	va_list again;
	char *msg, *line;
	size_t len;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	len = n > 0 ? (size_t)n : 0;
	msg = xzalloc(len + 1);
	if (n > 0)
		vsnprintf(msg, len + 1, fmt, ap);
	line = xzalloc(4 * len + 1);
	fprintf(stderr, "memsim: %s\n", utf8_printable(msg, len, line, 4 * len + 1));
	free(line);
	free(msg);
}

void
message_line(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message_vline(fmt, ap);
	va_end(ap);
}
