#include "config.h"

#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/report.h"
#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/steps.h"
#include "run/evaluate.h"
#include "run/plugin.h"

void
usage_run(FILE *f)
{
	fprintf(f,
		"Usage: memsim run --kernel naive|flash1|flash2|flashdecode|proj [--N N] [--d D]\n"
		"                  [--heads H] [--kv-heads H] [--batch B] [--dtype fp32|fp16|bf16]\n"
		"                  [--Br B] [--Bc B] [--causal] [--softmax-separate] [--splits S]\n"
		"                  [--kv-page P] [--cache SPEC|PRESET]\n"
		"                  [--no-flush] [--seed N] [--trace-only] [--sample-sets K]\n"
		"                  [--threads N]\n"
		"                  [--record FILE] [--bandwidth GB/s|measured] [--json FILE]\n"
		"       memsim run --kernel PATH [size options] [--param KEY=VALUE]... [--cache ...]\n"
		"                  [--record FILE] [--json FILE]\n"
		"\n"
		"Runs the traced build of a kernel through the cache model and prints the DRAM bytes\n"
		"per array next to the formulas.\n"
		"\n"
		"  --N, --d            sequence length (query rows), head dimension [1024, 64]\n"
		"  --N-kv              key/value rows: the KV cache's length [= N]; decode is N = 1\n"
		"                      to 16 over a long cache, chunked prefill N query rows at its\n"
		"                      end. --causal aligns the mask at the end (row i sees keys up\n"
		"                      to i + N_kv - N, as FlashAttention) and needs N <= N_kv;\n"
		"                      naive, flash2 and flashdecode only\n"
		"  --heads, --kv-heads query heads and key/value heads (grouped-query) [1, = heads]\n"
		"  --batch             [1]\n"
		"  --dtype             storage type; compute is fp32 [fp32]\n"
		"  --Br, --Bc          query and key/value tile rows [64, 64]\n"
		"  --causal            causal mask\n"
		"  --softmax-separate  naive: P in its own array (default: over S)\n"
		"  --splits S          flashdecode (FlashAttention's split-KV decoding): S splits of\n"
		"                      the key blocks, each writing a partial O and logsumexp that\n"
		"                      a combine phase reduces [FlashAttention's heuristic for the\n"
		"                      preset's SMs on h100 presets (132), else 1]; S past the key\n"
		"                      blocks is clamped to them with a note\n"
		"  --kv-page P         flash2, flashdecode: a paged KV cache (vLLM's, FlashAttention's paged KV):\n"
		"                      K and V in pools of pages [pages][P][kv_heads][d], batch x\n"
		"                      ceil(N_kv / P) pages in the order of an int32 block table\n"
		"                      [batch][ceil(N_kv / P)] drawn from --seed (array\n"
		"                      block_table, read as each key block is loaded); P need not\n"
		"                      divide N_kv, and may pass it (one page, partly used)\n"
		"                      [unpaged]\n"
		"  --cache             cache spec or preset [lab]\n"
		"  --no-flush          leave dirty lines in the caches at the end\n"
		"  --seed              input values, random replacement and the block table [1]\n"
		"  --trace-only        make the kernel's accesses without computing its values: the\n"
		"                      same counters, faster, arrays limited by address space, not\n"
		"                      memory\n"
		"  --sample-sets K     an estimate: simulate 1 cache set in K (a power of two) and\n"
		"                      multiply the counts by K; labelled estimate everywhere;\n"
		"                      a warning when the sample is too small for 10%% error,\n"
		"                      exit 2 when no access reached it\n"
		"  --threads N         up to 64 threads, the same counters as one, exactly: the\n"
		"                      values on N threads (the kernel's native build, by batch\n"
		"                      element and KV head) while this thread simulates its\n"
		"                      trace-only form (the computing kernel's accesses, bit for\n"
		"                      bit); with --trace-only the sets split between N threads\n"
		"                      (a power of two) that the accesses are handed to. Fewer\n"
		"                      where the run does not split (fewer heads than N; with\n"
		"                      --trace-only a random policy, straddle=once, too few sets,\n"
		"                      set sampling), with a note why [every core for a\n"
		"                      computing run of 10^8 FLOPs or more; with --trace-only on\n"
		"                      tiles in scratch over a write-validate L1 (h100) and 10^10\n"
		"                      FLOPs or more, the cores as a power of two up to 8; else 1]\n"
		"  --record FILE       also write the kernel's accesses as a memsim trace (- for\n"
		"                      stdout; the text report then goes to stderr), for\n"
		"                      `memsim replay FILE --cache ...` under any cache: the same\n"
		"                      counters as a run there (the recording holds every access,\n"
		"                      tiles included, whatever this run's cache or sampling);\n"
		"                      a plugin's too\n"
		"  --bandwidth GB/s    DRAM bandwidth for the tokens/s bound (default: the preset's,\n"
		"                      where it has one: h100); bytes per generated token are the\n"
		"                      DRAM bytes / (batch x N), N new tokens per sequence;\n"
		"                      measured: this machine's all-core bandwidth (memsim\n"
		"                      ceilings), measured once, a minute or so, and cached in\n"
		"                      $XDG_CACHE_HOME/memsim/ceilings (else ~/.cache/memsim)\n"
		"  --json FILE         write the report as JSON (- for stdout)\n"
		"  --kernel PATH       a kernel plugin (a path with a '/' or ending in .so, see\n"
		"                      docs/library.md): memsim maps its arrays, runs its traced\n"
		"                      build and compares its formula where it gives one\n"
		"  --param KEY=VALUE   a plugin's own option (repeatable; unknown keys are refused\n"
		"                      with the list it takes); one value, without a comma: a\n"
		"                      comma separates the values memsim sweep runs one by one\n"
		"\n"
		"Exit status: 0 ok, 1 the run or the recording failed (an incomplete recording is\n"
		"removed), 2 bad options.\n");
}

