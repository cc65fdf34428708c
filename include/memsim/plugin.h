#ifndef MEMSIM_PLUGIN_H
#define MEMSIM_PLUGIN_H

/*
 * A kernel of your own as a plugin: a shared object that every memsim command taking
 * --kernel runs (`memsim run --kernel ./my_kernel.so`). It exports one function,
 * MEMSIM_PLUGIN_ENTRY, that returns its description. Build the source twice: traced
 * (my_kernel.so) and with -DMEMSIM_NATIVE (my_kernel-native.so, beside it), which `native`
 * and `xcheck` run. docs/library.md shows a whole plugin.
 */

#include <stddef.h>
#include <stdint.h>

#include "memsim/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plugin interface's version: memsim refuses a plugin built for another one. */
#define MEMSIM_PLUGIN_ABI 1

enum memsim_dtype { MEMSIM_FP32 = 0, MEMSIM_FP16 = 1, MEMSIM_BF16 = 2 };

/* A configuration, as memsim's options give it: --N, --d, --heads, --kv-heads, --batch,
 * --dtype, --Br, --Bc, --causal and the plugin's own --param key=value. */
struct memsim_kernel_config {
	uint64_t N, d, heads, kv_heads, batch, Br, Bc;
	enum memsim_dtype dtype;
	unsigned dtype_bytes; /* 4 or 2 */
	int causal;           /* 0 or 1 */
	unsigned nparams;
	const char *const *param_keys; /* nparams each; keys among the plugin's params */
	const char *const *param_values;
};

/* An array the kernel needs for a configuration: memsim allocates it (zeroed, 64-byte
 * aligned) and declares it to the trace before run(). */
struct memsim_kernel_array {
	char name[32];
	uint64_t bytes;
	enum memsim_space space;
};

/* DRAM bytes the plugin's formula predicts for one array. */
struct memsim_array_bytes {
	uint64_t read_bytes, write_bytes;
};

struct memsim_kernel_plugin {
	uint32_t abi;  /* MEMSIM_PLUGIN_ABI */
	uint32_t size; /* sizeof(struct memsim_kernel_plugin) */
	int native;    /* MEMSIM_PLUGIN_NATIVE: built with MEMSIM_NATIVE defined */
	const char *name;
	const char *description;
	const char *const *params; /* the --param keys it takes, NULL-terminated; may be NULL */
	/* Whether the configuration is one the kernel runs. Returns 0, or -1 with a one-line
	 * message in err. May be NULL: every configuration is. */
	int (*check)(const struct memsim_kernel_config *cfg, char *err, size_t errlen);
	/* The arrays for cfg: at most max into out. Returns how many, or -1 with err. */
	int (*arrays)(const struct memsim_kernel_config *cfg, struct memsim_kernel_array *out,
		      unsigned max, char *err, size_t errlen);
	/* Computes the kernel over the arrays (base addresses in the order arrays() gave),
	 * reporting its accesses to t (TR_*; NULL in the native build). Returns 0, or -1 with
	 * err. */
	int (*run)(const struct memsim_kernel_config *cfg, void *const *arrays,
		   struct memsim_trace *t, char *err, size_t errlen);
	/* The floating-point operations of a run (for intensity); may be NULL. */
	double (*flops)(const struct memsim_kernel_config *cfg);
	/* Optional exact formula: the DRAM bytes of each array (arrays() order, n of them) on a
	 * fully associative LRU cache of capacity_bytes with line_bytes lines, write-back and
	 * write-allocate, tiles in scratch, final flush included. Returns 0, or -1 where the
	 * formula does not apply (then nothing is compared). May be NULL. */
	int (*formula)(const struct memsim_kernel_config *cfg, uint64_t capacity_bytes,
		       uint32_t line_bytes, struct memsim_array_bytes *out, unsigned n);
};

#ifdef MEMSIM_NATIVE
#define MEMSIM_PLUGIN_NATIVE 1
#else
#define MEMSIM_PLUGIN_NATIVE 0
#endif

/* The function a plugin exports, by this name; memsim calls it once after loading. */
#define MEMSIM_PLUGIN_ENTRY "memsim_kernel_plugin_v1"
#ifdef __cplusplus
#define MEMSIM_PLUGIN_LINKAGE extern "C" __attribute__((visibility("default")))
#else
#define MEMSIM_PLUGIN_LINKAGE __attribute__((visibility("default")))
#endif
/* Defines it: MEMSIM_PLUGIN(my_plugin) after `static const struct memsim_kernel_plugin
 * my_plugin = { MEMSIM_PLUGIN_ABI, sizeof(struct memsim_kernel_plugin), MEMSIM_PLUGIN_NATIVE,
 * ... };`, outside any function. */
#define MEMSIM_PLUGIN(p)                                                                           \
	MEMSIM_PLUGIN_LINKAGE const struct memsim_kernel_plugin *memsim_kernel_plugin_v1(void);    \
	MEMSIM_PLUGIN_LINKAGE const struct memsim_kernel_plugin *memsim_kernel_plugin_v1(void)     \
	{                                                                                          \
		return &(p);                                                                       \
	}

#ifdef __cplusplus
}
#endif

#endif
