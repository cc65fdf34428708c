#pragma once

/*
 * Readers for the output files of Valgrind's cache simulators, as Valgrind 3.19 writes them.
 *
 *  cachegrind.out  "events:" names the columns; "fl=" and "fn=" open a file and a function;
 *                  each cost line is a line number and one count per event (trailing zeros
 *                  may be left out); "summary:" closes the file with the totals.
 *  callgrind.out   the same events line; a dump made by a client request carries
 *                  "desc: Trigger: Client Request: NAME" and its totals on "totals:" (trailing
 *                  zeros left out). "fn=(id) name" defines a compressed name, "fn=(id)" reuses
 *                  it (ids are per object: a function is named once, in the object current
 *                  then: "ob=", or "cob=" just before a "cfn="); a cost line starts with a position
 * (absolute, +n, -n or *); the line after "calls=" is the call's inclusive cost, not the caller's
 * own, and "fi="/"fe=" (inlined files) keep the current function.
 *
 * Every malformed or truncated file is an error naming path:line and what is wrong; nothing is
 * ever read as a silent zero.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VG_EVENTS_MAX 32
#define VG_EVENT_NAME_MAX 16

struct vg_counts {
	unsigned n;
	char names[VG_EVENTS_MAX][VG_EVENT_NAME_MAX];
	uint64_t v[VG_EVENTS_MAX];
	unsigned functions; /* cachegrind: fn= records summed (a function in several files counts
			       once per file) */
};

/* Sets *out to the count of event name; false if the file has no such event. */
bool vg_counts_get(const struct vg_counts *c, const char *name, uint64_t *out);

/* Sum of the named events that exist; names missing from the file count as absent, and
 * *all_found (when not NULL) says whether every one was there. */
uint64_t vg_counts_sum(const struct vg_counts *c, const char *const *names, unsigned n,
		       bool *all_found);

/* Which functions to sum: keep(object, fn, arg) true keeps fn's cost lines. object is the ELF
 * object the function is in, as callgrind.out names it ("ob="), or NULL where the file names
 * none (cachegrind.out; a callgrind.out before its first "ob=" line). */
typedef bool (*vg_fn_filter)(const char *object, const char *fn, void *arg);

/* Reads the cachegrind.out at path and sums the cost lines of the functions keep() accepts
 * (every function when keep is NULL). Checks that all cost lines add up to the summary.
 * Returns 0, or -1 with "path:line: what" in err (-1 also when no function was kept). */
int vg_cachegrind_read(const char *path, vg_fn_filter keep, void *arg, struct vg_counts *out,
		       char *err, size_t errlen);

/* Reads the callgrind.out dump at path: the self costs of the functions keep() accepts (the
 * totals when keep is NULL) into *out and, when totals is not NULL, the dump's totals into
 * *totals. Checks that every function's self costs add up to the totals. trigger, when not
 * NULL, must match the dump's "desc: Trigger:" text. Returns 0, or -1 with "path:line: what"
 * in err (-1 also when no function was kept). */
int vg_callgrind_read(const char *path, const char *trigger, vg_fn_filter keep, void *arg,
		      struct vg_counts *out, struct vg_counts *totals, char *err, size_t errlen);