/* run's own options. */
struct run_extra {
	uint64_t sample_sets;
	uint64_t threads;
	bool threads_given;
	const char *record; /* NULL: no recording */
	struct bandwidth bw; /* --bandwidth */
};

/* The text report's head: the kernel and its configuration, the cache, the run's time. */
static void
print_head(FILE *out, const struct evaluation *ev)
{
	const struct attn_config *c = &ev->cfg;
	char buf[512], on[32];

	if (ev->plugin)
		fprintf(out,
			"memsim run: plugin %s (%s) N=%llu d=%llu heads=%llu kv_heads=%llu "
			"batch=%llu Br=%llu Bc=%llu%s",
			ev->plugin->p->name, ev->plugin->path, (unsigned long long)c->N,
			(unsigned long long)c->d, (unsigned long long)c->heads,
			(unsigned long long)c->kv_heads, (unsigned long long)c->batch,
			(unsigned long long)c->Br, (unsigned long long)c->Bc,
			c->causal ? " causal" : "");
	else
		fprintf(out, "memsim run: %s", kernel_config_str(c, buf, sizeof(buf)));
	snprintf(on, sizeof(on), " on %u threads", ev->sim.threads);
	/* A plugin's text leaves its sampling to the warning and the JSON. */
	fprintf(out, "\ncache %s\ntraced%s in %.3f s%s%s\n\n",
		spec_format(&ev->spec, buf, sizeof(buf)), ev->trace_only ? " (trace-only)" : "",
		ev->sim.seconds, ev->sim.threads > 1 ? on : "",
		ev->spec.cache.sample_sets > 1 && !ev->plugin ? " (an estimate: set sampling)"
							      : "");
}

/* The run's reports: the text on out, the JSON where --json asks. Returns an exit status. */
static int
write_reports(const struct evaluation *ev, const struct kernel_options *o,
	      const struct run_extra *x, FILE *out, int argc, char **argv)
{
	cJSON *root;
	char err[512];
	int rc = EXIT_OK;

	print_head(out, ev);
	evaluation_print(out, ev);
	if (!o->json_path)
		return EXIT_OK;
	root = evaluation_json(ev, argc, argv);
	if (x->threads_given) {
		cJSON *th = cJSON_AddObjectToObject(root, "threads");

		cJSON_AddNumberToObject(th, "asked", (double)x->threads);
		cJSON_AddNumberToObject(th, "used", ev->sim.threads);
		cJSON_AddStringToObject(th, "why_not_more", ev->sim.threads_why);
	}
	if (report_write_json(o->json_path, root, err, sizeof(err)))
		rc = print_error("%s", err);
	cJSON_Delete(root);
	return rc;
}

