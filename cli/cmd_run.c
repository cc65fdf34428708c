#include "config.h"

#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "analysis/evaluate.h"
#include "analysis/formulas.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "cli/options.h"

void
usage_run(FILE *f)
{
	fprintf(f,
		"Usage: memsim run --kernel naive|flash1|flash2|proj [--N N] [--d D] [--heads H]\n"
		"                  [--kv-heads H] [--batch B] [--dtype fp32|fp16|bf16] [--Br B]\n"
		"                  [--Bc B] [--causal] [--softmax-separate] [--cache SPEC|PRESET]\n"
		"                  [--no-flush] [--seed N] [--trace-only] [--json FILE]\n"
		"\n"
		"Runs the traced build of a kernel through the cache model and prints the DRAM bytes\n"
		"per array next to the formulas.\n"
		"\n"
		"  --N, --d            sequence length, head dimension [1024, 64]\n"
		"  --heads, --kv-heads query heads and key/value heads (grouped-query) [1, = heads]\n"
		"  --batch             [1]\n"
		"  --dtype             storage type; compute is fp32 [fp32]\n"
		"  --Br, --Bc          query and key/value tile rows [64, 64]\n"
		"  --causal            causal mask\n"
		"  --softmax-separate  naive: P in its own array (default: over S)\n"
		"  --cache             cache spec or preset [lab]\n"
		"  --no-flush          leave dirty lines in the caches at the end\n"
		"  --seed              input values and random replacement [1]\n"
		"  --trace-only        make the kernel's accesses without computing its values: the\n"
		"                      same counters, faster, arrays limited by address space, not\n"
		"                      memory\n"
		"  --json FILE         write the report as JSON (- for stdout)\n");
}

enum { OPT_TRACE_ONLY = OPT_FIRST_FREE };

static int
run_option(void *ctx, struct kernel_options *o, int opt, const char *arg)
{
	(void)ctx;
	(void)opt;
	(void)arg;
	o->trace_only = true; /* the one option of run's own */
	return 0;
}

int
cmd_run(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "trace-only", no_argument, NULL, OPT_TRACE_ONLY },
		{ NULL, 0, NULL, 0 },
	};
	static const struct kernel_command cmd = { "run", usage_run, extra, run_option, NULL };
	enum evaluation_mode mode;
	struct kernel_options o;
	FILE *out;
	struct spec spec;
	struct evaluation st;
	char err[512], buf[512];
	int rc;

	kernel_options_init(&o);
	if ((rc = kernel_options_parse(&o, &spec, &cmd, argc, argv)))
		return rc == KERNEL_OPTIONS_HELP ? EXIT_OK : rc;
	out = text_stream(o.json_path);
	mode = o.trace_only ? EVALUATION_TRACE_ONLY : EVALUATION_SIMULATE;
	if (evaluation_run(&st, &o.cfg, &spec, o.flush, o.seed, mode, err, sizeof(err))) {
		fprintf(stderr, "memsim: %s\n", err);
		return EXIT_RUNTIME;
	}
	fprintf(out, "memsim run: %s\ncache %s\ntraced%s in %.3f s\n\n",
		kernel_config_str(&o.cfg, buf, sizeof(buf)), spec_format(&spec, err, sizeof(err)),
		o.trace_only ? " (trace-only)" : "", st.sim.seconds);
	report_print_cache(out, st.sim.cache);
	compare_print(out, &st.f, &st.cmp);
	rc = EXIT_OK;
	if (o.json_path) {
		cJSON *root = evaluation_json(&st, argc, argv);

		if (report_write_json(o.json_path, root, err, sizeof(err))) {
			fprintf(stderr, "memsim: %s\n", err);
			rc = EXIT_RUNTIME;
		}
		cJSON_Delete(root);
	}
	evaluation_finish(&st);
	return rc;
}
