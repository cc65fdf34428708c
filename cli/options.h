#pragma once

/*
 * The kernel and cache options shared by `memsim run`, `formula`, `native`, `xcheck` and
 * `gpucheck` (and, as lists, `sweep`):
 * --kernel --N --N-kv --d --heads --kv-heads --batch --dtype --Br --Bc --causal --softmax-separate
 * --splits --kv-page --cache --no-flush --seed. Values are parsed strictly; a bad one is a one-line
 * usage error.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/plugin.h"
#include "kernels/attn.h"
#include "sim/spec.h"

enum {
	OPT_KERNEL = 300,
	OPT_N,
	OPT_N_KV,
	OPT_D,
	OPT_HEADS,
	OPT_KV_HEADS,
	OPT_BATCH,
	OPT_DTYPE,
	OPT_BR,
	OPT_BC,
	OPT_CAUSAL,
	OPT_SEPARATE,
	OPT_CACHE,
	OPT_NO_FLUSH,
	OPT_SEED,
	OPT_JSON,
	OPT_HELP,
	OPT_PARAM,
	OPT_SPLITS,
	OPT_KV_PAGE,
	OPT_FIRST_FREE, /* commands number their own options from here */
};

/* The shared long options, for copying into a command's table. */
#define KERNEL_LONG_OPTIONS                                                                        \
	{ "kernel", required_argument, NULL, OPT_KERNEL },                                         \
		{ "N", required_argument, NULL, OPT_N }, { "d", required_argument, NULL, OPT_D },  \
		{ "N-kv", required_argument, NULL, OPT_N_KV },                                     \
		{ "heads", required_argument, NULL, OPT_HEADS },                                   \
		{ "kv-heads", required_argument, NULL, OPT_KV_HEADS },                             \
		{ "batch", required_argument, NULL, OPT_BATCH },                                   \
		{ "dtype", required_argument, NULL, OPT_DTYPE },                                   \
		{ "Br", required_argument, NULL, OPT_BR },                                         \
		{ "Bc", required_argument, NULL, OPT_BC },                                         \
		{ "causal", no_argument, NULL, OPT_CAUSAL },                                       \
		{ "softmax-separate", no_argument, NULL, OPT_SEPARATE },                           \
		{ "cache", required_argument, NULL, OPT_CACHE },                                   \
		{ "no-flush", no_argument, NULL, OPT_NO_FLUSH },                                   \
		{ "seed", required_argument, NULL, OPT_SEED },                                     \
		{ "json", required_argument, NULL, OPT_JSON },                                     \
		{ "param", required_argument, NULL, OPT_PARAM },                                   \
		{ "splits", required_argument, NULL, OPT_SPLITS },                                 \
		{ "kv-page", required_argument, NULL, OPT_KV_PAGE },                               \
	{                                                                                          \
		"help", no_argument, NULL, OPT_HELP                                                \
	}

struct kernel_options {
	struct attn_config cfg;
	bool kernel_given;
	bool kv_heads_given;
	bool n_kv_given;
	bool splits_given;
	bool kv_page_given;
	const char *cache_text; /* default: the lab preset */
	bool flush;
	uint64_t seed;
	const char *json_path;
	bool need_memory; /* the arrays must fit in memory [true]; false for formulas alone */
	bool trace_only;  /* the kernel runs trace-only: its arrays need address space alone */
	const char *plugin_path; /* --kernel PATH: a plugin (cli/plugin.h), or NULL */
	struct plugin_params params; /* --param key=value, plugins only */
	bool plugins_ok; /* the command takes --kernel PATH (set after kernel_options_init()) */
};

/* A command that takes the shared options, and its own beside them. */
struct kernel_command {
	const char *name; /* "run" */
	void (*usage)(FILE *f);
	/* The command's own options (a zero row ends them; NULL for none), handed to on_option
	 * with their value; it returns 0, or EXIT_USAGE after a one-line message. */
	const struct option *extra;
	int (*on_option)(void *ctx, struct kernel_options *o, int opt, const char *arg);
	void *ctx;
};

#define KERNEL_OPTIONS_HELP (-1)

/* Parses a command's argv (argv[0] its name) into o, then kernel_options_finish() into spec.
 * Returns 0 to go on, EXIT_USAGE after a one-line message (unknown option, bad value,
 * operand), or KERNEL_OPTIONS_HELP after printing the usage for --help. o starts from
 * kernel_options_init() and whatever the caller changed since. */
int kernel_options_parse(struct kernel_options *o, struct spec *spec,
			 const struct kernel_command *cmd, int argc, char **argv);

/* Defaults: N 1024, N_kv = N, d 64, 1 head, batch 1, fp32, B_r = B_c = 64, cache "lab", flush on.
 */
void kernel_options_init(struct kernel_options *o);

/* After parsing: checks the combination (kernel given, kv_heads dividing heads, memory when
 * o->need_memory and not o->trace_only) and parses the cache spec into *spec. A paged run's
 * block table is drawn from --seed (cfg.kv_seed). flashdecode
 * without --splits gets S from kernel_default_splits() for the cache's preset; S past the key
 * blocks is clamped to them with a note on stderr. Returns 0 or
 * EXIT_USAGE after a one-line message. */
int kernel_options_finish(struct kernel_options *o, struct spec *spec, const char *cmd);

/* flashdecode's S where --splits is not given, and where it comes from: on a GPU preset
 * (h100, h100-50m: 132 SMs) FlashAttention's num_splits_heuristic() over batch x heads x
 * query blocks on twice the SMs and the T_c key blocks, at most 128 (sdpa_num_splits(), with
 * c's B_r and B_c as the tiles; packed grouped-query decode counts kv_heads heads of g
 * rows, attn_decode_view()); 1 on a CPU preset, lab or an explicit spec. */
uint64_t kernel_default_splits(const struct attn_config *c, const char *preset,
			       enum attn_splits_source *source);

/* --bandwidth GB/s for `run` and `formula`: a positive finite number into *out. Returns 0, or
 * EXIT_USAGE after a one-line message. */
int bandwidth_value(const char *cmd, const char *arg, double *out);

/* "naive N=1024 d=64 heads=1 kv_heads=1 batch=1 fp32 Br=64 Bc=64" and flags. */
char *kernel_config_str(const struct attn_config *c, char *buf, size_t len);

/* The options that give c (and seed) to another memsim command, such as `memsim native` run
 * under Valgrind: argv[0 .. argc) with a NULL after them, pointing into buf and static names. */
#define KERNEL_ARGV_MAX 32
struct kernel_argv {
	char buf[KERNEL_ARGV_MAX][32];
	char *argv[KERNEL_ARGV_MAX + 1];
	int argc;
};
void kernel_config_argv(const struct attn_config *c, uint64_t seed, struct kernel_argv *a);
