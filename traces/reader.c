#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "traces/mtrace.h"
#include "traces/reader_impl.h"

static const char *format_names[] = { "auto", "din", "lackey", "memsim", "dinbin" };

const char *
trace_format_name(enum trace_format f)
{
	return format_names[f];
}

bool
trace_format_parse(const char *name, enum trace_format *out)
{
	for (int f = TRACE_FORMAT_DIN; f <= TRACE_FORMAT_DINBIN; f++) {
		if (strcasecmp(name, format_names[f]) == 0) {
			*out = (enum trace_format)f;
			return true;
		}
	}
	return false;
}

long
reader_fail(struct trace_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->failed)
		return -1; /* the first problem is the one to name */
	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->failed = true;
	return -1;
}

/* Guesses the format from the first bytes: the memsim magic, a lackey line, or a din line. */
static enum trace_format
sniff(struct input *in)
{
	size_t avail = input_fill(in, 4096);
	const char *p = (const char *)in->buf + in->pos;
	const char *end = p + avail;

	if (avail >= 8 && memcmp(p, MTRACE_MAGIC, 8) == 0)
		return TRACE_FORMAT_MEMSIM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n == 0 || (n >= 2 && p[0] == '=' && p[1] == '=') || p[0] == '#') {
			p += n + 1;
			continue;
		}
		if (n >= 3 && ((p[0] == 'I' && p[1] == ' ') ||
			       (p[0] == ' ' && strchr("LSM", p[1]) && p[2] == ' ')))
			return TRACE_FORMAT_LACKEY;
		if (p[0] >= '0' && p[0] <= '9' && n >= 2 && (p[1] == ' ' || p[1] == '\t'))
			return TRACE_FORMAT_DIN;
		break;
	}
	return TRACE_FORMAT_AUTO;
}

struct trace_reader *
trace_reader_open(const char *path, enum trace_format format, char *err, size_t errlen)
{
	struct trace_reader *r = xzalloc(sizeof(*r));
	int rc = input_open(&r->in, path);

	if (rc) {
		snprintf(err, errlen, "cannot open trace %s: %s", path, strerror(-rc));
		free(r);
		return NULL;
	}
	if (format == TRACE_FORMAT_AUTO) {
		format = sniff(&r->in);
		if (r->in.error) {
			snprintf(err, errlen, "reading %s: %s", r->in.path, strerror(r->in.error));
			goto fail;
		}
		if (format == TRACE_FORMAT_AUTO) {
			if (r->in.len == r->in.pos)
				snprintf(err, errlen, "%s: empty trace", r->in.path);
			else
				snprintf(err, errlen,
					 "%s: cannot tell the trace format; pass --format "
					 "din|lackey|memsim, or dinbin for Dinero IV's binary "
					 "format, which has no magic to tell it by",
					 r->in.path);
			goto fail;
		}
	}
	r->format = format;
	if (format == TRACE_FORMAT_MEMSIM && mtrace_read_header(r)) {
		snprintf(err, errlen, "%s", r->err);
		goto fail;
	}
	return r;
fail:
	trace_reader_close(r);
	return NULL;
}

void
trace_reader_close(struct trace_reader *r)
{
	if (!r)
		return;
	input_close(&r->in);
	free(r->tool_version);
	free(r->command);
	free(r->arrays);
	for (unsigned i = 0; i < r->nphases; i++)
		free(r->phases[i]);
	free(r->phases);
	free(r->rep);
	free(r);
}

long
trace_reader_read(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	long n;

	if (r->failed)
		return -1;
	if (max == 0)
		return 0;
	switch (r->format) {
	case TRACE_FORMAT_DIN:
		n = din_decode(r, buf, max);
		break;
	case TRACE_FORMAT_LACKEY:
		n = lackey_decode(r, buf, max);
		break;
	case TRACE_FORMAT_DINBIN:
		n = dinbin_decode(r, buf, max);
		break;
	default:
		n = r->done ? 0 : mtrace_decode(r, buf, max);
		break;
	}
	if (n >= 0 && r->in.error)
		return reader_fail(r, "reading %s: %s", r->in.path, strerror(r->in.error));
	return n;
}

long
trace_reader_simulate(struct trace_reader *r, struct cache *c, struct cache_ref *ctl)
{
	struct cache_fast_l1 v;

	if (r->failed)
		return -1;
	if (r->format == TRACE_FORMAT_MEMSIM && cache_fast_l1_slice(c, &v)) {
		long rc = r->done ? 0 : mtrace_simulate(r, c, &v, ctl);

		if (rc >= 0 && r->in.error)
			return reader_fail(r, "reading %s: %s", r->in.path, strerror(r->in.error));
		return rc;
	}
	/* Other formats and models: batches through cache_access_refs(). A control event ends
	 * a batch, so nothing decoded is left behind. */
	for (;;) {
		struct cache_ref buf[1024];
		long n = trace_reader_read(r, buf, 1024);
		size_t done;

		if (n <= 0)
			return n;
		done = cache_access_refs(c, buf, (size_t)n);
		if (done < (size_t)n) {
			*ctl = buf[done];
			if (done + 1 < (size_t)n)
				return reader_fail(r, "internal: events after a control event");
			return 1;
		}
	}
}

void
trace_reader_quiet(struct trace_reader *r)
{
	r->in.quiet = true;
}

const char *
trace_reader_error(const struct trace_reader *r)
{
	return r->err;
}

enum trace_format
trace_reader_format(const struct trace_reader *r)
{
	return r->format;
}

const char *
trace_reader_tool_version(const struct trace_reader *r)
{
	return r->tool_version ? r->tool_version : "";
}

const char *
trace_reader_command(const struct trace_reader *r)
{
	return r->command ? r->command : "";
}

unsigned
trace_reader_array_count(const struct trace_reader *r)
{
	return r->narrays;
}

const struct trace_array *
trace_reader_array(const struct trace_reader *r, unsigned i)
{
	return &r->arrays[i];
}

unsigned
trace_reader_phase_count(const struct trace_reader *r)
{
	return r->nphases;
}

const char *
trace_reader_phase(const struct trace_reader *r, unsigned i)
{
	return r->phases[i];
}

uint64_t
trace_reader_records(const struct trace_reader *r)
{
	return r->records;
}

uint64_t
trace_reader_skipped(const struct trace_reader *r)
{
	return r->skipped;
}
