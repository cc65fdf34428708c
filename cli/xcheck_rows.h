#pragma once

/*
 * The rows of an xcheck table that do not depend on the kernel: memsim's on a simulated run,
 * memsim's on the host preset, and PAPI's count of the native run. `memsim xcheck` fills them
 * for a built-in kernel (cli/cmd_xcheck.c) and for a plugin (cli/xcheck_plugin.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/xcheck.h"
#include "measure/papi_count.h"
#include "sim/cache.h"
#include "sim/spec.h"

/* Fills a memsim row from a simulated run on cache c (LL lines of ll_line bytes). callgrind: LL
 * misses are all L2 misses and write-backs are counted; else (Cachegrind's model) LL misses are
 * L2's demand fills. */
void xcheck_memsim_row(struct cache *c, unsigned ll_line, double seconds, bool callgrind,
		       struct xcheck_row *row);

/* The host preset for the PAPI row: 0 with *host filled, or -1 with the reason in the memsim
 * row's note (PAPI then runs without a memsim row beside it). */
int xcheck_host_spec(struct xcheck *x, struct spec *host);

/* The memsim row on the host preset from a run on cache c, unflushed. Sets *line and *evict
 * for the native run. */
void xcheck_host_row(struct xcheck *x, const struct spec *host, struct cache *c, double seconds,
		     uint64_t *line, uint64_t *evict);

/* Evicts the caches (evict bytes), counts run(arg) with PAPI into rep and fills the PAPI row.
 * Returns 0, or -1 with a message when the caches could not be evicted. */
int xcheck_papi_count(struct xcheck *x, void (*run)(void *), void *arg, uint64_t line,
		      uint64_t evict, struct papi_report *rep, char *err, size_t errlen);
