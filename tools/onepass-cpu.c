/*
 * onepass-cpu: the CPU time (user + system, getrusage()) of one trace-only run or of one
 * one-pass sweep of 12 L2 sizes, 64K to 128M, under L1=32K:8:64, as docs/speed-notes.md's
 * "The stack pass on miss-heavy kernels" measures it: the simulation only, without the
 * formulas and the reports that `memsim sweep` adds to each row.
 *
 *   onepass-cpu KERNEL N MODE [COUNTERS]
 *
 * MODE: one8 / onefull (one run at L2=2M, 8-way / fully associative), stack8 / stackfull (the
 * stack pass), fan8 (fan-out, 8-way). Prints the seconds; COUNTERS, a file, gets each size's
 * DRAM traffic and level counters as raw bytes, to compare two builds with cmp. Build, from
 * the source root after `ninja -C build`:
 *
 *   cc -O2 -I. -Ibuild tools/onepass-cpu.c -o onepass-cpu -Wl,--start-group
 *      build/libkernels-common.a build/libmemsim-internal.a build/libkernels-native.a
 *      build/libkernels-traced.a -Wl,--end-group -lcjson -lm -lpapi -pthread -ldl
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "kernels/simulate.h"
#include "sim/spec.h"

#define SIZES 12

static double
cpu_seconds(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (double)r.ru_utime.tv_sec + (double)r.ru_utime.tv_usec * 1e-6 +
	       (double)r.ru_stime.tv_sec + (double)r.ru_stime.tv_usec * 1e-6;
}

static int
fail(const char *what, const char *why, int rc)
{
	fprintf(stderr, "onepass-cpu: %s%s\n", what, why);
	return rc;
}

static void
dump(FILE *f, struct cache *c)
{
	fwrite(cache_dram(c), sizeof(struct cache_traffic), 1, f);
	for (unsigned i = 0; i < cache_level_count(c); i++)
		fwrite(cache_level_stats(c, i), sizeof(struct cache_level_stats), 1, f);
}

int
main(int argc, char **argv)
{
	struct attn_config cfg = { ATTN_NAIVE, 0,     64,    1, 1, 1, ATTN_FP32, 64,
				   64,         false, false, 0, 0, 0, 0,         0 };
	struct sim_result r[SIZES];
	uint64_t sizes[SIZES];
	struct spec spec;
	char text[64], err[512];
	const char *mode = argc > 3 ? argv[3] : "";
	bool one = !strcmp(mode, "one8") || !strcmp(mode, "onefull");
	bool full = !strcmp(mode, "onefull") || !strcmp(mode, "stackfull");
	bool fan = !strcmp(mode, "fan8");
	unsigned n = one ? 1 : SIZES;
	FILE *f = NULL;
	double t0;
	int rc;

	if (argc < 4 || argc > 5 || !attn_kernel_parse(argv[1], &cfg.kernel) ||
	    !(one || fan || !strcmp(mode, "stack8") || !strcmp(mode, "stackfull")))
		return fail("usage: onepass-cpu KERNEL N one8|onefull|stack8|stackfull|fan8 ",
			    "[COUNTERS]", 2);
	cfg.N = strtoull(argv[2], NULL, 10);
	snprintf(text, sizeof(text), "L1=32K:8:64,L2=%s:%s:64", one ? "2M" : "1M",
		 full ? "full" : "8");
	if (spec_parse(text, &spec, err, sizeof(err)))
		return fail("", err, 2);
	for (unsigned k = 0; k < SIZES; k++)
		sizes[k] = (uint64_t)65536 << k;
	t0 = cpu_seconds();
	rc = one ? sim_kernel_trace_only(&cfg, &spec, true, &r[0], err, sizeof(err))
		 : sim_kernel_onepass(&cfg, &spec, 1, sizes, SIZES,
				      fan ? CACHE_ONEPASS_FANOUT : CACHE_ONEPASS_STACK,
				      true, 1, true, r, err, sizeof(err));
	if (rc)
		return fail("", err, 1);
	printf("%.3f\n", cpu_seconds() - t0);
	if (argc == 5 && !(f = fopen(argv[4], "wb")))
		return fail("cannot create ", argv[4], 1);
	for (unsigned k = 0; k < n; k++) {
		if (f)
			dump(f, r[k].cache);
		sim_result_finish(&r[k]);
	}
	if (f && fclose(f))
		return fail("cannot write ", argv[4], 1);
	return 0;
}
