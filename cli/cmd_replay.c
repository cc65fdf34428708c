#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/report.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/optparse.h"
#include "sim/cache.h"
#include "sim/spec.h"
#include "traces/reader.h"
#include "traces/replay.h"

void
usage_replay(FILE *f)
{
	fprintf(f,
		"Usage: memsim replay [--format din|lackey|memsim|dinbin] FILE|-\n"
		"                     --cache SPEC|PRESET [--no-flush] [--seed N] [--sample-sets K]\n"
		"                     [--threads N] [--record OUT] [--json FILE]\n"
		"\n"
		"Replays a memory trace through a cache hierarchy and prints per-level counters and\n"
		"the bytes moved to and from DRAM.\n"
		"\n"
		"  -f, --format FMT   din (Dinero IV text), lackey (valgrind --tool=lackey\n"
		"                     --trace-mem=yes output), memsim (binary) [sniffed], or\n"
		"                     dinbin (Dinero IV binary, -informat b: never sniffed)\n"
		"  -c, --cache SPEC   a spec such as L1=32K:8:64,L2=1M:16:64 or a preset\n"
		"                     (memsim presets lists them)\n"
		"      --no-flush     leave dirty lines in the caches at the end (a hardware counter\n"
		"                     read at kernel end sees it this way) [flush]\n"
		"      --seed N       seed of random replacement [1]\n"
		"      --sample-sets K  an estimate: simulate 1 cache set in K (a power of two)\n"
		"                     and multiply the level and DRAM counts by K; labelled\n"
		"                     estimate in the text and JSON [off: exact]; a warning\n"
		"                     when the sample is too small for 10%% error, exit 2 when\n"
		"                     no access reached it\n"
		"      --threads N    split the sets between N threads (a power of two, up to\n"
		"                     64): the same counts as one thread, exactly; fewer where\n"
		"                     the cache does not split (a random policy, straddle=once,\n"
		"                     too few sets, set sampling), with a note why. memsim\n"
		"                     traces from a file are read by every thread, text and\n"
		"                     pipes by one that feeds the others [1]\n"
		"      --record OUT   also write the trace as a memsim trace (- for stdout; the\n"
		"                     format memsim run --record writes): any format converts,\n"
		"                     and replaying OUT gives this replay's counters. An\n"
		"                     incomplete OUT is removed. One thread does it all\n"
		"  -j, --json FILE    also write the report as JSON (- for stdout)\n"
		"\n"
		"Spec: LEVEL=SIZE:ASSOC:LINE[:WORD...] for LEVEL in L1..L4 and I1, sizes in B/K/M/G,\n"
		"ASSOC a number or 'full'; words: lru fifo random plru | wb wt | wa nwa wv |\n"
		"nine incl excl | quietwb; defaults lru, wb, wa, nine. 'none' is no cache; 'tiles=scratch'\n"
		"puts kernels' tile arrays in on-chip scratch. L1=32K:8:64 is Cachegrind's\n"
		"--D1=32768,8,64 and L2=1M:16:64 its --LL=1048576,16,64.\n"
		"\n"
		"Semantics (see docs/model.md, 'Cache semantics'):\n"
		"  - With write-back + write-allocate and LRU or FIFO, counts match Dinero IV exactly:\n"
		"    a miss fetches its line from the level below, then writes back its dirty victim\n"
		"    (a write access there that updates its recency); at the end dirty lines are copied\n"
		"    back level by level (flush_write_bytes), unless --no-flush.\n"
		"  - din references are 4 bytes at the address rounded down to 4 (as Dinero IV reads\n"
		"    them); label 3 (misc) is a read; label 2 (instruction fetch) goes to I1 if the\n"
		"    spec has one, else it is only counted.\n"
		"  - dinbin references are the record's size in bytes at its address, as given;\n"
		"    types as din's labels; size 0 and types 4-5 (copy-back, invalidate) are refused.\n"
		"  - quietwb (the cachegrind preset's LL): write-backs from above do not touch recency,\n"
		"    as in Cachegrind, which ignores write-backs.\n"
		"  - lackey 'M' is a load then a store; accesses spanning lines touch each line and\n"
		"    count once per line (Cachegrind counts a straddling access once).\n"
		"  - DRAM bytes = line size x (lines filled + dirty lines written back); rfo_bytes are\n"
		"    fills caused by write misses.\n"
		"\n"
		"Exit status: 0 ok, 1 unreadable, garbled or truncated trace, 2 bad options.\n");
}

