#pragma once

/*
 * One logging sink for the whole program. Library code (sim/, traces/, analysis/) reports
 * what failed through sim_log(); main() decides where messages go. Tests replace the sink to
 * capture messages.
 */

#include <stdarg.h>

enum sim_log_level {
	SIM_LOG_ERROR = 0,
	SIM_LOG_WARN,
	SIM_LOG_INFO,
	SIM_LOG_DEBUG,
};

typedef void (*sim_log_sink)(enum sim_log_level level, const char *fmt, va_list args);

/* Logs one message (no trailing newline needed) at level; messages above the current
 * verbosity are dropped. */
void sim_log(enum sim_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Replaces the sink; NULL restores the default, which writes "memsim: message" to stderr. */
void sim_log_set_sink(sim_log_sink sink);

/* Sets the most verbose level that is still emitted [SIM_LOG_WARN]. */
void sim_log_set_verbosity(enum sim_log_level level);
