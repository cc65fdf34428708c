#pragma once

/*
 * The vocabulary the tracing layer (sim/trace.h) and the trace files (traces/) share: the
 * memory space of a declared array, the kinds of trace events and a declared array itself.
 */

#include <stdint.h>

enum trace_event_kind {
	TRACE_EV_LOAD = 0, /* the first three match enum cache_op */
	TRACE_EV_STORE = 1,
	TRACE_EV_IFETCH = 2,
	TRACE_EV_PHASE, /* addr: index of the phase that starts */
	TRACE_EV_ARRAY, /* addr: index of an array declared mid-trace */
};

enum trace_space {
	TRACE_SPACE_DRAM = 0, /* ordinary memory: through the caches */
	TRACE_SPACE_SCRATCH,  /* on-chip buffer: never enters the caches */
	TRACE_SPACE_TILE,     /* a kernel's tile: scratch or memory, as the cache preset says */
};

/* An array a kernel declared, [base, base + bytes). */
struct trace_array {
	char name[32];
	uint64_t base;
	uint64_t bytes;
	enum trace_space space;
};
