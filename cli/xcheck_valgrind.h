#pragma once

/*
 * `memsim xcheck`'s Valgrind side (cli/xcheck_valgrind.c): the two-level geometry Cachegrind
 * and Callgrind simulate, memsim's spec under each tool's model, and running each tool on
 * `memsim native` to read the kernel's counts into a row.
 */

#include <stdbool.h>
#include <stddef.h>

#include "analysis/xcheck.h"
#include "cli/options.h"
#include "measure/vgout.h"
#include "sim/spec.h"

/* The tools' geometry: D1 and LL from the spec, I1 from it or else like D1. */
struct geometry {
	struct cache_level_config i1, d1, ll;
	bool i1_given;
	char args[3][64]; /* --I1=..., --D1=..., --LL=... */
};

struct run_ctx {
	const char *dir;
	const char *valgrind;
	char self[4096];
	struct kernel_argv kargs;
	const char *params[PLUGIN_MAX_PARAMS]; /* a plugin's --param key=value */
	unsigned nparams;
	char evict[32];
	bool failed_keep; /* a tool failed: keep the directory for the user */
	/* Which functions of the tools' files are the kernel's, and in words. */
	vg_fn_filter cachegrind_keep, callgrind_keep;
	void *keep_arg;
	char cachegrind_what[512], callgrind_what[512];
};

/* Why spec s cannot be cross-checked with Valgrind's two-level model, or NULL. */
const char *xcheck_geometry_check(const struct spec *s);

/* The tools' geometry g (and its --I1/--D1/--LL arguments) from spec s. */
void xcheck_geometry_from_spec(const struct spec *s, struct geometry *g);

/* memsim's spec for Cachegrind's (callgrind false) or Callgrind's model over base's geometry. */
void xcheck_model_spec(const struct spec *base, bool callgrind, struct spec *out);

/* vg_fn_filter: the kernel's own functions (attn_*_native and their clones). */
bool xcheck_kernel_function(const char *object, const char *fn, void *arg);

/* Cachegrind's (or Callgrind's, with or without its prefetch model) row of the kernel run by
 * `memsim native`. Return 0, or -1 with a one-line message (r->failed_keep set). */
int xcheck_run_cachegrind(struct run_ctx *r, const struct geometry *g, struct xcheck_row *row,
			  char *err, size_t errlen);
int xcheck_run_callgrind(struct run_ctx *r, const struct geometry *g, bool prefetch,
			 struct xcheck_row *row, char *err, size_t errlen);

/* The note and DRAM bytes of the prefetching Callgrind row pf against row, without it. */
void xcheck_callgrind_prefetch_note(struct xcheck_row *pf, const struct xcheck_row *row);
