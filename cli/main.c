#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "base/message.h"
#include "base/progress.h"
#include "base/utf8.h"
#include "base/util.h"
#include "cli/commands.h"
#include "sim/drive/feed.h"
#include "sim/drive/sample.h"

static int cmd_help(int argc, char **argv);
static void usage_help(FILE *f);
static int cmd_version(int argc, char **argv);
static void usage_version(FILE *f);

const struct command commands[] = {
	{ "run", cmd_run, usage_run, "simulate an attention kernel and compare with the formulas" },
	{ "formula", cmd_formula, usage_formula,
	  "the lab and exact formulas alone, instantly, any size" },
	{ "native", cmd_native, usage_native,
	  "time the native build of a kernel (what Cachegrind and PAPI measure)" },
	{ "sdpa", cmd_sdpa, usage_sdpa,
	  "PyTorch's flash SDPA on a GPU: the kernel, its HBM bytes, time and tokens/s bounds" },
	{ "gpucheck", cmd_gpucheck, usage_gpucheck,
	  "the CUDA kernels' DRAM bytes under Nsight Compute next to memsim's h100 preset" },
	{ "report", cmd_report, usage_report,
	  "the labs' questions answered from a study directory (report.md, report.html)" },
	{ "xcheck", cmd_xcheck, usage_xcheck,
	  "memsim next to Cachegrind, Callgrind and PAPI on the native build" },
	{ "profile", cmd_profile, usage_profile,
	  "time each operation of an attention layer natively, with FLOPs and bytes" },
	{ "ceilings", cmd_ceilings, usage_ceilings,
	  "measure this machine's bandwidth and peak FLOP/s for the roofline" },
	{ "study", cmd_study, usage_study,
	  "the default study: the lab's sweep and the exactness sweep" },
	{ "table", cmd_table, usage_table, "print the comparison table of a sweep directory" },
	{ "plot", cmd_plot, usage_plot,
	  "draw a study directory's plots with gnuplot (PNG, SVG, data, scripts)" },
	{ "sweep", cmd_sweep, usage_sweep, "run every combination of option lists on all cores" },
	{ "merge", cmd_merge, usage_merge, "join the results of sweep shards" },
	{ "replay", cmd_replay, usage_replay,
	  "replay a trace (din, dinbin, lackey, memsim) through a cache model" },
	{ "presets", cmd_presets, usage_presets,
	  "list the cache presets with their geometry and sources" },
#ifdef MEMSIM_BENCH
	{ "bench", cmd_bench, usage_bench,
	  "measure replay speed on a synthetic attention-shaped trace" },
#endif
	{ "help", cmd_help, usage_help, "show help for memsim or one command" },
	{ "version", cmd_version, usage_version, "print the version" },
	{ NULL, NULL, NULL, NULL },
};

static const struct command *
find_command(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

static void
usage_main(FILE *f)
{
	fprintf(f,
		"Usage: memsim COMMAND [OPTIONS]\n\n"
		"memsim counts the bytes a kernel moves to and from DRAM through a configurable\n"
		"cache hierarchy, and compares them with closed-form formulas.\n\nCommands:\n");
	for (const struct command *c = commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nRun 'memsim help COMMAND' for a command's options.\n"
		   "On a terminal, run, replay, xcheck, profile, ceilings, sdpa and formula\n"
		   "(while --bandwidth measured measures) show one updating progress line on\n"
		   "stderr; --quiet (with any command) leaves it out.\n"
		   "Exit status: 0 ok, 1 runtime error, 2 usage error.\n");
}

int
usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap, again;
	char *msg;
	int n;

	va_start(ap, fmt);
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	msg = xzalloc(n > 0 ? (size_t)n + 1 : 1);
	if (n > 0)
		vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	/* One line whatever the user typed: a control character in an argument (a newline in
	 * --cache) is shown as an escape. */
	message_line("%s (see 'memsim help%s%s')", msg, cmd ? " " : "", cmd ? cmd : "");
	free(msg);
	return EXIT_USAGE;
}

int
print_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	message_vline(fmt, ap);
	va_end(ap);
	return EXIT_RUNTIME;
}

FILE *
text_stream(const char *json_path)
{
	return json_path && strcmp(json_path, "-") == 0 ? stderr : stdout;
}

/* A command stopped by a signal while it records: the recording's temporary goes with it (the
 * file it would replace stays as it was), then the signal ends memsim as it would have. */
static void
on_record_signal(int sig)
{
	whole_file_remove_temps();
	signal(sig, SIG_DFL);
	raise(sig);
}

