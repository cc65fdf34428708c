#ifndef MEMSIM_TRACE_H
#define MEMSIM_TRACE_H

/*
 * What a kernel reports to memsim: the arrays it uses, its phases, and every load and store.
 * Write the kernel against the TR_* macros; built with MEMSIM_NATIVE defined they compile to
 * nothing, so one source gives the native build (timing, PAPI, Cachegrind) and the traced
 * one. Address ranges are half-open: [p, p + bytes).
 */

#include <stddef.h>
#include <stdint.h>

#include "memsim/hierarchy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where an array lives. */
enum memsim_space {
	MEMSIM_SPACE_DRAM = 0,    /* ordinary memory: through the caches */
	MEMSIM_SPACE_SCRATCH = 1, /* an on-chip buffer: counted, never through the caches */
	MEMSIM_SPACE_TILE = 2,    /* a tile: scratch or memory, as the hierarchy says (tiles=) */
};

/* A kernel's trace: what it reports goes to a hierarchy, to a trace file, or both. Opaque. */
struct memsim_trace;

/* A trace feeding h (may be NULL) and, where record_path is not NULL, recording every access
 * unmerged into a memsim trace file there (`memsim replay` reads it); not both NULL. h is
 * not owned: it must outlive the trace's finish, and memsim_hierarchy_reset(h) refuses until
 * then. Returns NULL with a one-line message in err. Free with memsim_trace_destroy(). Every
 * function here does nothing with a NULL trace but return its error value (as
 * memsim/hierarchy.h's functions do). */
struct memsim_trace *memsim_trace_create(struct memsim_hierarchy *h, const char *record_path,
					 char *err, size_t errlen);
/* Ends the trace: hands pending accesses to the hierarchy, writes back its dirty lines (the
 * final flush, counted apart as flush_write_bytes) and closes the recording. Returns 0, or -1
 * with a message in err: a recording that could not be written, or an access refused (the
 * first one's message: its range wraps past 2^64), or t NULL. The hierarchy's counters are
 * final after it; a second call returns 0. */
int memsim_trace_finish(struct memsim_trace *t, char *err, size_t errlen);
/* Frees t (finishing it first if memsim_trace_finish() was not called); NULL does nothing. */
void memsim_trace_destroy(struct memsim_trace *t);

/* Declares an array (name up to 31 bytes) at [p, p + bytes) in space. Returns 0, or a
 * negative errno (too many arrays: 64; -EINVAL: t or name NULL, or t finished). A name is
 * declared once a trace: a second is -EEXIST, and memsim_trace_finish() then returns -1
 * naming it (its counts would be split between two entries of one name). */
int memsim_array(struct memsim_trace *t, const char *name, const void *p, size_t bytes,
		 enum memsim_space space);
/* Starts the phase called name (declared on first use). Returns 0, or -ENOSPC past 1024
 * (-EINVAL: t or name NULL, or t finished). */
int memsim_phase(struct memsim_trace *t, const char *name);
/* One load or store of bytes at p (an element, or a contiguous span of any length: the
 * hierarchy splits it into the lines it touches); p is an address, never dereferenced. 0
 * bytes count nothing. A range that would wrap past 2^64 counts nothing and makes
 * memsim_trace_finish() return -1 naming it; the accesses after it are counted. */
void memsim_load(struct memsim_trace *t, const void *p, size_t bytes);
void memsim_store(struct memsim_trace *t, const void *p, size_t bytes);
/* The largest access memsim_access_batch() takes: 1 MiB. */
#define MEMSIM_BATCH_MAX_SIZE 1048576u
/* n accesses in order, counted exactly as memsim_load() and memsim_store() called one by one
 * would: access i is sizes[i] bytes (sizes NULL: every one is size bytes) at the address
 * addrs[i] (a number, never dereferenced), a store where writes[i] != 0 (writes NULL: every
 * one a store where write != 0, a load otherwise). The whole batch is checked first: -1,
 * nothing counted, when t is NULL, addrs is NULL and n > 0, a size is 0 or above
 * MEMSIM_BATCH_MAX_SIZE, or a range would wrap past 2^64. Otherwise 0 (n 0 included); after
 * memsim_trace_finish() it counts nothing, as memsim_load() does. */
int memsim_access_batch(struct memsim_trace *t, size_t n, const uint64_t *addrs,
			const uint32_t *sizes, const uint8_t *writes, uint32_t size, int write);

#ifdef __cplusplus
}
#endif

/* memsim's own sources, which have their own TR_* (sim/trace.h), define MEMSIM_NO_TR_MACROS. */
#ifndef MEMSIM_NO_TR_MACROS
#ifdef MEMSIM_NATIVE
/* TR_ARRAY and TR_PHASE are 0 here, as the traced ones are where they succeed. */
static inline int
memsim_native_ok(void)
{
	return 0;
}
#define TR_UNUSED(x) ((void)sizeof(x))
#define TR_ARRAY(t, name, p, bytes, space)                                                         \
	(TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes), memsim_native_ok())
#define TR_PHASE(t, name) (TR_UNUSED(t), memsim_native_ok())
#define TR_LOAD(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#define TR_STORE(t, p, bytes) (TR_UNUSED(t), TR_UNUSED(p), TR_UNUSED(bytes))
#else
#define TR_ARRAY(t, name, p, bytes, space) memsim_array((t), (name), (p), (bytes), (space))
#define TR_PHASE(t, name) memsim_phase((t), (name))
#define TR_LOAD(t, p, bytes) memsim_load((t), (p), (bytes))
#define TR_STORE(t, p, bytes) memsim_store((t), (p), (bytes))
#endif
/* A span is a load or store of many bytes; an element's size is its type's. */
#define TR_LOAD_SPAN(t, p, bytes) TR_LOAD((t), (p), (bytes))
#define TR_STORE_SPAN(t, p, bytes) TR_STORE((t), (p), (bytes))
#define TR_LOAD_ELEM(t, p) TR_LOAD((t), (p), sizeof(*(p)))
#define TR_STORE_ELEM(t, p) TR_STORE((t), (p), sizeof(*(p)))
#endif

#endif
