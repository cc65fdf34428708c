/* A plugin built for another ABI version: memsim refuses it. */
#include "memsim/plugin.h"

static const struct memsim_kernel_plugin bad = {
	MEMSIM_PLUGIN_ABI + 98,
	sizeof(struct memsim_kernel_plugin),
	MEMSIM_PLUGIN_NATIVE,
	"bad",
	"wrong ABI",
	NULL,
	NULL,
	NULL,
	NULL,
	NULL,
	NULL,
};

MEMSIM_PLUGIN(bad)
