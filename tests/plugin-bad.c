/*
 * A plugin that misbehaves as --param mode=WORD asks, for the host's refusals
 * (test-cli-plugin.c): array names two alike, empty, with control bytes, not UTF-8 or of an
 * unknown space; messages that fill err without a NUL; exit(0) inside run(). Built again
 * with -DDATA_ENTRY, its memsim_kernel_plugin_v1 is a pointer, not a function.
 * Without a mode it is a plain stream: A read, B written, N x d x 4 bytes each.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memsim/plugin.h"

static const char *
mode(const struct memsim_kernel_config *c)
{
	for (unsigned i = 0; i < c->nparams; i++)
		if (strcmp(c->param_keys[i], "mode") == 0)
			return c->param_values[i];
	return "";
}

static int
is(const struct memsim_kernel_config *c, const char *m)
{
	return strcmp(mode(c), m) == 0;
}

static int
check(const struct memsim_kernel_config *c, char *err, size_t errlen)
{
	if (is(c, "check-nonul")) {
		memset(err, 'C', errlen);
		return -1;
	}
	return 0;
}

static int
arrays(const struct memsim_kernel_config *c, struct memsim_kernel_array *out, unsigned max,
       char *err, size_t errlen)
{
	const char *second = is(c, "dup")        ? "A"
			     : is(c, "empty")    ? ""
			     : is(c, "ctrl")     ? "\033[31m\"x\n\\"
			     : is(c, "not-utf8") ? "B\xff\xfe"
			     : is(c, "utf8")     ? "B\xc3\xa4"
						 : "B";

	if (is(c, "arrays-nonul")) {
		memset(err, 'R', errlen);
		return -1;
	}
	(void)max;
	snprintf(out[0].name, sizeof(out[0].name), "A");
	snprintf(out[1].name, sizeof(out[1].name), "%s", second);
	out[0].bytes = out[1].bytes = c->N * c->d * 4;
	out[0].space = MEMSIM_SPACE_DRAM;
	out[1].space = is(c, "space") ? (enum memsim_space)77 : MEMSIM_SPACE_DRAM;
	return 2;
}

static int
run(const struct memsim_kernel_config *c, void *const *a, struct memsim_trace *t, char *err,
    size_t errlen)
{
	uint64_t n = c->N * c->d * 4;

	if (is(c, "run-nonul")) {
		memset(err, 'E', errlen);
		err[1] = '\033';
		err[2] = '\n';
		err[3] = (char)0xff;
		return -1;
	}
	if (is(c, "exit"))
		exit(0);
	for (uint64_t i = 0; i < n; i += 4) {
		TR_LOAD(t, (char *)a[0] + i, 4);
		TR_STORE(t, (char *)a[1] + i, 4);
	}
	return 0;
}

static const char *const params[] = { "mode", NULL };

static const struct memsim_kernel_plugin bad = {
	MEMSIM_PLUGIN_ABI,
	sizeof(struct memsim_kernel_plugin),
	MEMSIM_PLUGIN_NATIVE,
	"bad",
	"misbehaves as --param mode says",
	params,
	check,
	arrays,
	run,
	NULL,
	NULL,
};

#ifdef DATA_ENTRY
MEMSIM_PLUGIN_LINKAGE const struct memsim_kernel_plugin *memsim_kernel_plugin_v1;
const struct memsim_kernel_plugin *memsim_kernel_plugin_v1 = &bad;
#else
MEMSIM_PLUGIN(bad)
#endif
