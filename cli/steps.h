#pragma once

/*
 * The commands' work without their option parsing, for `memsim study`, which calls them in
 * turn. Each returns the command's exit status after the same messages.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cli/options.h"
#include "run/profile.h"
#include "sim/spec.h"

/* Where memsim ceilings keeps this machine's ceilings by default, into buf:
 * $XDG_CACHE_HOME/memsim/ceilings/KEY, else $HOME/.cache/memsim/ceilings/KEY, KEY the CPU model
 * and core count ("intel-r-xeon-r-gold-6230-cpu-2-10ghz-16cores"). Returns buf, or NULL where
 * neither variable is an absolute path (or the path is longer than len). Makes nothing. */
char *ceilings_cache_dir(char *buf, size_t len);

/* memsim ceilings: measure (or reuse out/ceilings.json) and write it; also json if given. out
 * NULL: ceilings_cache_dir(), made; where there is none, measured and kept nowhere (said). */
int ceilings_into(const char *out, bool quick, bool refresh, const char *json);

/* --bandwidth for `run` and `formula`: GB/s and where they come from. */
struct bandwidth {
	double gbps;      /* 0 where not given */
	char source[4608]; /* what the report names as the bandwidth's source */
};

/* An OPTPARSE_CALL (cli/optparse.h) for --bandwidth into the struct bandwidth at dest: GB/s
 * (a positive number), or "measured": this machine's all-core triad bandwidth from
 * ceilings.json in ceilings_cache_dir(), measured there first (saying so on stderr, with the
 * progress line) unless it stands for this machine; never in the working directory. Returns 0,
 * EXIT_USAGE or EXIT_RUNTIME after a one-line message. */
int bandwidth_option(const char *cmd, const struct optparse_option *opt, const char *arg);

/* memsim profile: c (validated, spec set) into out/results.json and out/manifest.json, and
 * json if given; argv is the command recorded in the manifest. */
int profile_into(const struct profile_config *c, const char *out, const char *json, int argc,
		 char **argv);

/* The tools memsim xcheck runs. */
enum {
	WITH_CACHEGRIND = 1,
	WITH_CALLGRIND = 2,
	WITH_PAPI = 4,
};

/* memsim xcheck: o and spec as kernel_options_parse() left them; the table goes to table
 * (NULL: not printed), the JSON to o->json_path if set; keep_dir keeps the tools' files. */
int xcheck_into(const struct kernel_options *o, const struct spec *spec, unsigned with,
		const char *keep_dir, FILE *table, int argc, char **argv);

/* memsim plot DIR in formats (PLOT_FORMAT_* of analysis/plot.h). */
int plot_into(const char *dir, unsigned formats);

/* memsim report DIR. */
int report_into(const char *dir);
