#include "sim/log.h"

#include <stdio.h>

static void
default_sink(enum sim_log_level level, const char *fmt, va_list args)
{
	static const char *prefix[] = { "error: ", "warning: ", "", "debug: " };

	fprintf(stderr, "memsim: %s", prefix[level]);
	vfprintf(stderr, fmt, args);
	fputc('\n', stderr);
}

static sim_log_sink current_sink = default_sink;
static enum sim_log_level verbosity = SIM_LOG_WARN;

void
sim_log(enum sim_log_level level, const char *fmt, ...)
{
	va_list args;

	if (level > verbosity)
		return;
	va_start(args, fmt);
	current_sink(level, fmt, args);
	va_end(args);
}

void
sim_log_set_sink(sim_log_sink sink)
{
	current_sink = sink ? sink : default_sink;
}

void
sim_log_set_verbosity(enum sim_log_level level)
{
	verbosity = level;
}
