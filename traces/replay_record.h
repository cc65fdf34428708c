#pragma once

/*
 * Internal to traces/: what `memsim replay --record` adds to a replay (replay.c): the events
 * a reader decodes, written into a memsim trace as they are simulated, so that a replay of
 * the recording gives the counters of the replay that made it.
 */

#include <stddef.h>

#include "sim/cache.h"
#include "traces/mtrace.h"
#include "traces/reader.h"

struct replay_recorder {
	struct mtrace_writer *w;
	unsigned arrays, phases; /* of the reader's, declared into w so far */
};

/* trace_reader_simulate() that also writes each access into rec->w, and before a control
 * event returns it, declares what the reader declared up to it and writes a phase switch.
 * Returns as trace_reader_simulate() does; -1 with the reader's message, or with err. */
long replay_recorder_simulate(struct replay_recorder *rec, struct trace_reader *r, struct cache *c,
			      struct cache_ref *ctl, char *err, size_t errlen);

/* Declares into rec->w the arrays and phases r holds that it does not yet: at the start
 * (the header's) and at the end (phases declared after the last switch). Returns 0, or -1
 * with err. */
int replay_recorder_sync(struct replay_recorder *rec, const struct trace_reader *r, char *err,
			 size_t errlen);
