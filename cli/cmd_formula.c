/*
 * `memsim formula`: the lab and exact formulas alone, without running anything, for any size
 * (no arrays are allocated, so N = 10^6 is instant).
 */

#include <cJSON.h>
#include <stdio.h>

#include "analysis/formulas.h"
#include "analysis/report.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/steps.h"

void
usage_formula(FILE *f)
{
	fprintf(f,
		"Usage: memsim formula --kernel K [size options as for run] [--cache SPEC|PRESET]\n"
		"                      [--no-flush] [--bandwidth GB/s|measured] [--json FILE]\n"
		"\n"
		"Evaluates the lab formula and the exact per-array formulas for a kernel on the\n"
		"cache's last level (docs/formulas.md), with FLOPs and arithmetic intensity, and\n"
		"the bytes per generated token (exact bytes / (batch x N): a decode step gives each\n"
		"sequence N new tokens; --N-kv sets the cache's length) with the tokens/s bound at\n"
		"--bandwidth GB/s, or at the preset's bandwidth where it has one (h100);\n"
		"--bandwidth measured takes this machine's all-core bandwidth (memsim ceilings),\n"
		"measured once, a minute or so, and cached in $XDG_CACHE_HOME/memsim/ceilings\n"
		"(else ~/.cache/memsim/ceilings) for this CPU model and core count.\n");
}

int
cmd_formula(int argc, char **argv)
{
	struct bandwidth bw = { 0 };
	const struct optparse_option extra[] = {
		{ "bandwidth", 0, OPTPARSE_CALL, .dest = &bw, .call = bandwidth_option },
		{ .name = NULL },
	};
	const struct kernel_command cmd = { "formula", usage_formula, extra };
	struct per_token pt;
	struct kernel_options o;
	FILE *out;
	struct spec spec;
	struct formula_machine m;
	struct formula_result f;
	char buf[1024], err[512];
	int rc;
	double total;

	kernel_options_init(&o);
	o.need_memory = false;
	if ((rc = kernel_options_parse(&o, &spec, &cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	out = text_stream(o.json_path);
	formula_machine_from_spec(&spec, o.flush, &m);
	formula_eval(&o.cfg, &m, &f);
	total = f.read_bytes + f.write_bytes;
	fprintf(out, "memsim formula: %s\ncache %s\n\n",
		kernel_config_str(&o.cfg, buf, sizeof(buf)), spec_format(&spec, err, sizeof(err)));
	fprintf(out, "%-10s %18s %18s %18s\n", "array", "read bytes", "write bytes",
		"of which rfo");
	for (unsigned i = 0; i < f.narrays; i++)
		fprintf(out, "%-10s %18.0f %18.0f %18.0f\n", f.arrays[i].name,
			f.arrays[i].read_bytes, f.arrays[i].write_bytes, f.arrays[i].rfo_bytes);
	fprintf(out, "%-10s %18.0f %18.0f %18.0f\n\n", "total", f.read_bytes, f.write_bytes,
		f.rfo_bytes);
	fprintf(out, "exact formula: %.0f bytes (%.4g MiB)\n", total, total / 1048576);
	/* never a number read as exact that is not */
	if (f.scope == FORMULA_SCOPE_ESTIMATE)
		fprintf(out, "  an estimate, not exact here: %s\n", f.scope_why);
	if (f.lab_bytes > 0)
		fprintf(out, "lab formula:   %.0f bytes (%.4g MiB)%s\n", f.lab_bytes,
			f.lab_bytes / 1048576,
			o.cfg.kernel == ATTN_NAIVE ? ", without O's write" : "");
	fprintf(out, "regime: %s\n", f.regime.text);
	if (f.tiles_approximate)
		fprintf(out,
			"note: the tiles live in memory and spill from a cache this small; their "
			"traffic is not modeled\n");
	fprintf(out, "FLOPs %.6g; intensity %.4g FLOP/byte (exact)%s\n", f.flops,
		total > 0 ? f.flops / total : 0.0, f.lab_bytes > 0 ? "" : "");
	if (f.lab_bytes > 0)
		fprintf(out, "intensity by the lab formula %.4g FLOP/byte\n",
			f.flops / f.lab_bytes);
	report_per_token(&pt, &o.cfg, &spec, total, bw.gbps, bw.source);
	report_print_per_token(out, &pt);
	if (o.json_path) {
		cJSON *root = cJSON_CreateObject(), *fo, *ex, *arrays;

		report_add_header(root, argc, argv);
		report_add_config(root, &o.cfg, &spec, o.flush, o.seed);
		fo = cJSON_AddObjectToObject(root, "formulas");
		cJSON_AddNumberToObject(cJSON_AddObjectToObject(fo, "lab"), "bytes", f.lab_bytes);
		ex = cJSON_AddObjectToObject(fo, "exact");
		cJSON_AddNumberToObject(ex, "bytes", total);
		cJSON_AddNumberToObject(ex, "read_bytes", f.read_bytes);
		cJSON_AddNumberToObject(ex, "write_bytes", f.write_bytes);
		cJSON_AddNumberToObject(ex, "rfo_bytes", f.rfo_bytes);
		cJSON_AddStringToObject(ex, "scope", formula_scope_name(f.scope));
		arrays = cJSON_AddObjectToObject(ex, "arrays");
		for (unsigned i = 0; i < f.narrays; i++)
			cJSON_AddNumberToObject(arrays, f.arrays[i].name,
						f.arrays[i].read_bytes + f.arrays[i].write_bytes);
		cJSON_AddBoolToObject(root, "within_lab_assumptions", f.regime.within_assumptions);
		cJSON_AddStringToObject(root, "regime", f.regime.text);
		cJSON_AddNumberToObject(root, "flops", f.flops);
		cJSON_AddNumberToObject(root, "intensity", total > 0 ? f.flops / total : 0);
		report_add_per_token(root, &pt);
		rc = report_write_json(o.json_path, root, err, sizeof(err));
		cJSON_Delete(root);
		if (rc) {
			print_error("%s", err);
			return EXIT_RUNTIME;
		}
	}
	return EXIT_OK;
}