/* Everything the command line gives replay. */
struct replay_args {
	enum trace_format format;
	const char *spec_text, *json_path, *path, *record;
	bool flush, threads_given;
	uint64_t seed, sample_sets, threads;
};

static int
format_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (!trace_format_parse(arg, opt->dest))
		return usage_error(
			cmd, "--format: unknown format '%s' (din, lackey, memsim, dinbin)", arg);
	return 0;
}

/* Reads the options and the trace FILE into a; stops at the first bad one (its message
 * printed) or --help (OPTPARSE_HELP_SHOWN). */
static int
replay_parse(struct replay_args *a, int argc, char **argv)
{
	const struct optparse_option opts[] = {
		{ "format", 'f', OPTPARSE_CALL, .dest = &a->format, .call = format_value },
		{ "cache", 'c', OPTPARSE_STRING, .dest = &a->spec_text },
		{ "no-flush", 0, OPTPARSE_CLEAR, .dest = &a->flush },
		{ "seed", 0, OPTPARSE_U64, .dest = &a->seed, .expect = "a number" },
		{ "sample-sets", 0, OPTPARSE_POW2, .dest = &a->sample_sets, .min = 2,
		  .max = UINT64_C(1) << 20, .expect = "a power of two from 2 to 2^20" },
		{ "threads", 0, OPTPARSE_U64, .dest = &a->threads, .max = CACHE_MAX_SLICES,
		  .expect = "a number of threads from 0 to 64", .given = &a->threads_given },
		{ "json", 'j', OPTPARSE_STRING, .dest = &a->json_path },
		{ "record", 0, OPTPARSE_STRING, .dest = &a->record },
		{ .name = "help", .letter = 'h', .kind = OPTPARSE_HELP },
		{ .name = NULL },
	};
	const struct optparse_command cmd = { .name = "replay",
					      .usage = usage_replay,
					      .options = opts };
	int rc;

	if ((rc = optparse_argv(&cmd, argc, argv)))
		return rc;
	if (optind != argc - 1)
		return usage_error("replay", optind == argc
						     ? "replay needs a trace FILE (or - for stdin)"
						     : "replay takes one trace FILE");
	a->path = argv[optind];
	if (a->record && !a->record[0])
		return usage_error("replay", "--record: the file name is empty");
	if (a->record && a->json_path && strcmp(a->record, "-") == 0 &&
	    strcmp(a->json_path, "-") == 0)
		return usage_error("replay", "--record - and --json - both want stdout");
	return 0;
}

/* The replay itself, recorded with --record (on one thread: the recording is written in the
 * order the trace is read). Returns 0, or -1 with err. */
static int
replay_run(const struct replay_args *a, const struct spec *spec, struct replay_result *res,
	   int argc, char **argv, char *err, size_t errlen)
{
	struct replay_record to = { .path = a->record };
	char *command;
	int rc;

	if (!a->record)
		return replay_file_split(a->path, a->format, spec, a->flush, (unsigned)a->threads,
					 res, err, errlen);
	record_signals();
	command = record_command_line(argc, argv);
	to.command = command;
	rc = replay_file_record(a->path, a->format, spec, a->flush, &to, res, err, errlen);
	free(command);
	if (!rc && a->threads > 1)
		snprintf(res->threads_why, sizeof(res->threads_why),
			 "--record: one thread reads, records and simulates");
	return rc;
}

