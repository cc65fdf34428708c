#pragma once

/*
 * Kernel plugins (include/memsim/plugin.h): loading a shared object named by --kernel PATH,
 * checking it against this memsim, and running its traced build through the cache model.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/attn.h"
#include "run/simulate.h"
/* memsim's own sources keep sim/trace.h's TR_* macros. */
#ifndef MEMSIM_NO_TR_MACROS
#define MEMSIM_NO_TR_MACROS
#endif
#include "memsim/plugin.h"
#include "sim/cache.h"
#include "sim/spec.h"

#define PLUGIN_MAX_PARAMS 32
#define PLUGIN_MAX_ARRAYS 64

/* The --param key=value options as given (pointers into argv; keys copied). */
struct plugin_params {
	unsigned n;
	char keys[PLUGIN_MAX_PARAMS][64];
	const char *values[PLUGIN_MAX_PARAMS];
	const char *given[PLUGIN_MAX_PARAMS]; /* "key=value" */
};

struct plugin {
	void *handle;
	const struct memsim_kernel_plugin *p;
	const char *path;
};

/* Whether a --kernel value names a plugin: it contains a '/' or ends in ".so". */
bool plugin_path_like(const char *s);

/* Whether s, a --kernel value plugin_path_like() takes for a path, is rather a comma list that
 * puts a plugin with other kernels ("naive,./x.so"): no file has that name, and one of its
 * items is a built-in kernel's name or an existing file. */
bool plugin_in_list(const char *s);

/* Adds "key=value" to pp. Returns 0, or -1 with a one-line message in err. */
int plugin_params_add(struct plugin_params *pp, const char *kv, char *err, size_t errlen);

/* Loads the plugin at path and checks it: the entry, the ABI, the struct's size, the
 * callbacks, and that it is the native build where native is true (the traced one else).
 * Returns 0, or -1 with a one-line message in err (nothing left loaded). */
int plugin_load(struct plugin *pl, const char *path, bool native, char *err, size_t errlen);
void plugin_unload(struct plugin *pl);

/* "x-native.so" beside "x.so" into buf. Returns 0, or -1 when path does not end in ".so". */
int plugin_native_path(const char *path, char *buf, size_t len);

/* Whether pl takes every key of pp. Returns 0, or -1 with a message listing those it takes. */
int plugin_params_check(const struct plugin *pl, const struct plugin_params *pp, char *err,
			size_t errlen);

/* The plugin's configuration of c and pp: every key one it takes (else a message listing
 * them), then its check(). Returns 0, or -1 with a one-line message in err. */
int plugin_config(const struct plugin *pl, const struct attn_config *c,
		  const struct plugin_params *pp, struct memsim_kernel_config *out, char *err,
		  size_t errlen);

/* The plugin's arrays, mapped (zeroed, each page-aligned in a 1 GiB-aligned arena, the same
 * layout every run). */
struct plugin_arrays {
	unsigned n;
	struct memsim_kernel_array a[PLUGIN_MAX_ARRAYS];
	void *base[PLUGIN_MAX_ARRAYS];
	char *arena;
	size_t arena_bytes;
};

/* Asks the plugin for kc's arrays and maps them, refusing more than this process may take
 * (sim_memory_available()). Returns 0, -EINVAL (the plugin's refusal, too many arrays, sizes
 * past memory: a usage error) or -ENOMEM (the mapping failed), with a message in err. */
int plugin_arrays_create(const struct plugin *pl, const struct memsim_kernel_config *kc,
			 struct plugin_arrays *pa, char *err, size_t errlen);
void plugin_arrays_destroy(struct plugin_arrays *pa);
/* Maps pa's arrays afresh in place: zeroed again, at the same addresses. Returns 0, or -1
 * with a message in err. */
int plugin_arrays_zero(struct plugin_arrays *pa, char *err, size_t errlen);

/* The bytes the plugin's arrays for c and pp take once mapped (page-rounded), each counted at
 * most cap (the sum may pass it); 0 where the plugin refuses the configuration. */
uint64_t plugin_arrays_bytes(const struct plugin *pl, const struct attn_config *c,
			     const struct plugin_params *pp, uint64_t cap);

/* sim_memory_share() for a run of the plugin's c and pp in one of `workers` processes: the
 * memory left once its arrays are mapped (all of it where the plugin refuses the
 * configuration). */
uint64_t plugin_memory_available(const struct plugin *pl, const struct attn_config *c,
				 const struct plugin_params *pp, unsigned workers,
				 const char **what);

