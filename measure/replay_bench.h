#pragma once

/*
 * The replay benchmark's synthetic trace and its timing loops (memsim bench): the S = Q K^T
 * loop nest of an attention kernel, fed to the model directly or written to trace files, and
 * the files replayed through the model, best of R.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/cache.h"
#include "sim/spec.h"
#include "traces/mtrace.h"
#include "traces/reader.h"

/* Where the generated accesses go: any of the three (NULL: not there). */
struct replay_sink {
	struct cache *cache;
	struct mtrace_writer *mt;
	FILE *din;
};

/* Generates at least `target` accesses, whole rows of j at a time; returns how many. Stops
 * early once interrupted (spawn_guard_signal()). blocked: key rows in blocks of 64, as the
 * blocked kernels sweep them; pad: elements of padding per V^T row. */
uint64_t replay_bench_generate(struct replay_sink *s, uint64_t target, uint64_t pad, bool blocked);

/* Whether a and b counted the same at every level and to DRAM. */
bool replay_bench_same_counters(struct cache *a, struct cache *b);

/* One source of accesses timed: best and worst of its replays. */
struct replay_timing {
	const char *name;
	double best, worst;
	uint64_t accesses;
	uint64_t file_bytes;
};

/* Replays path `repeat` times through spec's cache into t (best, worst, accesses); the last
 * replay's cache goes to *keep (caller destroys). -1 with a message in err on failure. */
int replay_bench_time(const char *path, enum trace_format fmt, const struct spec *spec, int repeat,
		      struct replay_timing *t, struct cache **keep, char *err, size_t errlen);

/* The size of the file at path in bytes, 0 if it cannot be read. */
uint64_t replay_bench_file_size(const char *path);

/* 1. The generator straight into a model of cfg, timed: the ceiling for any trace format.
 * t gets the time and the accesses, *model the model after its final flush (caller destroys).
 * -1 if the model cannot be allocated. */
int replay_bench_direct(const struct cache_config *cfg, uint64_t target, uint64_t pad, bool blocked,
			struct replay_timing *t, struct cache **model);
