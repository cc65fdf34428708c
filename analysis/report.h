#pragma once

/*
 * Reports of a cache model's counters: the JSON objects of docs/schema.md ("levels", "dram",
 * "scratch", "arrays", "phases") built with cJSON, a readable text table, and safe writing of
 * JSON files.
 */

#include <cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "kernels/attn.h"
#include "sim/cache.h"
#include "sim/spec.h"

/* Adds "levels", "dram", "scratch", "cpu", "arrays" and "phases" for model c to obj. */
void report_add_cache(cJSON *obj, struct cache *c);

/* Adds "config": the kernel configuration of the keys of docs/schema.md and the cache as parsed.
 */
void report_add_config(cJSON *obj, const struct attn_config *c, const struct spec *s, bool flush,
		       uint64_t seed);

/* Adds "memsim_version" and "command": "memsim " and the subcommand's argv, shell-quoted. */
void report_add_header(cJSON *obj, int argc, char **argv);

/* The revision of memsim's model: what computes the numbers of a report. A sweep records it in
 * every row and in its manifest ("model_revision"), and sweep --resume and merge never mix rows
 * of two revisions (docs/schema.md, "Model revisions"). The rule: bump it in the commit that
 * makes a change that could change any number a row reports: the cache model (sim/), the
 * accesses the kernels trace (traces/, kernels/), the formulas and comparisons (analysis/), a
 * default a configuration's key leaves unsaid. A memsim release is a new revision by itself: the
 * text holds the version too. */
#define REPORT_MODEL_REVISION 5

/* This memsim's model revision as rows record it: "memsim 0.3.0 model 1". Static. */
const char *report_model_revision(void);

/* What row r says of the revision that made it, into buf: its "model_revision", or where it
 * records none (a row of a memsim before revisions were recorded) "none recorded, memsim V"
 * with its memsim_version ("none recorded" without one). Returns whether r records one. */
bool report_row_revision(const cJSON *r, char *buf, size_t len);

/* A manifest's common part: "experiment", "date" (UTC, ISO 8601), "memsim_version",
 * "command" (as report_add_header()) and "versions" (memsim, compiler). Caller frees with
 * cJSON_Delete(). */
cJSON *report_manifest_create(const char *experiment, int argc, char **argv);

/* Returns argv joined as a shell command line; caller frees with free(). */
char *report_command_line(int argc, char **argv);

/* Prints the per-level table, the DRAM bytes and the per-array / per-phase split. */
void report_print_cache(FILE *f, struct cache *c);

/* Writes obj to path ("-" for stdout) with write_file_whole() (base/util.h): a regular file
 * through a temporary file renamed into place, so a reader never sees half a file; a device, a
 * symlink or a file with other hard links in place. Returns 0, or a negative errno with a
 * message in err. */
int report_write_json(const char *path, const cJSON *obj, char *err, size_t errlen);

/* Writes obj to file name of output directory dirfd (path dir) with write_file_whole_at()
 * (base/util.h): whole, never through a link. Returns 0, or a negative errno with a message. */
int report_write_json_at(int dirfd, const char *dir, const char *name, const cJSON *obj, char *err,
			 size_t errlen);

/* Reads the JSON document at path (a regular file of at most 64 MiB: open_regular_read(),
 * base/util.h, so a FIFO there is refused, never waited on). Returns it (caller frees with
 * cJSON_Delete()), or NULL with "path: what" in err. */
cJSON *report_read_json(const char *path, char *err, size_t errlen);

/* report_read_json() of file name in output directory dirfd (path dir), opened with
 * outdir_file_open() (base/util.h): a symbolic link there is refused. A missing file is NULL
 * with *missing set (missing may be NULL). */
cJSON *report_read_json_at(int dirfd, const char *dir, const char *name, bool *missing, char *err,
			   size_t errlen);

/* What a decode step's DRAM bytes mean per generated token: bytes / (batch N) (each of the
 * batch's sequences gets N new tokens), and the tokens/s that a DRAM bandwidth allows at
 * most. The bandwidth: gbps_given (> 0; its source given_source, "--bandwidth" if NULL), else
 * the preset's
 * (spec_preset_bandwidth()), else none (gbps 0, no bound). */
struct per_token {
	double bytes;
	double tokens_per_s; /* 0 without a bandwidth */
	double gbps;
	char source[4608]; /* holds struct bandwidth's (cli/steps.h): a cache path */
};

void report_per_token(struct per_token *p, const struct attn_config *c, const struct spec *s,
		      double dram_bytes, double gbps_given, const char *given_source);
/* "per generated token: ..." lines. */
void report_print_per_token(FILE *f, const struct per_token *p);
/* obj's "per_token": {"bytes", "tokens_per_s_bound", "bandwidth_gbps", "bandwidth_source"}
 * (the last three null without a bandwidth). */
void report_add_per_token(cJSON *obj, const struct per_token *p);
