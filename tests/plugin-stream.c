/*
 * A test plugin whose trace is every access its native build makes to its arrays: Y = 2 X + Y
 * over batch x heads x N x d floats, element by element. On any cache each line of X is read
 * once and each line of Y read and written once, so Cachegrind and Callgrind on the native
 * build count what memsim counts on the traced one (`memsim xcheck --kernel`).
 * STREAM_STEP names its helper: tests/plugin-clash.c gives it a name memsim has.
 */

#include <stdio.h>

#include "memsim/plugin.h"

#ifndef STREAM_STEP
#define STREAM_STEP stream_step
#endif

static uint64_t
elements(const struct memsim_kernel_config *c)
{
	return c->batch * c->heads * c->N * c->d;
}

static int
arrays(const struct memsim_kernel_config *c, struct memsim_kernel_array *out, unsigned max,
       char *err, size_t errlen)
{
	if (c->dtype != MEMSIM_FP32 || max < 2) {
		snprintf(err, errlen, "stream takes fp32 only");
		return -1;
	}
	snprintf(out[0].name, sizeof(out[0].name), "X");
	snprintf(out[1].name, sizeof(out[1].name), "Y");
	for (unsigned i = 0; i < 2; i++) {
		out[i].bytes = elements(c) * 4;
		out[i].space = MEMSIM_SPACE_DRAM;
	}
	return 2;
}

/* One row of d elements; neither inlined nor cloned, so the native build has a function of
 * exactly this name. */
#if defined(__GNUC__) && !defined(__clang__)
#define STREAM_KEEP __attribute__((noinline, noclone))
#else
#define STREAM_KEEP __attribute__((noinline))
#endif
STREAM_KEEP static void
STREAM_STEP(const float *x, float *y, uint64_t d, struct memsim_trace *t)
{
	for (uint64_t i = 0; i < d; i++) {
		TR_LOAD_ELEM(t, &x[i]);
		TR_LOAD_ELEM(t, &y[i]);
		y[i] = 2.0f * x[i] + y[i];
		TR_STORE_ELEM(t, &y[i]);
	}
}

static int
run(const struct memsim_kernel_config *c, void *const *a, struct memsim_trace *t, char *err,
    size_t errlen)
{
	const float *x = a[0];
	float *y = a[1];

	if (TR_PHASE(t, "stream")) {
		snprintf(err, errlen, "cannot start phase stream");
		return -1;
	}
	for (uint64_t r = 0; r < elements(c) / c->d; r++)
		STREAM_STEP(x + r * c->d, y + r * c->d, c->d, t);
	return 0;
}

static int
formula(const struct memsim_kernel_config *c, uint64_t capacity, uint32_t line,
	struct memsim_array_bytes *out, unsigned n)
{
	uint64_t bytes = (elements(c) * 4 + line - 1) / line * line;

	if (n != 2 || capacity < 2 * line)
		return -1;
	out[0].read_bytes = bytes;
	out[0].write_bytes = 0;
	out[1].read_bytes = out[1].write_bytes = bytes;
	return 0;
}

static const struct memsim_kernel_plugin stream_plugin = {
	MEMSIM_PLUGIN_ABI,
	sizeof(struct memsim_kernel_plugin),
	MEMSIM_PLUGIN_NATIVE,
	"stream",
	"Y = 2 X + Y, element by element",
	NULL,
	NULL,
	arrays,
	run,
	NULL,
	formula,
};

MEMSIM_PLUGIN(stream_plugin)
