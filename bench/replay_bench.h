#pragma once

/*
 * The replay benchmark's synthetic traces and its timing loops (memsim bench): the S = Q K^T
 * loop nest of an attention kernel, or a whole naive attention, fed to the model directly or
 * written to trace files; the files replayed through the model, and read without it (the
 * floor), best of R.
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

/* The traces bench makes. */
enum replay_shape {
	REPLAY_SHAPE_BLOCKED,   /* S = Q K^T, key rows in blocks of 64 as blocked kernels sweep */
	REPLAY_SHAPE_UNBLOCKED, /* S = Q K^T, every key row per query row */
	REPLAY_SHAPE_NAIVE,     /* textbook naive attention, P V by dot products down V's columns */
};

/* Parses "blocked", "unblocked", "naive"; false for anything else. */
bool replay_shape_parse(const char *name, enum replay_shape *out);
const char *replay_shape_name(enum replay_shape shape);

/* Generates at least `target` accesses of shape, whole rows at a time (a row of j for the
 * S = Q K^T shapes, a query row for naive); returns how many. Stops early once interrupted
 * (spawn_guard_signal()). pad: elements of padding per V^T row (not naive). */
uint64_t replay_bench_generate(struct replay_sink *s, uint64_t target, uint64_t pad,
			       enum replay_shape shape);

/* Whether a and b counted the same at every level and to DRAM. */
bool replay_bench_same_counters(struct cache *a, struct cache *b);

/* One source of accesses timed: best and worst of its replays (wall seconds), and the best
 * user CPU seconds (a shared machine's noise shows less there). */
struct replay_timing {
	const char *name;
	double best, worst;
	uint64_t accesses;
	uint64_t file_bytes;
	double best_user;
};

/* Replays path `repeat` times through spec's cache into t (best, worst, accesses); the last
 * replay's cache goes to *keep (caller destroys). -1 with a message in err on failure. */
int replay_bench_time(const char *path, enum trace_format fmt, const struct spec *spec, int repeat,
		      struct replay_timing *t, struct cache **keep, char *err, size_t errlen);
/* The same, split over threads (replay_file_split(); 1: replay_file()). */
int replay_bench_time_threads(const char *path, enum trace_format fmt, const struct spec *spec,
			      int repeat, unsigned threads, struct replay_timing *t,
			      struct cache **keep, char *err, size_t errlen);

/* The floor of a replay: path read and decoded `repeat` times, the events dropped, no model;
 * t gets the times and the accesses. -1 with a message in err on failure. */
int replay_bench_floor(const char *path, enum trace_format fmt, int repeat, struct replay_timing *t,
		       char *err, size_t errlen);

/* What a decoder of path cannot beat: its bytes read() into a buffer, `repeat` times, nothing
 * decoded; t gets the times (t->accesses is left to the caller, who knows them). -1 with a
 * message in err on failure. */
int replay_bench_raw_read(const char *path, int repeat, struct replay_timing *t, char *err,
			  size_t errlen);

/* The size of the file at path in bytes, 0 if it cannot be read. */
uint64_t replay_bench_file_size(const char *path);

/* 1. The generator straight into a model of cfg, timed: the ceiling for any trace format.
 * t gets the time and the accesses, *model the model after its final flush (caller destroys).
 * -1 if the model cannot be allocated. */
int replay_bench_direct(const struct cache_config *cfg, uint64_t target, uint64_t pad,
			enum replay_shape shape, struct replay_timing *t, struct cache **model);
