/*
 * `memsim native`: the native build of a kernel (every TR_* macro compiled away), timed. It is
 * also the program Cachegrind, Callgrind and PAPI measure, so it does nothing else: allocate,
 * fill, run, optionally check.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_DUMP_STATS_AT(s)
#endif

#include "base/util.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "measure/papi_count.h"
#include "run/plugin.h"

/* What one count of a line-based PAPI strategy stands for: the line of x86 and most Arm
 * cores. */
#define NATIVE_LINE_BYTES 64

/* The PAPI strategies --papi tries, best first, from the table itself. */
static void
print_strategies(FILE *f)
{
	size_t n, col;
	const struct papi_strategy *s = papi_strategies(&n);

	col = (size_t)fprintf(f, "--papi's strategies, best first:");
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(s[i].id) + (i + 1 < n ? 1 : 2);

		if (col + 1 + len > 80) {
			fprintf(f, "\n ");
			col = 1;
		}
		col += (size_t)fprintf(f, " %s%s", s[i].id, i + 1 < n ? "," : ".");
	}
	fprintf(f, "\n");
}

void
usage_native(FILE *f)
{
	fprintf(f,
		"Usage: memsim native --kernel K [size options as for run] [--repeat R]\n"
		"                     [--evict SIZE] [--check] [--papi]\n"
		"\n"
		"Runs the native build of a kernel R times and prints each run's time and the\n"
		"median. --check compares the outputs with the double-precision reference.\n"
		"--evict SIZE writes and reads a buffer of SIZE (e.g. 2M) before each run, so a\n"
		"cache of up to SIZE/2 starts cold, as a simulated run does. Under Callgrind\n"
		"(--instr-atstart=no) each run is bracketed by client requests and dumped as\n"
		"'memsim-kernel': the counts cover the kernel alone.\n"
		"--papi runs the kernel once more (after --evict) under PAPI and prints what the\n"
		"counters gave: a status and PAPI's reason, the DRAM-byte estimate when a\n"
		"counter strategy exists here (docs/papi.md), CPU time and page faults.\n"
		"--kernel PATH (a plugin, docs/library.md) runs PATH's native build, NAME-native.so\n"
		"beside NAME.so, with --param key=value as for run; no --check.\n");
	print_strategies(f);
}

static void
run_kernel(void *d)
{
	attn_run_native(d);
}

/* The --papi run: evict, then one run under papi_measure(), printed. */
static int
papi_run(struct attn_data *d, uint64_t evict)
{
	struct papi_report *r;
	int rc;

	if (attn_evict_caches(evict)) {
		print_error("--evict: cannot allocate %llu bytes", (unsigned long long)evict);
		return EXIT_RUNTIME;
	}
	r = xzalloc(sizeof(*r));
	rc = papi_measure(run_kernel, d, NATIVE_LINE_BYTES, r);
	if (rc < 0)
		print_error("--papi: %s", r->reason);
	else
		papi_report_print(stdout, r);
	free(r);
	return rc < 0 ? EXIT_RUNTIME : EXIT_OK;
}

/* native --kernel PATH: PATH-native.so beside it, timed (and counted with --papi). */
static int
native_plugin(const struct kernel_options *o, uint64_t repeat, uint64_t evict, bool papi)
{
	struct plugin pl;
	struct memsim_kernel_config kc;
	struct plugin_arrays pa;
	struct plugin_native_run r = { .pl = &pl, .kc = &kc, .pa = &pa };
	double *times;
	char path[4096], err[1024];
	int rc;

	if (plugin_native_path(o->plugin_path, path, sizeof(path)))
		return usage_error("native", "--kernel %s: a plugin's name ends in .so (its native "
					     "build is NAME-native.so beside it)",
				   o->plugin_path);
	if (plugin_load(&pl, path, true, err, sizeof(err)))
		return usage_error("native", "%s", err);
	if (plugin_config(&pl, &o->cfg, &o->params, &kc, err, sizeof(err)) ||
	    (rc = plugin_arrays_create(&pl, &kc, &pa, err, sizeof(err))) == -EINVAL) {
		plugin_unload(&pl);
		return usage_error("native", "%s", err);
	}
	if (rc) {
		plugin_unload(&pl);
		return print_error("%s", err);
	}
	times = xzalloc(repeat * sizeof(*times));
	for (uint64_t i = 0; i < repeat && r.rc == 0; i++) {
		double t0;

		if (attn_evict_caches(evict)) {
			r.rc = -1;
			snprintf(r.err, sizeof(r.err), "--evict: cannot allocate %llu bytes",
				 (unsigned long long)evict);
			break;
		}
		CALLGRIND_ZERO_STATS;
		CALLGRIND_START_INSTRUMENTATION;
		t0 = now_seconds();
		plugin_native_call(&r);
		times[i] = now_seconds() - t0;
		CALLGRIND_STOP_INSTRUMENTATION;
		CALLGRIND_DUMP_STATS_AT("memsim-kernel");
	}
	if (r.rc) {
		rc = print_error("%s: %s", pl.p->name, r.err[0] ? r.err : "run() failed");
	} else {
		printf("native plugin %s (%s) N=%llu d=%llu heads=%llu kv_heads=%llu batch=%llu "
		       "Br=%llu Bc=%llu%s\n",
		       pl.p->name, path, (unsigned long long)o->cfg.N, (unsigned long long)o->cfg.d,
		       (unsigned long long)o->cfg.heads, (unsigned long long)o->cfg.kv_heads,
		       (unsigned long long)o->cfg.batch, (unsigned long long)o->cfg.Br,
		       (unsigned long long)o->cfg.Bc, o->cfg.causal ? " causal" : "");
		for (uint64_t i = 0; i < repeat; i++)
			printf("run %llu: %.6f s\n", (unsigned long long)i + 1, times[i]);
		sort_doubles(times, repeat);
		printf("median %.6f s\n", times[repeat / 2]);
		rc = EXIT_OK;
		if (papi) {
			struct papi_report *pr = xzalloc(sizeof(*pr));

			if (attn_evict_caches(evict)) {
				rc = print_error("--evict: cannot allocate %llu bytes",
						 (unsigned long long)evict);
			} else if (papi_measure(plugin_native_call, &r, NATIVE_LINE_BYTES, pr) < 0) {
				rc = print_error("--papi: %s", pr->reason);
			} else {
				papi_report_print(stdout, pr);
			}
			free(pr);
		}
	}
	free(times);
	plugin_arrays_destroy(&pa);
	plugin_unload(&pl);
	return rc;
}

