#pragma once

/*
 * Running a kernel through the cache model (the traced build, live): allocate and fill the
 * arrays, feed every access to a fresh model, flush unless asked not to.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "sim/cache.h"
#include "sim/spec.h"

struct sim_result {
	struct cache *cache; /* owned; freed by sim_result_finish() */
	double seconds;      /* wall time of the traced run */
	bool checked;
	struct attn_error error; /* when checked */
	unsigned threads;        /* threads that simulated (sim_kernel_split()); 1 otherwise */
	unsigned busy;           /* threads busy at once, the caller's included: threads + 1
				  * (it feeds the slices or simulates beside them); 1 for one */
	char threads_why[256];   /* why not more than asked, in one line; "" when as many */
};

/* Simulates cfg on spec with inputs from seed; check also compares the outputs with the
 * double-precision reference. Returns 0, or with a one-line message in err -ENOMEM when the
 * model's arrays cannot be allocated, -EINVAL for anything else (arrays that cannot be mapped,
 * a config that is not valid). */
int sim_kernel(const struct attn_config *cfg, const struct spec *spec, bool flush, uint64_t seed,
	       bool check, struct sim_result *out, char *err, size_t errlen);

/* As sim_kernel() through the kernel's trace-only form (attn_data_create_trace_only()): the
 * same counters with no values computed, for arrays far larger than memory. Nothing to check
 * and no inputs, so no seed (random replacement takes spec's). */
int sim_kernel_trace_only(const struct attn_config *cfg, const struct spec *spec, bool flush,
			  struct sim_result *out, char *err, size_t errlen);

/* sim_kernel() (or with trace_only sim_kernel_trace_only()) on up to `threads` threads (0: 1):
 * the kernel runs on this thread into a feed model (sim/drive/feed.h) and the sets are split
 * between slice threads, so the counters are those of one thread, exactly. Runs one thread
 * where the config does not split (cache_slices_max()), saying why in out->threads_why; with
 * 1, it is sim_kernel() itself. */
int sim_kernel_split(const struct attn_config *cfg, const struct spec *spec, bool flush,
		     uint64_t seed, bool trace_only, unsigned threads, struct sim_result *out,
		     char *err, size_t errlen);

/* The most threads a trace-only run takes by default: as far as it was measured to gain. */
#define SIM_TRACE_ONLY_THREADS 8

/* The threads a run of cfg on spec takes when none are asked for: every core online (up to
 * 64) for a computing run of 10^8 FLOPs or more (about 0.1 s of the traced kernel; threads
 * start in well under a millisecond) that splits into units (run/attn_split.h); the cores
 * online as a power of two up to SIM_TRACE_ONLY_THREADS for a trace-only run of 10^10 FLOPs or
 * more (about 0.1 s) with tiles in scratch over a write-validate L1 (the GPU presets), whose
 * sets split (elsewhere its split does not pay: docs/speed.md, "Threads"); else 1. */
unsigned sim_default_threads(const struct attn_config *cfg, const struct spec *spec,
			     bool trace_only);

/* One run of cfg for every size sizes[0 .. n) of cache level `level` (0 for L1) of spec, with
 * one-pass method how (sim/cache.h cache_create_onepass()); outs[k] is what sim_kernel() (or,
 * with trace_only, sim_kernel_trace_only()) gives for spec with that size, counter for
 * counter (seconds: the one run's). Returns 0, or with a one-line message in err -ENOMEM when
 * the pass's models cannot be allocated or memory ran out during it (fewer sizes may fit),
 * -EINVAL for anything else. Each outs[k] is freed with sim_result_finish(). */
int sim_kernel_onepass(const struct attn_config *cfg, const struct spec *spec, unsigned level,
		       const uint64_t *sizes, unsigned n, enum cache_onepass how, bool flush,
		       uint64_t seed, bool trace_only, struct sim_result *outs, char *err,
		       size_t errlen);

