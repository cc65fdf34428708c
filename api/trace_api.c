/*
 * memsim/trace.h over the tracing layer (sim/trace.h) and the trace writer (traces/mtrace.h).
 * Each call is one out-of-line call into the library: a plugin cannot inline memsim's fast
 * path across the ABI, so it pays a call per access that memsim's own kernels do not.
 */

#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MEMSIM_NO_TR_MACROS
#pragma GCC visibility push(default)
#include "memsim/memsim.h"
#pragma GCC visibility pop

#include "api/api.h"
#include "base/util.h"

struct memsim_trace *
memsim_trace_create(struct memsim_hierarchy *h, const char *record_path, char *err,
		    size_t errlen)
{
	struct memsim_trace *t;
	struct trace_sink sink;
	char scratch[256];

	api_err_buffer(&err, &errlen, scratch, sizeof(scratch));
	if (!h && !record_path) {
		snprintf(err, errlen, "a trace needs a hierarchy, a file to record into, or both");
		return NULL;
	}
	t = xzalloc(sizeof(*t));
	t->h = h;
	if (record_path) {
		t->rec = mtrace_writer_open(record_path, "libmemsim", err, errlen);
		if (!t->rec) {
			free(t);
			return NULL;
		}
		sink = mtrace_writer_sink(t->rec);
	}
	t->ctx = trace_ctx_create(h ? h->cache : NULL, t->rec ? &sink : NULL,
				  h ? h->spec.tiles_in_scratch : 0);
	if (!t->ctx) {
		snprintf(err, errlen, "cannot create the trace");
		if (t->rec) /* a file that was there stays as it was */
			mtrace_writer_discard(t->rec);
		free(t);
		return NULL;
	}
	if (h) {
		t->live = true;
		h->live_traces++;
	}
	return t;
}

/* t no longer holds its hierarchy's model: memsim_hierarchy_reset() may replace it. */
static void
end_live(struct memsim_trace *t)
{
	if (t->live)
		t->h->live_traces--;
	t->live = false;
}

int
memsim_trace_finish(struct memsim_trace *t, char *err, size_t errlen)
{
	char scratch[256];
	int rc = 0;

	api_err_buffer(&err, &errlen, scratch, sizeof(scratch));
	if (!t) {
		snprintf(err, errlen, "no trace (NULL)");
		return -1;
	}
	if (t->finished)
		return 0;
	t->finished = true;
	trace_flush(t->ctx);
	if (t->h && t->h->cache)
		cache_flush(t->h->cache);
	end_live(t);
	if (t->rec && mtrace_writer_close(t->rec, err, errlen))
		rc = -1;
	t->rec = NULL;
	if (rc == 0 && t->error[0]) {
		snprintf(err, errlen, "%s", t->error);
		rc = -1;
	}
	return rc;
}

void
memsim_trace_destroy(struct memsim_trace *t)
{
	char err[256];

	if (!t)
		return;
	memsim_trace_finish(t, err, sizeof(err));
	end_live(t); /* memsim's plugin runner finishes its traces itself */
	trace_ctx_destroy(t->ctx);
	free(t);
}

int
memsim_array(struct memsim_trace *t, const char *name, const void *p, size_t bytes,
	     enum memsim_space space)
{
	int rc;

	if (!t || !name || t->finished)
		return -EINVAL;
	for (unsigned i = 0; i < t->nnames; i++)
		if (strncmp(t->names[i], name, sizeof(t->names[i]) - 1) == 0) {
			if (!t->error[0])
				snprintf(
					t->error, sizeof(t->error),
					"memsim_array: an array named '%.31s' was declared already "
					"(its counts would be split in two)",
					name);
			return -EEXIST;
		}
	rc = trace_array(t->ctx, name, p, bytes, (enum trace_space)space);
	if (rc >= 0 && t->nnames < sizeof(t->names) / sizeof(t->names[0]))
		snprintf(t->names[t->nnames++], sizeof(t->names[0]), "%s", name);
	return rc;
}

int
memsim_phase(struct memsim_trace *t, const char *name)
{
	if (!t || !name || t->finished)
		return -EINVAL;
	return trace_phase(t->ctx, name);
}

/* [addr, addr + bytes) runs past 2^64: the model would walk its lines from the last to the
 * first, the long way round. */
static bool
range_wraps(uint64_t addr, uint64_t bytes)
{
	return bytes > 0 && addr > UINT64_MAX - (bytes - 1);
}

/* Every memsim_load() and memsim_store() comes through here: a wrapping range counts
 * nothing, and the first one is kept for memsim_trace_finish() to report. */
static void
access_one(struct memsim_trace *t, const void *p, size_t bytes, enum cache_op op)
{
	uint64_t a = (uint64_t)(uintptr_t)p;

	if (!t || t->finished || bytes == 0)
		return;
	if (range_wraps(a, bytes)) {
		if (!t->error[0])
			snprintf(t->error, sizeof(t->error),
				 "%s of %zu bytes at 0x%" PRIx64
				 " wraps past address 2^64 (not counted)",
				 op == CACHE_OP_STORE ? "memsim_store" : "memsim_load", bytes, a);
		return;
	}
	trace_access(t->ctx, p, bytes, op);
}

void
memsim_load(struct memsim_trace *t, const void *p, size_t bytes)
{
	access_one(t, p, bytes, CACHE_OP_LOAD);
}

void
memsim_store(struct memsim_trace *t, const void *p, size_t bytes)
{
	access_one(t, p, bytes, CACHE_OP_STORE);
}

/* The whole batch is checked before any of it counts: a refused batch leaves t as it was. */
static int
batch_valid(size_t n, const uint64_t *addrs, const uint32_t *sizes, uint32_t size)
{
	if (!sizes) {
		if (n && (size == 0 || size > MEMSIM_BATCH_MAX_SIZE))
			return -1;
		for (size_t i = 0; i < n; i++)
			if (range_wraps(addrs[i], size))
				return -1;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		if (sizes[i] == 0 || sizes[i] > MEMSIM_BATCH_MAX_SIZE ||
		    range_wraps(addrs[i], sizes[i]))
			return -1;
	return 0;
}

int
memsim_access_batch(struct memsim_trace *t, size_t n, const uint64_t *addrs, const uint32_t *sizes,
		    const uint8_t *writes, uint32_t size, int write)
{
	if (!t || (n > 0 && !addrs))
		return -1;
	if (batch_valid(n, addrs, sizes, size))
		return -1;
	if (t->finished || n == 0)
		return 0;
	trace_access_batch(t->ctx, n, addrs, sizes, writes, size, write);
	return 0;
}
