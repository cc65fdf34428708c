#pragma once

/*
 * memsim's binary trace format, version 2 (little endian, LEB128 varints):
 *
 *   header  "MEMSIMTR" | u32 version | str tool_version | str command
 *           | varint n_arrays | n x (str name, varint base, varint bytes, u8 space)
 *           | varint n_phases | n x str name
 *   records, then one end record; nothing may follow it.
 *
 * Four address slots each remember the last address and size used through them, so the
 * interleaved streams of a kernel cost one byte per access:
 *   short 0ossdddd        load (o=0) or store (o=1) of the slot's size at
 *                         slot address + (dddd - 8) x size
 *   long  1kkss SC0       k: 0 load, 1 store, 2 instruction fetch; then zigzag varint delta
 *                         from the slot address, [varint size if S], [varint count if C]
 *   ctrl  111ttttt        t=1 phase switch (varint index), t=2 array (str, varint base,
 *                         varint bytes, u8 space), t=3 phase (str), t=4 end (varint records,
 *                         varint accesses), t=5 repeat (varint L, varint n, then L
 *                         access records: the body)
 * str = varint length + bytes. The end record's counts (every record, a repeat's body records
 * each and its header once) let a reader tell a complete trace from a truncated one.
 *
 * A repeat (version 2) runs its body n times (n >= 2, L at most MTRACE_REPEAT_MAX_RECORDS):
 * once as written, then n - 1 times each body record's access again, of the same kind, size
 * and count, its address stepped by its slot's net step over the body (taken as signed; no
 * access may leave the address space). A kernel's loop body becomes one record, and a reader
 * emits its accesses without decoding a byte each. Version 1 is version 2 without repeats;
 * readers read both, the writer writes version 2.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/trace.h"
#include "traces/reader.h"

#define MTRACE_MAGIC "MEMSIMTR"
#define MTRACE_VERSION 2u
#define MTRACE_REPEAT_MAX_RECORDS 64u
#define MTRACE_REPEAT_MAX_PERIODS (UINT64_C(1) << 32)

enum mtrace_ctrl {
	MTRACE_CTRL_PHASE = 1,
	MTRACE_CTRL_ARRAY = 2,
	MTRACE_CTRL_DECLARE_PHASE = 3,
	MTRACE_CTRL_END = 4,
	MTRACE_CTRL_REPEAT = 5,
};

struct mtrace_writer;

/* Creates path ("-" for stdout) and records command and this tool's version in the header.
 * A regular file is written whole (base/util.h whole_file_open()): into a temporary beside it,
 * renamed over it by mtrace_writer_close(), so a run that stops first leaves the file that was
 * there as it was, and two writers of one path each a whole file. The header is written with
 * the first access, so arrays and phases declared before it land in the header tables.
 * Returns NULL with a message in err. Close with mtrace_writer_close() or
 * mtrace_writer_discard(). */
struct mtrace_writer *mtrace_writer_open(const char *path, const char *command, char *err,
					 size_t errlen);

/* Declares an array or a phase; returns its index (0-based), or a negative errno. */
int mtrace_writer_array(struct mtrace_writer *w, const char *name, uint64_t base, uint64_t bytes,
			enum trace_space space);
int mtrace_writer_phase(struct mtrace_writer *w, const char *name);
void mtrace_writer_set_phase(struct mtrace_writer *w, int phase);

/* Appends one access (kind LOAD, STORE or IFETCH) repeated count times. Exact repeats of the
 * previous access are merged into its count. */
void mtrace_writer_access(struct mtrace_writer *w, enum trace_event_kind kind, uint64_t addr,
			  uint32_t size, uint32_t count);

/* Appends e (an access, size at most TRACE_MAX_ACCESS_BYTES, as every reader gives) as it is,
 * with its count: never merged with the access before, so a reader of the file gives e back,
 * one event for one (a count repeats a straddling access line by line, so two accesses merged
 * into one count would touch the lines in another order). */
void mtrace_writer_ref(struct mtrace_writer *w, const struct cache_ref *e);

/* A sink for trace_ctx_create() that records into w (which stays the caller's). */
struct trace_sink mtrace_writer_sink(struct mtrace_writer *w);

/* Writes the end record, closes and puts the file in place. Returns 0, or a negative errno
 * with a message in err if any write failed: the temporary is then removed (the message ends
 * "(the incomplete recording was removed)"); a file written in place is incomplete and says
 * so to readers. Frees w. */
int mtrace_writer_close(struct mtrace_writer *w, char *err, size_t errlen);

/* Closes a recording that is not to be kept (the run it records failed): the temporary is
 * removed, the file at the path left as it was; what reached a file written in place stays
 * without an end record. Returns whether a temporary was removed. Frees w. */
bool mtrace_writer_discard(struct mtrace_writer *w);
