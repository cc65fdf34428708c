/*
 * Valgrind lackey --trace-mem=yes output:
 *   "I  0400d7d4,8"   instruction fetch of 8 bytes
 *   " L 7ff000ff0,8"  load;  " S ..." store;  " M ..." modify = a load then a store
 * Lines starting with "==" are Valgrind's own messages and are skipped, as are blank lines.
 */

#include <string.h>

#include "base/util.h"
#include "traces/reader_impl.h"

static bool
parse_addr_size(const char *s, size_t len, uint64_t *addr, uint32_t *size)
{
	const char *comma = memchr(s, ',', len);
	uint64_t v = 0;
	size_t i;

	if (!comma || !parse_hex_u64(s, (size_t)(comma - s), addr))
		return false;
	i = (size_t)(comma - s) + 1;
	if (i >= len)
		return false;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > TRACE_MAX_ACCESS_BYTES)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v == 0 || v > TRACE_MAX_ACCESS_BYTES || *addr + v - 1 < *addr)
		return false;
	*size = (uint32_t)v;
	return true;
}

long
lackey_decode(struct trace_reader *r, struct cache_ref *buf, size_t max)
{
	size_t n = 0;

	if (r->have_pending) {
		buf[n++] = r->pending;
		r->have_pending = false;
	}
	while (n < max) {
		size_t len;
		bool too_long;
		char *line = input_line(&r->in, &len, &too_long);
		struct cache_ref *e = &buf[n];
		const char *body;
		char op;

		if (!line)
			break;
		r->records++;
		if (too_long)
			return reader_fail(r, "%s:%llu: line too long", r->in.path,
					   (unsigned long long)r->records);
		if (len == 0 || (len >= 2 && line[0] == '=' && line[1] == '=')) {
			r->skipped++;
			continue;
		}
		if (len >= 3 && line[0] == 'I' && line[1] == ' ' && line[2] == ' ') {
			op = 'I';
			body = line + 3;
		} else if (len >= 3 && line[0] == ' ' && line[2] == ' ' && strchr("LSM", line[1]) &&
			   line[1]) {
			op = line[1];
			body = line + 3;
		} else {
			return reader_fail(r, "%s:%llu: not a lackey line: '%.40s'", r->in.path,
					   (unsigned long long)r->records, line);
		}
		if (!parse_addr_size(body, len - (size_t)(body - line), &e->addr, &e->size))
			return reader_fail(r, "%s:%llu: bad address,size in '%.40s'", r->in.path,
					   (unsigned long long)r->records, line);
		e->count = 1;
		e->kind = op == 'I' ? TRACE_EV_IFETCH : op == 'S' ? TRACE_EV_STORE : TRACE_EV_LOAD;
		n++;
		if (op == 'M') {
			struct cache_ref st = *e;

			st.kind = TRACE_EV_STORE;
			if (n < max) {
				buf[n++] = st;
			} else {
				r->pending = st;
				r->have_pending = true;
			}
		}
	}
	return (long)n;
}
