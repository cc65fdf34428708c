/*
 * A test plugin with a hand-countable pattern: B = 2 A, P times (--param passes=P), each block
 * of Br rows through a tile. Every pass reads each line of A and stores each line of B once,
 * in the same order, so on a fully associative LRU write-back write-allocate cache a pass
 * either hits on everything after the first (A and B fit) or, where blocks are whole lines,
 * misses on everything.
 * --param crash=N dies in run() (SIGSEGV) where --N is N, for the sweep's failed rows;
 * --param fail=N returns an error there; --param wrap=N loads 128 bytes from 2^64 - 64 there, a
 * range past the end of the address space.
 * --param endless=N repeats the passes where --N is N until the process is stopped, 20 ms
 * apart: a run that is still recording when a test stops it.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "memsim/plugin.h"

static unsigned long long
param(const struct memsim_kernel_config *c, const char *key, unsigned long long dflt)
{
	for (unsigned i = 0; i < c->nparams; i++)
		if (strcmp(c->param_keys[i], key) == 0)
			return strtoull(c->param_values[i], NULL, 10);
	return dflt;
}

static uint64_t
rows(const struct memsim_kernel_config *c)
{
	return c->batch * c->heads * c->N;
}

static int
check(const struct memsim_kernel_config *c, char *err, size_t errlen)
{
	if (c->dtype != MEMSIM_FP32) {
		snprintf(err, errlen, "copy takes fp32 only");
		return -1;
	}
	if (param(c, "passes", 1) < 1) {
		snprintf(err, errlen, "passes must be at least 1");
		return -1;
	}
	return 0;
}

static int
arrays(const struct memsim_kernel_config *c, struct memsim_kernel_array *out, unsigned max,
       char *err, size_t errlen)
{
	if (max < 3) {
		snprintf(err, errlen, "needs 3 arrays");
		return -1;
	}
	snprintf(out[0].name, sizeof(out[0].name), "A");
	out[0].bytes = rows(c) * c->d * 4;
	out[0].space = MEMSIM_SPACE_DRAM;
	snprintf(out[1].name, sizeof(out[1].name), "B");
	out[1].bytes = rows(c) * c->d * 4;
	out[1].space = MEMSIM_SPACE_DRAM;
	snprintf(out[2].name, sizeof(out[2].name), "T");
	out[2].bytes = c->Br * c->d * 4;
	out[2].space = MEMSIM_SPACE_TILE;
	return 3;
}

static int
run(const struct memsim_kernel_config *c, void *const *a, struct memsim_trace *t, char *err,
    size_t errlen)
{
	float *A = a[0], *B = a[1], *T = a[2];
	uint64_t n = rows(c), d = c->d, passes = param(c, "passes", 1);

	if (param(c, "crash", 0) == c->N)
		raise(SIGSEGV);
	if (param(c, "fail", 0) == c->N) {
		snprintf(err, errlen, "asked to fail at N=%llu", (unsigned long long)c->N);
		return -1;
	}
	if (param(c, "wrap", 0) == c->N)
		TR_LOAD_SPAN(t, (const char *)(uintptr_t)UINT64_C(0xffffffffffffffc0), 128);
	if (TR_PHASE(t, "copy")) {
		snprintf(err, errlen, "cannot start phase copy");
		return -1;
	}
	for (uint64_t i = 0; i < n * d; i++)
		A[i] = (float)(i % 7);
	if (param(c, "endless", 0) == c->N)
		passes = UINT64_MAX;
	for (uint64_t p = 0; p < passes; p++) {
		struct timespec pause = { 0, 20 * 1000 * 1000 };

		if (p && passes == UINT64_MAX)
			nanosleep(&pause, NULL);
		for (uint64_t r = 0; r < n; r += c->Br) {
			uint64_t k = (n - r < c->Br ? n - r : c->Br) * d;

			TR_LOAD_SPAN(t, A + r * d, k * 4);
			for (uint64_t i = 0; i < k; i++)
				T[i] = 2.0f * A[r * d + i];
			TR_STORE_SPAN(t, T, k * 4);
			TR_LOAD_SPAN(t, T, k * 4);
			/* Element stores: each line of B is read for ownership on a miss (a
			 * span covering whole lines would not be). */
			for (uint64_t i = 0; i < k; i++) {
				B[r * d + i] = T[i];
				TR_STORE_ELEM(t, &B[r * d + i]);
			}
		}
	}
	return 0;
}

static double
flops(const struct memsim_kernel_config *c)
{
	return (double)(rows(c) * c->d * param(c, "passes", 1));
}

static int
formula(const struct memsim_kernel_config *c, uint64_t capacity, uint32_t line,
	struct memsim_array_bytes *out, unsigned n)
{
	uint64_t bytes = rows(c) * c->d * 4, lines = (bytes + line - 1) / line;
	uint64_t passes = param(c, "passes", 1);
	uint64_t times = 2 * lines <= capacity / line ? 1 : passes;

	/* Where A and B do not fit, every pass misses on every line only if no line is shared
	 * by two blocks (one shared is touched again a block later, which LRU may keep). */
	if (n != 3 || capacity / line < 2 || (times > 1 && (c->Br * c->d * 4) % line))
		return -1;
	out[0].read_bytes = times * lines * line;
	out[0].write_bytes = 0;
	out[1].read_bytes = times * lines * line; /* write-allocate */
	out[1].write_bytes = times * lines * line;
	out[2].read_bytes = out[2].write_bytes = 0; /* in scratch */
	return 0;
}

static const char *const params[] = { "passes", "crash", "fail", "wrap", "endless", NULL };

static const struct memsim_kernel_plugin copy_plugin = {
	MEMSIM_PLUGIN_ABI,
	sizeof(struct memsim_kernel_plugin),
	MEMSIM_PLUGIN_NATIVE,
	"copy",
	"B = 2 A through a tile, P passes",
	params,
	check,
	arrays,
	run,
	flops,
	formula,
};

MEMSIM_PLUGIN(copy_plugin)
