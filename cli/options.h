#pragma once

/*
 * The kernel and cache options shared by `memsim run`, `formula`, `native`, `xcheck` and
 * `gpucheck` (and, as lists, `sweep`):
 * --kernel --N --N-kv --d --heads --kv-heads --batch --dtype --Br --Bc --causal --softmax-separate
 * --splits --kv-page --cache --no-flush --seed. Values are parsed strictly; a bad one is a one-line
 * usage error.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli/optparse.h"
#include "kernels/attn.h"
#include "run/plugin.h"
#include "sim/spec.h"

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
	const char *plugin_path; /* --kernel PATH: a plugin (run/plugin.h), or NULL */
	struct plugin_params params; /* --param key=value, plugins only */
	bool plugins_ok; /* the command takes --kernel PATH (set after kernel_options_init()) */
};

/* A command that takes the shared options, and its own beside them. */
struct kernel_command {
	const char *name; /* "run" */
	void (*usage)(FILE *f);
	const struct optparse_option *extra; /* the command's own options, or NULL */
};

/* Parses a command's argv (argv[0] its name) into o, then kernel_options_finish() into spec.
 * Returns 0 to go on, EXIT_USAGE after a one-line message (unknown option, bad value,
 * operand), or OPTPARSE_HELP_SHOWN after printing the usage for --help. o starts from
 * kernel_options_init() and whatever the caller changed since. */
int kernel_options_parse(struct kernel_options *o, struct spec *spec,
			 const struct kernel_command *cmd, int argc, char **argv);

/* --param KEY=VALUE, an OPTPARSE_CALL into the struct plugin_params at opt->dest (repeatable).
 * A VALUE with a comma is refused: a comma separates a sweep's values (memsim sweep --param
 * KEY=V1,V2), so one command line means one thing in run and in sweep. */
int params_option(const char *cmd, const struct optparse_option *opt, const char *value);

/* --l2-policy (sdpa): lru, srrip or random, an OPTPARSE_CALL into the
 * enum l2sets_policy at opt->dest. */
int l2_policy_option(const char *cmd, const struct optparse_option *opt, const char *value);

/* Defaults: N 1024, N_kv = N, d 64, 1 head, batch 1, fp32, B_r = B_c = 64, cache "lab", flush on.
 */
void kernel_options_init(struct kernel_options *o);

/* After parsing: checks the combination (kernel given, kv_heads dividing heads, memory when
 * o->need_memory and not o->trace_only) and parses the cache spec into *spec. A paged run's
 * block table is drawn from --seed (cfg.kv_seed). flashdecode
 * without --splits gets S from sdpa_default_splits() (gpu/sdpa_plan.h) for the cache's preset; S
 * past the key blocks is clamped to them with a note on stderr. Returns 0 or EXIT_USAGE after a
 * one-line message. */
int kernel_options_finish(struct kernel_options *o, struct spec *spec, const char *cmd);

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
