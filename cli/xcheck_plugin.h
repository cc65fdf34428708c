#pragma once

/*
 * `memsim xcheck --kernel PATH`: a plugin cross-checked as a built-in kernel is. memsim runs
 * the traced build (PATH) under each tool's model; Cachegrind and Callgrind run the native
 * build (PATH-native.so) through `memsim native --kernel PATH`, and their counts are the
 * plugin's own:
 *
 *  Cachegrind  the self counts of the functions the native build's symbol table names, its
 *              check(), arrays(), flops() and formula() callbacks and its entry left out
 *              (they run before the kernel). A name the memsim executable also has cannot be
 *              told apart in cachegrind.out (it names no objects): refused.
 *  Callgrind   the self costs of every function in the native build's object ("ob=") in the
 *              region between client requests around its run().
 *
 * Also the row fillers cmd_xcheck.c and this file share.
 */

#include <stdbool.h>

#include "analysis/xcheck.h"
#include "cli/options.h"
#include "measure/elfsyms.h"
#include "measure/papi_count.h"
#include "run/evaluate.h"
#include "run/plugin.h"
#include "sim/cache.h"
#include "sim/spec.h"

struct xcheck_plugin {
	struct plugin traced, native;
	char native_path[4096];         /* PATH-native.so, as `memsim native` loads it */
	char native_real[4096];         /* its real path: Callgrind's "ob=" for it */
	struct elf_functions functions; /* the native build's */
	char left_out[5][128];          /* its callbacks' and entry's names */
	unsigned nleft_out;
	bool cachegrind_ok; /* its functions have names Cachegrind can tell apart */
	char cachegrind_why[1024];
};

/* Loads both builds of o->plugin_path and reads the native one's functions. Returns 0, or
 * EXIT_USAGE with a one-line message in err (nothing left loaded). */
int xcheck_plugin_open(struct xcheck_plugin *xp, const struct kernel_options *o, char *err,
		       size_t errlen);
void xcheck_plugin_close(struct xcheck_plugin *xp);

/* Filters for the tools' output files (vg_fn_filter; arg the xcheck_plugin). */
bool xcheck_plugin_cachegrind_keep(const char *object, const char *fn, void *arg);
bool xcheck_plugin_callgrind_keep(const char *object, const char *fn, void *arg);

/* The plugin's formula against ev, its flushed run on Callgrind's model, where it gives one. */
void xcheck_plugin_formula_row(struct xcheck *x, const struct evaluation *ev,
			       const struct xcheck_plugin *xp);

/* The PAPI row (and memsim on the host preset beside it) for the native build, run in this
 * process. Returns 0, or -1 with a message when the run itself could not be made. */
int xcheck_plugin_papi(struct xcheck *x, struct xcheck_plugin *xp, const struct kernel_options *o,
		       struct papi_report *rep, char *err, size_t errlen);
