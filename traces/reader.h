#pragma once

/*
 * Streaming trace readers for Dinero IV's din text and binary formats, Valgrind lackey's
 * --trace-mem=yes output and memsim's own binary format. Events are decoded in batches; the
 * file is never loaded whole. A garbled or truncated trace is an error naming the file and the
 * line (text) or record (binary): the valid prefix is never passed off as the whole trace.
 *
 * Events are struct cache_ref (sim/cache.h), so a batch goes straight to the model; kinds
 * past the three access kinds are trace controls the replayer handles.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/cache.h"
#include "sim/trace_types.h"

/* The longest access a trace may hold (lackey's and memsim's formats; din's are 4 bytes,
 * dinbin's at most 65535). A longer one is an error: an access costs a line's work per line it
 * spans, so a few bytes of trace could otherwise ask for hours. memsim's writer splits longer
 * accesses. */
#define TRACE_MAX_ACCESS_BYTES (UINT32_C(1) << 20)

enum trace_format {
	TRACE_FORMAT_AUTO = 0,
	TRACE_FORMAT_DIN,
	TRACE_FORMAT_LACKEY,
	TRACE_FORMAT_MEMSIM,
	TRACE_FORMAT_DINBIN, /* Dinero IV's binary format: no magic, never sniffed */
};

struct trace_reader;

/* Opens path ("-" for stdin) in the given format (AUTO sniffs it; never as DINBIN). Returns NULL
 * with a one-line message in err on failure. Caller closes with trace_reader_close(). */
struct trace_reader *trace_reader_open(const char *path, enum trace_format format, char *err,
				       size_t errlen);
void trace_reader_close(struct trace_reader *r);
/* Stops r's progress reports (base/progress.h, one line per process): for a reader that runs
 * on a thread beside the one that reports. */
void trace_reader_quiet(struct trace_reader *r);

/* Decodes up to max events into buf. Returns how many (> 0), 0 at the end of a complete
 * trace, or -1 on error (message from trace_reader_error()). A control event (phase,
 * array) is always the last event of its batch. */
long trace_reader_read(struct trace_reader *r, struct cache_ref *buf, size_t max);
const char *trace_reader_error(const struct trace_reader *r);

/* Feeds the trace's accesses straight into model c up to the next control event, which it
 * returns in *ctl: 1 with an event, 0 at the end of a complete trace, -1 on error. Same result
 * as trace_reader_read() and cache_access_refs(), faster: for memsim traces over a
 * write-back L1 it decodes and simulates in one pass. */
long trace_reader_simulate(struct trace_reader *r, struct cache *c, struct cache_ref *ctl);

enum trace_format trace_reader_format(const struct trace_reader *r);
const char *trace_format_name(enum trace_format f);
/* Parses "din", "lackey", "memsim", "dinbin"; returns false for anything else. */
bool trace_format_parse(const char *name, enum trace_format *out);

/* memsim format header fields (empty strings for text formats). Borrowed. */
const char *trace_reader_tool_version(const struct trace_reader *r);
const char *trace_reader_command(const struct trace_reader *r);

/* Array and phase tables (memsim format): those in the header, plus any declared so far. */
unsigned trace_reader_array_count(const struct trace_reader *r);
const struct trace_array *trace_reader_array(const struct trace_reader *r, unsigned i);
unsigned trace_reader_phase_count(const struct trace_reader *r);
const char *trace_reader_phase(const struct trace_reader *r, unsigned i);

/* Records (binary) or lines (text) read so far, and text lines skipped as comments or
 * Valgrind messages or din escape records. */
uint64_t trace_reader_records(const struct trace_reader *r);
uint64_t trace_reader_skipped(const struct trace_reader *r);