/* Runs the traced plugin over pa into cache c (which must be fresh), tiles as spec says,
 * flushing at the end where flush. *seconds is the run's wall time. Returns 0, or -1 with the
 * plugin's message (or the trace's) in err. */
int plugin_simulate(const struct plugin *pl, const struct memsim_kernel_config *kc,
		    struct plugin_arrays *pa, struct cache *c, const struct spec *spec, bool flush,
		    double *seconds, char *err, size_t errlen);

/* Runs the traced plugin over pa with no model, writing every access to rec->path with
 * rec->command in the header, arrays and phases as the plugin declares them (a pass of its
 * own, as sim_kernel_record() makes one: a recording changes what the trace merges). Returns
 * 0, -EIO with "recording: ..." in err when the file cannot be created or written, or -1 with
 * the plugin's message; a regular file left incomplete is then removed. */
int plugin_record(const struct plugin *pl, const struct memsim_kernel_config *kc,
		  struct plugin_arrays *pa, const struct sim_record *rec, char *err, size_t errlen);

/* A native plugin's run, as papi_measure() and a timing loop call it: run() over pa once,
 * unless an earlier call failed (rc and err keep the first failure). */
struct plugin_native_run {
	const struct plugin *pl;
	const struct memsim_kernel_config *kc;
	struct plugin_arrays *pa;
	int rc;
	char err[512];
};
void plugin_native_call(void *run);

/* The plugin's formula() (plugin.h) for kc; -1 where it has none or it does not apply. */
int plugin_formula(const struct plugin *pl, const struct memsim_kernel_config *kc,
		   uint64_t capacity, uint32_t line, struct memsim_array_bytes *out, unsigned n);
/* The plugin's flops() for kc into *flops; false where it has none. */
bool plugin_flops(const struct plugin *pl, const struct memsim_kernel_config *kc, double *flops);

/* One configuration of a plugin end to end: arrays, the run through the model, the plugin's
 * formula where it gives one. */
struct plugin_eval {
	struct memsim_kernel_config kc;
	struct plugin_arrays pa;
	struct cache *cache; /* owned */
	double seconds;
	bool have_formula;
	struct memsim_array_bytes formula[PLUGIN_MAX_ARRAYS];
	bool exact;          /* the formula's model is the cache's: byte-equal is claimed */
	char scope_why[160]; /* why not, where not exact */
};

/* Runs c (with pp) of pl on spec, recording it first into rec where not NULL
 * (plugin_record(); the arrays are then zeroed again for the live run). Returns 0, or with a
 * one-line message in err -EINVAL where c or pp is not the plugin's (a usage error), -ENOMEM
 * where the model cannot be allocated, -EIO where the run or its recording failed. Free with
 * plugin_eval_finish(). */
int plugin_eval_run(struct plugin_eval *ev, const struct plugin *pl, const struct attn_config *c,
		    const struct plugin_params *pp, const struct spec *spec, bool flush,
		    const struct sim_record *rec, char *err, size_t errlen);
void plugin_eval_finish(struct plugin_eval *ev);

/* plugin_eval_run() for n sizes of cache level `level` in one pass of method how
 * (cache_create_onepass()): outs[k] as a run on specs[k] (specs[0] the pass's base) would
 * give, counter for counter. Returns 0, or with a one-line message in err -ENOMEM when the
 * pass's models cannot be allocated or memory ran out, -EINVAL for anything else (each
 * size may still run alone). */
int plugin_eval_onepass(struct plugin_eval *outs, const struct plugin *pl,
			const struct attn_config *c, const struct plugin_params *pp,
			const struct spec *specs, unsigned level, const uint64_t *sizes, unsigned n,
			enum cache_onepass how, bool flush, char *err, size_t errlen);

/* The report object of `memsim run --json` for a plugin: header (where argv), config (with
 * "kernel" the plugin's name, "plugin" its path, "params"), levels, dram, arrays, phases,
 * "formulas" {"exact"} where it has a formula, flops and intensity where it counts flops. */
cJSON *plugin_eval_json(const struct plugin_eval *ev, const struct plugin *pl,
			const struct attn_config *c, const struct plugin_params *pp,
			const struct spec *spec, bool flush, uint64_t seed, int argc, char **argv);
/* A report's "config" object for a plugin: "kernel" its name, "plugin" its path, "params". */
void plugin_config_json(cJSON *cfg, const struct plugin *pl, const struct plugin_params *pp);
/* The formula comparison as text (nothing without a formula). */
void plugin_eval_print(FILE *out, const struct plugin_eval *ev, const struct plugin *pl);
