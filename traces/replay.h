#pragma once

/*
 * Replaying a trace through a cache model: the engine behind `memsim replay` and `memsim
 * bench`. Memory use does not grow with the trace: events are decoded in fixed batches.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/cache.h"
#include "sim/spec.h"
#include "traces/reader.h"

struct replay_result {
	struct cache *cache; /* owned; freed by replay_result_finish() */
	enum trace_format format;
	uint64_t records;
	uint64_t accesses; /* loads + stores + instruction fetches, repeats included */
	uint64_t skipped;
	char *tool_version;
	char *recorded_command;
	char spec_text[1024];
	double seconds; /* wall time of the replay loop (reading and simulating) */
	unsigned threads;      /* threads that replayed (replay_file_split()) */
	char threads_why[256]; /* why not more than asked, in one line; "" when as many */
};

/* Feeds every event of r into c; trace arrays of space TILE go to scratch when
 * tiles_in_scratch. Returns 0, or -1 with the reader's message in err. Adds the accesses seen
 * to *accesses. */
int replay_reader(struct trace_reader *r, struct cache *c, bool tiles_in_scratch,
		  uint64_t *accesses, char *err, size_t errlen);

/* Opens path, builds a model from spec, replays, and flushes unless flush is false; with set
 * sampling (spec->cache.sample_sets > 1) the counts are then scaled (cache_sample_scale()). Returns
 * 0 or -1 with a one-line message in err (nothing is left allocated then). */
int replay_file(const char *path, enum trace_format format, const struct spec *spec, bool flush,
		struct replay_result *out, char *err, size_t errlen);

/* Where replay_file_record() writes what it replays: a memsim trace (traces/mtrace.h). */
struct replay_record {
	const char *path;    /* "-" for stdout */
	const char *command; /* for the header; NULL: none */
};

/* replay_file() that also writes every event it replays into a memsim trace at to->path (as
 * mtrace_writer_open() writes it: a temporary put in place at the end): a replay of it gives
 * this replay's counters. On failure nothing is put in place, and err says so where a
 * temporary was removed. to NULL: replay_file(). */
int replay_file_record(const char *path, enum trace_format format, const struct spec *spec,
		       bool flush, const struct replay_record *to, struct replay_result *out,
		       char *err, size_t errlen);

/* replay_file() on up to `threads` threads (0: 1), the sets split between them: the counts
 * are replay_file()'s, exactly. memsim's binary format from a regular file is read whole by
 * every thread (cache_set_slice()); text formats and pipes by one reader feeding the threads
 * (sim/drive/feed.h), whichever measured faster. Runs fewer where the config does not split
 * (cache_slices_max()), saying why in out->threads_why; with 1, it is replay_file(). */
int replay_file_split(const char *path, enum trace_format format, const struct spec *spec,
		      bool flush, unsigned threads, struct replay_result *out, char *err,
		      size_t errlen);

void replay_result_finish(struct replay_result *res);
