#pragma once

/*
 * Kernel plugins (include/memsim/plugin.h): loading a shared object named by --kernel PATH,
 * checking it against this memsim, and running its traced build through the cache model.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

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

/* A report's "config" object for a plugin: "kernel" its name, "plugin" its path, "params". */
void plugin_config_json(cJSON *cfg, const struct plugin *pl, const struct plugin_params *pp);