/* The report as JSON into a->json_path. */
static int
replay_json(const struct replay_args *a, const struct spec *spec, const struct replay_result *res,
	    int argc, char **argv)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *cfg, *tr;
	char err[512];
	int rc;

	report_add_header(root, argc, argv);
	cfg = cJSON_AddObjectToObject(root, "config");
	cJSON_AddStringToObject(cfg, "cache", res->spec_text);
	cJSON_AddStringToObject(cfg, "preset", spec->preset);
	cJSON_AddStringToObject(cfg, "cache_note", spec->note);
	cJSON_AddBoolToObject(cfg, "flush", a->flush);
	cJSON_AddNumberToObject(cfg, "seed", (double)a->seed);
	if (a->sample_sets > 1)
		cJSON_AddNumberToObject(cfg, "sample_sets", (double)a->sample_sets);
	tr = cJSON_AddObjectToObject(root, "trace");
	cJSON_AddStringToObject(tr, "path", a->path);
	cJSON_AddStringToObject(tr, "format", trace_format_name(res->format));
	cJSON_AddNumberToObject(tr, "records", (double)res->records);
	cJSON_AddNumberToObject(tr, "accesses", (double)res->accesses);
	cJSON_AddNumberToObject(tr, "skipped_lines", (double)res->skipped);
	cJSON_AddStringToObject(tr, "recorded_by", res->tool_version);
	cJSON_AddStringToObject(tr, "recorded_command", res->recorded_command);
	if (a->threads_given) {
		cJSON *th = cJSON_AddObjectToObject(root, "threads");

		cJSON_AddNumberToObject(th, "asked", (double)a->threads);
		cJSON_AddNumberToObject(th, "used", res->threads);
		cJSON_AddStringToObject(th, "why_not_more", res->threads_why);
	}
	report_add_cache(root, res->cache);
	rc = report_write_json(a->json_path, root, err, sizeof(err));
	cJSON_Delete(root);
	return rc ? print_error("%s", err) : EXIT_OK;
}

int
cmd_replay(int argc, char **argv)
{
	struct replay_args a = { .format = TRACE_FORMAT_AUTO, .flush = true, .seed = 1 };
	struct spec spec;
	struct replay_result res;
	char err[4608];
	FILE *out;
	int rc = replay_parse(&a, argc, argv);

	if (rc)
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	/* The text leaves stdout to whichever of the recording and the JSON writes there. */
	out = text_stream(a.record && strcmp(a.record, "-") == 0 ? "-" : a.json_path);
	if (!a.spec_text)
		return usage_error("replay", "replay needs --cache SPEC|PRESET");
	if (spec_parse(a.spec_text, &spec, err, sizeof(err)))
		return usage_error("replay", "--cache: %s", err);
	spec.cache.seed = a.seed;
	spec.cache.sample_sets = (uint32_t)a.sample_sets;
	if (cache_config_validate(&spec.cache, err, sizeof(err)))
		return usage_error("replay", "%s", err);
	if (spec.note[0])
		print_error("note: %s", spec.note);

	if (replay_run(&a, &spec, &res, argc, argv, err, sizeof(err))) {
		print_error("%s", err);
		return EXIT_RUNTIME;
	}
	if (res.threads < a.threads)
		print_error("note: --threads %llu: %u thread%s: %s", (unsigned long long)a.threads,
			    res.threads, res.threads == 1 ? "" : "s", res.threads_why);
	if ((rc = check_sample_estimate("replay", res.cache))) {
		replay_result_finish(&res);
		return rc;
	}
	fprintf(out, "trace %s (%s): %llu records, %llu accesses\ncache %s%s\n\n", a.path,
		trace_format_name(res.format), (unsigned long long)res.records,
		(unsigned long long)res.accesses, res.spec_text,
		a.sample_sets > 1 ? " (an estimate: set sampling)" : "");
	report_print_cache(out, res.cache);
	if (a.json_path)
		rc = replay_json(&a, &spec, &res, argc, argv);
	replay_result_finish(&res);
	return rc;
}
