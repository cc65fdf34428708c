/*
 * A replay that also records (traces/replay_record.h). Notes:
 *  - Accesses are written as decoded, each with its count (mtrace_writer_ref()): merging
 *    back-to-back repeats, as a kernel's recording does, would turn two straddling accesses
 *    into one whose count repeats line by line, which touches the lines in another order.
 *  - Arrays and phases are declared into the recording in the reader's order, so the indices
 *    agree. A phase switch first declares the phases the reader knows by then: a replay of
 *    the recording then maps the same phases at each switch (replay_reader()), and its report
 *    lists the same phases.
 */

#include "traces/replay_record.h"

#include <stdio.h>

int
replay_recorder_sync(struct replay_recorder *rec, const struct trace_reader *r, char *err,
		     size_t errlen)
{
	for (; rec->arrays < trace_reader_array_count(r); rec->arrays++) {
		const struct trace_array *a = trace_reader_array(r, rec->arrays);

		mtrace_writer_array(rec->w, a->name, a->base, a->bytes, a->space);
	}
	for (; rec->phases < trace_reader_phase_count(r); rec->phases++)
		if (mtrace_writer_phase(rec->w, trace_reader_phase(r, rec->phases)) < 0) {
			snprintf(err, errlen, "recording: more than %d phases", CACHE_MAX_PHASES);
			return -1;
		}
	return 0;
}

long
replay_recorder_simulate(struct replay_recorder *rec, struct trace_reader *r, struct cache *c,
			 struct cache_ref *ctl, char *err, size_t errlen)
{
	for (;;) {
		struct cache_ref buf[1024];
		long n = trace_reader_read(r, buf, 1024);
		size_t done;

		if (n < 0)
			snprintf(err, errlen, "%s", trace_reader_error(r));
		if (n <= 0)
			return n;
		for (done = 0; done < (size_t)n && buf[done].kind < CACHE_OP_COUNT; done++)
			mtrace_writer_ref(rec->w, &buf[done]);
		cache_access_refs(c, buf, done);
		if (done == (size_t)n)
			continue;
		/* A control event ends its batch (traces/reader.h). */
		*ctl = buf[done];
		if (replay_recorder_sync(rec, r, err, errlen))
			return -1;
		if (ctl->kind == TRACE_EV_PHASE)
			mtrace_writer_set_phase(rec->w, (int)ctl->addr);
		return 1;
	}
}