void
record_signals(void)
{
	signal(SIGXFSZ, SIG_IGN); /* a file size limit: a write error, not a kill */
	signal(SIGINT, on_record_signal);
	signal(SIGTERM, on_record_signal);
	signal(SIGHUP, on_record_signal);
}

char *
record_command_line(int argc, char **argv)
{
	char *args = report_command_line(argc, argv);
	char *cmd = xzalloc(strlen(args) + 8);

	sprintf(cmd, "memsim %s", args);
	free(args);
	return cmd;
}

int
check_sample_estimate(const char *cmd, struct cache *c)
{
	struct cache_sample s;
	struct sample_judgement j;

	cache_sample_get(c, &s);
	sample_judge(&s, &j);
	if (j.verdict == SAMPLE_EMPTY)
		return usage_error(cmd, "%s", j.reason);
	if (j.verdict == SAMPLE_TOO_SMALL)
		print_error("warning: %s (estimate.sample_too_small)", j.reason);
	return EXIT_OK;
}

static void
usage_help(FILE *f)
{
	fprintf(f,
		"Usage: memsim help [COMMAND]\n\nShows the options of COMMAND, or the list of commands.\n");
}

static int
cmd_help(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage_main(stdout);
		return EXIT_OK;
	}
	if (argc > 2)
		return usage_error("help", "help takes one command name");
	c = find_command(argv[1]);
	if (!c)
		return usage_error(NULL, "unknown command '%s'", argv[1]);
	c->usage(stdout);
	return EXIT_OK;
}

static void
usage_version(FILE *f)
{
	fprintf(f, "Usage: memsim version\n");
}

static int
cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1)
		return usage_error("version", "version takes no arguments");
	printf("memsim %s\n", MEMSIM_VERSION);
	return EXIT_OK;
}

/* What reached standard output must have reached it: a full disk or a closed pipe is an error
 * (exit 1), not a silent success. */
static int
finish(int rc)
{
	int e = fflush(stdout) != 0 ? errno : ferror(stdout) ? EIO : 0;

	/* A command that failed has said why; its output may be what failed. */
	if (e && rc == EXIT_OK) {
		print_error("cannot write standard output: %s", strerror(e));
		return EXIT_RUNTIME;
	}
	return rc;
}

/* Takes every --quiet out of argv (before a "--", past which arguments are another
 * program's) and says whether there was one. */
static bool
take_quiet(int *argc, char **argv)
{
	bool quiet = false;
	int k = 1;

	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[k++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--quiet") == 0)
			quiet = true;
		else
			argv[k++] = argv[i];
	}
	*argc = k;
	argv[k] = NULL;
	return quiet;
}

/* Whether command c shows the progress line: those whose work runs for minutes in one piece
 * (a sweep shows its own rows done; its workers none). */
static bool
shows_progress(const struct command *c)
{
	static const char *const names[] = { "run",      "replay", "xcheck", "profile",
					     "ceilings", "sdpa",   "formula" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(c->name, names[i]) == 0)
			return true;
	return false;
}

/* The thread feed's measurement knobs, from the environment: MEMSIM_FEED_SLICES_A_THREAD (a
 * power of two, the slices a thread) and MEMSIM_FEED_TIMES (set: where a split run's wall time
 * went, on stderr at its end). */
static void
feed_knobs(void)
{
	const char *env = getenv("MEMSIM_FEED_SLICES_A_THREAD");
	FILE *times = getenv("MEMSIM_FEED_TIMES") ? stderr : NULL;
	unsigned long v = 0;
	char *end = NULL;

	if (env) {
		v = strtoul(env, &end, 10);
		if (!*env || *end || v == 0 || v > CACHE_CLASSES_MAX ||
		    cache_feed_measure((unsigned)v, times)) {
			fprintf(stderr,
				"memsim: MEMSIM_FEED_SLICES_A_THREAD=%s ignored: not a power of two "
				"from 1 to %u\n",
				env, CACHE_CLASSES_MAX);
			v = 0;
		}
	}
	cache_feed_measure((unsigned)v, times);
}

int
main(int argc, char **argv)
{
	const struct command *c;
	bool quiet = take_quiet(&argc, argv);

	if (argc < 2)
		return usage_error(NULL, "no command given");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage_main(stdout);
		return finish(EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0)
		return finish(cmd_version(1, argv + 1));
	c = find_command(argv[1]);
	if (!c)
		return usage_error(NULL, "unknown command '%s'", argv[1]);
	progress_enable(!quiet && shows_progress(c) && isatty(STDERR_FILENO));
	feed_knobs();
	return finish(c->run(argc - 1, argv + 1));
}
