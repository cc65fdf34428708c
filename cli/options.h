#pragma once

/*
 * The kernel and cache options shared by `memsim run`, `formula`, `sweep` and `xcheck`:
 * --kernel --N --d --heads --kv-heads --batch --dtype --Br --Bc --causal --softmax-separate
 * --cache --no-flush --seed. Values are parsed strictly; a bad one is a one-line usage error.
 */

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernels/attn.h"
#include "sim/spec.h"

enum {
	OPT_KERNEL = 300,
	OPT_N,
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
	OPT_FIRST_FREE, /* commands number their own options from here */
};

/* The shared long options, for copying into a command's table. */
#define KERNEL_LONG_OPTIONS                                                                        \
	{ "kernel", required_argument, NULL, OPT_KERNEL },                                         \
		{ "N", required_argument, NULL, OPT_N }, { "d", required_argument, NULL, OPT_D },  \
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
	{                                                                                          \
		"help", no_argument, NULL, OPT_HELP                                                \
	}

struct kernel_options {
	struct attn_config cfg;
	bool kernel_given;
	bool kv_heads_given;
	const char *cache_text; /* default: the lab preset */
	bool flush;
	uint64_t seed;
	const char *json_path;
};

/* Defaults: N 1024, d 64, 1 head, batch 1, fp32, B_r = B_c = 64, cache "lab", flush on. */
void kernel_options_init(struct kernel_options *o);

/* Applies option opt with value arg. Returns 1 if it was one of the shared options, 0 if not,
 * or EXIT_USAGE after printing a one-line message for a bad value. */
int kernel_option(struct kernel_options *o, int opt, const char *arg, const char *cmd);

/* After parsing: checks the combination (kernel given, kv_heads dividing heads, memory) and
 * parses the cache spec into *spec. Returns 0 or EXIT_USAGE after a one-line message. */
int kernel_options_finish(struct kernel_options *o, struct spec *spec, const char *cmd,
			  bool need_memory);

/* "naive N=1024 d=64 heads=1 kv_heads=1 batch=1 fp32 Br=64 Bc=64" and flags. */
char *kernel_config_str(const struct attn_config *c, char *buf, size_t len);

/* The options that give c (and seed) to another memsim command, such as `memsim native` run
 * under Valgrind: argv[0 .. argc) with a NULL after them, pointing into buf and static names. */
#define KERNEL_ARGV_MAX 24
struct kernel_argv {
	char buf[KERNEL_ARGV_MAX][32];
	char *argv[KERNEL_ARGV_MAX + 1];
	int argc;
};
void kernel_config_argv(const struct attn_config *c, uint64_t seed, struct kernel_argv *a);
