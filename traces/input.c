#include "traces/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/progress.h"
#include "base/util.h"

/* The fuzz harnesses build this file with a smaller buffer (tests/fuzz/meson.build): under
 * ASan a 1 MiB allocation per open costs more than decoding their inputs, which stay under
 * half of it, so they read exactly as with the full buffer. */
#ifndef INPUT_BUF_BYTES
#define INPUT_BUF_BYTES (1u << 20)
#endif

int
input_open(struct input *in, const char *path)
{
	struct stat st;

	memset(in, 0, sizeof(*in));
	if (strcmp(path, "-") == 0) {
		in->fd = STDIN_FILENO;
		in->path = xstrdup("stdin");
	} else {
		in->fd = open(path, O_RDONLY);
		if (in->fd < 0)
			return -errno;
		in->owns_fd = true;
		in->path = xstrdup(path);
	}
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode))
		in->size = (uint64_t)st.st_size;
	in->cap = INPUT_BUF_BYTES;
	in->buf = xzalloc(in->cap + 1);
	return 0;
}

void
input_close(struct input *in)
{
	if (in->owns_fd && in->fd >= 0)
		close(in->fd);
	free(in->buf);
	free(in->path);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

size_t
input_fill(struct input *in, size_t need)
{
	while (in->len - in->pos < need && !in->eof) {
		ssize_t n;

		if (in->pos > 0) {
			memmove(in->buf, in->buf + in->pos, in->len - in->pos);
			in->consumed += in->pos;
			in->len -= in->pos;
			in->pos = 0;
		}
		n = read(in->fd, in->buf + in->len, in->cap - in->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			in->error = errno;
			in->eof = true;
		} else if (n == 0) {
			in->eof = true;
		} else {
			double got = (double)(in->consumed + (in->len += (size_t)n));

			/* A read is a megabyte: reporting each costs nothing beside it. */
			if (!in->quiet)
				progress_report(in->size ? got / (double)in->size : -1,
						got / 1048576.0, (double)in->size / 1048576.0,
						"MiB read");
		}
	}
	return in->len - in->pos;
}

char *
input_line(struct input *in, size_t *len, bool *too_long)
{
	/* The longest line, without its '\n': whether a line is too long must not depend on
	 * where reads happened to end or on whether a '\n' or the end of input follows it. */
	const size_t max = in->cap / 2;
	uint8_t *start, *nl;
	size_t avail, seen;

	*too_long = false;
	avail = in->len - in->pos;
	seen = avail < max + 1 ? avail : max + 1;
	nl = seen ? memchr(in->buf + in->pos, '\n', seen) : NULL;
	/* Refill until a newline arrives within max + 1 bytes, or the input ends. */
	while (!nl && !in->eof && seen <= max) {
		input_fill(in, seen + 1);
		avail = in->len - in->pos;
		if (avail > seen) {
			size_t more = (avail < max + 1 ? avail : max + 1) - seen;

			nl = memchr(in->buf + in->pos + seen, '\n', more);
			seen += more;
		}
	}
	avail = in->len - in->pos;
	if (!nl) {
		if (avail == 0)
			return NULL;
		if (avail > max) {
			*too_long = true;
			nl = in->buf + in->pos + max;
		} else {
			nl = in->buf + in->len; /* last line without '\n' */
		}
	}
	start = in->buf + in->pos;
	*len = (size_t)(nl - start);
	in->pos = (size_t)(nl - in->buf) + (nl < in->buf + in->len ? 1 : 0);
	if (*len && start[*len - 1] == '\r')
		(*len)--;
	start[*len] = '\0';
	return (char *)start;
}
