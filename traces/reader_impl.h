#pragma once

/* Internal to traces/: the reader state shared by the format decoders. */

#include "traces/input.h"
#include "traces/reader.h"

#define MTRACE_SLOTS 4
#define MAX_COUNT 65535u /* the largest count of one memsim-format record */

struct trace_reader {
	struct input in;
	enum trace_format format;
	char err[512];
	bool failed;
	bool done;
	uint64_t records; /* binary records, or text lines */
	uint64_t skipped;
	/* memsim format */
	unsigned version;
	char *tool_version;
	char *command;
	struct trace_array *arrays;
	unsigned narrays, arrays_cap;
	char **phases;
	unsigned nphases, phases_cap;
	uint64_t slot_addr[MTRACE_SLOTS];
	uint32_t slot_size[MTRACE_SLOTS];
	uint64_t accesses;
	struct mtrace_repeat *rep; /* the repeat record being emitted, or NULL before any */
	/* lackey: the store half of an 'M' line that did not fit in the batch */
	bool have_pending;
	struct cache_ref pending;
};

/* Records a one-line error (the first one stays); always returns -1 so decoders can `return
 * reader_fail(...)`. */
long reader_fail(struct trace_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

long din_decode(struct trace_reader *r, struct cache_ref *buf, size_t max);
long dinbin_decode(struct trace_reader *r, struct cache_ref *buf, size_t max);
long lackey_decode(struct trace_reader *r, struct cache_ref *buf, size_t max);
int mtrace_read_header(struct trace_reader *r);
long mtrace_decode(struct trace_reader *r, struct cache_ref *buf, size_t max);
long mtrace_simulate(struct trace_reader *r, struct cache *c, const struct cache_fast_l1 *v,
		     struct cache_ref *ctl);
