#pragma once

/*
 * A sweep's plan: the option lists of `memsim sweep` and the configurations they give, in a
 * fixed order (caches outermost, then kernel, a plugin's --param values, dtype, causal, heads,
 * kv_heads, batch, d, B_r, B_c, N, N_kv innermost), each with its key: the text that names it
 * in results.json, so that --resume and `memsim merge` know a configuration again (a
 * trace-only run's key says so, so a sweep never resumes another mode's rows).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "run/plugin.h"

#define SWEEP_LIST_MAX 256
#define SWEEP_CACHES_MAX 64
#define SWEEP_PLAN_MAX 1000000 /* configurations: the product of the lists' lengths */

struct u64_list {
	uint64_t v[SWEEP_LIST_MAX];
	unsigned n;
};

/* The caches one --cache-sweep made of one --cache, each size at the associativity the
 * --cache gave (sim/cache.h cache_config_resize()): one pass over their sizes where it applies
 * (cache_onepass_method()) and their models fit in memory, else passes that fit
 * (run/sweep_pool.c). */
struct sweep_cache_group {
	unsigned first, n; /* caches[first .. first + n) */
	unsigned level;    /* the swept level, 0 for L1 */
	enum cache_onepass method;
	const char *why; /* static: why a better method does not apply, or NULL */
};

/* One --param KEY=V1,V2,... of a sweep: a list like the others, cut at its commas (so no value
 * of a sweep holds a comma), each value one configuration. */
struct sweep_param_list {
	char **given; /* "KEY=V" for each value; owned */
	unsigned n;
};

struct sweep_plan {
	struct u64_list N, d, heads, kv_heads, batch, Br, Bc;
	struct u64_list N_kv; /* with nkv_given; else N_kv = N */
	bool nkv_given;
	struct u64_list splits; /* flashdecode's S, with splits_given; else as memsim run */
	bool splits_given;
	struct u64_list kv_page; /* flash2's P, with kv_page_given; else unpaged */
	bool kv_page_given;
	enum attn_kernel kernels[ATTN_KERNEL_COUNT];
	unsigned nkernels;
	enum attn_dtype dtypes[3];
	unsigned ndtypes;
	bool causal[2];
	unsigned ncausal;
	bool softmax_separate;
	bool kv_given;
	char *caches[SWEEP_CACHES_MAX]; /* a preset's name or a spec's canonical text; owned */
	unsigned ncaches;
	bool flush;
	uint64_t seed;
	bool simulate;   /* false: the formulas alone */
	bool trace_only; /* simulated by the kernels' trace-only forms (same counters) */
	struct sweep_cache_group groups[SWEEP_CACHES_MAX];
	unsigned ngroups;
	bool separate_runs; /* --separate-runs: one run per configuration, no one-pass */
	uint32_t sample_sets; /* --sample-sets K: estimates by set sampling; 0: exact */
	unsigned threads; /* --threads T: slice threads each simulation takes (the same counters) */
	struct plugin plugin; /* --kernel PATH: loaded; plugin.p NULL for built-in kernels */
	/* The plugin's build, "fnv1a64:" and the 64-bit FNV-1a hash of its file in hex: what
	 * every row records, so that rows of another build of the same path are known. */
	char plugin_hash[32];
	struct plugin_params params; /* --param key=value, for the plugin */
	/* params.given[i] cut into its values (sweep_plan_params()); their product is a
	 * dimension of the plan */
	struct sweep_param_list param_lists[PLUGIN_MAX_PARAMS];
};

/* A worker's task: todo[start .. start + n), items that differ only in the size of a group's
 * swept level, run in one pass (group >= 0), or one item alone (group -1, n 1). */
struct sweep_task {
	size_t start;
	unsigned n;
	int group;
};

struct sweep_item {
	struct attn_config cfg;
	unsigned cache;  /* index into plan->caches */
	uint32_t params; /* which combination of the --param lists (sweep_plan_item_params()) */
	const char *key; /* in the block sweep_plan_items() returned */
};

/* Defaults as `memsim run`: N 1024, d 64, one head, batch 1, fp32, B_r = B_c = 64, not
 * causal, flush, seed 1, simulated; no kernel and no cache yet. */
void sweep_plan_init(struct sweep_plan *p);
/* Frees the caches' texts and the --param lists. */
void sweep_plan_finish(struct sweep_plan *p);

/* The setters below return 0, or -EINVAL with a one-line message naming opt in err (a usage
 * error: the caller says so). */

/* "a,b,c", "lo:hi:xF" (geometric) or "lo:hi:+S" (arithmetic); sizes may carry K/M/G when
 * size_units. An empty item and a value given twice are refused, here and below. */
int sweep_list_parse(const char *opt, const char *text, struct u64_list *out, bool size_units,
		     char *err, size_t errlen);
/* "naive,flash2", "fp32,fp16", "no,yes" (NULL: yes). */
int sweep_plan_kernels(struct sweep_plan *p, const char *list, char *err, size_t errlen);
int sweep_plan_dtypes(struct sweep_plan *p, const char *list, char *err, size_t errlen);
int sweep_plan_causal(struct sweep_plan *p, const char *list, char *err, size_t errlen);
/* Cuts each --param's value (p->params) at its commas into p->param_lists: call once, after
 * the options. An empty item of a list and a value given twice are refused. */
int sweep_plan_params(struct sweep_plan *p, char *err, size_t errlen);
/* Item it's --param pairs, one value of each list, into out (borrowed from the plan). */
void sweep_plan_item_params(const struct sweep_plan *p, const struct sweep_item *it,
			    struct plugin_params *out);
/* Adds a cache spec or preset; with cache_sweep ("L2=32K:64M:x2") one spec per size of that
 * level instead. */
int sweep_plan_cache(struct sweep_plan *p, const char *spec, const char *cache_sweep, char *err,
		     size_t errlen);

/* Before sweep_plan_items(): refuses, with -EINVAL and a one-line message in err, a plan of
 * more than SWEEP_PLAN_MAX configurations (counted, nothing made), a cache given twice, and a
 * plan of which the kernels accept no configuration. Returns 0 otherwise. */
int sweep_plan_check(const struct sweep_plan *p, char *err, size_t errlen);

/* The configurations, in the order above; those the kernels do not accept (kv_heads not
 * dividing heads, proj with causal) are left out. The items and their keys are one block:
 * caller frees with free(). */
struct sweep_item *sweep_plan_items(const struct sweep_plan *p, size_t *count);

/* How the plan's runs are made, as the end of each key says: "flush=1 seed=1 simulated",
 * with " trace-only" and " sampled 1/K" where they apply. Returns buf. */
char *sweep_plan_mode(const struct sweep_plan *p, char *buf, size_t len);

/* The group of cache index i (plan->groups), or -1. */
int sweep_plan_group_of(const struct sweep_plan *p, unsigned cache);

/* Orders todo[0 .. n) (indices into items, from sweep_plan_items()) into tasks: the items of one
 * configuration over a group's sizes together, where one pass applies and the plan simulates.
 * Returns the number of tasks written to tasks (room for n). */
size_t sweep_plan_tasks(const struct sweep_plan *p, const struct sweep_item *items,
			size_t nitems, long *todo, size_t n, struct sweep_task *tasks);

/* A `memsim sweep` command line that runs this plan into out, every list spelled out.
 * Caller frees with free(). */
char *sweep_plan_command(const struct sweep_plan *p, const char *out);