/* sim_kernel_onepass() on up to `threads` threads (0: 1), split by set: the levels above the
 * swept one run on this thread, and each slice thread keeps a one-pass model of its sets of the
 * swept level and below (sim/cache.h cache_onepass_attach_threads()); their sum holds every
 * size's counters exactly. One thread where the sizes do not split (cache_onepass_slices_max()),
 * saying why in each outs[k].threads_why. */
int sim_kernel_onepass_split(const struct attn_config *cfg, const struct spec *spec, unsigned level,
			     const uint64_t *sizes, unsigned n, enum cache_onepass how, bool flush,
			     uint64_t seed, bool trace_only, unsigned threads,
			     struct sim_result *outs, char *err, size_t errlen);

/* Where a run also records its accesses (traces/mtrace.h): path ("-" for stdout) and the
 * command line its header names. */
struct sim_record {
	const char *path;
	const char *command;
};

/* sim_kernel() (or with trace_only sim_kernel_trace_only()) after a first pass of the kernel
 * that writes every access to rec->path, arrays and phases as the kernel declares them, with no
 * model; the counters are those of the run without it. Returns as sim_kernel() does, or -EIO
 * with a one-line message when the recording cannot be created or written (before the live
 * pass); a regular file left incomplete is then removed. */
int sim_kernel_record(const struct attn_config *cfg, const struct spec *spec, bool flush,
		      uint64_t seed, bool trace_only, const struct sim_record *rec,
		      struct sim_result *out, char *err, size_t errlen);
/* sim_kernel_record() whose live pass is sim_kernel_split()'s on up to `threads` threads. */
int sim_kernel_record_split(const struct attn_config *cfg, const struct spec *spec, bool flush,
			    uint64_t seed, bool trace_only, const struct sim_record *rec,
			    unsigned threads, struct sim_result *out, char *err, size_t errlen);

void sim_result_finish(struct sim_result *r);

/* The bytes a model may take in a run of cfg (NULL: no arrays) started now: the least of this
 * process's RLIMIT_AS and RLIMIT_DATA headroom (the limit less what it maps now) and the
 * machine's MemAvailable (Linux), each where known, less what the run's arrays take of it
 * (address space alone with trace_only); UINT64_MAX when nothing is known. MEMSIM_MEMORY
 * (sim_memory_setting()) replaces all three. *what (may be NULL) names the bound:
 * "RLIMIT_AS", "RLIMIT_DATA", "MemAvailable", "MEMSIM_MEMORY" or "nothing". */
uint64_t sim_memory_available(const struct attn_config *cfg, bool trace_only, const char **what);
/* sim_memory_available() for one of `workers` processes that run at once (a sweep's pool): the
 * machine's memory (MemAvailable, MEMSIM_MEMORY) divided among them, each process's limits
 * (RLIMIT_AS, RLIMIT_DATA) whole. */
uint64_t sim_memory_share(const struct attn_config *cfg, bool trace_only, unsigned workers,
			  const char **what);

/* The environment's MEMSIM_MEMORY, the memory memsim may take (a size: 512M, 16G), for what
 * it cannot see (a container's limit): 0 when unset, 1 with *bytes, -EINVAL when it is not a
 * size. */
int sim_memory_setting(uint64_t *bytes);

/* Splits sizes[0 .. n) (n <= CACHE_ONEPASS_MAX) of level `level` of spec into one-pass runs of
 * method how whose models (cache_onepass_bytes()) fit in budget bytes: the smallest sizes
 * first, as many in a pass as fit, a size that does not fit alone in a pass of its own. For
 * L1, sizes where it has one set and sizes where it has several are never in one pass (the
 * tracing layer reads L1's geometry). pass[k] is the pass of sizes[k], from 0; returns the
 * number of passes. */
unsigned sim_onepass_split(const struct spec *spec, unsigned level, const uint64_t *sizes,
			   unsigned n, enum cache_onepass how, uint64_t budget, unsigned *pass);