struct native_options {
	uint64_t repeat, evict;
	bool check, papi;
};

int
cmd_native(int argc, char **argv)
{
	struct native_options n = { .repeat = 1 };
	const struct optparse_option extra[] = {
		{ "repeat", 0, OPTPARSE_U64, .dest = &n.repeat, .min = 1, .max = 1000,
		  .expect = "1 to 1000" },
		{ "check", 0, OPTPARSE_FLAG, .dest = &n.check },
		{ "evict", 0, OPTPARSE_SIZE, .dest = &n.evict, .max = UINT64_C(1) << 40,
		  .expect = "a size up to 1T" },
		{ "papi", 0, OPTPARSE_FLAG, .dest = &n.papi },
		{ .name = NULL },
	};
	const struct kernel_command cmd = { "native", usage_native, extra };
	struct kernel_options o;
	struct spec spec;
	struct attn_data *d;
	uint64_t repeat, evict;
	bool check, papi;
	double *times;
	char err[512], buf[512];
	int rc;

	kernel_options_init(&o);
	o.plugins_ok = true;
	if ((rc = kernel_options_parse(&o, &spec, &cmd, argc, argv)))
		return rc == OPTPARSE_HELP_SHOWN ? EXIT_OK : rc;
	repeat = n.repeat;
	evict = n.evict;
	check = n.check;
	papi = n.papi;
	if (o.plugin_path && check)
		return usage_error("native", "--check is for built-in kernels (a plugin has no "
					     "reference)");
	if (o.plugin_path)
		return native_plugin(&o, repeat, evict, papi);
	d = attn_data_create(&o.cfg, err, sizeof(err));
	if (!d) {
		print_error("%s", err);
		return EXIT_RUNTIME;
	}
	attn_data_fill(d, o.seed);
	if (check)
		attn_data_poison(d);
	times = xzalloc(repeat * sizeof(*times));
	for (uint64_t i = 0; i < repeat; i++) {
		double t0;

		if (attn_evict_caches(evict)) {
			print_error("--evict: cannot allocate %llu bytes",
				    (unsigned long long)evict);
			free(times);
			attn_data_destroy(d);
			return EXIT_RUNTIME;
		}
		/* START flushes Callgrind's simulated caches: the region starts cold. */
		CALLGRIND_ZERO_STATS;
		CALLGRIND_START_INSTRUMENTATION;
		t0 = now_seconds();
		attn_run_native(d);
		times[i] = now_seconds() - t0;
		CALLGRIND_STOP_INSTRUMENTATION;
		CALLGRIND_DUMP_STATS_AT("memsim-kernel");
	}
	printf("native %s\n", kernel_config_str(&o.cfg, buf, sizeof(buf)));
	for (uint64_t i = 0; i < repeat; i++)
		printf("run %llu: %.6f s\n", (unsigned long long)i + 1, times[i]);
	sort_doubles(times, repeat);
	printf("median %.6f s\n", times[repeat / 2]);
	rc = papi ? papi_run(d, evict) : EXIT_OK;
	if (check) {
		struct attn_error e = attn_check(d);

		printf("check: max error %.3e (bound %.3e), %llu non-finite: %s\n", e.max_abs,
		       e.bound, (unsigned long long)e.nonfinite, e.pass ? "pass" : "FAIL");
		if (!e.pass)
			rc = EXIT_RUNTIME;
	}
	free(times);
	attn_data_destroy(d);
	return rc;
}
