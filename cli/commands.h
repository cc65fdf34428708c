#pragma once

/*
 * The `memsim` subcommands. Each takes its own argv (argv[0] is the command name) and returns
 * the process exit status: 0 ok, 1 runtime failure, 2 usage error.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct cache;

enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
};

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *f);
	const char *summary;
};

/* All commands, terminated by a row with name NULL. */
extern const struct command commands[];

int cmd_replay(int argc, char **argv);
void usage_replay(FILE *f);
int cmd_presets(int argc, char **argv);
void usage_presets(FILE *f);
int cmd_formula(int argc, char **argv);
void usage_formula(FILE *f);
int cmd_sdpa(int argc, char **argv);
void usage_sdpa(FILE *f);
int cmd_native(int argc, char **argv);
void usage_native(FILE *f);
int cmd_sweep(int argc, char **argv);
void usage_sweep(FILE *f);
int cmd_merge(int argc, char **argv);
void usage_merge(FILE *f);
int cmd_study(int argc, char **argv);
void usage_study(FILE *f);
int cmd_table(int argc, char **argv);
void usage_table(FILE *f);
int cmd_plot(int argc, char **argv);
void usage_plot(FILE *f);
int cmd_run(int argc, char **argv);
void usage_run(FILE *f);
int cmd_gpucheck(int argc, char **argv);
void usage_gpucheck(FILE *f);
int cmd_report(int argc, char **argv);
void usage_report(FILE *f);
int cmd_xcheck(int argc, char **argv);
void usage_xcheck(FILE *f);
/* memsim-bench only (bench/, built with -Dbench=true) */
int cmd_bench(int argc, char **argv);
void usage_bench(FILE *f);
int cmd_ceilings(int argc, char **argv);
void usage_ceilings(FILE *f);
int cmd_profile(int argc, char **argv);
void usage_profile(FILE *f);

/* Where a command's readable output goes: standard error when its JSON goes to standard output
 * (--json -), so that stdout holds one JSON document and nothing else; stdout otherwise. */
FILE *text_stream(const char *json_path);

/* For a command that writes a recording (--record FILE): a signal that stops memsim removes
 * the recording's temporary (the file it would replace stays as it was), and a file size limit
 * makes a write error, not a kill. */
void record_signals(void);

/* "memsim " and the command's arguments (argv[0] the command's name), for a recording's
 * header. Caller frees. */
char *record_command_line(int argc, char **argv);

/* Set sampling's judgement of model c (sim/drive/sample.h) for command cmd, before anything is
 * printed: a sample that no access reached is refused (usage_error(): every count would be
 * estimated 0); one too small for SAMPLE_ERROR_BOUND gets a warning line on stderr. Returns
 * EXIT_OK (also without sampling) or EXIT_USAGE. */
int check_sample_estimate(const char *cmd, struct cache *c);

/* The exit status of a sweep's return rc (run/sweep.h: 0 or a failure with its line in err),
 * after printing the line: 2 for a usage error (with usage_error()'s pointer to help), 1 for a
 * failed run. */
int sweep_exit(int rc, const char *err);

/* Parses "i/n" with 0 <= i < n, both whole numbers, nothing after them (sweep --shard). */
bool parse_shard(const char *text, uint64_t *i, uint64_t *n);

/* Prints one line "memsim: msg (see 'memsim help CMD')" to stderr; returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints one line "memsim: msg" to stderr, where msg may hold paths, trace lines and spec
 * text: control characters, C1 controls and bytes that are not UTF-8 are shown as \xNN (as
 * usage_error() does), valid UTF-8 passes through. Returns EXIT_RUNTIME. */
int print_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
