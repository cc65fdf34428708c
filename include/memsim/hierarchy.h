#ifndef MEMSIM_HIERARCHY_H
#define MEMSIM_HIERARCHY_H

/*
 * A simulated cache hierarchy and what it counted. Sizes are bytes; address ranges are
 * half-open, [p, p + bytes).
 */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A hierarchy of 0 to 4 levels above DRAM, with its counters. Opaque.
 *
 * Every function refuses a NULL pointer argument with its error value (NULL, -1, 0 for a
 * count; a message in err where it takes one) and never writes into a buffer of 0 bytes. */
struct memsim_hierarchy;

/* A hierarchy from a spec ("L1=32K:8:64,L2=1M:16:64") or a preset's name ("lab", "h100"),
 * with the grammar and the messages of `memsim run --cache`. Returns NULL with a one-line
 * message in err (errlen bytes) when the text is not one. Free with
 * memsim_hierarchy_destroy(). */
struct memsim_hierarchy *memsim_hierarchy_create(const char *spec, char *err, size_t errlen);
/* The presets memsim_hierarchy_create() takes by name, in the order `memsim presets` lists
 * them: how many, each one's name, and its one-line description (the line under its name
 * there). NULL past the last. */
unsigned memsim_preset_count(void);
const char *memsim_preset_name(unsigned i);
const char *memsim_preset_description(unsigned i);
/* Frees h and everything it counted; NULL does nothing. Finish or destroy every trace
 * feeding h first: a trace not finished by then would feed freed memory. */
void memsim_hierarchy_destroy(struct memsim_hierarchy *h);
/* The canonical spec of h, every word explicit (what `memsim presets` prints): into buf
 * (len bytes, cut if shorter); returns buf, or NULL (buf untouched) when h or buf is NULL or
 * len is 0. */
char *memsim_hierarchy_spec(const struct memsim_hierarchy *h, char *buf, size_t len);
/* The number of cache levels (0 to 4; 0 for NULL). */
unsigned memsim_hierarchy_levels(const struct memsim_hierarchy *h);
/* Zeroes every counter and empties every level (as a new hierarchy); arrays and phases a
 * trace declared are forgotten. Only between traces: a trace feeding h must be finished
 * (memsim_trace_finish()) first, and a new one made for what follows. Returns 0, or -1 with h
 * as it was and errno EBUSY while a trace feeding h is not finished, ENOMEM when the fresh
 * model cannot be allocated, EINVAL for NULL. */
int memsim_hierarchy_reset(struct memsim_hierarchy *h);

/* One level's counters (the fields of "levels" in `memsim run --json`). */
struct memsim_level_stats {
	char name[8]; /* "L1" .. "L4" */
	uint64_t size_bytes, line_bytes, assoc; /* assoc: ways; lines for a fully associative level */
	uint64_t reads, writes;                 /* requests from above: loads, fills, write-backs */
	uint64_t hits, misses, read_misses, write_misses;
	uint64_t fills, evictions, writebacks;
};

/* Bytes moved to and from DRAM: read_bytes includes rfo_bytes, write_bytes includes
 * flush_write_bytes (dirty lines written back by memsim_trace_finish()). */
struct memsim_dram_stats {
	uint64_t read_bytes, write_bytes, rfo_bytes, flush_write_bytes;
};

/* What the processor issued, and the bytes of scratch arrays (never through the caches). */
struct memsim_cpu_stats {
	uint64_t loads, stores, load_bytes, store_bytes;
	uint64_t scratch_read_bytes, scratch_write_bytes;
};

/* The whole of what h counted, or a part of it (one array, one phase). */
struct memsim_stats {
	struct memsim_dram_stats dram;
	struct memsim_cpu_stats cpu;
	unsigned levels;
	struct memsim_level_stats level[4];
};

/* Everything h counted. Returns 0, or -1 when h or out is NULL. */
int memsim_stats_total(const struct memsim_hierarchy *h, struct memsim_stats *out);
/* The arrays and phases a trace declared on h: how many (0 for NULL), and each one's name
 * (NULL past the last). Array 0 is "other" (addresses no array covers), then the arrays in
 * declaration order; phase 0 is "(none)" (before the first phase), then the phases in order of
 * first use, and "flush" once memsim_trace_finish() ran. */
unsigned memsim_stats_arrays(const struct memsim_hierarchy *h);
const char *memsim_stats_array_name(const struct memsim_hierarchy *h, unsigned i);
unsigned memsim_stats_phases(const struct memsim_hierarchy *h);
const char *memsim_stats_phase_name(const struct memsim_hierarchy *h, unsigned i);
/* What array i (of memsim_stats_arrays()) or phase i moved: an array's DRAM bytes and its
 * cpu.scratch_* bytes (levels 0: the model counts levels per phase, not per array); a phase's
 * DRAM bytes and level counters. Returns 0, or -1 when i is out of range or h or out is NULL. */
int memsim_stats_array(const struct memsim_hierarchy *h, unsigned i, struct memsim_stats *out);
int memsim_stats_phase(const struct memsim_hierarchy *h, unsigned i, struct memsim_stats *out);

/* The report of what h counted as JSON text: the keys and numbers `memsim run --json`
 * writes for its "config.cache", "levels", "dram", "scratch", "arrays" and "phases". Returns
 * a string the caller frees with memsim_free(), or NULL when h is NULL or out of memory. */
char *memsim_report_json(const struct memsim_hierarchy *h);
/* Frees what memsim_report_json() returned; NULL does nothing. */
void memsim_free(void *p);

#ifdef __cplusplus
}
#endif

#endif
