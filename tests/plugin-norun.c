/* A plugin with arrays() but without its run() callback: memsim refuses it. */
#include "memsim/plugin.h"

static int
arrays(const struct memsim_kernel_config *c, struct memsim_kernel_array *out, unsigned max,
       char *err, size_t errlen)
{
	(void)c, (void)out, (void)max, (void)err, (void)errlen;
	return 0;
}

static const struct memsim_kernel_plugin norun = {
	MEMSIM_PLUGIN_ABI,
	sizeof(struct memsim_kernel_plugin),
	MEMSIM_PLUGIN_NATIVE,
	"norun",
	"no run()",
	NULL,
	NULL,
	arrays,
	NULL,
	NULL,
	NULL,
};

MEMSIM_PLUGIN(norun)