static int
record_value(const char *cmd, const struct optparse_option *opt, const char *arg)
{
	if (!arg[0])
		return usage_error(cmd, "--record: the file name is empty");
	*(const char **)opt->dest = arg;
	return 0;
}

int
cmd_run(int argc, char **argv)
{
	struct kernel_options o;
	struct run_extra x = { 0 };
	const struct optparse_option extra[] = {
		{ "trace-only", 0, OPTPARSE_FLAG, .dest = &o.trace_only },
		{ "sample-sets", 0, OPTPARSE_POW2, .dest = &x.sample_sets, .min = 2,
		  .max = UINT64_C(1) << 20, .expect = "a power of two from 2 to 2^20" },
		{ "record", 0, OPTPARSE_CALL, .dest = &x.record, .call = record_value },
		{ "threads", 0, OPTPARSE_U64, .dest = &x.threads, .max = CACHE_MAX_SLICES,
		  .expect = "a number of threads from 0 to 64", .given = &x.threads_given },
		{ "bandwidth", 0, OPTPARSE_CALL, .dest = &x.bw, .call = bandwidth_option },
		{ .name = NULL },
	};
	const struct kernel_command cmd = { "run", usage_run, extra };
	struct sim_record rec;
	struct spec spec;
	struct plugin pl = { 0 };
	struct evaluation ev;
	struct evaluation_job job;
	FILE *out;
	char err[1024];
	char *command = NULL;
	int rc;

	kernel_options_init(&o);
	o.plugins_ok = true;
	if ((rc = kernel_options_parse(&o, &spec, &cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	spec.cache.sample_sets = (uint32_t)x.sample_sets;
	if (cache_config_validate(&spec.cache, err, sizeof(err)))
		return usage_error("run", "%s", err);
	if (x.record && o.json_path && strcmp(x.record, "-") == 0 && strcmp(o.json_path, "-") == 0)
		return usage_error("run", "--record - and --json - both want stdout");
	/* The report's text leaves stdout to whichever of them writes there. */
	out = text_stream(x.record && strcmp(x.record, "-") == 0 ? "-" : o.json_path);
	if (o.plugin_path && x.threads_given)
		return usage_error("run", "--threads is for built-in kernels");
	if (o.plugin_path && o.trace_only)
		return usage_error("run", "--trace-only is for built-in kernels");
	if (o.plugin_path && plugin_load(&pl, o.plugin_path, false, err, sizeof(err)))
		return usage_error("run", "%s", err);
	if (x.record) {
		record_signals();
		command = record_command_line(argc, argv);
	}
	rec.path = x.record;
	rec.command = command;
	job = (struct evaluation_job){
		.plugin = pl.p ? &pl : NULL,
		.params = &o.params,
		.cfg = &o.cfg,
		.spec = &spec,
		.flush = o.flush,
		.seed = o.seed,
		.rec = x.record ? &rec : NULL,
		.mode = o.trace_only ? EVALUATION_TRACE_ONLY : EVALUATION_SIMULATE,
		/* Without --threads, a run long enough to pay (and whose split pays) takes
		 * the cores. */
		.threads = x.threads_given || pl.p
				   ? (unsigned)x.threads
				   : sim_default_threads(&o.cfg, &spec, o.trace_only),
	};
	rc = evaluation_run(&ev, &job, err, sizeof(err));
	free(command);
	if (rc) {
		rc = rc == -EINVAL ? usage_error("run", "%s", err) : print_error("%s", err);
		goto unload;
	}
	if (x.threads_given && ev.sim.threads < x.threads)
		print_error("note: --threads %llu: %u thread%s: %s", (unsigned long long)x.threads,
			    ev.sim.threads, ev.sim.threads == 1 ? "" : "s", ev.sim.threads_why);
	ev.bandwidth_gbps = x.bw.gbps;
	ev.bandwidth_source = x.bw.source;
	if (!(rc = check_sample_estimate("run", ev.sim.cache)))
		rc = write_reports(&ev, &o, &x, out, argc, argv);
	evaluation_finish(&ev);
unload:
	if (pl.p)
		plugin_unload(&pl);
	return rc;
}
